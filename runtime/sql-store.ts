/**
 * The store over PostgreSQL (a server through `pg`, or PGlite in the process), with the same
 * behaviour as the memory store: ascending-id keyset lists, counted pages, case-insensitive
 * search, unique values (409), references that must exist (422), and writes that are atomic
 * compare-and-set on a revision. Every query is parameterized; every query names the columns
 * it reads, and `row_id` is never among them.
 *
 * The tables come from the generated migrations (sql-migrations.ts applies them);
 * `sql/schema.ts` tells the store which column holds which field and how (sql-schema.ts).
 *
 * A write given `publish` runs in one transaction with its event (the `canon__events` table,
 * see sql-events.ts): both commit or neither does. `transaction(fn)` runs more statements in
 * one; a write that changes more records (a cascade) keeps their events with
 * `insertEvents(tx, events)` there, and hands the events it returns (with the ids and times the
 * database gave them) to `published(events)` after the commit.
 */
import type {
  Condition,
  CursorQuery,
  ListPage,
  DeleteArgs,
  InsertArgs,
  Match,
  OffsetQuery,
  SortKey,
  SortPosition,
  Store,
  StoredRecord,
  UpdateArgs,
  Values,
  Write,
} from "./store.ts";
import type { CursorKey } from "./cursor-keys.ts";
import { BusinessRuleError, ConflictError } from "./errors.ts";
import {
  EventSinks,
  type ApiEvent,
  type EventOf,
  type EventScope,
  type EventSink,
  type StoredEvent,
} from "./events.ts";
import {
  containsPattern,
  decodeRecord,
  parameter,
  placeholder,
  quoteIdentifier as q,
  readExpression,
  sameJson,
  storedImage,
  SYSTEM_SELECT,
} from "./sql-codec.ts";
import type { Row, SqlDriver, SqlQueryable, Statement } from "./sql-driver.ts";
import { translateSqlError, type SqlOperation } from "./sql-errors.ts";
import {
  cursorKeys,
  getEvent,
  insertEvents,
  keptEvent,
  listEvents,
  rotateCursorKey,
  setEventData,
  writeWithEvent,
} from "./sql-events.ts";
import { activeClaim, adoptedOr, ClaimLostError } from "./idempotency.ts";
import { CLAIM_LOST_SQLSTATE, markClaim, SqlIdempotencyKeys } from "./sql-idempotency.ts";
import {
  cascadeTooLargeError,
  DEFAULT_CASCADE_LIMIT,
  referencesTo,
  updatedKey,
  type StoreReference,
} from "./references.ts";
import { COLUMN_SQL_TYPES, isJsonKind, LINK_COLUMNS, type SqlColumn, type SqlSchema } from "./sql-schema.ts";
import { StatementCache } from "./sql-statements.ts";
import {
  arrayLiteral,
  keysetCondition,
  orderTerm,
  sortExpression,
  sortParameter,
  sortParameterValue,
  type SortTarget,
} from "./sql-sort.ts";

export { openDriver, type SqlDriver, type SqlQueryable, type SqlStoreOptions } from "./sql-driver.ts";
export { migrate, readMigrations, type MigrationFile } from "./sql-migrations.ts";
export type { ColumnKind, SqlCollection, SqlColumn, SqlConstraint, SqlSchema } from "./sql-schema.ts";

/** `created_at` and `updated_at`: timestamptz columns every table has. */
const SYSTEM_TARGETS: Readonly<Record<string, SortTarget>> = {
  created_at: { column: "created_at", kind: "timestamptz", notNull: true },
  updated_at: { column: "updated_at", kind: "timestamptz", notNull: true },
};

/** The names of the system columns `SYSTEM_SELECT` reads, in its order. */
const SYSTEM_NAMES = ["id", "created_at", "updated_at", "_revision"];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Thrown inside `writeAll`'s transaction when a record to write is gone: rolls it back. */
class Gone extends Error {}

/** What a write kept: the record as read back, and its event when the store made it. */
interface Kept {
  record: StoredRecord;
  event?: StoredEvent;
}

/** The columns a read selects and decodes: a table's all, or a list's projection (`Match.fields`). */
interface Projection {
  select: string;
  list: SqlColumn[];
}

interface Prepared extends Projection {
  table: string;
  columns: Map<string, SqlColumn>;
  /** Position of each field in the table: conditions are written in this order, whatever the query's. */
  order: Map<string, number>;
  /** The columns of the table itself: `list` without the arrays kept in link tables. */
  stored: SqlColumn[];
  /** The arrays of referencing ids kept in link tables (SPEC §12.3): written after the row, in its transaction. */
  links: SqlColumn[];
  /** The statements every request of one kind runs. */
  get: Statement | string;
  /**
   * The reads by id with a `where` (a tenant principal's, SPEC §12.4), by its fields: the statement
   * and the fields in the order of its parameters, made once.
   */
  scopedGets: Map<string, { statement: Statement | string; fields: string[] }>;
  update: Statement | string;
  delete: Statement | string;
  revision: Statement | string;
  /** The lists' projections, by their fields and sort's fields: made once each. */
  projections: Map<string, Projection>;
}

export class SqlStore implements Store {
  private readonly db: SqlDriver;
  private readonly schema: SqlSchema;
  private readonly prepared = new Map<string, Prepared>();
  private readonly statements = new StatementCache();
  private readonly sinks = new EventSinks();
  private closing: Promise<void> | undefined;
  /** By referenced collection: the `cascade` references to it (whose records a delete takes along). */
  private readonly cascades: Map<string, StoreReference[]>;
  /** Whether some cascade removes ids from arrays: a delete then always runs in a transaction, to update their records. */
  private readonly arrayCascades: boolean;
  /** The idempotency keys of POSTs (the table `canon__idempotency_keys`, sql-idempotency.ts). */
  readonly idempotency: SqlIdempotencyKeys;
  /** Most records one delete takes along (`cascadeLimit`); beyond it the delete answers 422. */
  private readonly cascadeLimit: number;

  /**
   * `references` (the generated `storeReferences`) tells a delete which records its foreign keys
   * delete with it, so that their `.deleted` events are kept in its transaction too.
   * `options.cascadeLimit` (default 10,000) bounds how many.
   */
  constructor(
    db: SqlDriver,
    schema: SqlSchema,
    references: readonly StoreReference[] = [],
    options: { cascadeLimit?: number } = {},
  ) {
    this.db = db;
    this.schema = schema;
    this.cascades = referencesTo(references.filter((reference) => reference.onDelete === "cascade"));
    this.arrayCascades = references.some((reference) => reference.onDelete === "cascade" && reference.many);
    this.cascadeLimit = options.cascadeLimit ?? DEFAULT_CASCADE_LIMIT;
    this.idempotency = new SqlIdempotencyKeys(db);
  }

  /** The driver, for queries of your own (reports, health checks). */
  get driver(): SqlDriver {
    return this.db;
  }

  private collection(name: string): Prepared {
    let p = this.prepared.get(name);
    if (!p) {
      const c = this.schema.collections[name];
      if (!c) throw new Error(`the SQL schema has no collection "${name}"`);
      const table = q(c.table);
      const select = [...SYSTEM_SELECT, ...c.columns.map(readExpression)].join(", ");
      const stored = c.columns.filter((column) => !column.link);
      const sets = stored.map((column, i) => `${q(column.column)} = ${placeholder(column, i + 4)}`);
      sets.push(
        `"_revision" = "_revision" + 1`,
        `"updated_at" = greatest($3::timestamptz, "updated_at" + interval '1 millisecond')`,
      );
      p = {
        table,
        select,
        columns: new Map(c.columns.map((col) => [col.field, col])),
        order: new Map(c.columns.map((col, i) => [col.field, i])),
        list: c.columns,
        stored,
        links: c.columns.filter((column) => column.link),
        get: this.statements.get(`select ${select} from ${table} where "id" = $1`),
        scopedGets: new Map(),
        update: this.statements.get(
          `update ${table} set ${sets.join(", ")} where "id" = $1 and "_revision" = $2 returning ${select}`,
        ),
        // The record as it was: the event of a delete shows it.
        delete: this.statements.get(
          `delete from ${table} where "id" = $1 and "_revision" = $2 returning ${select}`,
        ),
        revision: this.statements.get(`select "_revision" from ${table} where "id" = $1`),
        projections: new Map(),
      };
      this.prepared.set(name, p);
    }
    return p;
  }

  private toRecord(p: Projection, row: Row): StoredRecord {
    return decodeRecord(p.list, row);
  }

  /**
   * What a list of `p` reads: the columns of `fields` (a version's view, `Match.fields`) and of the
   * sort, or all of them without `fields`. A projection that leaves nothing out is the table's own
   * select, so its statements are the same; each other one has its own, named and made once.
   */
  private projection(
    p: Prepared,
    fields: readonly string[] | undefined,
    sort: readonly SortKey[] | undefined,
  ): Projection {
    if (!fields) return p;
    const key = sort?.length ? `${fields.join(",")}|${sort.map((k) => k.field).join(",")}` : fields.join(",");
    let made = p.projections.get(key);
    if (!made) {
      const wanted = new Set([...fields, ...(sort ?? []).map((k) => k.field)]);
      const list = p.list.filter((column) => wanted.has(column.field));
      made =
        list.length === p.list.length
          ? p
          : { select: [...SYSTEM_SELECT, ...list.map(readExpression)].join(", "), list };
      p.projections.set(key, made);
    }
    return made;
  }

  private column(p: Prepared, field: string): SqlColumn {
    const column = p.columns.get(field);
    if (!column) throw new Error(`the SQL schema has no field "${field}" in ${p.table}`);
    return column;
  }

  /** The WHERE conditions of a match; parameters are appended to `params`. */
  private conditions(p: Prepared, match: Match, params: unknown[]): string[] {
    const out: string[] = [];
    const fields = Object.keys(match.where);
    if (fields.length > 1) fields.sort((a, b) => (p.order.get(a) ?? -1) - (p.order.get(b) ?? -1));
    for (const field of fields) {
      const value = match.where[field];
      if (value === undefined) continue;
      if (field === "id") {
        params.push(value);
        out.push(`"id" = $${params.length}::uuid`);
        continue;
      }
      const column = this.column(p, field);
      if (value === null && !isJsonKind(column.kind)) out.push(`${q(column.column)} is null`);
      else out.push(`${q(column.column)} = ${parameter(column, value, params)}`);
    }
    if (match.conditions) {
      for (const condition of match.conditions) out.push(this.condition(p, condition, params));
    }
    if (match.contains) out.push(this.contains(p, match.contains.field, match.contains.id, params));
    if (match.search) {
      const texts = match.search.fields.flatMap((field) => {
        const column = this.column(p, field);
        const c = q(column.column);
        switch (column.kind) {
          case "text":
            return [c];
          case "wrapped":
            return [`(${c} #>> '{}')`];
          case "uuid":
          case "date":
            return [`${c}::text`];
          default:
            return [];
        }
      });
      if (!texts.length) out.push("false");
      else {
        params.push(containsPattern(match.search.text));
        const n = params.length;
        out.push(`(${texts.map((t) => `${t} ilike $${n}`).join(" or ")})`);
      }
    }
    return out;
  }

  /** The records whose array `field` holds `id`: through the link table's target index, else jsonb containment. */
  private contains(p: Prepared, field: string, id: string, params: unknown[]): string {
    const column = this.column(p, field);
    params.push(id);
    const n = params.length;
    if (!column.link) return `${q(column.column)} @> jsonb_build_array($${n}::text)`;
    const { owner, target } = LINK_COLUMNS;
    return (
      `${p.table}."row_id" in (select "canon__l".${q(owner)} from ${q(column.link.table)} "canon__l" ` +
      `where "canon__l".${q(target)} = (select "row_id" from ${q(column.link.target)} where "id" = $${n}::uuid))`
    );
  }

  /** What a sort key or condition is over: `created_at`/`updated_at`, or a field's column. */
  private target(p: Prepared, field: string): SortTarget {
    const system = SYSTEM_TARGETS[field];
    if (system) return system;
    const column = this.column(p, field);
    return { column: column.column, kind: column.kind, notNull: column.notNull === true };
  }

  /** One operator condition (SPEC §12.2); nulls never meet `in` or a range. */
  private condition(p: Prepared, condition: Condition, params: unknown[]): string {
    const target = this.target(p, condition.field);
    const c = q(target.column);
    const json = target.kind === "json" || target.kind === "wrapped";
    if (condition.op === "null") {
      // In jsonb, JSON null is null too.
      if (json)
        return condition.value
          ? `(${c} is null or ${c} = 'null'::jsonb)`
          : `(${c} is not null and ${c} <> 'null'::jsonb)`;
      return `${c} ${condition.value ? "is null" : "is not null"}`;
    }
    if (condition.op === "in") {
      if (condition.ordering === "instant" && target.kind !== "timestamptz") {
        // Date-times kept as text: each value through the instant expression.
        params.push(arrayLiteral(condition.values));
        const values = `select ${sortParameter(target, "instant", undefined, "v")} from unnest($${params.length}::text[]) v`;
        return `${sortExpression(target, "instant")} in (${values})`;
      }
      if (json) {
        params.push(arrayLiteral(condition.values.map((v) => JSON.stringify(v))));
        return `${c} = any($${params.length}::jsonb[])`;
      }
      params.push(arrayLiteral(condition.values.map((v) => sortParameterValue(target, v))));
      return `${c} = any($${params.length}::${target.kind === "timestamptz" ? "timestamptz" : COLUMN_SQL_TYPES[target.kind]}[])`;
    }
    params.push(sortParameterValue(target, condition.value));
    const op = { gt: ">", gte: ">=", lt: "<", lte: "<=" }[condition.op];
    return `${sortExpression(target, condition.ordering)} ${op} ${sortParameter(target, condition.ordering, undefined, `$${params.length}`)}`;
  }

  /** The ORDER BY of `sort` (then `"id"` in the last key's direction) and each key's expression and target. */
  private orderBy(
    p: Prepared,
    sort: readonly SortKey[],
  ): { terms: string; keys: Array<{ key: SortKey; target: SortTarget; expression: string }> } {
    const keys = sort.map((key) => {
      const target = this.target(p, key.field);
      return { key, target, expression: sortExpression(target, key.ordering, key.rank) };
    });
    // A bare column name in ORDER BY would name the select's output column of that name
    // (`"created_at"::text as "created_at"`): qualified, it is the table's column, which the index holds.
    const terms = keys.map((k) =>
      orderTerm(
        k.expression.startsWith('"') ? `${p.table}.${k.expression}` : k.expression,
        k.key.descending,
        k.target.notNull,
      ),
    );
    terms.push(sort[sort.length - 1]!.descending ? `"id" desc` : `"id"`);
    return { terms: terms.join(", "), keys };
  }

  /** A sorted cursor page: keyset over (sort keys…, id) after `afterPosition`. */
  private async sortedList(
    collection: string,
    p: Prepared,
    query: CursorQuery,
    sort: readonly SortKey[],
  ): Promise<ListPage> {
    const params: unknown[] = [];
    const where = this.conditions(p, query, params);
    const { terms, keys } = this.orderBy(p, sort);
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
    return this.cursorPage(collection, p, query, where, params, terms, keys);
  }

  async list(collection: string, query: CursorQuery): Promise<ListPage> {
    const p = this.collection(collection);
    if (query.sort?.length) return this.sortedList(collection, p, query, query.sort);
    const params: unknown[] = [];
    const where = this.conditions(p, query, params);
    if (query.after !== undefined) {
      params.push(query.after);
      where.push(`"id" > $${params.length}`);
    }
    return this.cursorPage(collection, p, query, where, params, `"id"`);
  }

  /**
   * Runs a cursor page's statement. With `query.parent` (a `list_under` list, lists.ts) the parent
   * record is read in the same statement: the page is joined to the parent's row, so no row means
   * no parent (or one the parent's `where` does not match), and a parent with an empty page gives
   * one row of nulls on the page's side. The page keeps its order through its sort keys, selected
   * as `_sort<i>`.
   */
  private async cursorPage(
    collection: string,
    p: Prepared,
    query: CursorQuery,
    where: string[],
    params: unknown[],
    terms: string,
    keys: Array<{ key: SortKey; target: SortTarget; expression: string }> = [],
  ): Promise<ListPage> {
    params.push(query.limit + 1);
    const filter = where.length ? ` where ${where.join(" and ")}` : "";
    const limit = `$${params.length}`;
    const parent = query.parent;
    const v = this.projection(p, query.fields, query.sort);
    if (!parent) {
      const text = `select ${v.select} from ${p.table}${filter} order by ${terms} limit ${limit}`;
      const rows = await this.read(collection, this.statements.get(text), params);
      const hasMore = rows.length > query.limit;
      return { records: rows.slice(0, query.limit).map((r) => this.toRecord(v, r)), hasMore };
    }
    if (!UUID.test(parent.id)) return { records: [], hasMore: false, parent: null };
    const pp = this.collection(parent.collection);
    params.push(parent.id);
    const own = [
      `"id" = $${params.length}::uuid`,
      ...this.conditions(pp, { where: parent.where ?? {} }, params),
    ];
    // The parent's columns under names of their own (`canon__p<i>`), in the order of its select.
    const names = [...SYSTEM_NAMES, ...pp.list.map((column) => column.column)];
    const parentColumns = names.map((name, i) => `"canon__parent".${q(name)} as "canon__p${i}"`).join(", ");
    const sorts = keys.map((k, i) => `, ${k.expression} as "_sort${i}"`).join("");
    const outer = keys.map((k, i) =>
      orderTerm(`"canon__page"."_sort${i}"`, k.key.descending, k.target.notNull),
    );
    const last = query.sort?.[query.sort.length - 1];
    outer.push(last?.descending ? `"canon__page"."id" desc` : `"canon__page"."id"`);
    const text =
      `select "canon__page".*, ${parentColumns} from (select ${pp.select} from ${pp.table} where ${own.join(" and ")}) "canon__parent" ` +
      `left join (select ${v.select}${sorts} from ${p.table}${filter} order by ${terms} limit ${limit}) "canon__page" on true ` +
      `order by ${outer.join(", ")}`;
    const rows = await this.read(collection, this.statements.get(text), params);
    const first = rows[0];
    if (!first) return { records: [], hasMore: false, parent: null };
    const parentRow: Row = {};
    names.forEach((name, i) => (parentRow[name] = first[`canon__p${i}`]));
    const page = first.id === null || first.id === undefined ? [] : rows;
    return {
      records: page.slice(0, query.limit).map((r) => this.toRecord(v, r)),
      hasMore: page.length > query.limit,
      parent: this.toRecord(pp, parentRow),
    };
  }

  async page(collection: string, query: OffsetQuery): Promise<{ records: StoredRecord[]; total: number }> {
    const p = this.collection(collection);
    const params: unknown[] = [];
    const where = this.conditions(p, query, params);
    const filter = where.length ? ` where ${where.join(" and ")}` : "";
    params.push(query.limit, query.offset);
    const limit = `$${params.length - 1}`;
    const offset = `$${params.length}`;
    // One statement, one snapshot: the total and the page always agree. The rows skipped by
    // the offset are walked on the id index only (or the sort's); columns are read for the page's
    // rows alone. A sorted page orders its rows again by the keys, selected as `_sort<i>`.
    let order = `order by "id"`;
    let outer = `order by p."id"`;
    let keys = "";
    if (query.sort?.length) {
      const sorted = this.orderBy(p, query.sort);
      order = `order by ${sorted.terms}`;
      keys = sorted.keys.map((k, i) => `, ${k.expression} as "_sort${i}"`).join("");
      const terms = sorted.keys.map((k, i) => orderTerm(`p."_sort${i}"`, k.key.descending, k.target.notNull));
      terms.push(query.sort[query.sort.length - 1]!.descending ? `p."id" desc` : `p."id"`);
      outer = `order by ${terms.join(", ")}`;
    }
    const v = this.projection(p, query.fields, query.sort);
    const rows = await this.read(
      collection,
      this.statements.get(
        `select t._total, p.* from (select count(*) as _total from ${p.table}${filter}) t ` +
          `left join (select ${v.select}${keys} from ${p.table} where "id" in ` +
          `(select "id" from ${p.table}${filter} ${order} limit ${limit} offset ${offset})) p on true ${outer}`,
      ),
      params,
    );
    const total = Number(rows[0]?._total ?? 0);
    return {
      records: rows.filter((r) => r.id !== null && r.id !== undefined).map((r) => this.toRecord(v, r)),
      total,
    };
  }

  async get(collection: string, id: string, where?: Values): Promise<StoredRecord | null> {
    const p = this.collection(collection);
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
          else parameter(this.column(p, field), where[field], params);
        }
        rows = await this.read(collection, made.statement, params);
      } else {
        const conditions = this.conditions(p, { where }, params);
        const text = `select ${p.select} from ${p.table} where "id" = $1${conditions.map((c) => ` and ${c}`).join("")}`;
        const statement = this.statements.get(text);
        if (fields.every((field) => where[field] != null)) {
          const order = [...fields].sort((a, b) => (p.order.get(a) ?? -1) - (p.order.get(b) ?? -1));
          p.scopedGets.set(key, { statement, fields: fields.length > 1 ? order : fields });
        }
        rows = await this.read(collection, statement, params);
      }
    } else rows = await this.read(collection, p.get, [id]);
    return rows[0] ? this.toRecord(p, rows[0]) : null;
  }

  /** Unique values are the table's constraints (see sql/schema.ts), so `constraints` is not needed here. */
  async insert({ collection, record, publish }: InsertArgs): Promise<StoredRecord> {
    const p = this.collection(collection);
    const params: unknown[] = [record.id, record.created_at, record.updated_at, record.revision];
    const names = [`"id"`, `"created_at"`, `"updated_at"`, `"_revision"`];
    const slots = ["$1", "$2::timestamptz", "$3::timestamptz", "$4"];
    for (const [field, value] of Object.entries(record.values)) {
      if (value === undefined) continue;
      const column = this.column(p, field);
      if (column.link) continue;
      names.push(q(column.column));
      slots.push(parameter(column, value, params));
    }
    const text = `insert into ${p.table} (${names.join(", ")}) values (${slots.join(", ")}) returning ${p.select}`;
    try {
      if (p.links.length)
        return (await this.writeLinked(
          collection,
          p,
          this.statements.get(text),
          params,
          publish,
          record.values,
        ))!;
      return (await this.writeOne(
        collection,
        "write",
        p,
        this.statements.get(text),
        params,
        publish,
        record,
      ))!;
    } catch (error) {
      const claim = activeClaim();
      if (!claim || claim.claimed) throw error;
      return this.adopted(collection, error);
    }
  }

  /**
   * A create that wrote nothing because its idempotency key is taken (the write's claim was lost,
   * or a unique value is taken by the first request's record): when the first request's answer
   * was never kept (its instance died between its commit and keeping it), the record it created,
   * as stored now, with no event: the handler answers with it, as the first would have, and
   * the answer is kept (sql-idempotency.ts, `adoptable`). Else `error` stands (the key's state
   * answers: replay, 409, 422).
   */
  private adopted(collection: string, error: unknown): Promise<StoredRecord> {
    return adoptedOr(this, collection, error);
  }

  /** `current`, the record as read at `expectedRevision`, lets the write and its event go as one statement. */
  async update({
    collection,
    id,
    values,
    expectedRevision,
    publish,
    current,
    where,
  }: UpdateArgs): Promise<StoredRecord | null> {
    const p = this.collection(collection);
    for (const field of Object.keys(values)) this.column(p, field);
    // The statement keeps the later of this and the previous time + 1 ms: with `current` (whose
    // revision the statement requires) the result is known before it runs.
    let updatedAt = new Date().toISOString();
    if (current?.revision === expectedRevision && current.updated_at >= updatedAt)
      updatedAt = new Date(Date.parse(current.updated_at) + 1).toISOString();
    const params: unknown[] = [id, expectedRevision, updatedAt];
    for (const column of p.stored) parameter(column, values[column.field], params);
    const update = this.scoped(p, p.update, where, params);
    if (p.links.length) {
      const linked = await this.writeLinked(collection, p, update, params, publish, values);
      return linked ?? this.missingOrChanged(p, id, null, where);
    }
    const image =
      current?.revision === expectedRevision
        ? {
            id,
            created_at: current.created_at,
            updated_at: updatedAt,
            revision: expectedRevision + 1,
            values,
          }
        : undefined;
    const written = await this.writeOne(collection, "write", p, update, params, publish, image);
    return written ?? this.missingOrChanged(p, id, null, where);
  }

  /** `current`, the record as read at `expectedRevision`, lets the delete and its event go as one statement. */
  async delete({ collection, id, expectedRevision, publish, current, where }: DeleteArgs): Promise<boolean> {
    const p = this.collection(collection);
    const params: unknown[] = [id, expectedRevision];
    const statement = this.scoped(p, p.delete, where, params);
    if (!this.cascades.has(collection) || ((!publish || !this.schema.events) && !this.arrayCascades)) {
      const image = current?.revision === expectedRevision ? current : undefined;
      const deleted = await this.writeOne(collection, "delete", p, statement, params, publish, image);
      return deleted ? true : this.missingOrChanged(p, id, false, where);
    }
    // A delete that takes records along keeps all their events: one transaction.
    let events: StoredEvent[] = [];
    const deleted = await this.translated(collection, "delete", () =>
      this.db.transaction(async (tx) => {
        // The records the foreign keys delete with it, locked until the commit (so that none is
        // added or changed in between): their events are kept with the delete's.
        const tenant = this.tenantOf(collection, where);
        const { cascaded, unlinked } = await this.cascaded(tx, collection, id, where, tenant);
        const rows = await tx.query(statement, params);
        if (!rows[0]) return false;
        if (!publish) {
          for (const [name, ids] of unlinked) await this.touch(tx, name, ids, tenant);
          return true;
        }
        const made = [publish(this.toRecord(p, rows[0]), collection)];
        for (const [name, record] of cascaded) made.push(publish(record, name));
        // The records whose arrays lost ids: a new revision, and their `.updated` events.
        for (const [name, ids] of unlinked) {
          const holder = this.collection(name);
          for (const row of await this.touch(tx, name, ids, tenant))
            made.push(publish(this.toRecord(holder, row), updatedKey(name)));
        }
        events = this.schema.events ? await insertEvents(tx, made) : made;
        return true;
      }),
    );
    if (!deleted) return this.missingOrChanged(p, id, false, where);
    await this.sinks.publish(events);
    return true;
  }

  /**
   * The writes in one transaction, in order, then their events (in the same order) with them.
   * `expect` reads the record `for share`: it cannot change until the commit. A delete takes its
   * `cascade` records along as `delete` does. Writes that end with an insert and wrote nothing
   * because the request's idempotency key was taken by a first request whose answer was never
   * kept give that request's record alone (`adopted`).
   */
  async writeAll(writes: readonly Write[]): Promise<StoredRecord[] | null> {
    let events: StoredEvent[] = [];
    // Writes that end with a create (a create through its hook, an action) answer with that
    // record: the request's idempotency claim names it (sql-idempotency.ts).
    const last = writes[writes.length - 1];
    const created =
      last && "insert" in last
        ? { collection: last.insert.collection, id: last.insert.record.id }
        : undefined;
    try {
      const records = await this.db.transaction(async (tx) => {
        const written: StoredRecord[] = [];
        const made: StoredEvent[] = [];
        for (const write of writes) {
          const collection = Object.values(write)[0]!.collection;
          const p = this.collection(collection);
          let rows: Row[];
          let publish: EventOf<StoredRecord> | undefined;
          let expected: number | undefined;
          if ("delete" in write) {
            // As `delete`: the records it takes along, locked, then the row, then their events.
            const { id, expectedRevision, publish: publishDelete, where } = write.delete;
            const tenant = this.tenantOf(collection, where);
            const { cascaded, unlinked } = await this.cascaded(tx, collection, id, where, tenant);
            const params: unknown[] = [id, expectedRevision];
            const statement = this.scoped(p, p.delete, where, params);
            rows = await this.translated(collection, "delete", () => tx.query(statement, params));
            if (!rows[0] && (await this.revisionOf(tx, p, id, where)).length)
              throw new ConflictError("The record was changed by another request.");
            if (!rows[0]) throw new Gone();
            const record = this.toRecord(p, rows[0]);
            written.push(record);
            if (publishDelete) made.push(publishDelete(record, collection));
            for (const [name, gone] of cascaded) if (publishDelete) made.push(publishDelete(gone, name));
            for (const [name, ids] of unlinked) {
              const holder = this.collection(name);
              for (const row of await this.touch(tx, name, ids, tenant))
                if (publishDelete) made.push(publishDelete(this.toRecord(holder, row), updatedKey(name)));
            }
            continue;
          }
          if ("expect" in write) {
            const { id, revision, where } = write.expect;
            const params: unknown[] = [id];
            const conditions = where ? this.conditions(p, { where }, params) : [];
            const lock = this.statements.get(
              `select ${p.select} from ${p.table} where "id" = $1${conditions.map((c) => ` and ${c}`).join("")} for share`,
            );
            rows = await this.translated(collection, "read", () => tx.query(lock, params));
            expected = revision;
          } else if ("insert" in write) {
            const { record } = write.insert;
            publish = write.insert.publish;
            const params: unknown[] = [record.id, record.created_at, record.updated_at, record.revision];
            const names = [`"id"`, `"created_at"`, `"updated_at"`, `"_revision"`];
            const slots = ["$1", "$2::timestamptz", "$3::timestamptz", "$4"];
            for (const [field, value] of Object.entries(record.values)) {
              if (value === undefined) continue;
              const column = this.column(p, field);
              if (column.link) continue;
              names.push(q(column.column));
              slots.push(parameter(column, value, params));
            }
            const text = `insert into ${p.table} (${names.join(", ")}) values (${slots.join(", ")}) returning ${p.select}`;
            rows = await this.translated(collection, "write", () =>
              tx.query(this.statements.get(text), params),
            );
            if (rows[0] && p.links.length)
              rows = await this.relinked(tx, collection, p, record.id, record.values);
          } else {
            const { id, values, expectedRevision, where } = write.update;
            publish = write.update.publish;
            for (const field of Object.keys(values)) this.column(p, field);
            const params: unknown[] = [id, expectedRevision, new Date().toISOString()];
            for (const column of p.stored) parameter(column, values[column.field], params);
            const update = this.scoped(p, p.update, where, params);
            rows = await this.translated(collection, "write", () => tx.query(update, params));
            if (!rows[0] && (await this.revisionOf(tx, p, id, where)).length)
              throw new ConflictError("The record was changed by another request.");
            if (rows[0] && p.links.length) rows = await this.relinked(tx, collection, p, id, values);
          }
          if (!rows[0]) throw new Gone();
          const record = this.toRecord(p, rows[0]);
          if (expected !== undefined && record.revision !== expected)
            throw new ConflictError("The record was changed by another request.");
          written.push(record);
          if (publish) made.push(publish(record, collection));
        }
        if (this.schema.events && made.length) events = await insertEvents(tx, made, created);
        else {
          // Without events kept, the request's idempotency key is claimed here (sql-idempotency.ts).
          await markClaim(tx, created);
          events = made;
        }
        return written;
      });
      if (events.length) await this.sinks.publish(events);
      return records;
    } catch (error) {
      if (error instanceof Gone) return null;
      const claim = activeClaim();
      if (!created || !claim || claim.claimed) throw error;
      // A repeat whose first answer was never kept: the record the first created, alone (the
      // callers answer with the last record).
      return [await this.adopted(created.collection, error)];
    }
  }

  /**
   * The records that deleting `id` of `collection` deletes through `on delete cascade`, level by
   * level (one statement per level and reference, whatever the number of records), read `for
   * update`; and (`unlinked`) the ids of the records whose arrays lose an id through a `cascade`
   * on an array's items, by collection, locked too. The record itself is locked first: a record
   * referring to it cannot be inserted until the delete has committed (and then its foreign key
   * refuses it). More than `cascadeLimit` records deleted or changed: 422, the deleted ones
   * counted first (ids only, at most the limit + 1 of them) before any is read. The transaction
   * gives up waiting for a lock after 2 s (409).
   */
  private async cascaded(
    db: SqlQueryable,
    collection: string,
    id: string,
    where?: Values,
    tenant?: string,
  ): Promise<{ cascaded: Array<[string, StoredRecord]>; unlinked: Map<string, string[]> }> {
    const unlinked = new Map<string, string[]>();
    if (!this.cascades.has(collection)) return { cascaded: [], unlinked };
    const p = this.collection(collection);
    // Waiting for another request's locks gives up after 2 s (409); left idle, the transaction
    // ends after `statement_timeout` (the session's idle_in_transaction_session_timeout).
    if (this.db.kind === "postgres") await db.exec("set local lock_timeout = 2000");
    // The record of another tenant (`where`, SPEC §12.4) is neither locked nor walked.
    const params: unknown[] = [id];
    const scope = where ? this.conditions(p, { where }, params).map((c) => ` and ${c}`) : [];
    const lock = `select "id" from ${p.table} where "id" = $1${scope.join("")} for update`;
    if (!(await db.query(this.statements.get(lock), params)).length) return { cascaded: [], unlinked };
    const limit = this.cascadeLimit;
    // The bounded count: ids only, no locks, at most limit + 1 of them over all levels.
    let counted = 0;
    await this.cascadeLevels(collection, id, async (child, column, parents, name) => {
      const params: unknown[] = [arrayLiteral(parents), limit - counted + 1];
      const statement = this.statements.get(
        `select "id" from ${child.table} where ${column} = any($1::uuid[])${this.tenantMatch(name, tenant, params)} limit $2`,
      );
      const ids = (await db.query(statement, params)).map((r) => String(r.id));
      counted += ids.length;
      if (counted > limit) throw cascadeTooLargeError(limit);
      return ids;
    });
    // The records themselves, locked level by level (a level locked, none can be added under it).
    const found: Array<[string, StoredRecord]> = [];
    const taken = new Set<string>();
    await this.cascadeLevels(collection, id, async (child, column, parents, name) => {
      const params: unknown[] = [arrayLiteral(parents)];
      const statement = this.statements.get(
        `select ${child.select} from ${child.table} where ${column} = any($1::uuid[])${this.tenantMatch(name, tenant, params)} order by "id" for update`,
      );
      const ids: string[] = [];
      for (const row of await db.query(statement, params)) {
        const record = this.toRecord(child, row);
        ids.push(record.id);
        if (taken.has(`${name}\0${record.id}`)) continue;
        taken.add(`${name}\0${record.id}`);
        found.push([name, record]);
      }
      if (found.length > limit) throw cascadeTooLargeError(limit);
      return ids;
    });
    // The records whose arrays hold a deleted id (a link table's rows): one statement per deleted
    // collection and `many` reference, locked, and counted against the same limit.
    const deleted = new Map<string, string[]>([[collection, [id]]]);
    for (const [name, record] of found) deleted.set(name, [...(deleted.get(name) ?? []), record.id]);
    let changed = 0;
    for (const [name, ids] of deleted) {
      for (const reference of this.cascades.get(name) ?? []) {
        if (!reference.many) continue;
        const child = this.collection(reference.collection);
        const link = this.column(child, reference.field).link;
        if (!link) continue;
        const { owner, target } = LINK_COLUMNS;
        const params: unknown[] = [arrayLiteral(ids), limit - found.length - changed + 1];
        const statement = this.statements.get(
          `select "id" from ${child.table} where "row_id" in (select ${q(owner)} from ${q(link.table)} ` +
            `where ${q(target)} in (select "row_id" from ${this.collection(name).table} where "id" = any($1::uuid[])))` +
            `${this.tenantMatch(reference.collection, tenant, params)} order by "id" limit $2 for update`,
        );
        const holders = unlinked.get(reference.collection) ?? [];
        const rows = await db.query(statement, params);
        for (const row of rows) holders.push(String(row.id));
        changed += rows.length;
        if (found.length + changed > limit) throw cascadeTooLargeError(limit);
        if (holders.length) unlinked.set(reference.collection, holders);
      }
    }
    // A record deleted with it is not updated.
    for (const [name, ids] of unlinked) {
      const gone = new Set(found.filter(([c]) => c === name).map(([, r]) => r.id));
      const kept = [...new Set(ids)].filter((holder) => !gone.has(holder)).sort();
      if (kept.length) unlinked.set(name, kept);
      else unlinked.delete(name);
    }
    return { cascaded: found, unlinked };
  }

  /**
   * Walks the cascade from `id` of `collection` level by level: `step` gets, for each `cascade`
   * reference to a collection of the level, the ids there, and answers the ids it found in the
   * referring collection (each id is walked once, a record reached twice is taken once).
   */
  private async cascadeLevels(
    collection: string,
    id: string,
    step: (child: Prepared, column: string, parents: string[], name: string) => Promise<string[]>,
  ): Promise<void> {
    const seen = new Set([`${collection}\0${id}`]);
    let level = new Map([[collection, [id]]]);
    while (level.size) {
      const next = new Map<string, string[]>();
      for (const [name, parents] of level) {
        for (const reference of this.cascades.get(name) ?? []) {
          // An array's items (`many`) lose the id: their records stay (`unlinked`).
          if (reference.many) continue;
          const child = this.collection(reference.collection);
          const column = this.column(child, reference.field);
          const found = await step(child, `${q(column.column)}`, parents, reference.collection);
          const ids = next.get(reference.collection) ?? [];
          for (const childId of found) {
            if (seen.has(`${reference.collection}\0${childId}`)) continue;
            seen.add(`${reference.collection}\0${childId}`);
            ids.push(childId);
          }
          if (ids.length) next.set(reference.collection, ids);
        }
      }
      level = next;
    }
  }

  /** Gives the records `ids` of `collection` a new revision (an array of theirs lost an id), within `tenant`; the rows written. */
  private touch(
    db: SqlQueryable,
    collection: string,
    ids: string[],
    tenant: string | undefined,
  ): Promise<Row[]> {
    const p = this.collection(collection);
    const params: unknown[] = [arrayLiteral(ids)];
    const statement = this.statements.get(
      `update ${p.table} set "_revision" = "_revision" + 1, ` +
        `"updated_at" = greatest(date_trunc('milliseconds', clock_timestamp()), "updated_at" + interval '1 millisecond') ` +
        `where "id" = any($1::uuid[])${this.tenantMatch(collection, tenant, params)} returning ${p.select}`,
    );
    return db.query(statement, params);
  }

  /**
   * The tenant a delete's `where` names (SPEC §12.4): the value of the collection's tenant field,
   * or in the tenant collection (`where` on `id`) the record's id; undefined without one.
   */
  private tenantOf(collection: string, where: Values | undefined): string | undefined {
    if (!where) return undefined;
    const field = this.schema.collections[collection]?.tenant;
    const value = field === undefined ? where.id : where[field];
    return typeof value === "string" ? value : undefined;
  }

  /**
   * ` and "<tenant column>" = $n::uuid` for the records of `collection` a delete of `tenant` takes
   * along, when `collection` is tenant-scoped (its parameter appended to `params`); else "".
   */
  private tenantMatch(collection: string, tenant: string | undefined, params: unknown[]): string {
    const field = this.schema.collections[collection]?.tenant;
    if (tenant === undefined || field === undefined) return "";
    params.push(tenant);
    return ` and ${q(this.column(this.collection(collection), field).column)} = $${params.length}::uuid`;
  }

  /**
   * A write of a record with arrays kept in link tables: the row, then its links (replaced), then
   * the record read back, and its event, in one transaction.
   */
  private async writeLinked(
    collection: string,
    p: Prepared,
    statement: Statement | string,
    params: unknown[],
    publish: EventOf<StoredRecord> | undefined,
    values: StoredRecord["values"],
  ): Promise<StoredRecord | null> {
    let events: StoredEvent[] = [];
    const record = await this.translated(collection, "write", () =>
      this.db.transaction(async (tx) => {
        const rows = await tx.query(statement, params);
        if (!rows[0]) return null;
        const [row] = await this.relinked(tx, collection, p, String(rows[0].id), values);
        const record = this.toRecord(p, row!);
        const made = publish ? [publish(record, collection)] : [];
        const created = { collection, id: record.id };
        if (this.schema.events && made.length) events = await insertEvents(tx, made, created);
        else {
          events = made;
          await markClaim(tx, created);
        }
        return record;
      }),
    );
    if (events.length) await this.sinks.publish(events);
    return record;
  }

  /**
   * Replaces the links of record `id` by the ids of `values` in their order, and reads the record
   * back. An id that names no record (deleted since it was checked) is a 422 naming its place.
   */
  private async relinked(
    tx: SqlQueryable,
    collection: string,
    p: Prepared,
    id: string,
    values: StoredRecord["values"],
  ): Promise<Row[]> {
    const { owner, position, target } = LINK_COLUMNS;
    for (const column of p.links) {
      const link = column.link!;
      const l = q(link.table);
      const value = values[column.field];
      const ids = Array.isArray(value) ? value.map(String) : [];
      await tx.query(
        this.statements.get(
          `delete from ${l} where ${q(owner)} = (select "row_id" from ${p.table} where "id" = $1)`,
        ),
        [id],
      );
      if (!ids.length) continue;
      const inserted = await tx.query(
        this.statements.get(
          `insert into ${l} (${q(owner)}, ${q(position)}, ${q(target)}) ` +
            `select "canon__o"."row_id", "canon__i"."n", "canon__t"."row_id" from ${p.table} "canon__o" ` +
            `cross join unnest($2::uuid[]) with ordinality as "canon__i" ("id", "n") ` +
            `join ${q(link.target)} "canon__t" on "canon__t"."id" = "canon__i"."id" ` +
            `where "canon__o"."id" = $1 returning ${q(position)}`,
        ),
        [id, arrayLiteral(ids)],
      );
      if (inserted.length !== ids.length) {
        const present = new Set(inserted.map((row) => Number(row[position])));
        const missing = ids.flatMap((_, i) => (present.has(i + 1) ? [] : [`${column.field}.${i}`]));
        throw new BusinessRuleError(`${missing[0]} names no existing record.`, [
          ...missing.map((field) => ({ field, issue: "must name an existing record" })),
        ]);
      }
    }
    return this.translated(collection, "read", () => tx.query(p.get, [id]));
  }

  /**
   * Runs `fn` with this store as seen from inside one transaction that first takes PostgreSQL's
   * transaction-scoped advisory lock of `key` (`pg_advisory_xact_lock`): every process over the
   * same database that runs `exclusive` with that key waits until the one before it has committed
   * or rolled back, so a check and a write made through the store `fn` is given are one step on
   * every instance (the export cap, exports-limits.ts). Committed when `fn` resolves, rolled back
   * when it throws. For records without events: an event of a write there would be published
   * before the commit.
   */
  exclusive<T>(key: string, fn: (store: SqlStore) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.query(this.statements.get("select pg_advisory_xact_lock(hashtextextended($1, 0))"), [key]);
      const inside: SqlDriver = {
        kind: this.db.kind,
        query: (statement, params) => tx.query(statement, params),
        exec: (text) => tx.exec(text),
        transaction: (work) => work(tx),
        close: async () => {},
      };
      return fn(Object.create(this, { db: { value: inside } }) as SqlStore);
    });
  }

  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. Events
   * kept there with `insertEvents(tx, events)` go to `published(events)` once it has committed.
   */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /** Hands events that have committed to the sinks of `subscribe`. */
  published(events: StoredEvent[]): Promise<void> {
    return this.sinks.publish(events);
  }

  listEvents(
    scope: EventScope,
    after: string | undefined,
    limit: number,
  ): Promise<{ events: ApiEvent[]; hasMore: boolean }> {
    return listEvents(this.db, scope, after, limit, this.db.kind === "postgres");
  }

  getEvent(scope: EventScope, id: string): Promise<ApiEvent | null> {
    return getEvent(this.db, scope, id);
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    await this.sinks.publish(this.schema.events ? await insertEvents(this.db, events) : events);
  }

  subscribe(sink: EventSink): () => void {
    return this.sinks.add(sink);
  }

  cursorKeys(): Promise<CursorKey[]> {
    return cursorKeys(this.db);
  }

  rotateCursorKey(): Promise<void> {
    return rotateCursorKey(this.db);
  }

  /**
   * One write statement (`returning` the record) and its event: the record, or null when the
   * statement matched no row. With `publish` and an event table, and `image` (the record as the
   * statement will write it), the event is made first and kept by the same statement
   * (`writeWithEvent`): one round trip. Should the row read back differ from `image` (a value the
   * column keeps otherwise than sent), the kept event's data is made again from the row. Without
   * `image`, the write and its event run in a transaction. Events go to the sinks after the commit.
   */
  private async writeOne(
    collection: string,
    op: SqlOperation,
    p: Prepared,
    statement: Statement | string,
    params: unknown[],
    publish: EventOf<StoredRecord> | undefined,
    image: StoredRecord | undefined,
  ): Promise<StoredRecord | null> {
    const written = await this.translated(collection, op, async (): Promise<Kept | null> => {
      // A request with an idempotency key claims it with the write (sql-idempotency.ts).
      const claim = activeClaim();
      const claimed = claim !== undefined;
      if (!publish || !this.schema.events) {
        if (claimed)
          return this.db.transaction(async (tx) => this.markedWrite(tx, collection, p, statement, params));
        const rows = await this.db.query(statement, params);
        return rows[0] ? { record: this.toRecord(p, rows[0]) } : null;
      }
      if (!image) {
        return this.db.transaction(async (tx) => {
          const rows = await tx.query(statement, params);
          if (!rows[0]) return null;
          const record = this.toRecord(p, rows[0]);
          const [event] = await insertEvents(tx, [publish(record, collection)], {
            collection,
            id: record.id,
          });
          return { record, event };
        });
      }
      const expected = storedImage(p.list, image);
      const made = publish(expected, collection);
      const combined = writeWithEvent(
        typeof statement === "string" ? statement : statement.text,
        params.length,
        made,
        collection,
      );
      const rows = await this.db
        .query(this.statements.get(combined.text), [...params, ...combined.params])
        .catch((error: unknown) => {
          // The statement's fence: the request's idempotency claim was taken over, nothing written.
          throw claimed && (error as { code?: unknown }).code === CLAIM_LOST_SQLSTATE
            ? new ClaimLostError()
            : error;
        });
      if (!rows[0]) return null;
      // The statement claimed the request's key with the write (sql-idempotency.ts).
      if (claim) claim.claimed = true;
      const record = this.toRecord(p, rows[0]);
      let event = keptEvent(made, rows[0]);
      if (!sameJson(record, expected)) {
        const remade = publish(record, collection).event;
        event = { ...event, event: { ...event.event, data: remade.data } };
        await setEventData(this.db, event.event);
      }
      return { record, event };
    });
    if (!written) return null;
    if (publish) {
      const event = written.event ?? publish(written.record, collection);
      await this.sinks.publish([event]);
    }
    return written.record;
  }

  /** A write without an event that marks the request's idempotency claim, in `tx`. */
  private async markedWrite(
    tx: SqlQueryable,
    collection: string,
    p: Prepared,
    statement: Statement | string,
    params: unknown[],
  ): Promise<Kept | null> {
    const rows = await tx.query(statement, params);
    if (!rows[0]) return null;
    const record = this.toRecord(p, rows[0]);
    await markClaim(tx, { collection, id: record.id });
    return { record };
  }

  /** Closes the driver; closing again does nothing. */
  async close(): Promise<void> {
    // Answers of idempotent requests still being kept are kept first.
    this.closing ??= this.idempotency.settled().then(() => this.db.close());
    await this.closing;
  }

  /**
   * After a write matched no row: `gone` when the record does not exist (or does not match
   * `where`: another tenant's), else a revision conflict.
   */
  private async missingOrChanged<T>(p: Prepared, id: string, gone: T, where?: Values): Promise<T> {
    const rows = await this.revisionOf(this.db, p, id, where);
    if (!rows.length) return gone;
    throw new ConflictError("The record was changed by another request.");
  }

  /** The revision of record `id`, when it matches `where`. */
  private revisionOf(db: SqlQueryable, p: Prepared, id: string, where: Values | undefined): Promise<Row[]> {
    if (!where) return db.query(p.revision, [id]);
    const params: unknown[] = [id];
    const conditions = this.conditions(p, { where }, params);
    const text = `select "_revision" from ${p.table} where "id" = $1${conditions.map((c) => ` and ${c}`).join("")}`;
    return db.query(this.statements.get(text), params);
  }

  /**
   * A write statement by id (`update`/`delete … where "id" = $1 and "_revision" = $2 returning …`)
   * with the exact matches of `where` in its where clause (a tenant principal's tenant, SPEC
   * §12.4): their parameters are appended to `params`. Without `where`, the statement as it is.
   */
  private scoped(
    p: Prepared,
    statement: Statement | string,
    where: Values | undefined,
    params: unknown[],
  ): Statement | string {
    if (!where) return statement;
    const conditions = this.conditions(p, { where }, params);
    if (!conditions.length) return statement;
    const text = typeof statement === "string" ? statement : statement.text;
    const at = text.lastIndexOf(" returning");
    return this.statements.get(
      `${text.slice(0, at)}${conditions.map((c) => ` and ${c}`).join("")}${text.slice(at)}`,
    );
  }

  /** Runs statements and turns constraint violations into the API's errors. */
  private async translated<T>(collection: string, op: SqlOperation, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw translateSqlError(error, this.schema, collection, op);
    }
  }

  /**
   * Runs a read; a failure becomes the API's error. No async frame and no closure: a read is
   * what most requests do.
   */
  private read(
    collection: string,
    statement: Statement | string,
    params: readonly unknown[],
  ): Promise<Row[]> {
    return this.db.query(statement, params).catch((error: unknown) => {
      throw translateSqlError(error, this.schema, collection, "read");
    });
  }
}
