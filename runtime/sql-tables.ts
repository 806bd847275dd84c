/**
 * The SQL store's tables, and what every part of the store shares (sql-store.ts): each collection
 * of the schema prepared once (its table, its columns, the statements every request of a kind
 * runs, the projections of its lists), the SQL of a match (`Match`: exact matches, operator
 * conditions, containment, search) and of a sort, and `SqlContext`, what the reads
 * (sql-reads.ts), the writes (sql-writes.ts, sql-deletes.ts, sql-write-all.ts) and the store
 * itself work with.
 */
import type { EventSinks } from "./events.ts";
import type { StoreReference } from "./references.ts";
import {
  containsPattern,
  decodeRecord,
  parameter,
  placeholder,
  quoteIdentifier as q,
  readExpression,
  SYSTEM_SELECT,
} from "./sql-codec.ts";
import type { Row, SqlDriver, Statement } from "./sql-driver.ts";
import { translateSqlError, type SqlOperation } from "./sql-errors.ts";
import type { SqlIdempotencyKeys } from "./sql-idempotency.ts";
import { COLUMN_SQL_TYPES, isJsonKind, LINK_COLUMNS, type SqlColumn, type SqlSchema } from "./sql-schema.ts";
import {
  arrayLiteral,
  orderTerm,
  sortExpression,
  sortParameter,
  sortParameterValue,
  type SortTarget,
} from "./sql-sort.ts";
import { StatementCache } from "./sql-statements.ts";
import type { Condition, Match, SortKey, StoredRecord, Values } from "./store.ts";

/** What every part of the SQL store works with; the store holds one (`SqlStore.exclusive` another, over its transaction). */
export interface SqlContext {
  /** The driver: the pool, or inside `SqlStore.exclusive` the transaction holding its lock. */
  readonly db: SqlDriver;
  readonly schema: SqlSchema;
  readonly tables: SqlTables;
  /** Where committed events go (`Store.subscribe`). */
  readonly sinks: EventSinks;
  /**
   * The idempotency keys of POSTs (the table `canon__idempotency_keys`, sql-idempotency.ts), for a
   * repeat to adopt its first request's record; absent inside `SqlStore.exclusive` (no adoption there).
   */
  readonly idempotency?: SqlIdempotencyKeys;
  /** What a delete takes along (sql-deletes.ts). */
  readonly cascades: {
    /** By referenced collection: the `cascade` references to it (whose records a delete takes along). */
    readonly byReferenced: ReadonlyMap<string, readonly StoreReference[]>;
    /** Whether some cascade removes ids from arrays: a delete then always runs in a transaction, to update their records. */
    readonly arrays: boolean;
    /** Most records one delete takes along (`cascadeLimit`); beyond it the delete answers 422. */
    readonly limit: number;
    /** By referenced collection: the `restrict` references to it, in the generated order (the one the memory store checks them in). */
    readonly restricts: ReadonlyMap<string, readonly StoreReference[]>;
    /**
     * The collections that a reference names from inside a field kept whole (`StoreReference.path`:
     * an object's field, an array of objects): no foreign key holds their records, so a delete
     * looks for the records that name them in its transaction (`holdNone`, sql-deletes.ts).
     */
    readonly nested: ReadonlySet<string>;
  };
}

/** `created_at` and `updated_at`: timestamptz columns every table has. */
const SYSTEM_TARGETS: Readonly<Record<string, SortTarget>> = {
  created_at: { column: "created_at", kind: "timestamptz", notNull: true },
  updated_at: { column: "updated_at", kind: "timestamptz", notNull: true },
};

/** The names of the system columns `SYSTEM_SELECT` reads, in its order. */
export const SYSTEM_NAMES = ["id", "created_at", "updated_at", "_revision"];

/** The columns a read selects and decodes: a table's all, or a list's projection (`Match.fields`). */
export interface Projection {
  select: string;
  list: SqlColumn[];
}

/** A collection prepared for its statements. */
export interface Prepared extends Projection {
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

/** A sort key's column (or system column), and its expression in the order. */
export interface OrderKey {
  key: SortKey;
  target: SortTarget;
  expression: string;
}

/** The record a row of `p` holds. */
export function recordOf(p: Projection, row: Row): StoredRecord {
  return decodeRecord(p.list, row);
}

/** Runs statements and turns constraint violations into the API's errors. */
export async function translated<T>(
  sql: SqlContext,
  collection: string,
  op: SqlOperation,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw translateSqlError(error, sql.schema, collection, op);
  }
}

/** The collections of a schema, each prepared on first use, and the named statements of the store. */
export class SqlTables {
  private readonly schema: SqlSchema;
  private readonly prepared = new Map<string, Prepared>();
  private readonly statements = new StatementCache();

  constructor(schema: SqlSchema) {
    this.schema = schema;
  }

  /** The named statement of `text` (sql-statements.ts). */
  statement(text: string): Statement | string {
    return this.statements.get(text);
  }

  collection(name: string): Prepared {
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
        get: this.statement(`select ${select} from ${table} where "id" = $1`),
        scopedGets: new Map(),
        update: this.statement(
          `update ${table} set ${sets.join(", ")} where "id" = $1 and "_revision" = $2 returning ${select}`,
        ),
        // The record as it was: the event of a delete shows it.
        delete: this.statement(
          `delete from ${table} where "id" = $1 and "_revision" = $2 returning ${select}`,
        ),
        revision: this.statement(`select "_revision" from ${table} where "id" = $1`),
        projections: new Map(),
      };
      this.prepared.set(name, p);
    }
    return p;
  }

  /**
   * What a list of `p` reads: the columns of `fields` (a version's view, `Match.fields`) and of the
   * sort, or all of them without `fields`. A projection that leaves nothing out is the table's own
   * select, so its statements are the same; each other one has its own, named and made once.
   */
  projection(
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

  column(p: Prepared, field: string): SqlColumn {
    const column = p.columns.get(field);
    if (!column) throw new Error(`the SQL schema has no field "${field}" in ${p.table}`);
    return column;
  }

  /** The WHERE conditions of a match; parameters are appended to `params`. */
  conditions(p: Prepared, match: Match, params: unknown[]): string[] {
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

  /** ` and <condition>` for each exact match of `where` (parameters appended to `params`); "" without one. */
  andWhere(p: Prepared, where: Values | undefined, params: unknown[]): string {
    if (!where) return "";
    return this.conditions(p, { where }, params)
      .map((c) => ` and ${c}`)
      .join("");
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
  orderBy(p: Prepared, sort: readonly SortKey[]): { terms: string; keys: OrderKey[] } {
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

  /**
   * A write statement by id (`update`/`delete … where "id" = $1 and "_revision" = $2 returning …`)
   * with the exact matches of `where` in its where clause (a tenant principal's tenant, SPEC
   * §12.4): their parameters are appended to `params`. Without `where`, the statement as it is.
   */
  scoped(
    p: Prepared,
    statement: Statement | string,
    where: Values | undefined,
    params: unknown[],
  ): Statement | string {
    const conditions = this.andWhere(p, where, params);
    if (!conditions) return statement;
    const text = typeof statement === "string" ? statement : statement.text;
    const at = text.lastIndexOf(" returning");
    return this.statement(`${text.slice(0, at)}${conditions}${text.slice(at)}`);
  }
}
