/**
 * The keys that sign cursors live in the store, so that a cursor made by one instance works
 * on every other and after restarts, with no setting. The first instance to start creates the
 * key; each instance reads the keys at start and again every minute.
 *
 * Rotation: a new key (`rotateCursorKey()`, or one row more in the SQL table, see
 * docs/store.md) becomes the key that signs; a cursor signed with the key it replaced keeps
 * working for `CURSOR_KEY_GRACE_MS` (24 hours) after the rotation, then answers 400.
 *
 * `CANON_CURSOR_SECRET` (buildApp's `cursorSecret`) overrides the store's keys; it must be at
 * least `MIN_CURSOR_SECRET_BYTES` long.
 */
import { randomBytes } from "node:crypto";
import { createCursorCodec, type CursorCodec } from "./cursor.ts";
import type { CursorKey, CursorKeyStore } from "./store.ts";

// The store's part of it is declared with the store (store.ts), which this file's codec reads.
export type { CursorKey, CursorKeyStore } from "./store.ts";

/** How long a rotated-out key keeps verifying cursors after its successor was made. */
export const CURSOR_KEY_GRACE_MS = 24 * 60 * 60 * 1000;

/** How often an instance reads the keys again (a rotation reaches every instance within this). */
export const CURSOR_KEY_REFRESH_MS = 60 * 1000;

export const MIN_CURSOR_SECRET_BYTES = 32;

/** A new random key secret. */
export function newCursorSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Throws when a configured cursor secret is too short to sign with. */
export function checkCursorSecret(secret: string, name = "cursorSecret"): void {
  const bytes = Buffer.byteLength(secret);
  if (bytes < MIN_CURSOR_SECRET_BYTES) {
    throw new Error(
      `${name} must be at least ${MIN_CURSOR_SECRET_BYTES} bytes (it has ${bytes}): use a random value such as \`openssl rand -hex 32\`, or leave it unset to use the store's key`,
    );
  }
}

/** The secrets that verify at `now`: the newest, and each older one whose successor is younger than the grace period. */
export function verifyingSecrets(
  keys: CursorKey[],
  now = Date.now(),
  graceMs = CURSOR_KEY_GRACE_MS,
): string[] {
  const secrets: string[] = [];
  keys.forEach((key, i) => {
    const successor = keys[i - 1];
    if (!successor || now - Date.parse(successor.created_at) < graceMs) secrets.push(key.secret);
  });
  return secrets;
}

export interface StoreCursorCodec extends CursorCodec {
  /** Reads the keys again now. */
  refresh(): Promise<void>;
  /** Stops reading the keys again. */
  close(): void;
}

/**
 * The cursor codec of an app: signs with the store's newest key and verifies with every key
 * still in its grace period, reading the keys again every minute; or, with `secret`, signs and
 * verifies with that secret alone.
 */
export async function storeCursorCodec(store: CursorKeyStore, secret?: string): Promise<StoreCursorCodec> {
  if (secret !== undefined) {
    checkCursorSecret(secret);
    const fixed = createCursorCodec(secret);
    return { ...fixed, refresh: async () => {}, close: () => {} };
  }
  let codec = createCursorCodec(verifyingSecrets(await store.cursorKeys()));
  const refresh = async () => {
    codec = createCursorCodec(verifyingSecrets(await store.cursorKeys()));
  };
  // A failed read keeps the keys it had; the next tick tries again.
  const timer = setInterval(() => refresh().catch(() => {}), CURSOR_KEY_REFRESH_MS);
  timer.unref();
  return {
    encode: (scope, after) => codec.encode(scope, after),
    decode: (scope, cursor) => codec.decode(scope, cursor),
    encodePosition: (scope, position) => codec.encodePosition(scope, position),
    decodePosition: (scope, cursor) => codec.decodePosition(scope, cursor),
    refresh,
    close: () => clearInterval(timer),
  };
}
