/**
 * Sorted lists and operator conditions in SQL: the expression a sort key orders by, the same
 * expression over a parameter, and the keyset condition that continues a sorted cursor. The
 * store (sql-store.ts) writes its queries with these and the generator's SQL emitter writes the
 * sort indexes with `sortExpression` too: an index serves an ORDER BY only when its expression
 * is the very same one.
 *
 * The order is the memory store's (sorting.ts): text by code point (`collate "C"`), an enum by
 * the rank of its value (`array_position` over the values as literals: the text varies per field,
 * never per request), instants of `datetime` fields (kept as the text sent) by `instantSql`, an
 * immutable expression of the text (`text::timestamptz` is only stable, so no index could hold
 * it), and nulls last in either direction.
 */
import { quoteIdentifier as q } from "./sql-codec.ts";
import type { ColumnKind } from "./sql-schema.ts";
import type { Ordering } from "./store.ts";

/** What a key or condition is over: a field's column, or `created_at`/`updated_at` (timestamptz). */
export interface SortTarget {
  column: string;
  kind: ColumnKind | "timestamptz";
  /** Every row has a value: the keyset can be a row comparison, and `desc` need not say `nulls last`. */
  notNull: boolean;
}

/** The SQL type of a target's scalar value: jsonb-wrapped scalars are read as their text. */
function valueType(kind: SortTarget["kind"]): string {
  switch (kind) {
    case "timestamptz":
      return "timestamptz";
    case "integer":
      return "bigint";
    case "number":
      return "double precision";
    case "boolean":
      return "boolean";
    case "uuid":
      return "uuid";
    case "date":
      return "date";
    case "decimal":
      return "numeric";
    default:
      return "text";
  }
}

/** `'text'`, quotes doubled. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * The instant a date-time text names, as `instantKey` (sorting.ts) computes it: milliseconds
 * from an origin before year 0000, from the parts of `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
 * Only immutable functions and arithmetic: it may be an index expression.
 */
export function instantSql(text: string): string {
  const part = (from: number, length: number) => `substr(${text}, ${from}, ${length})::bigint`;
  const zulu = `right(${text}, 1) = 'Z'`;
  const month = part(6, 2);
  const year = `(${part(1, 4)} - case when ${month} <= 2 then 1 else 0 end + 400)`;
  const days =
    `(365 * ${year} + ${year} / 4 - ${year} / 100 + ${year} / 400 + ` +
    `(153 * ((${month} + 9) % 12) + 2) / 5 + ${part(9, 2)} - 1)`;
  const offset =
    `case when ${zulu} then 0 else (case when substr(${text}, length(${text}) - 5, 1) = '-' then -1 else 1 end) * ` +
    `(substr(${text}, length(${text}) - 4, 2)::bigint * 60 + substr(${text}, length(${text}) - 1, 2)::bigint) end`;
  const ms = `trunc(substr(${text}, 18, length(${text}) - case when ${zulu} then 18 else 23 end)::numeric * 1000)::bigint`;
  return `(((${days} * 24 + ${part(12, 2)}) * 60 + ${part(15, 2)} - (${offset})) * 60000 + ${ms})`;
}

/** The expression that orders `value` (an expression of SQL type `type`) by `ordering`. */
function ordered(
  value: string,
  type: string,
  ordering: Ordering,
  rank: readonly string[] | undefined,
): string {
  if (type !== "text") {
    if (ordering === "rank")
      return `array_position(ARRAY[${(rank ?? []).map(literal).join(", ")}]::text[], ${value}::text)`;
    return value;
  }
  switch (ordering) {
    case "text":
    case "date":
      return `(${value} collate "C")`;
    case "number":
    case "decimal":
      return `(${value})::numeric`;
    case "boolean":
      return `(${value})::boolean`;
    case "instant":
      return instantSql(value);
    case "rank":
      return `array_position(ARRAY[${(rank ?? []).map(literal).join(", ")}]::text[], ${value})`;
  }
}

/** The expression a key orders the target's rows by (also the sort index's expression). */
export function sortExpression(target: SortTarget, ordering: Ordering, rank?: readonly string[]): string {
  const c = q(target.column);
  const wrapped = target.kind === "wrapped" || target.kind === "json";
  return ordered(wrapped ? `(${c} #>> '{}')` : c, valueType(target.kind), ordering, rank);
}

/**
 * The same expression over a value of the target's field, as the store keeps it: `placeholder`
 * is a parameter (`$3`) or another expression of text, cast to the value's type here.
 */
export function sortParameter(
  target: SortTarget,
  ordering: Ordering,
  rank: readonly string[] | undefined,
  placeholder: string,
): string {
  const type = valueType(target.kind);
  return ordered(`${placeholder}::${type}`, type, ordering, rank);
}

/** A parameter's value for a target: instants of `created_at`/`updated_at` to the millisecond, as the memory store compares them. */
export function sortParameterValue(target: SortTarget, value: unknown): unknown {
  if (target.kind !== "timestamptz" || typeof value !== "string") return value;
  const ms = Date.parse(value);
  // Before year 1 (which PostgreSQL cannot read): before every record.
  return Number.isNaN(ms) ? value : ms < -62135596800000 ? "-infinity" : new Date(ms).toISOString();
}

/** `key desc` or `key desc nulls last` (asc puts nulls last already): the ORDER BY term of a key. */
export function orderTerm(expression: string, descending: boolean, notNull: boolean): string {
  return descending ? `${expression} desc${notNull ? "" : " nulls last"}` : expression;
}

/** A PostgreSQL array literal of texts (`{"a","b"}`), for a `$n::text[]` parameter on both drivers. */
export function arrayLiteral(values: readonly unknown[]): string {
  return `{${values
    .map((v) =>
      v === null || v === undefined ? "NULL" : `"${String(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`,
    )
    .join(",")}}`;
}

/** One key of a keyset: its expression and the placeholder of the position's value (null: the position has none). */
export interface KeysetPart {
  expression: string;
  parameter: string | null;
  descending: boolean;
  notNull: boolean;
}

/**
 * The condition "after the position" over sort keys then `"id"` (in the last key's direction),
 * nulls last in either direction. A row comparison when every key goes one way and neither a
 * row nor the position can be null there (an index range then starts at the position); else
 * an OR-chain: `k > a or k is null or (k = a and …)` for a value, `k is null and (…)` for a null.
 */
export function keysetCondition(parts: readonly KeysetPart[], id: string): string {
  const last = parts[parts.length - 1];
  const descending = last?.descending ?? false;
  if (parts.every((p) => p.notNull && p.parameter !== null && p.descending === descending)) {
    const left = [...parts.map((p) => p.expression), `"id"`].join(", ");
    const right = [...parts.map((p) => p.parameter), id].join(", ");
    return `(${left}) ${descending ? "<" : ">"} (${right})`;
  }
  let condition = `"id" ${descending ? "<" : ">"} ${id}`;
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i]!;
    if (p.parameter === null) {
      condition = `(${p.expression} is null and ${condition})`;
      continue;
    }
    const beyond = `${p.expression} ${p.descending ? "<" : ">"} ${p.parameter}`;
    const nulls = p.notNull ? "" : ` or ${p.expression} is null`;
    condition = `(${beyond}${nulls} or (${p.expression} = ${p.parameter} and ${condition}))`;
  }
  return condition;
}
