/**
 * The cursor codec. A cursor is opaque to clients: where the next page starts (the id after
 * which it starts, or for a sorted list the last record's sort values and id), bound to the list
 * it came from (version, collection, parent, filters, operator conditions, search and sort),
 * signed with HMAC-SHA256 so that a tampered or foreign cursor is refused instead of misread.
 *
 * The payload names the list by its scope, or by a digest of a scope longer than 128 characters
 * (one with 100 `in` values would not fit a cursor).
 */
import { createHash, createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto";
import type { Condition, SortKey, SortPosition } from "./store.ts";

/** The longest cursor read: a sorted list's cursor carries the last record's sort values. */
export const MAX_CURSOR_LENGTH = 4096;

export interface CursorCodec {
  encode(scope: string, after: string): string;
  /** The id to continue after, or null when the cursor is tampered, foreign or malformed. */
  decode(scope: string, cursor: string): string | null;
  /** A sorted list's cursor: the last record's position (sort values, which must be JSON, and id). */
  encodePosition(scope: string, position: SortPosition): string;
  /** The position to continue after, or null when the cursor is tampered, foreign or malformed (or not a position). */
  decodePosition(scope: string, cursor: string): SortPosition | null;
}

/** What a cursor's payload names its list by: the scope, or a digest of a long one. */
function scopeName(scope: string): string {
  return scope.length > 128 ? scopeDigest(scope) : scope;
}

function scopeDigest(scope: string): string {
  return `#${createHash("sha256").update(scope).digest("base64url").slice(0, 22)}`;
}

/**
 * A codec that signs with `secrets` (or the first of them) and verifies with any of them: the
 * keys of a rotation (see cursor-keys.ts). Default: one random key.
 */
export function createCursorCodec(
  secrets: string | Buffer | ReadonlyArray<string | Buffer> = randomBytes(32),
): CursorCodec {
  const list = typeof secrets === "string" || Buffer.isBuffer(secrets) ? [secrets] : secrets;
  if (!list.length) throw new Error("a cursor codec needs at least one key");
  // KeyObjects made once: HMAC with one is several times faster than with the raw secret.
  const keys = list.map((s) => createSecretKey(typeof s === "string" ? Buffer.from(s) : s));
  const signWith = (key: (typeof keys)[number], payload: string): Buffer =>
    createHmac("sha256", key).update(payload).digest().subarray(0, 16);
  const sign = (payload: string): Buffer => signWith(keys[0]!, payload);
  const verifies = (payload: string, signature: Buffer): boolean =>
    keys.some((key) => {
      const expected = signWith(key, payload);
      return signature.length === expected.length && timingSafeEqual(signature, expected);
    });
  const make = (content: unknown[]): string => {
    const payload = Buffer.from(JSON.stringify(content)).toString("base64url");
    return `${payload}.${sign(payload).toString("base64url")}`;
  };
  /** The payload of a cursor of this scope, verified: `[scope, …]`; null when it is not one. */
  const read = (scope: string, cursor: string): unknown[] | null => {
    const dot = cursor.indexOf(".");
    if (dot < 1 || cursor.length > MAX_CURSOR_LENGTH) return null;
    const payload = cursor.slice(0, dot);
    const signature = Buffer.from(cursor.slice(dot + 1), "base64url");
    if (!verifies(payload, signature)) return null;
    try {
      const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
      if (!Array.isArray(decoded) || typeof decoded[1] !== "string") return null;
      if (decoded[0] !== scope && decoded[0] !== scopeDigest(scope)) return null;
      return decoded;
    } catch {
      return null;
    }
  };
  return {
    encode(scope, after) {
      return make([scopeName(scope), after]);
    },
    decode(scope, cursor) {
      const decoded = read(scope, cursor);
      return decoded && decoded.length === 2 ? (decoded[1] as string) : null;
    },
    encodePosition(scope, position) {
      return make([scopeName(scope), position.id, position.values]);
    },
    decodePosition(scope, cursor) {
      const decoded = read(scope, cursor);
      if (!decoded || decoded.length !== 3 || !Array.isArray(decoded[2])) return null;
      return { id: decoded[1] as string, values: decoded[2] as unknown[] };
    },
  };
}

/** What a cursor is bound to besides its path and exact matches: operator conditions, search and sort. */
export interface ListShape {
  conditions?: readonly Condition[] | undefined;
  sort?: readonly SortKey[] | undefined;
}

/**
 * The scope a cursor is bound to: the list's path, its exact-match and search parts, and (when
 * given) its operator conditions and sort. A list without conditions and sort has the scope it
 * always had.
 */
export function listScope(
  path: string,
  where: Record<string, unknown>,
  search: string | undefined,
  shape: ListShape = {},
): string {
  const keys = Object.keys(where).sort();
  const scope: unknown[] = [path, keys.map((k) => [k, where[k]]), search ?? null];
  if (shape.conditions?.length) scope.push(shape.conditions.map(conditionScope));
  if (shape.sort?.length) {
    if (!shape.conditions?.length) scope.push([]);
    scope.push(shape.sort.map((key) => `${key.descending ? "-" : ""}${key.field}`));
  }
  return JSON.stringify(scope);
}

/**
 * A condition as a scope names it: field, operator and value(s). An `[in]` filter is a set: its
 * values are named in one order, each once, so that a cursor of `?status[in]=open,pending` goes on
 * with `?status[in]=pending,open` (or `open,open,pending`), which lists the same records.
 */
function conditionScope(condition: Condition): unknown[] {
  if (condition.op !== "in") return [condition.field, condition.op, condition.value];
  const values = [...new Set(condition.values.map((value) => JSON.stringify(value)))].sort();
  return [condition.field, condition.op, values.map((text) => JSON.parse(text) as unknown)];
}
