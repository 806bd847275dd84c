// What both hand-written baselines (in memory and on PostgreSQL) write the same way: an
// HMAC-signed cursor holding the last id, and the 400 envelope of a bad parameter.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const secret = randomBytes(32);
const sign = (payload: string) => createHmac("sha256", secret).update(payload).digest().subarray(0, 16);

export function encodeCursor(id: string): string {
  const payload = Buffer.from(id).toString("base64url");
  return `${payload}.${sign(payload).toString("base64url")}`;
}

export function decodeCursor(cursor: string): string | null {
  const [payload, signature] = cursor.split(".");
  if (!payload || !signature) return null;
  const given = Buffer.from(signature, "base64url");
  const expected = sign(payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return Buffer.from(payload, "base64url").toString("utf8");
}

export function badRequest(field: string, issue: string) {
  return {
    error: { code: "VALIDATION_ERROR", message: "The request is not valid.", details: [{ field, issue }] },
  };
}
