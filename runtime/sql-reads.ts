/**
 * The SQL store's reads (sql-store.ts): a record by id (`get`, with a tenant's `where` in its
 * statement), cursor lists in id order or sorted (keyset pagination, the parent of a `list_under`
 * list read in the same statement), and counted offset pages. One statement each, every value a
 * parameter, every statement named once (sql-statements.ts).
 */
import {
  linkedIdsOfPage,
  parameter,
  quoteIdentifier as q,
  readExpression,
  SYSTEM_SELECT,
} from "./sql-codec.ts";
import type { Row, Statement } from "./sql-driver.ts";
import { translateSqlError } from "./sql-errors.ts";
import { keysetCondition, orderTerm, sortParameter, sortParameterValue } from "./sql-sort.ts";
import {
  recordOf,
  SYSTEM_NAMES,
  type OrderKey,
  type Prepared,
  type Projection,
  type SqlContext,
} from "./sql-tables.ts";
import type {
  CursorQuery,
  ListPage,
  OffsetQuery,
  SortKey,
  SortPosition,
  StoredRecord,
  Values,
} from "./store.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `Store.get`. */
export async function getRecord(
  sql: SqlContext,
  collection: string,
  id: string,
  where?: Values,
): Promise<StoredRecord | null> {
  const { tables } = sql;
  const p = tables.collection(collection);
  if (!UUID.test(id)) return null;
  let rows: Row[];
  if (where) {
    // Scoped (a tenant's, SPEC §12.4): the match is part of the statement, made once for its
    // fields (a null value is `is null` in the text, so only values that are not null reuse it).
    const params: unknown[] = [id];
    const fields = Object.keys(where);
    const key = fields.join(",");
    const made = fields.every((field) => where[field] != null) ? p.scopedGets.get(key) : undefined;
    if (made) {
      for (const field of made.fields) {
        if (field === "id") params.push(where[field]);
        else parameter(tables.column(p, field), where[field], params);
      }
      rows = await read(sql, collection, made.statement, params);
    } else {
      const text = `select ${p.select} from ${p.table} where "id" = $1${tables.andWhere(p, where, params)}`;
      const statement = tables.statement(text);
      if (fields.every((field) => where[field] != null)) {
        const order = [...fields].sort((a, b) => (p.order.get(a) ?? -1) - (p.order.get(b) ?? -1));
        p.scopedGets.set(key, { statement, fields: fields.length > 1 ? order : fields });
      }
      rows = await read(sql, collection, statement, params);
    }
  } else rows = await read(sql, collection, p.get, [id]);
  return rows[0] ? recordOf(p, rows[0]) : null;
}

/** `Store.list`. */
export async function listRecords(
  sql: SqlContext,
  collection: string,
  query: CursorQuery,
): Promise<ListPage> {
  const p = sql.tables.collection(collection);
  if (query.sort?.length) return sortedList(sql, collection, p, query, query.sort);
  const params: unknown[] = [];
  const where = sql.tables.conditions(p, query, params);
  if (query.after !== undefined) {
    params.push(query.after);
    where.push(`"id" > $${params.length}`);
  }
  return cursorPage(sql, collection, p, query, where, params, `"id"`);
}

/** A sorted cursor page: keyset over (sort keys…, id) after `afterPosition`. */
async function sortedList(
  sql: SqlContext,
  collection: string,
  p: Prepared,
  query: CursorQuery,
  sort: readonly SortKey[],
): Promise<ListPage> {
  const params: unknown[] = [];
  const where = sql.tables.conditions(p, query, params);
  const { terms, keys } = sql.tables.orderBy(p, sort);
  const position: SortPosition | undefined = query.afterPosition;
  if (position) {
    const parts = keys.map(({ key, target, expression }, i) => {
      const value = position.values[i];
      if (value === null || value === undefined)
        return { expression, parameter: null, descending: key.descending, notNull: target.notNull };
      params.push(sortParameterValue(target, value));
      return {
        expression,
        parameter: sortParameter(target, key.ordering, key.rank, `$${params.length}`),
        descending: key.descending,
        notNull: target.notNull,
      };
    });
    params.push(position.id);
    where.push(keysetCondition(parts, `$${params.length}::uuid`));
  }
  return cursorPage(sql, collection, p, query, where, params, terms, keys);
}

/**
 * Runs a cursor page's statement. With `query.parent` (a `list_under` list, lists.ts) the parent
 * record is read in the same statement; no parent row means no parent (or one the parent's
 * `where` does not match): no page. Without link arrays, the parent's row comes after the
 * page's (`pageUnderParent`). A page with arrays of ids kept in link tables is read first
 * (`"canon__rows"`) and their ids joined to it, one aggregate for the page (`pageLinks`); under a
 * parent, that page is joined to the parent's row, whose columns are filled in the first row
 * only (the page's rows do not each carry, and the driver does not decode 20 times, the same
 * parent). A page joined so keeps its order through its sort keys, selected as `_sort<i>`.
 */
async function cursorPage(
  sql: SqlContext,
  collection: string,
  p: Prepared,
  query: CursorQuery,
  where: string[],
  params: unknown[],
  terms: string,
  keys: OrderKey[] = [],
): Promise<ListPage> {
  const { tables } = sql;
  params.push(query.limit + 1);
  const filter = where.length ? ` where ${where.join(" and ")}` : "";
  const limit = `$${params.length}`;
  const parent = query.parent;
  const v = tables.projection(p, query.fields, query.sort);
  const links = pageLinks(v);
  if (!parent && !links) {
    const text = `select ${v.select} from ${p.table}${filter} order by ${terms} limit ${limit}`;
    const rows = await read(sql, collection, tables.statement(text), params);
    const hasMore = rows.length > query.limit;
    return { records: rows.slice(0, query.limit).map((r) => recordOf(v, r)), hasMore };
  }
  if (parent && !UUID.test(parent.id)) return { records: [], hasMore: false, parent: null };
  if (parent && !links) return pageUnderParent(sql, collection, p, v, query, parent, filter, terms, params);
  const sorts = keys.map((k, i) => `, ${k.expression} as "_sort${i}"`).join("");
  const outer = keys.map((k, i) =>
    orderTerm(`"canon__page"."_sort${i}"`, k.key.descending, k.target.notNull),
  );
  const last = query.sort?.[query.sort.length - 1];
  outer.push(last?.descending ? `"canon__page"."id" desc` : `"canon__page"."id"`);
  const inner = `select ${links ? links.select : v.select}${sorts} from ${p.table}${filter} order by ${terms} limit ${limit}`;
  const page = links ? `"canon__rows" "canon__page"` : `(${inner}) "canon__page"`;
  let select = `select "canon__page".*${links ? `, ${links.columns}` : ""}`;
  let from = page;
  const pp = parent ? tables.collection(parent.collection) : null;
  const asParent = pp ? parentColumns(pp) : null;
  if (parent && pp && asParent) {
    select += `, ${asParent.select}`;
    from = `(select ${pp.select} from ${pp.table} where ${parentCondition(sql, pp, parent, params)}) "canon__parent" left join ${page} on true`;
  }
  const text =
    `${links ? `with "canon__rows" as materialized (${inner}) ` : ""}${select} from ${from}${links ? links.joins : ""} ` +
    `order by ${outer.join(", ")}`;
  const rows = await read(sql, collection, tables.statement(text), params);
  if (!pp || !asParent) {
    return {
      records: rows.slice(0, query.limit).map((r) => recordOf(v, r)),
      hasMore: rows.length > query.limit,
    };
  }
  const holder = parentHolder(rows);
  if (!holder) return { records: [], hasMore: false, parent: null };
  const found = holder.id === null || holder.id === undefined ? [] : rows;
  return {
    records: found.slice(0, query.limit).map((r) => recordOf(v, r)),
    hasMore: found.length > query.limit,
    parent: parentOf(pp, asParent, holder),
  };
}

/**
 * A `list_under` page without link arrays and its parent's row (`cursorPage`), in one `union
 * all`: the page's rows in their order (an Append keeps its first branch's rows in that branch's
 * order, as each process of a parallel plan does), the parent's columns null in them, then the
 * parent's row, the page's columns null in it, told apart by its `id` (`canon__p0`). PostgreSQL
 * reads the page and the parent's row by their indexes and does nothing more (no join, no sort
 * again); the page is read even when no parent matches, and then not answered.
 */
async function pageUnderParent(
  sql: SqlContext,
  collection: string,
  p: Prepared,
  v: Projection,
  query: CursorQuery,
  parent: NonNullable<CursorQuery["parent"]>,
  filter: string,
  terms: string,
  params: unknown[],
): Promise<ListPage> {
  const { tables } = sql;
  const limit = `$${params.length}`;
  const pp = tables.collection(parent.collection);
  const asParent = parentColumns(pp);
  const own = parentCondition(sql, pp, parent, params);
  const pageNulls = Array(SYSTEM_NAMES.length + v.list.length)
    .fill("null")
    .join(", ");
  const text =
    `(select ${v.select}, ${asParent.nulls} from ${p.table}${filter} order by ${terms} limit ${limit}) ` +
    `union all (select ${pageNulls}, ${pp.select} from ${pp.table} where ${own})`;
  const rows = await read(sql, collection, tables.statement(text), params);
  const holder = parentHolder(rows);
  if (!holder) return { records: [], hasMore: false, parent: null };
  const found = rows.filter((row) => row !== holder);
  return {
    records: found.slice(0, query.limit).map((r) => recordOf(v, r)),
    hasMore: found.length > query.limit,
    parent: parentOf(pp, asParent, holder),
  };
}

/** The condition on a `list_under` page's parent row: its id and the parent's `where` (a tenant's scope); parameters are appended to `params`. */
function parentCondition(
  sql: SqlContext,
  pp: Prepared,
  parent: NonNullable<CursorQuery["parent"]>,
  params: unknown[],
): string {
  params.push(parent.id);
  return [
    `"id" = $${params.length}::uuid`,
    ...sql.tables.conditions(pp, { where: parent.where ?? {} }, params),
  ].join(" and ");
}

/** The row of a `list_under` page's statement that holds its parent's columns; undefined when no parent matched. */
function parentHolder(rows: Row[]): Row | undefined {
  return rows.find((row) => row.canon__p0 !== null && row.canon__p0 !== undefined);
}

/** The parent record from the row that holds its columns (`canon__p<i>`). */
function parentOf(pp: Prepared, asParent: ParentColumns, holder: Row): StoredRecord {
  const parentRow: Row = {};
  for (const { alias, name } of asParent.columns) parentRow[name] = holder[alias];
  return recordOf(pp, parentRow);
}

/**
 * How a page reads the arrays of ids its projection holds that are kept in link tables: its own
 * columns with its row id (`select`, read into `"canon__rows"`), then each array's ids from one
 * aggregate of the page's links (`joins`, `columns`: `[]` for a row without links). Null without
 * such an array. Made once per projection.
 */
interface PageLinks {
  select: string;
  columns: string;
  joins: string;
}

const pageLinksOf = new WeakMap<Projection, PageLinks | null>();

function pageLinks(v: Projection): PageLinks | null {
  let made = pageLinksOf.get(v);
  if (made === undefined) {
    const linked = v.list.filter((column) => column.link);
    made = linked.length
      ? {
          select: [
            ...SYSTEM_SELECT,
            ...v.list.filter((column) => !column.link).map(readExpression),
            `"row_id" as "canon__row"`,
          ].join(", "),
          columns: linked
            .map(
              (column, i) => `coalesce("canon__links${i}"."ids", '[]'::jsonb)::text as ${q(column.column)}`,
            )
            .join(", "),
          joins: linked.map((column, i) => linkedIdsOfPage(column.link!, `"canon__links${i}"`)).join(""),
        }
      : null;
    pageLinksOf.set(v, made);
  }
  return made;
}

/** How a parent's row is read with a `list_under` page (`cursorPage`): made once per table. */
interface ParentColumns {
  /** Its columns under names of their own (`canon__p<i>`, in the order of its select), in one row of the page. */
  select: string;
  /** As many nulls under those names: the page's rows in a `union all` with the parent's row. */
  nulls: string;
  /** Each column's name in the result, and its own. */
  columns: ReadonlyArray<{ alias: string; name: string }>;
}

const parentColumnsOf = new WeakMap<Prepared, ParentColumns>();

/** The columns of `pp` as a `list_under` page reads its parent; its `id` is `canon__p0`, never null in the row that holds it. */
function parentColumns(pp: Prepared): ParentColumns {
  let made = parentColumnsOf.get(pp);
  if (!made) {
    const columns = [...SYSTEM_NAMES, ...pp.list.map((column) => column.column)].map((name, i) => ({
      alias: `canon__p${i}`,
      name,
    }));
    const select = columns
      .map(
        ({ alias, name }) =>
          `case when row_number() over () = 1 then "canon__parent".${q(name)} end as "${alias}"`,
      )
      .join(", ");
    const nulls = columns.map(({ alias }) => `null as "${alias}"`).join(", ");
    parentColumnsOf.set(pp, (made = { select, nulls, columns }));
  }
  return made;
}

/**
 * An offset page's statement: the total and the page's rows (`"canon__page"`) in one snapshot;
 * with arrays of ids kept in link tables, the page is read first and their ids joined to it in
 * one aggregate (`pageLinks`), as a cursor page does.
 */
function offsetPageText(
  p: Prepared,
  v: Projection,
  filter: string,
  order: string,
  outer: string,
  keys: string,
  limit: string,
  offset: string,
): string {
  const links = pageLinks(v);
  const rows =
    `select ${links ? links.select : v.select}${keys} from ${p.table} where "id" in ` +
    `(select "id" from ${p.table}${filter} ${order} limit ${limit} offset ${offset})`;
  const total = `(select count(*) as _total from ${p.table}${filter}) t`;
  if (!links)
    return `select t._total, "canon__page".* from ${total} left join (${rows}) "canon__page" on true ${outer}`;
  return (
    `with "canon__rows" as materialized (${rows}) ` +
    `select t._total, "canon__page".*, ${links.columns} from ${total} left join "canon__rows" "canon__page" on true${links.joins} ${outer}`
  );
}

/** `Store.page`. */
export async function pageOf(
  sql: SqlContext,
  collection: string,
  query: OffsetQuery,
): Promise<{ records: StoredRecord[]; total: number }> {
  const { tables } = sql;
  const p = tables.collection(collection);
  const params: unknown[] = [];
  const where = tables.conditions(p, query, params);
  const filter = where.length ? ` where ${where.join(" and ")}` : "";
  params.push(query.limit, query.offset);
  const limit = `$${params.length - 1}`;
  const offset = `$${params.length}`;
  // One statement, one snapshot: the total and the page always agree. The rows skipped by
  // the offset are walked on the id index only (or the sort's); columns are read for the page's
  // rows alone. A sorted page orders its rows again by the keys, selected as `_sort<i>`.
  let order = `order by "id"`;
  let outer = `order by "canon__page"."id"`;
  let keys = "";
  if (query.sort?.length) {
    const sorted = tables.orderBy(p, query.sort);
    order = `order by ${sorted.terms}`;
    keys = sorted.keys.map((k, i) => `, ${k.expression} as "_sort${i}"`).join("");
    const terms = sorted.keys.map((k, i) =>
      orderTerm(`"canon__page"."_sort${i}"`, k.key.descending, k.target.notNull),
    );
    terms.push(
      query.sort[query.sort.length - 1]!.descending ? `"canon__page"."id" desc` : `"canon__page"."id"`,
    );
    outer = `order by ${terms.join(", ")}`;
  }
  const v = tables.projection(p, query.fields, query.sort);
  const rows = await read(
    sql,
    collection,
    tables.statement(offsetPageText(p, v, filter, order, outer, keys, limit, offset)),
    params,
  );
  const total = Number(rows[0]?._total ?? 0);
  return {
    records: rows.filter((r) => r.id !== null && r.id !== undefined).map((r) => recordOf(v, r)),
    total,
  };
}

/**
 * Runs a read; a failure becomes the API's error. No async frame and no closure: a read is
 * what most requests do.
 */
function read(
  sql: SqlContext,
  collection: string,
  statement: Statement | string,
  params: readonly unknown[],
): Promise<Row[]> {
  return sql.db.query(statement, params).catch((error: unknown) => {
    throw translateSqlError(error, sql.schema, collection, "read");
  });
}
