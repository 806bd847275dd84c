/**
 * The two list modes of conventions §4.5 over a service: cursor (ascending id, or keyset over
 * the sort keys and id with `sort`; `next_cursor` null exactly when `has_more` is false) and
 * offset (with totals), both in the order of `sort` when given (SPEC §12.1).
 */
import { CrudService, type ResourceService } from "./crud-service.ts";
import { listScope, type CursorCodec } from "./cursor.ts";
import { ValidationError } from "./errors.ts";
import type { ReadContext } from "./hooks.ts";
import { found } from "./http.ts";
import { ISSUES } from "./messages.ts";
import { offsetPagination, type CursorPage, type OffsetPage } from "./pagination.ts";
import { positionOf } from "./sorting.ts";
import type { Match, SortKey, SortPosition, StoredRecord, Values } from "./store.ts";

export interface CursorParams {
  limit: number;
  cursor?: string | undefined;
}

export interface OffsetParams {
  page: number;
  per_page: number;
}

/**
 * One cursor page. With `sort` the cursor is keyset over (sort keys…, id): `next_cursor` holds the
 * last record's sort values and id. A cursor is bound to the path, the exact matches, the
 * operator conditions, `q` and the sort: one used with another answers 400 naming `cursor`.
 * `context` (who asks) is handed to the service's `list`.
 */
export async function listByCursor<V extends Values, T>(
  service: Pick<ResourceService<V>, "list">,
  codec: CursorCodec,
  path: string,
  params: CursorParams,
  match: Match & { parent?: ParentRead | undefined },
  view: (record: StoredRecord<V>) => T,
  sort?: readonly SortKey[],
  context?: ReadContext,
): Promise<CursorPage<T>> {
  const sorted = sort !== undefined && sort.length > 0;
  // A list under a parent read within a tenant (`parent.where`, SPEC §12.4) is bound to it too:
  // under the tenant collection itself the list's own `where` is the same for the tenant and for
  // the platform, whose cursors must not cross.
  const parentWhere = match.parent?.where;
  const where = parentWhere
    ? {
        ...match.where,
        ...Object.fromEntries(Object.entries(parentWhere).map(([k, v]) => [`parent.${k}`, v])),
      }
    : match.where;
  const scope = listScope(path, where, match.search?.text, { conditions: match.conditions, sort });
  let after: string | undefined;
  let afterPosition: SortPosition | undefined;
  if (params.cursor !== undefined) {
    const decoded = sorted ? codec.decodePosition(scope, params.cursor) : codec.decode(scope, params.cursor);
    if (decoded === null || (typeof decoded === "object" && decoded.values.length !== sort!.length)) {
      throw new ValidationError([{ field: "cursor", issue: ISSUES.foreignCursor }]);
    }
    if (typeof decoded === "string") after = decoded;
    else afterPosition = decoded;
  }
  const { records, hasMore, parent } = await service.list(
    {
      ...match,
      limit: params.limit,
      ...(sorted ? { sort } : {}),
      ...(after === undefined ? {} : { after }),
      ...(afterPosition === undefined ? {} : { afterPosition }),
    },
    context,
  );
  if (match.parent && parent !== undefined) match.parent.record = parent;
  const last = records[records.length - 1];
  let next: string | null = null;
  if (hasMore && last)
    next = sorted ? codec.encodePosition(scope, positionOf(last, sort)) : codec.encode(scope, last.id);
  return {
    data: records.map(view),
    pagination: { next_cursor: next, has_more: hasMore && last !== undefined },
  };
}

/**
 * The parent of a `list_under` list, for the store to read with the page (`CursorQuery.parent`):
 * `record` is set to what it read (null: no such parent), left undefined when it did not.
 */
export interface ParentRead {
  collection: string;
  id: string;
  where?: Values | undefined;
  record?: StoredRecord | null;
}

/**
 * A cursor list under a parent record (`list_under`, a child list) answers as if the parent were
 * read and authorized first: 404 when no parent has the id (or the tenant's scope hides it),
 * then whatever `check` (the authorization) throws, then the list's own 400s. The SQL store
 * reads the parent in the page's own statement (one round trip, not two) when the parent's
 * service reads as the default one does; `list` passes the `ParentRead` it is given on to
 * `listByCursor`. Otherwise, or when the list throws a ValidationError (a bad query or cursor,
 * which must not answer before the 404 and 403), the parent is read through its service, told
 * `context` (who asks).
 */
export async function listUnder<P extends Values, R>(
  service: Pick<ResourceService<P>, "get">,
  parent: { collection: string; id: string; where?: Values | undefined; name: string },
  check: (record: StoredRecord<P>) => Promise<void>,
  context: ReadContext | undefined,
  list: (read: ParentRead | undefined) => Promise<R>,
): Promise<R> {
  const read: ParentRead | undefined =
    service.get === CrudService.prototype.get
      ? { collection: parent.collection, id: parent.id, where: parent.where }
      : undefined;
  let page: R;
  try {
    page = await list(read);
  } catch (error) {
    if (error instanceof ValidationError)
      await check(found(await service.get(parent.id, parent.where, context), parent.name));
    throw error;
  }
  const record =
    read?.record !== undefined
      ? (read.record as StoredRecord<P> | null)
      : await service.get(parent.id, parent.where, context);
  await check(found(record, parent.name));
  return page;
}

/** One offset page, in the order of `sort` when given; `context` (who asks) is handed to the service's `page`. */
export async function listByOffset<V extends Values, T>(
  service: Pick<ResourceService<V>, "page">,
  params: OffsetParams,
  match: Match,
  view: (record: StoredRecord<V>) => T,
  sort?: readonly SortKey[],
  context?: ReadContext,
): Promise<OffsetPage<T>> {
  const { records, total } = await service.page(
    {
      ...match,
      offset: (params.page - 1) * params.per_page,
      limit: params.per_page,
      ...(sort !== undefined && sort.length > 0 ? { sort } : {}),
    },
    context,
  );
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
