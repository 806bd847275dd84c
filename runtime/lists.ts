/**
 * The two list modes of conventions §4.5 over a service: cursor (ascending id, `next_cursor`
 * null exactly when `has_more` is false) and offset (with totals).
 */
import type { ResourceService } from "./crud-service.ts";
import { listScope, type CursorCodec } from "./cursor.ts";
import { ValidationError } from "./errors.ts";
import { ISSUES } from "./messages.ts";
import { offsetPagination, type CursorPage, type OffsetPage } from "./pagination.ts";
import type { Match, SortKey, StoredRecord, Values } from "./store.ts";

export interface CursorParams {
  limit: number;
  cursor?: string | undefined;
}

export interface OffsetParams {
  page: number;
  per_page: number;
}

export async function listByCursor<V extends Values, T>(
  service: Pick<ResourceService<V>, "list">,
  codec: CursorCodec,
  path: string,
  params: CursorParams,
  match: Match,
  view: (record: StoredRecord<V>) => T,
  sort?: SortKey[],
): Promise<CursorPage<T>> {
  const scope = listScope(path, match.where, match.search?.text);
  let after: string | undefined;
  if (params.cursor !== undefined) {
    const decoded = codec.decode(scope, params.cursor);
    if (decoded === null) {
      throw new ValidationError([{ field: "cursor", issue: ISSUES.foreignCursor }]);
    }
    after = decoded;
  }
  const { records, hasMore } = await service.list({
    ...match,
    ...(sort ? { sort } : {}),
    limit: params.limit,
    ...(after === undefined ? {} : { after }),
  });
  const last = records[records.length - 1];
  return {
    data: records.map(view),
    pagination: {
      next_cursor: hasMore && last ? codec.encode(scope, last.id) : null,
      has_more: hasMore && last !== undefined,
    },
  };
}

export async function listByOffset<V extends Values, T>(
  service: Pick<ResourceService<V>, "page">,
  params: OffsetParams,
  match: Match,
  view: (record: StoredRecord<V>) => T,
  sort?: SortKey[],
): Promise<OffsetPage<T>> {
  const { records, total } = await service.page({
    ...match,
    ...(sort ? { sort } : {}),
    offset: (params.page - 1) * params.per_page,
    limit: params.per_page,
  });
  return { data: records.map(view), pagination: offsetPagination(params.page, params.per_page, total) };
}

/**
 * An offset list answers in one mode per request: `page` and `per_page` without `q`, `limit`
 * and `cursor` with it (a search is always cursor mode). A parameter of the other mode would be
 * ignored, so it answers 400 naming it, like any parameter the list does not take.
 */
export function checkListMode(query: unknown, search: boolean): void {
  if (typeof query !== "object" || query === null) return;
  const other = search ? ["page", "per_page"] : ["limit", "cursor"];
  const given = other.filter((name) => Object.hasOwn(query, name));
  if (given.length === 0) return;
  const issue = search ? ISSUES.listMode.search : ISSUES.listMode.offset;
  throw new ValidationError(given.map((field) => ({ field, issue })));
}
