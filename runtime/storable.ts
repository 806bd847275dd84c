/**
 * Input every store keeps exactly as sent, decided before any store sees it, so that memory,
 * PGlite and PostgreSQL answer alike: text PostgreSQL cannot hold (a NUL character) or could
 * only change (an unpaired UTF-16 surrogate becomes U+FFFD in UTF-8; a leading byte-order
 * mark, U+FEFF, is dropped by PGlite's reader, whose TextDecoder strips it from every value),
 * and dates before year 1 (PostgreSQL has no year 0000), answer 400 naming the field instead
 * of being stored.
 */
import { z } from "zod";
import type { ErrorDetail } from "./errors.ts";

export const UNSTORABLE_TEXT_ISSUE =
  "must not contain a NUL character or an unpaired surrogate, nor start with a byte-order mark";

const UNSTORABLE = /^\ufeff|\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether a string holds text a store could not keep as it is. */
export function isUnstorableText(text: string): boolean {
  return UNSTORABLE.test(text);
}

/** One detail per string in `value` (a parsed JSON body or a query) that no store keeps as sent; `path` is the dotted path so far. */
export function unstorableFields(value: unknown, path = ""): ErrorDetail[] {
  if (typeof value === "string")
    return isUnstorableText(value) ? [{ field: path || "body", issue: UNSTORABLE_TEXT_ISSUE }] : [];
  if (typeof value !== "object" || value === null) return [];
  const out: ErrorDetail[] = [];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, item] of entries) {
    const field = path ? `${path}.${key}` : key;
    if (isUnstorableText(key)) out.push({ field, issue: UNSTORABLE_TEXT_ISSUE });
    out.push(...unstorableFields(item, field));
  }
  return out;
}

/** `date`: an ISO date from 0001-01-01 (every store keeps it; PostgreSQL has no year 0000). */
export const dateSchema = z.iso
  .date()
  .refine((date) => !date.startsWith("0000"), { error: "must be a date from 0001-01-01 on" });
