/**
 * The cursor codec. A cursor is opaque to clients: the id after which the next page starts,
 * bound to the list it came from (version, collection, parent, filters and search), signed
 * with HMAC-SHA256 so that a tampered or foreign cursor is refused instead of misread.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto";

export interface CursorCodec {
  encode(scope: string, after: string): string;
  /** The id to continue after, or null when the cursor is tampered, foreign or malformed. */
  decode(scope: string, cursor: string): string | null;
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
  return {
    encode(scope, after) {
      const payload = Buffer.from(JSON.stringify([scope, after])).toString("base64url");
      return `${payload}.${sign(payload).toString("base64url")}`;
    },
    decode(scope, cursor) {
      const dot = cursor.indexOf(".");
      if (dot < 1 || cursor.length > 1024) return null;
      const payload = cursor.slice(0, dot);
      const signature = Buffer.from(cursor.slice(dot + 1), "base64url");
      if (!verifies(payload, signature)) return null;
      try {
        const decoded: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
        if (!Array.isArray(decoded) || decoded[0] !== scope || typeof decoded[1] !== "string") return null;
        return decoded[1];
      } catch {
        return null;
      }
    },
  };
}

/** The scope a cursor is bound to: the list's path and its exact-match and search parts. */
export function listScope(path: string, where: Record<string, unknown>, search: string | undefined): string {
  const keys = Object.keys(where).sort();
  return JSON.stringify([path, keys.map((k) => [k, where[k]]), search ?? null]);
}
