// The list envelopes of conventions §4.5 and the page sizes of §8, defined once: the runtime's
// lists answer with them, the generator documents them, and every generated client holds this
// file's text as it is (it imports nothing, so a client stays one file).

/** Records in a page when the query names no size. */
export const DEFAULT_PAGE_SIZE = 20;
/** The most records a page holds; a larger page size is answered with 400. */
export const MAX_PAGE_SIZE = 100;
/** The most keys one `?sort=` takes (SPEC §12.1). */
export const MAX_SORT_KEYS = 3;
/**
 * `sort` in a typed query: one key, or up to `MAX_SORT_KEYS` in order (an array of more does not
 * compile). A field named twice (`["fee", "-fee"]`) compiles, and the client refuses it before
 * sending, with the service's 400 (`ValidationError` naming `sort`).
 */
export type SortOrder<K extends string> = K | readonly [K] | readonly [K, K] | readonly [K, K, K];
/** The longest `q` (characters, as JavaScript counts them); the shortest is the version's `search_min_length`. */
export const SEARCH_MAX_LENGTH = 200;
/** The most values one `[in]` filter takes, comma-separated (SPEC §12.2). */
export const MAX_IN_VALUES = 100;

/** Cursor mode: follow `next_cursor` until it is null (`has_more` false). */
export interface CursorPagination {
  next_cursor: string | null;
  has_more: boolean;
}

/** Offset mode: `page` of `total_pages`. */
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
