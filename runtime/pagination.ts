/**
 * Pagination: the two list envelopes of conventions §4.5 and the page-size rules of §8
 * (default 20, maximum 100, anything else answered with 400).
 */
import { z } from "zod";
import { MAX_CURSOR_LENGTH } from "./cursor.ts";
import { ISSUES, validationMessage } from "./messages.ts";
import {
  MAX_IN_VALUES,
  MAX_PAGE_SIZE,
  MAX_SORT_KEYS,
  DEFAULT_PAGE_SIZE,
  SEARCH_MAX_LENGTH,
  type OffsetPagination,
} from "./pages.ts";
import type { Ordering, SortKey } from "./store.ts";

export {
  DEFAULT_PAGE_SIZE,
  MAX_IN_VALUES,
  MAX_PAGE_SIZE,
  MAX_SORT_KEYS,
  SEARCH_MAX_LENGTH,
} from "./pages.ts";
export type { CursorPage, CursorPagination, OffsetPage, OffsetPagination } from "./pages.ts";

/**
 * An integer in a query: `limit`, `per_page`, `page`, an integer filter and each of its
 * operators. One rule for all of them, the form JSON writes (and `String(value)`, so a typed
 * client's value always reads back), as a body holds it: digits with an optional `-`, no `+`,
 * no leading zero (`010` is 10 to one reader and 8 to another: written `10`, it is one value
 * with one spelling), up to 2^53 − 1. `limit=05` answers 400 like `count=05`, and the issue says
 * why (README, "Behaviour of a generated service").
 */
const INTEGER_TEXT = /^-?(0|[1-9]\d{0,15})$/;

function integerText(issue: string) {
  const leadingZero = ISSUES.leadingZero(issue);
  return z.string({ error: issue }).transform((text, ctx): number => {
    const value = INTEGER_TEXT.test(text) ? Number(text) : NaN;
    if (Number.isSafeInteger(value)) return value;
    ctx.addIssue({ code: "custom", message: /^-?0\d/.test(text) ? leadingZero : issue, input: text });
    return z.NEVER;
  });
}

const PAGE_SIZE_ISSUE = ISSUES.pageSize(MAX_PAGE_SIZE);

/** `limit` and `per_page`: an integer from 1 to 100, 20 when absent. */
export const pageSizeParam = integerText(PAGE_SIZE_ISSUE)
  .pipe(z.number().min(1, { error: PAGE_SIZE_ISSUE }).max(MAX_PAGE_SIZE, { error: PAGE_SIZE_ISSUE }))
  .default(DEFAULT_PAGE_SIZE);

const PAGE_ISSUE = ISSUES.page;

/**
 * `page`: an integer of 1 or more, 1 when absent. Any such page is valid (SPEC §5 refuses only a
 * page below 1 or not an integer): one past the last answers with no records, up to 2^53 − 1
 * (beyond it a number is no longer exact).
 */
export const pageParam = integerText(PAGE_ISSUE)
  .pipe(z.number().min(1, { error: PAGE_ISSUE }))
  .default(1);

/** `cursor`: opaque text; its validity is checked by the cursor codec. */
export const cursorParam = z
  .string({ error: ISSUES.cursor })
  .max(MAX_CURSOR_LENGTH, { error: ISSUES.cursor });

/**
 * `q`: search text of at least `minLength` characters (code points, surrounding spaces not
 * counted: the text searched is trimmed) and at most 200.
 */
export function searchParam(minLength: number) {
  const issue = ISSUES.length("least", minLength);
  return z
    .string({ error: ISSUES.text })
    .max(SEARCH_MAX_LENGTH, { error: ISSUES.length("most", SEARCH_MAX_LENGTH) })
    .refine((q) => [...q.trim()].length >= minLength, { error: issue });
}

/**
 * Query-string forms of scalar field types, for filters: a number as JSON and `String(value)`
 * write it (so a typed client's filter always reads back), digits and the exponent form alike
 * (`0.30000000000000004`, `1e-7`, `1e+21`), no leading zero; not one that only rounds to 0
 * (`1e-400`), and at most 40 characters (no number a field holds needs more). An integer as
 * every integer in a query (`integerText`): up to 2^53 − 1 in digits, as a body's.
 */
export const queryInteger = integerText(ISSUES.integer);

export const queryNumber = z
  .string({ error: ISSUES.number })
  .max(40, { error: ISSUES.number })
  .regex(/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/, { error: ISSUES.number })
  // Digits before the exponent that are not all zero, read as 0: too small to hold.
  .refine((text) => Number(text) !== 0 || !/[1-9]/.test(text.split(/[eE]/)[0]!), { error: ISSUES.number })
  .transform(Number)
  .refine(Number.isFinite, { error: ISSUES.number });

export const queryBoolean = z
  .enum(["true", "false"], { error: ISSUES.boolean })
  .transform((v) => v === "true");

/** `?status[null]=true`: whether the field is null (or absent). */
export const queryNull = queryBoolean;

/** A date-time with a time zone, as range filters of datetime fields and created_at/updated_at take it. */
export const queryInstant = z.iso.datetime({ offset: true });

/**
 * `?status[in]=open,pending`: up to 100 comma-separated values, each read by `item` (the
 * field's own query form). A bad value is reported on the parameter itself, never on an index.
 */
export function inParam<T extends z.ZodType<unknown, string>>(item: T) {
  return z.string({ error: ISSUES.text }).transform((text, ctx): Array<z.output<T>> => {
    const parts = text.split(",");
    if (parts.length > MAX_IN_VALUES) {
      ctx.addIssue({ code: "custom", message: ISSUES.inCount(MAX_IN_VALUES), input: text });
      return z.NEVER;
    }
    // Each value takes its part's place in the array `split` made: an array made by a literal
    // here would be one V8 learns to allocate straight into old space (it lives as long as the
    // request), which costs the server a mark-compact every few seconds under load.
    const values = parts as unknown[];
    for (let i = 0; i < parts.length; i++) {
      const parsed = item.safeParse(parts[i], { error: validationMessage });
      if (!parsed.success) {
        ctx.addIssue({
          code: "custom",
          message: ISSUES.eachValue(parsed.error.issues[0]?.message ?? "is not valid"),
          input: text,
        });
        return z.NEVER;
      }
      values[i] = parsed.data;
    }
    return values as Array<z.output<T>>;
  });
}

/** A JSON list of an operator filter in a body (an export's `"status[in]": [...]`): 1 to 100 values of `item`. */
export function inList<T extends z.ZodType>(item: T) {
  return z.array(item).min(1).max(MAX_IN_VALUES);
}

/** A key `?sort=` may name: the storage field it orders by, and how its values compare. */
export interface SortField {
  field: string;
  ordering: Ordering;
  /** An enum's values, lowest first. */
  rank?: readonly string[];
}

/**
 * `?sort=-priority,created_at`: up to 3 of the list's sort keys, each at most once, `-` for
 * descending. Anything else answers 400 naming `sort`, with the keys it takes.
 */
export function sortParam(keys: Readonly<Record<string, SortField>>) {
  const known = ISSUES.sortKeys(Object.keys(keys));
  // What each valid text reads as, made once: a few texts come back on every request, and the
  // keys live as long as the request, which V8 would otherwise learn to allocate straight into
  // old space (a mark-compact every few seconds under load). Only valid texts are kept, and
  // there are at most (2 × keys)³ of them; past MAX_KEPT_SORTS texts are read each time.
  const kept = new Map<string, readonly SortKey[]>();
  return z.string({ error: ISSUES.text }).transform((text, ctx): readonly SortKey[] => {
    const found = kept.get(text);
    if (found) return found;
    const sort = readSort(text, keys, known);
    if (typeof sort === "string") {
      ctx.addIssue({ code: "custom", message: sort, input: text });
      return z.NEVER;
    }
    if (kept.size < MAX_KEPT_SORTS) kept.set(text, sort);
    return sort;
  });
}

/** How many texts of `?sort=` one list keeps read (sortParam). */
const MAX_KEPT_SORTS = 256;

/** The keys `text` names, frozen, or the message of what is wrong with it. */
function readSort(
  text: string,
  keys: Readonly<Record<string, SortField>>,
  known: string,
): readonly SortKey[] | string {
  const parts = text.split(",");
  if (parts.length > MAX_SORT_KEYS) return ISSUES.sortCount(MAX_SORT_KEYS);
  const seen = new Set<string>();
  const sort: SortKey[] = [];
  for (const part of parts) {
    const descending = part.startsWith("-");
    const name = descending ? part.slice(1) : part;
    const key = Object.hasOwn(keys, name) ? keys[name] : undefined;
    if (!key) return known;
    if (seen.has(name)) return ISSUES.sortTwice(name);
    seen.add(name);
    sort.push(
      Object.freeze({
        field: key.field,
        descending,
        ordering: key.ordering,
        ...(key.rank ? { rank: key.rank } : {}),
      }),
    );
  }
  return Object.freeze(sort);
}

export function offsetPagination(page: number, perPage: number, total: number): OffsetPagination {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) };
}
