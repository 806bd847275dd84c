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

/**
 * One detail per string in `value` (a parsed JSON body or a query) that no store keeps as sent;
 * `path` is the dotted path so far. Walked without recursion: a body may nest thousands deep.
 */
export function unstorableFields(value: unknown, path = ""): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const pending: Array<readonly [string, unknown]> = [[path, value]];
  while (pending.length > 0) {
    const [at, item] = pending.pop()!;
    if (typeof item === "string") {
      if (isUnstorableText(item)) out.push({ field: at || "body", issue: UNSTORABLE_TEXT_ISSUE });
      continue;
    }
    if (typeof item !== "object" || item === null) continue;
    const entries = Array.isArray(item) ? item.map((v, i) => [String(i), v] as const) : Object.entries(item);
    // In reverse, so that the details come out in the order of the body.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      const field = at ? `${at}.${key}` : key;
      pending.push([field, child]);
      if (isUnstorableText(key)) pending.push([field, UNSTORABLE_KEY]);
    }
  }
  return out;
}

/** Stands for a key that no store keeps: reported as its field, before what it holds. */
const UNSTORABLE_KEY = "\u0000";

/** `date`: an ISO date from 0001-01-01 (every store keeps it; PostgreSQL has no year 0000). */
export const dateSchema = z.iso
  .date()
  .refine((date) => !date.startsWith("0000"), { error: "must be a date from 0001-01-01 on" });
