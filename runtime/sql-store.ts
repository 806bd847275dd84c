/**
 * The store over PostgreSQL (a server through `pg`, or PGlite in the process), with the same
 * behaviour as the memory store: ascending-id keyset lists, counted pages, case-insensitive
 * search, unique values (409), references that must exist (422), and writes that are atomic
 * compare-and-set on a revision. Every query is parameterized; every query names the columns
 * it reads, and `row_id` is never among them.
 *
 * The tables come from the generated migrations (`sql/NNNN_<name>.sql`), which `migrate`
 * applies in order; `sql/schema.ts` tells the store which column holds which field and how.
 *
 * A write given `publish` runs in one transaction with its event (the `canon__events` table,
 * see sql-events.ts): both commit or neither does. `transaction(fn)` runs more statements in
 * one; a write that changes more records (a cascade) keeps their events with
 * `insertEvents(tx, events)` there, and hands them to `published(events)` after the commit.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { CursorKey } from "./cursor-keys.ts";
import { BusinessRuleError, ConflictError, ValidationError } from "./errors.ts";
import {
  EventSinks,
  type ApiEvent,
  type EventOf,
  type EventScope,
  type EventSink,
  type StoredEvent,
} from "./events.ts";
import { cursorKeys, getEvent, insertEvents, listEvents, rotateCursorKey } from "./sql-events.ts";
import type {
  CursorQuery,
  Match,
  OffsetQuery,
  Store,
  StoredRecord,
  Values,
  WriteConstraints,
} from "./store.ts";
import type { Row, SqlDriver, SqlQueryable } from "./sql-driver.ts";

export { openDriver, type SqlDriver, type SqlQueryable, type SqlStoreOptions } from "./sql-driver.ts";

/**
 * How a column keeps its field's value: in its own SQL type, or as jsonb (`json`: arrays and
 * objects; `wrapped`: a scalar that may be both absent, SQL NULL, and null, JSON null).
 */
export type ColumnKind = "text" | "integer" | "number" | "boolean" | "uuid" | "date" | "json" | "wrapped";

export interface SqlColumn {
  field: string;
  column: string;
  kind: ColumnKind;
  /** SQL NULL reads as an absent value; otherwise as null. */
  optional: boolean;
}

export interface SqlCollection {
  table: string;
  columns: SqlColumn[];
  /** Columns with a trigram index for `?q=`. */
  search: string[];
}

export interface SqlConstraint {
  collection: string;
  field: string;
  kind: "unique" | "references";
  /** The referenced collection. */
  references?: string;
}

export interface SqlSchema {
  collections: Record<string, SqlCollection>;
  constraints: Record<string, SqlConstraint>;
  /** Whether the migrations create the event table (`events: true` in api.yaml). */
  events: boolean;
}

/* ---------- migrations ---------- */

export interface MigrationFile {
  /** `0002_add_orders_priority`. */
  name: string;
  sql: string;
  checksum: string;
}

const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;

/** The migrations of a folder, in order. */
export function readMigrations(folder: URL | string): MigrationFile[] {
  const dir = typeof folder === "string" ? folder : fileURLToPath(folder);
  return readdirSync(dir)
    .filter((n) => MIGRATION_FILE.test(n))
    .sort()
    .map((file) => {
      const sql = readFileSync(`${dir}/${file}`, "utf8");
      return { name: file.slice(0, -4), sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Applies the migrations not yet applied, in order, in one transaction, and records each in
 * `canon_migrations`; returns their names. An advisory lock keeps two instances starting at
 * once from both applying. A recorded migration whose file changed is refused: migrations
 * never change once applied.
 */
export async function migrate(db: SqlDriver, folder: URL | string | MigrationFile[]): Promise<string[]> {
  const files = Array.isArray(folder) ? folder : readMigrations(folder);
  return db.transaction(async (tx) => {
    await tx.query(
      "select pg_advisory_xact_lock(hashtext(coalesce(current_schema(), '') || '.canon_migrations'))",
    );
    await tx.exec(
      "create table if not exists canon_migrations (name text primary key, checksum text not null, applied_at timestamptz not null default now())",
    );
    const rows = await tx.query("select name, checksum from canon_migrations");
    const applied = new Map(rows.map((r) => [String(r.name), String(r.checksum)]));
    const done: string[] = [];
    for (const file of files) {
      const checksum = applied.get(file.name);
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          throw new Error(
            `migration ${file.name} was applied with other content: applied migrations never change (restore sql/${file.name}.sql from version control)`,
          );
        }
        continue;
      }
      await tx.exec(file.sql);
      await tx.query("insert into canon_migrations (name, checksum) values ($1, $2)", [
        file.name,
        file.checksum,
      ]);
      done.push(file.name);
    }
    return done;
  });
}

/* ---------- the store ---------- */

const TIMESTAMP = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Prepared {
  table: string;
  select: string;
  columns: Map<string, SqlColumn>;
  list: SqlColumn[];
}

function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The SQL that reads a column as the value the store returns. */
function readExpression(column: SqlColumn): string {
  const c = q(column.column);
  if (column.kind === "date") return `to_char(${c}, 'YYYY-MM-DD') as ${c}`;
  // As text, parsed here: a JSON null ('null') stays apart from SQL NULL (absent).
  if (column.kind === "json" || column.kind === "wrapped") return `${c}::text as ${c}`;
  return c;
}

/** A parameter placeholder for a value of this column, and the parameter itself. */
function parameter(column: SqlColumn, value: unknown, params: unknown[]): string {
  if (column.kind === "json" || column.kind === "wrapped") {
    params.push(value === undefined ? null : JSON.stringify(value));
    return `$${params.length}::jsonb`;
  }
  params.push(value === undefined ? null : value);
  return `$${params.length}`;
}

function decode(column: SqlColumn, raw: unknown): unknown {
  if (raw === null || raw === undefined) return column.optional ? undefined : null;
  if (column.kind === "integer" || column.kind === "number") return Number(raw);
  if (column.kind === "json" || column.kind === "wrapped")
    return typeof raw === "string" ? JSON.parse(raw) : raw;
  return raw;
}

/** `%text%` for ILIKE, with the pattern characters of the text escaped. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class SqlStore implements Store {
  private readonly db: SqlDriver;
  private readonly schema: SqlSchema;
  private readonly prepared = new Map<string, Prepared>();
  private readonly sinks = new EventSinks();
  private closing: Promise<void> | undefined;

  constructor(db: SqlDriver, schema: SqlSchema) {
    this.db = db;
    this.schema = schema;
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
      const system = [
        `"id"`,
        `to_char("created_at" at time zone 'UTC', ${TIMESTAMP}) as "created_at"`,
        `to_char("updated_at" at time zone 'UTC', ${TIMESTAMP}) as "updated_at"`,
        `"_revision"`,
      ];
      p = {
        table: q(c.table),
        select: [...system, ...c.columns.map(readExpression)].join(", "),
        columns: new Map(c.columns.map((col) => [col.field, col])),
        list: c.columns,
      };
      this.prepared.set(name, p);
    }
    return p;
  }

  private toRecord(p: Prepared, row: Row): StoredRecord {
    const values: Values = {};
    for (const column of p.list) {
      const value = decode(column, row[column.column]);
      if (value !== undefined) values[column.field] = value;
    }
    return {
      id: String(row.id),
      created_at: String(row.created_at),
      updated_at: String(row.updated_at),
      revision: Number(row._revision),
      values,
    };
  }

  private column(p: Prepared, field: string): SqlColumn {
    const column = p.columns.get(field);
    if (!column) throw new Error(`the SQL schema has no field "${field}" in ${p.table}`);
    return column;
  }

  /** The WHERE conditions of a match; parameters are appended to `params`. */
  private conditions(p: Prepared, match: Match, params: unknown[]): string[] {
    const out: string[] = [];
    for (const [field, value] of Object.entries(match.where)) {
      if (value === undefined) continue;
      const column = this.column(p, field);
      if (value === null && column.kind !== "wrapped" && column.kind !== "json")
        out.push(`${q(column.column)} is null`);
      else out.push(`${q(column.column)} = ${parameter(column, value, params)}`);
    }
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

  async list(collection: string, query: CursorQuery): Promise<{ records: StoredRecord[]; hasMore: boolean }> {
    const p = this.collection(collection);
    const params: unknown[] = [];
    const where = this.conditions(p, query, params);
    if (query.after !== undefined) {
      params.push(query.after);
      where.push(`"id" > $${params.length}`);
    }
    params.push(query.limit + 1);
    const rows = await this.run(collection, "read", (db) =>
      db.query(
        `select ${p.select} from ${p.table}${where.length ? ` where ${where.join(" and ")}` : ""} order by "id" limit $${params.length}`,
        params,
      ),
    );
    const hasMore = rows.length > query.limit;
    return { records: rows.slice(0, query.limit).map((r) => this.toRecord(p, r)), hasMore };
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
    // the offset are walked on the id index only; columns are read for the page's rows alone.
    const rows = await this.run(collection, "read", (db) =>
      db.query(
        `select t._total, p.* from (select count(*) as _total from ${p.table}${filter}) t ` +
          `left join (select ${p.select} from ${p.table} where "id" in ` +
          `(select "id" from ${p.table}${filter} order by "id" limit ${limit} offset ${offset})) p on true order by p."id"`,
        params,
      ),
    );
    const total = Number(rows[0]?._total ?? 0);
    return {
      records: rows.filter((r) => r.id !== null && r.id !== undefined).map((r) => this.toRecord(p, r)),
      total,
    };
  }

  async get(collection: string, id: string): Promise<StoredRecord | null> {
    const p = this.collection(collection);
    if (!UUID.test(id)) return null;
    const rows = await this.run(collection, "read", (db) =>
      db.query(`select ${p.select} from ${p.table} where "id" = $1`, [id]),
    );
    return rows[0] ? this.toRecord(p, rows[0]) : null;
  }

  /** Unique values are the table's constraints (see sql/schema.ts), so `constraints` is not needed here. */
  async insert(
    collection: string,
    record: StoredRecord,
    _constraints?: WriteConstraints,
    publish?: EventOf<StoredRecord>,
  ): Promise<StoredRecord> {
    const p = this.collection(collection);
    const params: unknown[] = [record.id, record.created_at, record.updated_at, record.revision];
    const names = [`"id"`, `"created_at"`, `"updated_at"`, `"_revision"`];
    const slots = ["$1", "$2::timestamptz", "$3::timestamptz", "$4"];
    for (const [field, value] of Object.entries(record.values)) {
      if (value === undefined) continue;
      const column = this.column(p, field);
      names.push(q(column.column));
      slots.push(parameter(column, value, params));
    }
    return this.write(collection, "write", publish, async (db) => {
      const rows = await db.query(
        `insert into ${p.table} (${names.join(", ")}) values (${slots.join(", ")}) returning ${p.select}`,
        params,
      );
      const written = this.toRecord(p, rows[0]!);
      return { result: written, written };
    });
  }

  async update(
    collection: string,
    id: string,
    values: Values,
    expectedRevision: number,
    _constraints?: WriteConstraints,
    publish?: EventOf<StoredRecord>,
  ): Promise<StoredRecord | null> {
    const p = this.collection(collection);
    for (const field of Object.keys(values)) this.column(p, field);
    const params: unknown[] = [id, expectedRevision, new Date().toISOString()];
    const sets = p.list.map(
      (column) => `${q(column.column)} = ${parameter(column, values[column.field], params)}`,
    );
    sets.push(
      `"_revision" = "_revision" + 1`,
      `"updated_at" = greatest($3::timestamptz, "updated_at" + interval '1 millisecond')`,
    );
    return this.write(collection, "write", publish, async (db) => {
      const rows = await db.query(
        `update ${p.table} set ${sets.join(", ")} where "id" = $1 and "_revision" = $2 returning ${p.select}`,
        params,
      );
      if (!rows[0]) return { result: await this.missingOrChanged(db, p, id, null), written: null };
      const written = this.toRecord(p, rows[0]);
      return { result: written, written };
    });
  }

  async delete(
    collection: string,
    id: string,
    expectedRevision: number,
    publish?: EventOf<StoredRecord>,
  ): Promise<boolean> {
    const p = this.collection(collection);
    return this.write(collection, "delete", publish, async (db) => {
      // The record as it was: the event of a delete shows it.
      const rows = await db.query(
        `delete from ${p.table} where "id" = $1 and "_revision" = $2 returning ${publish ? p.select : `"id"`}`,
        [id, expectedRevision],
      );
      if (!rows[0]) return { result: await this.missingOrChanged(db, p, id, false), written: null };
      return { result: true, written: publish ? this.toRecord(p, rows[0]) : null };
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
    return listEvents(this.db, scope, after, limit);
  }

  getEvent(scope: EventScope, id: string): Promise<ApiEvent | null> {
    return getEvent(this.db, scope, id);
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    if (this.schema.events) await insertEvents(this.db, events);
    await this.sinks.publish(events);
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
   * A write: `fn` gives its result and the record whose event `publish` makes (none: no event).
   * With `publish` and an event table, the write and its event run in one transaction. The event
   * goes to the sinks after the commit; constraint violations become the API's errors.
   */
  private async write<T>(
    collection: string,
    op: "write" | "delete",
    publish: EventOf<StoredRecord> | undefined,
    fn: (db: SqlQueryable) => Promise<{ result: T; written: StoredRecord | null }>,
  ): Promise<T> {
    const events: StoredEvent[] = [];
    let result: T;
    try {
      if (publish && this.schema.events) {
        result = await this.db.transaction(async (tx) => {
          const out = await fn(tx);
          if (out.written) {
            events.push(publish(out.written, collection));
            await insertEvents(tx, events);
          }
          return out.result;
        });
      } else {
        const out = await fn(this.db);
        result = out.result;
        if (publish && out.written) events.push(publish(out.written, collection));
      }
    } catch (error) {
      throw this.translate(error, collection, op);
    }
    await this.sinks.publish(events);
    return result;
  }

  /** Closes the driver; closing again does nothing. */
  async close(): Promise<void> {
    this.closing ??= this.db.close();
    await this.closing;
  }

  /** After a write matched no row: `gone` when the record does not exist, else a revision conflict. */
  private async missingOrChanged<T>(db: SqlQueryable, p: Prepared, id: string, gone: T): Promise<T> {
    const rows = await db.query(`select "_revision" from ${p.table} where "id" = $1`, [id]);
    if (!rows.length) return gone;
    throw new ConflictError("The record was changed by another request.");
  }

  /** Runs a statement and turns constraint violations into the API's errors. */
  private async run(
    collection: string,
    op: "read",
    fn: (db: SqlQueryable) => Promise<Row[]>,
  ): Promise<Row[]> {
    try {
      return await fn(this.db);
    } catch (error) {
      throw this.translate(error, collection, op);
    }
  }

  private translate(error: unknown, collection: string, op: "read" | "write" | "delete"): unknown {
    const e = error as { code?: unknown; constraint?: unknown; column?: unknown; detail?: unknown };
    if (typeof e?.code !== "string") return error;
    const constraint = typeof e.constraint === "string" ? this.schema.constraints[e.constraint] : undefined;
    switch (e.code) {
      case "23505": {
        const field = constraint?.field ?? /^Key \(([^)]+)\)/.exec(String(e.detail ?? ""))?.[1] ?? "id";
        if (field === "id")
          return new ConflictError("A record with this id exists.", [{ field: "id", issue: "is taken" }]);
        return new ConflictError(`Another record has this ${field}.`, [{ field, issue: "is already taken" }]);
      }
      case "23503": {
        if (op === "delete" || (constraint && constraint.collection !== collection)) {
          const by = constraint?.collection ?? "another collection";
          return new BusinessRuleError(`Records of ${by} still refer to this record.`, [
            { field: "id", issue: `is referred to by records of ${by}` },
          ]);
        }
        const field = constraint?.field ?? "id";
        const target = constraint?.references ?? "another collection";
        return new BusinessRuleError(`${field} names no existing record of ${target}.`, [
          { field, issue: `must name an existing record of ${target}` },
        ]);
      }
      case "23502":
        return new ValidationError([
          { field: typeof e.column === "string" ? e.column : "body", issue: "is required" },
        ]);
      case "23514": {
        const name = typeof e.constraint === "string" ? e.constraint : "";
        const table = this.schema.collections[collection]?.table ?? "";
        const field =
          name.startsWith(`${table}_`) && name.endsWith("_check")
            ? name.slice(table.length + 1, -"_check".length)
            : "body";
        return new ValidationError([{ field, issue: "is outside the limits of this field" }]);
      }
      default:
        // Class 22, data exceptions: a value PostgreSQL cannot hold (a date out of its range, …).
        if (e.code.startsWith("22"))
          return new ValidationError([{ field: "body", issue: "holds a value the database cannot store" }]);
        return error;
    }
  }
}
