/**
 * Between a field's value and its column: the SQL that reads a column as the value the store
 * returns, the parameter that writes one, and the decoding of a row into a stored record.
 */
import { orderedJson } from "./json-order.ts";
import { isJsonKind, LINK_COLUMNS, type SqlColumn, type SqlLink } from "./sql-schema.ts";
import type { StoredRecord } from "./store.ts";
import type { Row } from "./sql-driver.ts";

/** `"name"`, quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The system columns every table has. The timestamps come as PostgreSQL's own text of a
 * timestamptz in the session's time zone, UTC (both drivers set it, see sql-driver.ts), and
 * `isoTimestamp` turns that into the API's form: cheaper for the server than `to_char` on every
 * row, and no `Date` is made on either side.
 */
export const SYSTEM_SELECT = [
  `"id"`,
  `"created_at"::text as "created_at"`,
  `"updated_at"::text as "updated_at"`,
  `"_revision"`,
];

/** timestamptz's text: date, time, fraction (1 to 6 digits, trailing zeros dropped), offset. */
const TIMESTAMP_TEXT = /^(\d{4,})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?([+-]\d\d(?::\d\d){0,2})$/;

/**
 * PostgreSQL's text of a timestamptz in UTC (`2026-01-01 00:08:20.1234+00`) as ISO 8601 with
 * milliseconds, the fraction cut as `to_char`'s `MS` cuts it (`2026-01-01T00:08:20.123Z`).
 * Another offset (a session whose time zone is not UTC) is converted; a text of another shape
 * (`infinity`) is returned as it is.
 */
export function isoTimestamp(text: string): string {
  const n = text.length;
  // The usual shape: a four-digit year, in UTC; with no fraction when it is zero.
  if (text.charCodeAt(10) === 32 && text.charCodeAt(n - 3) === 43 && text.endsWith("00")) {
    if (n === 22) return `${text.slice(0, 10)}T${text.slice(11, 19)}.000Z`;
    if (n > 23 && n <= 29 && text.charCodeAt(19) === 46) {
      const fraction = n >= 26 ? text.slice(20, 23) : `${text.slice(20, n - 3)}00`.slice(0, 3);
      return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}Z`;
    }
  }
  const m = TIMESTAMP_TEXT.exec(text);
  if (!m) return text;
  const [, year, month, day, time, fraction = "", offset] = m;
  const ms = `${fraction}000`.slice(0, 3);
  if (/^\+00(:00){0,2}$/.test(offset!)) return `${year}-${month}-${day}T${time}.${ms}Z`;
  const [hours, minutes = "00"] = offset!.slice(1).split(":");
  const at = new Date(`${year}-${month}-${day}T${time}.${ms}${offset![0]}${hours}:${minutes}`);
  return Number.isNaN(at.getTime()) ? text : at.toISOString();
}

/** The SQL that reads a column as the value the store returns. */
export function readExpression(column: SqlColumn): string {
  const c = quoteIdentifier(column.column);
  if (column.link) return `${linkedIds(column.link)}::text as ${c}`;
  if (column.kind === "date") return `to_char(${c}, 'YYYY-MM-DD') as ${c}`;
  // numeric's text has exactly the column's scale of fraction digits: the decimal's canonical form.
  if (column.kind === "decimal") return `${c}::text as ${c}`;
  // As text, parsed here: a JSON null ('null') stays apart from SQL NULL (absent).
  if (isJsonKind(column.kind)) return `${c}::text as ${c}`;
  return c;
}

/**
 * The ids of an array kept in a link table, in their order, as jsonb (`[]` without links): a
 * subquery on the owner's row, so it reads the same in a select, a `returning` and a join.
 */
export function linkedIds(link: SqlLink): string {
  const { owner, position, target } = LINK_COLUMNS;
  // Aliased: the target may be the owner's own table (an array of ids of its own collection).
  return (
    `coalesce((select jsonb_agg("canon__t"."id" order by "canon__l".${quoteIdentifier(position)}) ` +
    `from ${quoteIdentifier(link.table)} "canon__l" join ${quoteIdentifier(link.target)} "canon__t" ` +
    `on "canon__t"."row_id" = "canon__l".${quoteIdentifier(target)} ` +
    `where "canon__l".${quoteIdentifier(owner)} = ${quoteIdentifier(link.owner)}."row_id"), '[]'::jsonb)`
  );
}

/**
 * The ids of an array kept in a link table for every row of a page at once: a join of the page
 * (`"canon__page"`, whose rows carry their row id as `"canon__row"`, read from the statement's
 * `"canon__rows"`) to the links of those rows grouped by row, `alias` naming it and its `"ids"`.
 * One aggregate for the page instead of `linkedIds` run again for each of its rows, over one scan
 * of the link table's (row, position) index for all the page's row ids (`= any(array(…))`: an
 * `in (select …)` over the page left PostgreSQL to guess its size, and it read the whole link
 * table). pgbench, a `list_under` page of 20 orders with their product ids: 4.5k → 8.1k
 * statements a second with 3 links an order, 9.9k → 14.1k with none (docs/benchmarks.md).
 */
export function linkedIdsOfPage(link: SqlLink, alias: string): string {
  const { owner, position, target } = LINK_COLUMNS;
  const o = quoteIdentifier(owner);
  return (
    ` left join (select "canon__l".${o}, jsonb_agg("canon__t"."id" order by "canon__l".${quoteIdentifier(position)}) as "ids" ` +
    `from ${quoteIdentifier(link.table)} "canon__l" join ${quoteIdentifier(link.target)} "canon__t" ` +
    `on "canon__t"."row_id" = "canon__l".${quoteIdentifier(target)} ` +
    `where "canon__l".${o} = any(array(select "canon__row" from "canon__rows")) group by "canon__l".${o}) ${alias} ` +
    `on ${alias}.${o} = "canon__page"."canon__row"`
  );
}

/** The placeholder of parameter `n` holding a value of this column. */
export function placeholder(column: SqlColumn, n: number): string {
  return isJsonKind(column.kind) ? `$${n}::jsonb` : column.kind === "decimal" ? `$${n}::numeric` : `$${n}`;
}

/** Appends the parameter of a value of this column to `params`; returns its placeholder. */
export function parameter(column: SqlColumn, value: unknown, params: unknown[]): string {
  params.push(value === undefined ? null : isJsonKind(column.kind) ? JSON.stringify(value) : value);
  return placeholder(column, params.length);
}

/** A row read with `SYSTEM_SELECT` and the columns' read expressions, as a stored record. */
export function decodeRecord(columns: readonly SqlColumn[], row: Row): StoredRecord {
  let decoder = decoders.get(columns);
  if (!decoder) {
    decoder = recordDecoder(columns);
    decoders.set(columns, decoder);
  }
  return decoder(row, isoTimestamp, orderedJson);
}

type RecordDecoder = (row: Row, iso: typeof isoTimestamp, order: typeof orderedJson) => StoredRecord;

const decoders = new WeakMap<readonly SqlColumn[], RecordDecoder>();

/**
 * `decodeRecord` for one table, as one function that names each column and field as it is: SQL
 * NULL is absent (an optional field) or null, integers and numbers are numbers, JSON kinds are
 * parsed from their text with their objects' keys in the stored order (json-order.ts), decimals
 * stay the text they are read as; no lookup by a varying key or test of the kind per value (a list of 20
 * rows decodes in about half the time). Names enter the code as JSON strings.
 */
function recordDecoder(columns: readonly SqlColumn[]): RecordDecoder {
  const body = columns.map((column) => {
    const field = `values[${JSON.stringify(column.field)}]`;
    const read =
      column.kind === "integer" || column.kind === "number"
        ? "Number(v)"
        : isJsonKind(column.kind)
          ? 'order(typeof v === "string" ? JSON.parse(v) : v)'
          : "v";
    const absent = column.optional ? "" : ` else ${field} = null;`;
    return `v = row[${JSON.stringify(column.column)}];\nif (v !== null && v !== undefined) ${field} = ${read};${absent}`;
  });
  return new Function(
    "row",
    "iso",
    "order",
    [
      "const values = {};",
      "let v;",
      ...body,
      "return { id: String(row.id), created_at: iso(String(row.created_at)), updated_at: iso(String(row.updated_at)), revision: Number(row._revision), values };",
    ].join("\n"),
  ) as RecordDecoder;
}

/** `%text%` for ILIKE, with the pattern characters of the text escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The record as `decodeRecord` will read it back once written: each column's value as the
 * column keeps it (SQL NULL for a missing value, uuids in lower case, objects' keys in the
 * stored order of json-order.ts, as the decoder puts them). A write can make its event from it
 * before the statement runs; the store compares it with the row read back all the same.
 */
export function storedImage(columns: readonly SqlColumn[], record: StoredRecord): StoredRecord {
  const row: Row = {
    id: record.id,
    created_at: record.created_at,
    updated_at: record.updated_at,
    _revision: record.revision,
  };
  for (const column of columns) {
    const value = record.values[column.field];
    // What the column returns: JSON kinds as text (a JSON null is 'null', not SQL NULL).
    row[column.column] =
      value === undefined
        ? null
        : isJsonKind(column.kind)
          ? JSON.stringify(value)
          : column.kind === "uuid" && typeof value === "string"
            ? value.toLowerCase()
            : value;
  }
  // Read back by the very decoder the store reads rows with.
  return { ...record, values: decodeRecord(columns, row).values };
}

/** Whether two JSON values print the same: equal scalars, and arrays and objects equal entry by entry, keys in the same order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  return keys.every(
    (key, i) =>
      key === others[i] && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}
