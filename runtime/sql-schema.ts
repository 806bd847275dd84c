/**
 * The contract between canon's SQL emitter and the SQL store: how each field's value is kept in
 * its column, and what `sql/schema.ts` tells the store about every table. The generator imports
 * these definitions (generator/emit/sql/snapshot.ts) to write the migrations and `schema.ts`;
 * the store imports them to read and write the rows. One definition, both sides.
 */

/**
 * How a column keeps its field's value: in its own SQL type, or as jsonb (`json`: arrays and
 * objects; `wrapped`: a scalar that may be both absent, SQL NULL, and null, JSON null).
 * `decimal` is `numeric(precision, scale)`, written and read as its text, never as a number.
 */
export type ColumnKind =
  "text" | "integer" | "number" | "boolean" | "uuid" | "date" | "json" | "wrapped" | "decimal";

/** The SQL type of the column that keeps each kind of value. */
export const COLUMN_SQL_TYPES: Readonly<Record<ColumnKind, string>> = {
  text: "text",
  integer: "bigint",
  number: "double precision",
  boolean: "boolean",
  uuid: "uuid",
  date: "date",
  json: "jsonb",
  wrapped: "jsonb",
  // With the field's precision and scale: numeric(12, 2) (see `decimalColumnType`).
  decimal: "numeric",
};

/** The SQL type of a decimal field's column. */
export function decimalColumnType(precision: number, scale: number): string {
  return `numeric(${precision}, ${scale})`;
}

/** Whether values of this kind are kept as jsonb (sent as JSON text, read back as JSON text). */
export function isJsonKind(kind: ColumnKind): boolean {
  return kind === "json" || kind === "wrapped";
}

/**
 * The first column of every table canon creates, its primary key: an integer row key, generated
 * always as identity, that the API never reads, accepts or shows.
 */
export const ROW_ID_COLUMN = { name: "row_id", type: "bigint", identity: true, notNull: true } as const;

/** The name of a one-column unique constraint or index, as PostgreSQL would name it: `orders_code_key`. */
export function uniqueConstraintName(table: string, column: string): string {
  return `${table}_${column}_key`;
}

/** One field's column, as the store reads and writes it. */
export interface SqlColumn {
  field: string;
  column: string;
  kind: ColumnKind;
  /** SQL NULL reads as an absent value; otherwise as null. */
  optional: boolean;
  /**
   * Every row has a value (the column is `not null`). Given for the columns of declared sort
   * keys: a sorted cursor then continues with a row comparison, which an index serves.
   */
  notNull?: boolean;
  /**
   * An array of referencing ids kept in a link table (SPEC §12.3, many-to-many): the owner's
   * table has no column for it; the store reads the ids in order and replaces the links on a write.
   */
  link?: SqlLink;
  /**
   * The column is `not null` (a required field, not nullable; a tenant field): `canon dev` on the
   * memory store refuses a save that makes it so while a stored record lacks a value, as the SQL
   * migration does.
   */
  required?: true;
  /** The field's default: what the migration that adds the column gives the rows already there (and `canon dev` the memory store's records). */
  default?: unknown;
  /** The storage name it had before a rename (`renamed: { in, from }`): the migration moves the values over, and `canon dev` the memory store's. */
  renamedFrom?: string;
  /**
   * The decimals it holds: the field itself, or inside it at `path` (`DecimalField.path` of
   * decimal.ts). A migration converts the stored values to a new precision and scale, and `canon
   * dev` the memory store's (`MemoryStore.carryTo`).
   */
  decimals?: ReadonlyArray<{ path?: readonly string[]; precision: number; scale: number }>;
}

/**
 * The link table of an array of referencing ids: `tickets__tag_ids ("row_id" → tickets.row_id on
 * delete cascade, "position", "target_row_id" → tags.row_id)`. Integer keys only, never shown.
 */
export interface SqlLink {
  table: string;
  /** The table of the records that hold the array. */
  owner: string;
  /** The table of the records the ids name. */
  target: string;
}

/** The columns of every link table: the owner's row, the item's position (from 1), the named record's row. */
export const LINK_COLUMNS = { owner: "row_id", position: "position", target: "target_row_id" } as const;

/**
 * The ids an array column holds as they move to its link table, in SQL over the owner's row `"o"`:
 * its JSON array, a single id (a reference made an array of references) as an array of one, else
 * none. Read with `jsonb_array_elements_text(…) with ordinality as "i" ("id", "n")`, each id as a
 * uuid by `LINK_ITEM_UUID` (null when it is not one). The generator's `link_` migration block and
 * `canon dev`'s pending migration read them alike.
 */
export function arrayIdsSql(column: string): string {
  const json = `to_jsonb("o".${column})`;
  return `case when jsonb_typeof(${json}) = 'array' then ${json} when jsonb_typeof(${json}) = 'string' then jsonb_build_array(${json}) else '[]'::jsonb end`;
}

/** An id of `arrayIdsSql` as a uuid, or null when it is not one. */
export const LINK_ITEM_UUID = `case when "i"."id" ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then "i"."id"::uuid end`;

export interface SqlCollection {
  table: string;
  columns: SqlColumn[];
  /** Columns with a trigram index for `?q=`. */
  search: string[];
  /**
   * Its tenant field, on a tenant-scoped collection (SPEC §12.4): the statements a delete runs on
   * the records it takes along match the deleting principal's tenant there too.
   */
  tenant?: string;
}

export interface SqlConstraint {
  collection: string;
  /** The field it constrains; of a composite unique constraint, its first field. */
  field: string;
  /** A composite unique constraint (SPEC §12.3): every field it holds, in the order written. */
  fields?: string[];
  kind: "unique" | "references";
  /** The referenced collection. */
  references?: string;
}

export interface SqlSchema {
  collections: Record<string, SqlCollection>;
  constraints: Record<string, SqlConstraint>;
  /** Whether the migrations create the event table (`events: true` in api.yaml; see sql-events.ts). */
  events: boolean;
}
