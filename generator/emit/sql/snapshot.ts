/**
 * The SQL schema an API wants, as data: one table per stored collection (resources and the
 * records of their actions), with columns, constraints and indexes. It is written as
 * `sql/schema.json` beside the migrations; the next run diffs the definitions' schema against
 * it to write the next migration (see diff.ts). Pure: the same model gives the same snapshot.
 */
import { createHash } from "node:crypto";
import { EXPORT_CHUNKS_TABLE } from "../../../runtime/exports-files-sql.ts";
import type { OnDelete } from "../../../runtime/references.ts";
import { orderingOf as modelOrdering } from "../../model/lists.ts";
import {
  cursorKeyTable,
  eventTable,
  type SystemColumn,
  type SystemTable,
} from "../../../runtime/sql-events.ts";
import { IDEMPOTENCY_TABLE } from "../../../runtime/sql-idempotency.ts";
import { instantSql, sortExpression, type SortTarget } from "../../../runtime/sql-sort.ts";
import type { Ordering } from "../../../runtime/store.ts";
import { uniqueKeySql, type UniqueKind } from "../../../runtime/unique.ts";
import { compareKindOf, uniqueKindOf } from "../../model/unique.ts";
import { heldReferences, isNullableReference, serverField } from "../../model/snapshot.ts";
import {
  COLUMN_SQL_TYPES,
  decimalColumnType,
  isJsonKind,
  LINK_COLUMNS,
  ROW_ID_COLUMN,
  uniqueConstraintName,
  type ColumnKind,
  type SqlColumn,
} from "../../../runtime/sql-schema.ts";
import type { ApiModel, StorageResource, VersionField } from "../../model/types.ts";

export const SNAPSHOT_FORMAT = 1;

/** A column of a resource's table: a system table's column, and its check and reference. */
export interface SnapshotColumn extends SystemColumn {
  check?: { name: string; expression: string };
  /** `column`: the referenced column when it is not `id` (a link table's `row_id`s). */
  references?: { name: string; table: string; onDelete: OnDelete; column?: string };
  /**
   * A decimal kept in JSON (`jsonb`): a field that may be absent and null, or the values of a map
   * or the items of an array of decimals (`items`). Its check says its precision and scale as a
   * pattern; this says them as numbers, for a migration that converts stored values to its
   * canonical form (from a number, or from another scale: diff.ts). Not compared by itself.
   */
  decimal?: { precision: number; scale: number; items?: "map" | "array" };
  /**
   * The decimals deeper in a JSON column (an object's field, an array's or a map's objects or
   * maps or arrays), each with its `path` from the column as `DecimalField.path` of
   * runtime/decimal.ts says it (`["[]", "unit_price"]`): its check holds each (`nestedDecimalCheck`),
   * and a migration converts the stored values when its precision or scale changes (diff.ts).
   */
  nestedDecimals?: Array<{ path: string[]; precision: number; scale: number }>;
  /**
   * `"null"`: a plain nullable column whose SQL NULL reads back as `null` (a field that is nullable
   * but required, a reference both optional and nullable); absent: its NULL reads back as absent
   * (an optional field), or the column is not null or kept in JSON. A migration that moves the
   * column into JSON (the field made optional and nullable, diff.ts `wrappedValue`) keeps a `null`
   * as JSON null and an absent value as SQL NULL. Not compared by itself.
   */
  nullReads?: "null";
  /**
   * The tenant field of a tenant-scoped table (SPEC §12.4): added to a table that holds rows, it is
   * filled from the record a required reference names where that table is tenant-scoped (a child's
   * parent), and refused naming a record it cannot fill (diff.ts `newTenant`). Not compared by itself.
   */
  tenant?: true;
}

export interface SnapshotIndex {
  name: string;
  /** A unique index: the column whose values it keeps unique (a unique string field, compared normalized). */
  unique?: string;
  /**
   * A composite unique index (SPEC §12.3): the columns whose values it keeps unique together,
   * text compared normalized as for `unique`. A row with one of them NULL is held by nothing.
   */
  together?: string[];
  /** What follows `on <table>`: `using btree ("status", "id")`. */
  definition: string;
}

/**
 * Extended statistics of functional dependencies (`create statistics … (dependencies)`): how far
 * the value of one column tells the others'. ANALYZE measures it; the planner then estimates a
 * match on all of them from the first instead of multiplying their selectivities.
 */
export interface SnapshotStatistics {
  name: string;
  columns: string[];
}

export interface SnapshotTable {
  name: string;
  /** The store collection it holds: `orders`, `orders/cancellations`. */
  collection: string;
  columns: SnapshotColumn[];
  indexes: SnapshotIndex[];
  /** Absent when it has none (every table but a tenant-scoped one with references). */
  statistics?: SnapshotStatistics[];
  /**
   * A link table (SPEC §12.3, many-to-many): the table and field column of the array it keeps, and
   * the table of the records the ids name. Where the owner had the array as a jsonb column, the
   * migration that creates the link table copies the ids over, in order, and drops the column.
   */
  link?: { owner: string; column: string; target: string };
  /**
   * The fields renamed in some version (`renamed: { in, from }`), as [old name, new name]: the
   * migration that adds the new column moved the old one's values into it. Recorded so that a
   * rename pointed at another field later (a draft's `beta` from `alpha`, then `gamma` from
   * `alpha`) moves the values from `beta`, where they are (diff.ts). Absent when it has none.
   */
  renames?: Array<[from: string, to: string]>;
}

export interface SchemaSnapshot {
  format: number;
  extensions: string[];
  tables: SnapshotTable[];
  /**
   * The migrations (file names in `sql/`) that create this schema, in order: the only ones the
   * next run carries over. Absent in a snapshot written before canon listed them.
   */
  migrations?: string[];
}

/** Store metadata of a field column: what `sql/schema.ts` carries for the runtime (runtime/sql-schema.ts). */
export type FieldColumn = SqlColumn;

/** One stored collection as the emitter sees it: a table and its field columns. */
export interface CollectionPlan {
  collection: string;
  table: SnapshotTable;
  fields: FieldColumn[];
  /** Field columns that `?q=` may match with a trigram index. */
  search: string[];
  /** The link tables of its arrays of referencing ids, in field order. */
  links: SnapshotTable[];
}

const MAX_IDENTIFIER = 63;

/** A PostgreSQL identifier of at most 63 bytes: long names keep a prefix and a short hash. */
export function identifier(name: string): string {
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER) return name;
  const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
  return `${name.slice(0, MAX_IDENTIFIER - 9)}_${hash}`;
}

/** `"name"`: every identifier is quoted, so a field may be called `order` or `user`. */
export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `'text'` with quotes doubled. */
export function stringLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** `orders` → `orders`, `book-copies` → `book_copies`, `orders/cancellations` → `orders__cancellations`. */
export function tableName(collection: string): string {
  return identifier(collection.replace(/-/g, "_").replace(/\//g, "__"));
}

/** The revision column: its leading underscore keeps it apart from every snake_case field name. */
export const REVISION_COLUMN = "_revision";

function systemColumns(table: string): SnapshotColumn[] {
  return [
    { ...ROW_ID_COLUMN },
    { name: "id", type: "uuid", notNull: true, unique: identifier(uniqueConstraintName(table, "id")) },
    { name: "created_at", type: "timestamptz", notNull: true },
    { name: "updated_at", type: "timestamptz", notNull: true },
    { name: REVISION_COLUMN, type: "integer", notNull: true, default: "1" },
  ];
}

/** Whether a field is kept in a jsonb column: arrays, objects, maps, and values that may be absent or null. */
function kindOf(field: VersionField): ColumnKind {
  if (field.type === "array" || field.type === "object" || field.type === "map") return "json";
  // Absent (SQL NULL) and null (JSON null) are different values of such a field.
  if (field.optional && field.nullable) return "wrapped";
  switch (field.type) {
    case "integer":
      return "integer";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "uuid":
      return "uuid";
    case "date":
      return "date";
    case "decimal":
      return "decimal";
    default:
      return "text";
  }
}

function numberLiteral(n: number): string {
  return Number.isFinite(n) ? String(n) : "null";
}

/**
 * The check of a field's limits: enum values, lengths, bounds, item counts, JSON shapes.
 * Patterns and formats stay with the validators. Each part is safe on any stored value:
 * casts and array lengths run only under a CASE that has checked the JSON type first.
 */
function checkExpression(field: VersionField, column: string, kind: ColumnKind): string | undefined {
  const c = quote(column);
  if (kind === "json") {
    const nested = nestedDecimals(field).map((d) => nestedDecimalCheck(c, d.path, d.decimal));
    const shape =
      field.type === "array"
        ? `when jsonb_typeof(${c}) = 'array' then ${[arrayChecks(field, c), ...nested].join(" and ")}`
        : field.type === "map"
          ? `when jsonb_typeof(${c}) = 'object' then ${[mapChecks(field, c), ...nested].join(" and ")}`
          : `when jsonb_typeof(${c}) = 'object' then ${nested.length ? nested.join(" and ") : "true"}`;
    const orNull = field.nullable ? ` when jsonb_typeof(${c}) = 'null' then true` : "";
    return `case when ${c} is null then true ${shape}${orNull} else false end`;
  }
  if (kind === "wrapped") {
    const jsonType =
      field.type === "integer" || field.type === "number"
        ? "number"
        : field.type === "boolean"
          ? "boolean"
          : "string";
    const scalar = scalarChecks(field, `(${c} #>> '{}')`, `(${c} #>> '{}')::numeric`);
    if (field.type === "integer") scalar.unshift(`(${c} #>> '{}') ~ '^-?[0-9]+$'`);
    // Its precision and scale, as a map's value of the type (a scale changed converts the values: diff.ts).
    if (field.type === "decimal") scalar.unshift(`(${c} #>> '{}') ~ ${stringLiteral(decimalPattern(field.precision ?? 0, field.scale ?? 0))}`);
    const valid = scalar.length ? scalar.join(" and ") : "true";
    return `case when ${c} is null or jsonb_typeof(${c}) = 'null' then true when jsonb_typeof(${c}) = '${jsonType}' then ${valid} else false end`;
  }
  const parts = scalarChecks(field, c, c);
  return parts.length ? parts.join(" and ") : undefined;
}

/**
 * A map's check: at most `max_items` keys, and every value of the item type within its limits
 * (SPEC §12.6), so that a migration that tightens them verifies the maps stored (diff.ts). A check
 * holds no subquery: the values are reached with SQL/JSON paths. Patterns and formats stay with the
 * validators.
 */
function mapChecks(field: VersionField, c: string): string {
  const parts = [`jsonb_array_length(jsonb_path_query_array(${c}, '$.*')) <= ${field.maxItems ?? 100}`];
  const item = field.items ? itemPredicate(field.items) : null;
  if (item) parts.push(`not jsonb_path_exists(${c}, ${stringLiteral(`strict $.* ? (!(${item}))`)})`);
  return parts.join(" and ");
}

/** An array's check: at most `max_items` items, each of the item type within its limits (as a map's values). */
function arrayChecks(field: VersionField, c: string): string {
  const parts = [`jsonb_array_length(${c}) <= ${field.maxItems ?? 100}`];
  const item = field.items ? itemPredicate(field.items) : null;
  if (item) parts.push(`not jsonb_path_exists(${c}, ${stringLiteral(`strict $[*] ? (!(${item}))`)})`);
  return parts.join(" and ");
}

/**
 * The decimals inside a JSON field deeper than its own items (a map's values, an array's items:
 * `itemPredicate`), each with its path from the field (`DecimalField.path` of runtime/decimal.ts:
 * a field's name, `[]` for every item of an array, `{}` for every value of a map).
 */
export function nestedDecimals(field: VersionField): Array<{ path: string[]; decimal: VersionField }> {
  return fieldDecimals(field).filter(({ path }) => path.length > 1 || (path.length === 1 && path[0] !== "[]" && path[0] !== "{}"));
}

/** Every decimal a field holds, itself (path `[]`) or inside it, each with its path from the field. */
function fieldDecimals(f: VersionField, path: string[] = []): Array<{ path: string[]; decimal: VersionField }> {
  if (f.type === "decimal") return [{ path, decimal: f }];
  if ((f.type === "array" || f.type === "map") && f.items) return fieldDecimals(f.items, [...path, f.type === "array" ? "[]" : "{}"]);
  if (f.type === "object" && f.fields) return f.fields.flatMap((sub) => fieldDecimals(sub, [...path, sub.name]));
  return [];
}

/**
 * The strict JSON path from a column's value to the values at `path` (`nestedDecimals`): each step
 * only into a value of the type it needs and an object's field only where the object has it, so
 * that no stored value (an optional field left out, a null) makes the path fail.
 */
export function nestedPath(path: readonly string[]): string {
  return `strict $${path
    .map((step) =>
      step === "[]"
        ? ` ? (@.type() == "array")[*]`
        : step === "{}"
          ? ` ? (@.type() == "object").*`
          : ` ? (@.type() == "object" && exists(@.${pathString(step)})).${pathString(step)}`,
    )
    .join("")}`;
}

/**
 * The check of a decimal deeper in a JSON column (SPEC §12.6): every value at its path is the
 * canonical text of its precision and scale, within its bounds, as a map's value of the type is.
 */
function nestedDecimalCheck(c: string, path: readonly string[], decimal: VersionField): string {
  return `not jsonb_path_exists(${c}, ${stringLiteral(`${nestedPath(path)} ? (!(${itemPredicate(decimal)}))`)})`;
}

/** A JSON path string: `"text"`, with `"` and `\` escaped. */
export function pathString(text: string): string {
  return `"${text.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
}

/**
 * A string of `min` characters or more (`max` undefined), or of at most `max`: `^(.{255}){2}.{10,}$`,
 * in repetitions of at most 255 (the limit of PostgreSQL's regular expressions).
 */
function lengthPattern(min: number, max: number | undefined): string {
  const n = max ?? min;
  const [q, r] = [Math.floor(n / 255), n % 255];
  if (max === undefined) return `^${q ? `(.{255}){${q}}` : ""}.{${r},}$`;
  return `^${q ? `(.{0,255}){${q}}` : ""}.{0,${r}}$`;
}

/**
 * The text of a decimal of `numeric(precision, scale)` as a check takes it (a decimal kept wrapped
 * in JSON, a map's value, an array's item): at most `precision - scale` digits before the point
 * (one, `0`, when it keeps none) and exactly `scale` after it, as its canonical form has them.
 */
export function decimalPattern(precision: number, scale: number): string {
  return `^-?[0-9]{1,${Math.max(precision - scale, 1)}}${scale ? `\\.[0-9]{${scale}}` : ""}$`;
}

/**
 * JSON path predicates over `@`, the text of a decimal of `scale` fraction digits (of
 * `decimalPattern`'s shape), that hold when its value is at least `minimum` and at most `maximum`
 * (canonical texts): compared exactly, digit by digit, by regular expressions. A path compares
 * numbers exactly, but reads a string as a number only through `.double()`, a float, which past 15
 * digits takes `…678.01` for `…678.00`.
 */
function decimalBounds(minimum: string | undefined, maximum: string | undefined, scale: number): string[] {
  // Below zero: a minus sign and a digit that is not 0 (`-0.00` is zero).
  const negative = `@ like_regex ${pathString("^-[0-9.]*[1-9]")}`;
  const magnitude = (bound: string, most: boolean) => `@ like_regex ${pathString(magnitudePattern(bound.replace(/^-/, ""), scale, most))}`;
  const out: string[] = [];
  if (minimum !== undefined) {
    if (minimum.startsWith("-")) out.push(`(!(${negative}) || ${magnitude(minimum, true)})`);
    else if (/[1-9]/.test(minimum)) out.push(`(!(${negative}) && ${magnitude(minimum, false)})`);
    else out.push(`!(${negative})`);
  }
  if (maximum !== undefined) {
    if (maximum.startsWith("-")) out.push(`(${negative} && ${magnitude(maximum, false)})`);
    else out.push(`(${negative} || ${magnitude(maximum, true)})`);
  }
  return out;
}

/**
 * A regular expression over a decimal's text (sign, leading zeros and all) that matches when its
 * magnitude is at most (`most`) or at least `bound` (an unsigned canonical text of `scale`
 * fraction digits). Of two magnitudes the one with more digits before the point is the larger;
 * with as many, their digits compare as strings of one length.
 */
function magnitudePattern(bound: string, scale: number, most: boolean): string {
  const [integer = "", fraction = ""] = bound.split(".");
  const significant = integer.replace(/^0+/, "");
  const digits = [...`${significant}${fraction}`].map(Number);
  const point = significant.length;
  const anyFraction = scale ? `\\.[0-9]{${scale}}` : "";
  // One digit position each, the point put in before position `point`; runs of any digit shortened.
  const write = (tokens: string[]) => {
    const all = scale ? [...tokens.slice(0, point), "\\.", ...tokens.slice(point)] : tokens;
    return all.join("").replace(/(\[0-9\])+/g, (run) => (run.length === 5 ? run : `[0-9]{${run.length / 5}}`));
  };
  const range = (from: number, to: number) => (from === to ? String(from) : `[${from}-${to}]`);
  const alternatives: string[] = [];
  if (most) {
    // Fewer digits before the point (none: below 1).
    if (point > 0) alternatives.push(`${point > 1 ? `([1-9][0-9]{0,${point - 2}})?` : ""}${anyFraction}`);
  } else alternatives.push(`[1-9][0-9]{${point},}${anyFraction}`);
  // As many: the first digit that differs is lower (higher); the first before the point is not 0.
  digits.forEach((digit, i) => {
    const lowest = i === 0 && point > 0 ? 1 : 0;
    const [from, to] = most ? [lowest, digit - 1] : [digit + 1, 9];
    if (from > to) return;
    alternatives.push(write([...digits.slice(0, i).map(String), range(from, to), ...digits.slice(i + 1).map(() => "[0-9]")]));
  });
  alternatives.push(write(digits.map(String)));
  return `^-?0*(${alternatives.join("|")})$`;
}

/** What a map's value or an array's item must be, as a JSON path predicate over `@`; null when anything goes. */
function itemPredicate(item: VersionField): string | null {
  const all: string[] = [];
  const type = (t: string) => all.push(`@.type() == "${t}"`);
  switch (item.type) {
    case "string":
      type("string");
      if (item.minLength) all.push(`@ like_regex ${pathString(lengthPattern(item.minLength, undefined))} flag "s"`);
      if (item.maxLength !== undefined) all.push(`@ like_regex ${pathString(lengthPattern(0, item.maxLength))} flag "s"`);
      break;
    case "enum":
      type("string");
      all.push(`(${(item.values ?? []).map((v) => `@ == ${pathString(v)}`).join(" || ") || "false"})`);
      break;
    case "integer":
    case "number":
      type("number");
      if (item.type === "integer") all.push("@.floor() == @");
      if (item.minimum !== undefined && Number.isFinite(item.minimum)) all.push(`@ >= ${item.minimum}`);
      if (item.maximum !== undefined && Number.isFinite(item.maximum)) all.push(`@ <= ${item.maximum}`);
      break;
    case "boolean":
      type("boolean");
      break;
    case "decimal": {
      type("string");
      const scale = item.scale ?? 0;
      all.push(`@ like_regex ${pathString(decimalPattern(item.precision ?? 0, scale))}`);
      all.push(...decimalBounds(item.decimalMinimum, item.decimalMaximum, scale));
      break;
    }
    case "uuid":
    case "date":
    case "datetime":
      type("string");
      break;
    case "object":
    case "map":
      type("object");
      break;
    case "array":
      type("array");
      break;
    default:
      return null;
  }
  if (item.nullable) return `@.type() == "null" || (${all.join(" && ")})`;
  return all.join(" && ");
}

/** Checks over a scalar: `text` is its text, `number` its numeric value. */
function scalarChecks(field: VersionField, text: string, number: string): string[] {
  const parts: string[] = [];
  switch (field.type) {
    case "string":
      if (field.minLength !== undefined) parts.push(`char_length(${text}) >= ${field.minLength}`);
      if (field.maxLength !== undefined) parts.push(`char_length(${text}) <= ${field.maxLength}`);
      break;
    case "enum":
      parts.push(`${text} in (${(field.values ?? []).map(stringLiteral).join(", ")})`);
      break;
    case "datetime":
      parts.push(`${text} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T'`);
      break;
    case "integer":
    case "number":
      if (field.minimum !== undefined) parts.push(`${number} >= ${numberLiteral(field.minimum)}`);
      if (field.maximum !== undefined) parts.push(`${number} <= ${numberLiteral(field.maximum)}`);
      break;
    case "decimal":
      // The bounds are canonical decimal texts: exact numeric literals.
      if (field.decimalMinimum !== undefined) parts.push(`${number} >= ${field.decimalMinimum}`);
      if (field.decimalMaximum !== undefined) parts.push(`${number} <= ${field.decimalMaximum}`);
      break;
    default:
      break;
  }
  return parts;
}

function defaultLiteral(field: VersionField, kind: ColumnKind): string | undefined {
  if (!field.hasDefault || field.default === undefined) return undefined;
  const value = field.default;
  if (isJsonKind(kind)) return `${stringLiteral(JSON.stringify(value))}::jsonb`;
  if (value === null) return "null";
  if (typeof value === "string") return stringLiteral(value);
  if (typeof value === "number") return numberLiteral(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  return undefined;
}

interface ColumnSource {
  field: VersionField;
  /** Collection it references, and whether its records go with the referenced record. */
  references?: { collection: string; onDelete: OnDelete };
  /** An array of ids of `collection`, kept in a link table: what deleting a record they name does. */
  link?: { collection: string; onDelete: OnDelete };
}

/**
 * The link table of an array of referencing ids (runtime/sql-schema.ts `LINK_COLUMNS`):
 * `<table>__<field>`, the owner's row (its links go with it), the position from 1, the named
 * record's row (`on_delete` of the items); unique by (row, position) and by (row, target), and an
 * index by target for the lists under a named record and for deletes.
 */
function linkTable(owner: string, column: string, link: NonNullable<ColumnSource["link"]>): SnapshotTable {
  const name = identifier(`${owner}__${column}`);
  const target = tableName(link.collection);
  const { owner: ownerColumn, position, target: targetColumn } = LINK_COLUMNS;
  return {
    name,
    collection: `${owner}/${column}`,
    columns: [
      {
        name: ownerColumn,
        type: "bigint",
        notNull: true,
        references: {
          name: identifier(`${name}_${ownerColumn}_fkey`),
          table: owner,
          onDelete: "cascade",
          column: "row_id",
        },
      },
      { name: position, type: "integer", notNull: true },
      {
        name: targetColumn,
        type: "bigint",
        notNull: true,
        references: {
          name: identifier(`${name}_${targetColumn}_fkey`),
          table: target,
          onDelete: link.onDelete,
          column: "row_id",
        },
      },
    ],
    indexes: [
      {
        name: identifier(`${name}_${position}_key`),
        together: [ownerColumn, position],
        definition: `using btree (${quote(ownerColumn)}, ${quote(position)})`,
      },
      {
        name: identifier(`${name}_${targetColumn}_key`),
        together: [ownerColumn, targetColumn],
        definition: `using btree (${quote(ownerColumn)}, ${quote(targetColumn)})`,
      },
      { name: identifier(`${name}_${targetColumn}_idx`), definition: `using btree (${quote(targetColumn)})` },
    ],
    link: { owner, column, target },
  };
}

function fieldColumn(
  table: string,
  source: ColumnSource,
): { column: SnapshotColumn; meta: FieldColumn; index?: SnapshotIndex } {
  const { field } = source;
  const name = field.storageName;
  // A reference that may be both absent and null is a plain uuid column all the same, with its
  // foreign key (SQL NULL: it reads back null), so that the database keeps it and its on_delete.
  const nullableReference = Boolean(source.references) && isNullableReference(field);
  const kind = nullableReference ? "uuid" : kindOf(field);
  const type =
    kind === "decimal" ? decimalColumnType(field.precision ?? 0, field.scale ?? 0) : COLUMN_SQL_TYPES[kind];
  const column: SnapshotColumn = { name, type, notNull: !field.optional && !field.nullable };
  const fallback = defaultLiteral(field, kind);
  if (fallback !== undefined) column.default = fallback;
  // A unique string is unique by its normalized key, a datetime by its instant (an index on an expression); others by value.
  // A value kept wrapped in JSON (a field both optional and nullable) by its text, where JSON null
  // is SQL NULL: two records with `null` do not conflict, as on the memory store (a constraint on
  // the jsonb column would hold JSON null as one value).
  const uniqueKind = uniqueKindOf(field);
  const wrappedText = `(${quote(name)} #>> '{}')`;
  const index: SnapshotIndex | undefined =
    field.unique && (uniqueKind || kind === "wrapped")
      ? {
          name: identifier(uniqueConstraintName(table, name)),
          unique: name,
          definition: `using btree ((${uniqueKind ? comparedSql(kind === "wrapped" ? wrappedText : quote(name), uniqueKind) : wrappedText}))`,
        }
      : undefined;
  if (field.unique && !index) column.unique = identifier(uniqueConstraintName(table, name));
  // What SQL NULL means in a plain nullable column: `null` unless the field may be absent (the codec's `optional`).
  if (!column.notNull && !isJsonKind(kind) && !(field.optional && !nullableReference)) column.nullReads = "null";
  if (kind === "wrapped" && field.type === "decimal") column.decimal = { precision: field.precision ?? 0, scale: field.scale ?? 0 };
  const items = field.items;
  if ((field.type === "map" || field.type === "array") && items?.type === "decimal")
    column.decimal = { precision: items.precision ?? 0, scale: items.scale ?? 0, items: field.type };
  const nested = nestedDecimals(field);
  if (nested.length) column.nestedDecimals = nested.map(({ path, decimal }) => ({ path, precision: decimal.precision ?? 0, scale: decimal.scale ?? 0 }));
  const check = checkExpression(field, name, kind);
  if (check) column.check = { name: identifier(`${table}_${name}_check`), expression: check };
  if (source.references && kind === "uuid") {
    column.references = {
      name: identifier(`${table}_${name}_fkey`),
      table: tableName(source.references.collection),
      onDelete: source.references.onDelete,
    };
  }
  const decimals = fieldDecimals(field).map(({ path, decimal }) => ({ ...(path.length ? { path } : {}), precision: decimal.precision ?? 0, scale: decimal.scale ?? 0 }));
  return {
    column,
    meta: {
      field: name,
      column: name,
      kind,
      optional: field.optional && !nullableReference,
      ...(column.notNull ? { required: true } : {}),
      ...(field.hasDefault && field.default !== undefined ? { default: field.default } : {}),
      ...(decimals.length ? { decimals } : {}),
    },
    ...(index ? { index } : {}),
  };
}

/**
 * The index of an exact match on `columns`, then `id`: `(status, id)`, or on a tenant-scoped table
 * `(organization_id, status, id)` (see `matchIndexes`).
 */
function btreeIndex(table: string, columns: readonly string[]): SnapshotIndex {
  return {
    name: identifier(`${table}_${columns.join("_")}_id_idx`),
    definition: `using btree (${[...columns, "id"].map(quote).join(", ")})`,
  };
}

/**
 * A tenant-scoped table's tenant column and its reference columns (a child's parent field among
 * them); `dependent`: those that name a tenant's records (a tenant-scoped collection's, or the
 * tenant collection's), whose value therefore tells the tenant.
 */
interface TenantColumns {
  column: string;
  references: readonly string[];
  dependent: readonly string[];
}

/**
 * The columns of the exact-match indexes of `column`. On a tenant-scoped table (SPEC §12.4) a tenant
 * principal's list always matches the tenant too, so the tenant column leads every list's index: a
 * filter's (`(organization_id, status, id)`) and a reference's, the field of a child or `list_under`
 * list (`(organization_id, assignee_id, id)`): both conditions are then the index's and the page is
 * in `id` order. A reference keeps its `(assignee_id, id)` as well, for what matches it alone: the
 * foreign key's checks, canon's cascades and the platform's lists under a record.
 */
function matchIndexes(column: string, tenant?: TenantColumns): string[][] {
  if (!tenant || tenant.column === column) return [[column]];
  const led = [tenant.column, column];
  return tenant.references.includes(column) ? [[column], led] : [led];
}

/** How a field's values compare (SPEC §12.1, §12.2), as the model says (model/lists.ts): the ordering of its sort index. */
export function orderingOf(field: Pick<VersionField, "type">): Ordering {
  return modelOrdering(field.type) ?? "text";
}

/** The system columns a list may be sorted by. */
const SORTABLE_SYSTEM: Readonly<Record<string, SortTarget>> = {
  created_at: { column: "created_at", kind: "timestamptz", notNull: true },
  updated_at: { column: "updated_at", kind: "timestamptz", notNull: true },
};

/**
 * The indexes of one declared sort key, on its sort expression (runtime/sql-sort.ts: the store
 * orders by the very same one), then `id`: `<table>_<column>_sort_idx` (ascending, nulls last; a
 * backward scan serves descending when the column is `not null`), and for a column that may be
 * null also `<table>_<column>_sort_desc_idx` (descending, nulls last), so that either direction
 * of a one-key sort is one index scan. On a tenant-scoped table the tenant column leads
 * (`<table>_<tenant>_<column>_sort_idx`): a tenant principal's sorted list is one index scan
 * within its tenant (SPEC §12.4). A list under a record has its own, led by the field that names
 * the record (`<table>_<parent field>_<column>_sort_idx`; on a tenant-scoped table after the
 * tenant column, as a tenant principal's list is read: `leading`).
 */
export function sortIndexes(
  table: string,
  target: SortTarget,
  ordering: Ordering,
  rank?: readonly string[],
  leading: readonly string[] = [],
): SnapshotIndex[] {
  const expression = sortExpression(target, ordering, rank);
  const element = /^"[^"]*"$/.test(expression) ? expression : `(${expression})`;
  const lead = leading.map((column) => `${quote(column)}, `).join("");
  const name = [table, ...leading, target.column].join("_");
  const indexes: SnapshotIndex[] = [
    { name: identifier(`${name}_sort_idx`), definition: `using btree (${lead}${element}, "id")` },
  ];
  if (!target.notNull) {
    indexes.push({
      name: identifier(`${name}_sort_desc_idx`),
      definition: `using btree (${lead}${element} desc nulls last, "id" desc)`,
    });
  }
  return indexes;
}

/**
 * The statistics of the tenant column and a reference to a tenant's records
 * (`<table>_<tenant>_<column>_stat`): the reference names a record of the record's own tenant
 * (references are checked within it), so its value tells the tenant. Without them the planner
 * multiplies the selectivities of the two conditions of a tenant's list under a record (an
 * agent's tickets times 1 in 4 tenants, where all of them are the agent's tenant's) and,
 * expecting a few rows, reads them all off the tenant-led index and sorts them instead of
 * reading the page off it (test/store/tenant-indexes.test.ts fails without them).
 */
function referenceStatistics(table: string, columns: readonly string[]): SnapshotStatistics {
  return { name: identifier(`${table}_${columns.join("_")}_stat`), columns: [...columns] };
}

/**
 * The index of a JSON column that holds references inside it (`heldReferences`): a delete of a
 * record they may name looks for the rows that name it by containment (`"copies" @>
 * '[{"team_id": …}]'`, runtime/sql-deletes.ts), which `jsonb_path_ops` serves.
 */
function heldIndex(table: string, column: string): SnapshotIndex {
  return {
    name: identifier(`${table}_${column}_refs_idx`),
    definition: `using gin (${quote(column)} jsonb_path_ops)`,
  };
}

function trigramIndex(table: string, column: string, kind: ColumnKind): SnapshotIndex {
  const expression = kind === "wrapped" ? `((${quote(column)} #>> '{}'))` : quote(column);
  return {
    name: identifier(`${table}_${column}_trgm_idx`),
    definition: `using gin (${expression} gin_trgm_ops)`,
  };
}

function plan(
  collection: string,
  sources: ColumnSource[],
  indexed: string[],
  searched: string[],
  sorted: string[] = [],
  tenant?: TenantColumns,
  leads: readonly string[] = [],
  held: readonly string[] = [],
): CollectionPlan {
  const table = tableName(collection);
  const columns = systemColumns(table);
  const fields: FieldColumn[] = [];
  const indexes: SnapshotIndex[] = [];
  const statistics: SnapshotStatistics[] = [];
  const links: SnapshotTable[] = [];
  for (const source of sources) {
    if (source.link) {
      const linked = linkTable(table, source.field.storageName, source.link);
      links.push(linked);
      const link = { table: linked.name, owner: table, target: linked.link!.target };
      fields.push({
        field: source.field.storageName,
        column: source.field.storageName,
        kind: "json",
        optional: source.field.optional,
        link,
      });
      continue;
    }
    const { column, meta, index } = fieldColumn(table, source);
    columns.push(column);
    fields.push(meta);
    if (index) indexes.push(index);
  }
  const tenantColumn = tenant ? columns.find((c) => c.name === tenant.column) : undefined;
  if (tenantColumn) tenantColumn.tenant = true;
  const seen = new Set<string>();
  const kinds = new Map(fields.map((f) => [f.column, f.kind]));
  for (const name of indexed) {
    const kind = kinds.get(name);
    // jsonb arrays and objects are never matched exactly; everything else gets (column, id).
    if (!kind || kind === "json" || seen.has(name)) continue;
    seen.add(name);
    for (const columns of matchIndexes(name, tenant)) indexes.push(btreeIndex(table, columns));
    if (tenant?.dependent.includes(name)) statistics.push(referenceStatistics(table, [tenant.column, name]));
  }
  for (const name of new Set(held)) if (kinds.get(name) === "json") indexes.push(heldIndex(table, name));
  const search: string[] = [];
  for (const name of searched) {
    const kind = kinds.get(name);
    if (kind !== "text" && kind !== "wrapped") continue;
    if (search.includes(name)) continue;
    search.push(name);
    indexes.push(trigramIndex(table, name, kind));
  }
  const sortedSeen = new Set<string>();
  // Each list's sorted pages are one index scan: the collection's (led by the tenant column on a
  // tenant-scoped table), and each list under a record (its parent's, a `list_under` field's),
  // led by the field that names the record.
  const leadsOf: string[][] = [
    tenant ? [tenant.column] : [],
    ...leads
      .filter((lead) => lead !== tenant?.column)
      .map((lead) => (tenant ? [tenant.column, lead] : [lead])),
  ];
  for (const name of sorted) {
    if (sortedSeen.has(name)) continue;
    sortedSeen.add(name);
    const system = SORTABLE_SYSTEM[name];
    if (system) {
      for (const lead of leadsOf) indexes.push(...sortIndexes(table, system, "instant", undefined, lead));
      continue;
    }
    const index = fields.findIndex((f) => f.column === name);
    const meta = fields[index];
    const field = sources.find((s) => s.field.storageName === name)?.field;
    if (!meta || !field || meta.kind === "json") continue;
    const notNull = columns.find((c) => c.name === name)?.notNull === true;
    // The store needs to know that every row has a value (row comparisons; `desc` without `nulls last`).
    if (notNull) fields[index] = { ...meta, notNull: true };
    const target: SortTarget = { column: name, kind: meta.kind, notNull };
    for (const lead of leadsOf)
      indexes.push(
        ...sortIndexes(
          table,
          target,
          orderingOf(field),
          field.type === "enum" ? (field.values ?? []) : undefined,
          lead,
        ),
      );
  }
  // A sort key whose order is its column's own (a number, a date) would repeat the filter's
  // (column, id) index: one is kept, the first.
  const definitions = new Set<string>();
  const distinct = indexes.filter((i) => !definitions.has(i.definition) && definitions.add(i.definition));
  return {
    collection,
    table: {
      name: table,
      collection,
      columns,
      indexes: distinct,
      ...(statistics.length ? { statistics } : {}),
    },
    fields,
    search,
    links,
  };
}

/** `tenantRecords`: the collections whose records are a tenant's (the tenant-scoped ones and the tenant collection). */
function resourcePlan(r: StorageResource, tenantRecords: ReadonlySet<string>): CollectionPlan {
  const sources: ColumnSource[] = r.fields.map((field) => {
    const link = r.links.find((x) => x.field === field.storageName);
    if (link) return { field, link: { collection: link.collection, onDelete: link.onDelete } };
    const reference = r.references.find((x) => x.field === field.storageName);
    if (!reference) return { field };
    // on_delete as the model settled it: cascade for a child's parent field unless declared, else restrict (422).
    return { field, references: { collection: reference.collection, onDelete: reference.onDelete } };
  });
  const indexed = [
    ...(r.parentField ? [r.parentField] : []),
    ...r.references.map((x) => x.field),
    ...r.filters,
  ];
  // On a tenant-scoped resource the tenant column is in the index of every list (SPEC §12.4).
  const references = [...(r.parentField ? [r.parentField] : []), ...r.references.map((x) => x.field)];
  const dependent = r.references
    .filter((x) => x.field !== r.tenantKey && tenantRecords.has(x.collection))
    .map((x) => x.field);
  const tenant =
    r.tenantKey && r.tenantKey !== "id" ? { column: r.tenantKey, references, dependent } : undefined;
  const held = heldReferences(r.fields, r.nestedReferences, r.links).map((ref) => ref.field);
  return plan(
    r.collection,
    sources,
    indexed,
    r.search,
    r.sort,
    tenant,
    [...(r.parentField ? [r.parentField] : []), ...r.listedUnder],
    held,
  );
}

function actionPlans(r: StorageResource): CollectionPlan[] {
  return r.actionRecords.map((a) => {
    const target: VersionField = { ...serverField(a.targetField, "uuid"), references: r.collection };
    const sources: ColumnSource[] = [
      // An action record is part of its target's history: it goes when the target goes.
      { field: target, references: { collection: r.collection, onDelete: "cascade" } },
      ...a.fields
        .filter((f) => f.storageName !== a.targetField)
        .map((field): ColumnSource => {
          const reference = a.references.find((x) => x.field === field.storageName);
          return reference
            ? { field, references: { collection: reference.collection, onDelete: reference.onDelete } }
            : { field };
        }),
    ];
    const held = heldReferences(a.fields, a.nestedReferences).map((ref) => ref.field);
    return plan(
      a.collection,
      sources,
      [a.targetField, ...a.references.map((x) => x.field)],
      [],
      [],
      undefined,
      [],
      held,
    );
  });
}

/**
 * The name of a composite unique index: the table, the columns joined by `__` (a field name never
 * holds two underscores in a row) and `_unique` (no other index or constraint ends so).
 */
export function compositeUniqueName(table: string, columns: readonly string[]): string {
  return identifier(`${table}_${columns.join("__")}_unique`);
}

/** The SQL a unique constraint compares a column by (`uniqueKey` of runtime/unique.ts): a datetime by its instant, as it sorts. */
function comparedSql(text: string, kind: UniqueKind): string {
  return kind === "instant" ? instantSql(text) : uniqueKeySql(text, kind);
}

/**
 * A resource's plan with its composite unique indexes (SPEC §12.3), after every other index: one
 * per list, over its columns in the order written, each text column by its normalized key
 * (`uniqueKeySql`, as a unique string field), a jsonb-kept scalar by its text (JSON null is then
 * SQL NULL), anything else by value.
 */
function withCompositeUnique(plan: CollectionPlan, r: StorageResource): CollectionPlan {
  const kinds = new Map(plan.fields.map((f) => [f.column, f.kind]));
  for (const list of r.uniqueTogether) {
    const parts = list.map((name) => {
      const field = r.fields.find((f) => f.storageName === name);
      const wrapped = kinds.get(name) === "wrapped";
      const text = wrapped ? `(${quote(name)} #>> '{}')` : quote(name);
      const kind = field ? compareKindOf(field) : null;
      return kind ? `(${comparedSql(text, kind)})` : wrapped ? `(${text})` : text;
    });
    plan.table.indexes.push({
      name: compositeUniqueName(plan.table.name, list),
      together: [...list],
      definition: `using btree (${parts.join(", ")})`,
    });
  }
  return plan;
}

/**
 * The collections one resource stores: its own, then its actions' records. A function of the
 * resource and of which of the collections it references hold a tenant's records
 * (`tenantReferenced`: their statistics, `resourcePlan`).
 */
export function storagePlans(r: StorageResource, tenantReferenced: readonly string[]): CollectionPlan[] {
  return [withCompositeUnique(resourcePlan(r, new Set(tenantReferenced)), r), ...actionPlans(r)];
}

/** Of the collections `r` references, those whose records are a tenant's (sorted): the rest of the model `storagePlans` reads. */
export function tenantReferenced(r: StorageResource, tenantRecords: ReadonlySet<string>): string[] {
  return [...new Set(r.references.map((x) => x.collection))].filter((c) => tenantRecords.has(c)).sort();
}

/**
 * Every stored collection of the API, in definition order, each resource followed by its actions'
 * records (`plansOf`: `storagePlans`, or the same remembered); then export jobs.
 */
export function collectionPlans(
  model: ApiModel,
  plansOf: (r: StorageResource, tenantReferenced: readonly string[]) => CollectionPlan[] = storagePlans,
): CollectionPlan[] {
  const tenantRecords = new Set(model.storage.flatMap((r) => (r.tenantKey ? [r.collection] : [])));
  const plans = model.storage.flatMap((r) => plansOf(r, tenantReferenced(r, tenantRecords)));
  // Export jobs (when some resource sets `export: true`) are kept like any collection, after the resources.
  if (model.exportJobs) plans.push(resourcePlan(model.exportJobs, tenantRecords));
  return plans;
}

/**
 * Tables of canon's own that hold no collection, as the runtime defines them: with exports, the
 * chunks of export files (runtime/exports-files-sql.ts), which belong to their job's row; the
 * cursor keys and the idempotency keys always (runtime/sql-idempotency.ts), and the events with
 * `events: true` (runtime/sql-events.ts).
 */
export function systemTables(model: ApiModel): SnapshotTable[] {
  const own: SystemTable[] = [cursorKeyTable, ...(model.events ? [eventTable] : [])];
  const tables = own.map((t): SnapshotTable => ({
    name: t.name,
    collection: t.collection,
    columns: t.columns.map((c) => ({ ...c })),
    indexes: [],
  }));
  // The idempotency keys of POSTs, always (runtime/sql-idempotency.ts).
  const keys = IDEMPOTENCY_TABLE;
  tables.push({
    name: keys.name,
    collection: keys.collection,
    columns: keys.columns.map((c) => ({ ...c })),
    indexes: keys.indexes.map((i): SnapshotIndex =>
      "together" in i ? { ...i, together: [...i.together] } : { ...i },
    ),
  });
  if (!model.exportJobs) return tables;
  const chunks = EXPORT_CHUNKS_TABLE;
  // The runtime's queries name the jobs' table as its definition does: it must be the one planned here.
  const jobs = tableName(model.exportJobs.collection);
  if (chunks.columns.some((c) => "references" in c && c.references.table !== jobs)) {
    throw new Error(`${chunks.name} must reference ${jobs} (runtime/exports-files-sql.ts)`);
  }
  return [
    {
      name: chunks.name,
      collection: chunks.collection,
      columns: chunks.columns.map((c): SnapshotColumn =>
        "references" in c ? { ...c, references: { ...c.references } } : { ...c },
      ),
      indexes: chunks.indexes.map((i) => ({ ...i })),
    },
    ...tables,
  ];
}

export function snapshotOf(plans: CollectionPlan[], system: SnapshotTable[] = []): SchemaSnapshot {
  const trigram = plans.some((p) => p.search.length > 0);
  return {
    format: SNAPSHOT_FORMAT,
    extensions: trigram ? ["pg_trgm"] : [],
    tables: [...plans.flatMap((p) => [p.table, ...p.links]), ...system],
  };
}
