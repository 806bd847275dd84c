/**
 * Pagination: the two list envelopes of conventions §4.5 and the page-size rules of §8
 * (default 20, maximum 100, anything else answered with 400).
 */
import { z } from "zod";
import { MAX_CURSOR_LENGTH } from "./cursor.ts";
import { ISSUES } from "./messages.ts";
import { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, type OffsetPagination } from "./pages.ts";

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "./pages.ts";
export type { CursorPage, CursorPagination, OffsetPage, OffsetPagination } from "./pages.ts";

const integerText = (issue: string) =>
  z
    .string({ error: issue })
    .regex(/^-?\d{1,9}$/, { error: issue })
    .transform(Number);

const PAGE_SIZE_ISSUE = ISSUES.pageSize(MAX_PAGE_SIZE);

/** `limit` and `per_page`: an integer from 1 to 100, 20 when absent. */
export const pageSizeParam = integerText(PAGE_SIZE_ISSUE)
  .pipe(z.number().min(1, { error: PAGE_SIZE_ISSUE }).max(MAX_PAGE_SIZE, { error: PAGE_SIZE_ISSUE }))
  .default(DEFAULT_PAGE_SIZE);

const PAGE_ISSUE = ISSUES.page;

/** `page`: an integer of 1 or more, 1 when absent. */
export const pageParam = integerText(PAGE_ISSUE)
  .pipe(z.number().min(1, { error: PAGE_ISSUE }))
  .default(1);

/** `cursor`: opaque text; its validity is checked by the cursor codec. */
export const cursorParam = z.string({ error: ISSUES.cursor }).max(MAX_CURSOR_LENGTH, { error: ISSUES.cursor });

/** The longest `q`. */
export const SEARCH_MAX_LENGTH = 200;

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

/** Query-string forms of scalar field types, for filters. */
export const queryInteger = z
  .string({ error: ISSUES.integer })
  .regex(/^-?\d{1,15}$/, { error: ISSUES.integer })
  .transform(Number);

export const queryNumber = z
  .string({ error: ISSUES.number })
  .regex(/^-?\d{1,15}(\.\d{1,15})?$/, { error: ISSUES.number })
  .transform(Number);

export const queryBoolean = z
  .enum(["true", "false"], { error: ISSUES.boolean })
  .transform((v) => v === "true");

export function offsetPagination(page: number, perPage: number, total: number): OffsetPagination {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) };
}
