/**
 * Identifiers: UUID v7 (RFC 9562) for every record, event and request.
 *
 * `newId` is written here rather than taken from the `uuid` package because a request id is made
 * for every request, and the package's v7 (which draws 16 fresh random bytes per id) was a
 * tenth of a generated GET's cost in the benchmarks. Same layout as the package: a 48-bit
 * millisecond timestamp, version 7, a 31-bit counter that starts at a random value each
 * millisecond and counts up within it (RFC 9562 §6.2, method 1), the variant, and random bits
 * from a pooled `crypto.randomFillSync`. Ids sort in creation order within a millisecond too,
 * and when the clock goes back; test/runtime/uuid.test.ts checks it against the package. The
 * text is written into one buffer and read out as one flat string: a string concatenated from
 * 20 pieces costs as much again to flatten when Node writes it into the X-Request-Id header.
 */
import { randomFillSync } from "node:crypto";
import { z } from "zod";
import { ISSUES } from "./messages.ts";

const POOL_SIZE = 16 * 1024;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomBytes(count: number): number {
  if (poolOffset + count > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += count;
  return offset;
}

/** Two ASCII hex digits per byte value, high digit in the high byte. */
const HEX = Uint16Array.from({ length: 256 }, (_, i) => {
  const digits = i.toString(16).padStart(2, "0");
  return (digits.charCodeAt(0) << 8) | digits.charCodeAt(1);
});
/** The text of the id being made: written in place and read out as one flat string (no concatenation). */
const text = Buffer.alloc(36, "-");
let lastMs = -Infinity;
let counter = 0;

function hex(at: number, byte: number): void {
  const digits = HEX[byte]!;
  text[at] = digits >>> 8;
  text[at + 1] = digits & 0xff;
}

/** A new UUID v7, lowercase. */
export function newId(): string {
  const now = Date.now();
  let r = randomBytes(10);
  if (now > lastMs) {
    lastMs = now;
    counter = pool.readUInt32BE(r) & 0x3fffffff; // a random start with room to count up
  } else if (++counter > 0x7fffffff) {
    lastMs += 1; // the counter ran out within one millisecond: borrow the next one
    counter = pool.readUInt32BE(r) & 0x3fffffff;
  }
  r += 4;
  const ms = lastMs;
  // xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx: bytes 0–3, 4–5, 6–7, 8–9 and 10–15.
  hex(0, (ms / 0x10000000000) & 0xff);
  hex(2, (ms / 0x100000000) & 0xff);
  hex(4, (ms / 0x1000000) & 0xff);
  hex(6, (ms / 0x10000) & 0xff);
  hex(9, (ms / 0x100) & 0xff);
  hex(11, ms & 0xff);
  hex(14, 0x70 | ((counter >>> 27) & 0x0f));
  hex(16, (counter >>> 19) & 0xff);
  hex(19, 0x80 | ((counter >>> 13) & 0x3f));
  hex(21, (counter >>> 5) & 0xff);
  hex(24, ((counter & 0x1f) << 3) | (pool[r]! & 0x07));
  for (let i = 1; i < 6; i++) hex(24 + 2 * i, pool[r + i]!);
  return text.toString("latin1", 0, 36);
}

/** The smallest UUID v7 of a millisecond: every id made in it or later sorts after it, every id made before sorts before it. */
export function firstIdAt(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

// test(), not exec(): no match array per call. The version digit is checked in the pattern.
const ACCEPTED = /^[0-9a-f]{8}-[0-9a-f]{4}-[2-9a-f][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** A well-formed RFC 9562 UUID that is not version 1 (which encodes hardware) and not nil. */
export function isAcceptedUuid(value: string): boolean {
  return ACCEPTED.test(value);
}

/** A UUID v7 exactly, as request ids must be. */
export function isUuidV7(value: string): boolean {
  return V7.test(value);
}

export const UUID_ISSUE = ISSUES.uuid;

/** zod schema of an id in a path, body or query: validated for format, then lowercased. */
export const uuidSchema = z
  .string({ error: UUID_ISSUE })
  .refine(isAcceptedUuid, { error: UUID_ISSUE })
  .transform((value) => value.toLowerCase());

/**
 * Whether no id repeats in an array of referencing ids (SPEC §12.3: a relation names each record
 * once; a repeat answers 400 naming the field). Run on the lowercased ids.
 */
export function distinctIds(ids: readonly string[]): boolean {
  return new Set(ids).size === ids.length;
}

/** The issue of an array of ids that names a record twice. */
export const REPEATED_ID_ISSUE = "must not name the same record twice";
