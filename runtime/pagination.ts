/**
 * Pagination: the two list envelopes of conventions §4.5 and the page-size rules of §8
 * (default 20, maximum 100, anything else answered with 400).
 */
import { z } from "zod";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface CursorPagination {
  next_cursor: string | null;
  has_more: boolean;
}

export interface OffsetPagination {
  page: number;
  per_page: number;
  total: number;
  total_pages: number;
}

export interface CursorPage<T> {
  data: T[];
  pagination: CursorPagination;
}

export interface OffsetPage<T> {
  data: T[];
  pagination: OffsetPagination;
}

const integerText = (issue: string) =>
  z
    .string({ error: issue })
    .regex(/^-?\d{1,9}$/, { error: issue })
    .transform(Number);

const PAGE_SIZE_ISSUE = `must be an integer from 1 to ${MAX_PAGE_SIZE}`;

/** `limit` and `per_page`: an integer from 1 to 100, 20 when absent. */
export const pageSizeParam = integerText(PAGE_SIZE_ISSUE)
  .pipe(z.number().min(1, { error: PAGE_SIZE_ISSUE }).max(MAX_PAGE_SIZE, { error: PAGE_SIZE_ISSUE }))
  .default(DEFAULT_PAGE_SIZE);

const PAGE_ISSUE = "must be an integer of 1 or more";

/** `page`: an integer of 1 or more, 1 when absent. */
export const pageParam = integerText(PAGE_ISSUE)
  .pipe(z.number().min(1, { error: PAGE_ISSUE }))
  .default(1);

/** `cursor`: opaque text; its validity is checked by the cursor codec. */
export const cursorParam = z
  .string({ error: "must be a cursor from next_cursor" })
  .max(1024, { error: "must be a cursor from next_cursor" });

/** The longest `q`. */
export const SEARCH_MAX_LENGTH = 200;

/**
 * `q`: search text of at least `minLength` characters (code points, surrounding spaces not
 * counted: the text searched is trimmed) and at most 200.
 */
export function searchParam(minLength: number) {
  const issue = `must be at least ${minLength} characters`;
  return z
    .string({ error: "must be text" })
    .max(SEARCH_MAX_LENGTH, { error: `must be at most ${SEARCH_MAX_LENGTH} characters` })
    .refine((q) => [...q.trim()].length >= minLength, { error: issue });
}

/** Query-string forms of scalar field types, for filters. */
export const queryInteger = z
  .string({ error: "must be an integer" })
  .regex(/^-?\d{1,15}$/, { error: "must be an integer" })
  .transform(Number);

export const queryNumber = z
  .string({ error: "must be a number" })
  .regex(/^-?\d{1,15}(\.\d{1,15})?$/, { error: "must be a number" })
  .transform(Number);

export const queryBoolean = z
  .enum(["true", "false"], { error: "must be true or false" })
  .transform((v) => v === "true");

export function offsetPagination(page: number, perPage: number, total: number): OffsetPagination {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) };
}
