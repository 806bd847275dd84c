/**
 * What a list can do with each type of field (SPEC §12.1, §12.2): which filter operators a type
 * takes, how its values compare when sorted or bounded, and the timestamp fields every record
 * has. One table, read by lint (to refuse what a type cannot do) and by the model (to build
 * each version's filters and sort keys).
 */
import type { Ordering } from "../../runtime/store.ts";
import type { FieldType, FilterOperator, VersionField } from "./types.ts";

/** `created_at` and `updated_at`: every record has them; lists filter them by range and sort by them. */
export const TIMESTAMPS: ReadonlySet<string> = new Set(["created_at", "updated_at"]);

/** Types matched by `?field=value`. */
export const EQUALS_TYPES: ReadonlySet<FieldType> = new Set(["string", "enum", "boolean", "integer", "number", "decimal", "date"]);

const IN_TYPES: ReadonlySet<FieldType> = new Set(["string", "enum", "integer"]);
const RANGE_TYPES: ReadonlySet<FieldType> = new Set(["integer", "number", "decimal", "date", "datetime"]);

/** The range operators, in the order their parameters are listed. */
export const RANGE_OPERATORS = ["gt", "gte", "lt", "lte"] as const;

/** Types a filter may name: equality or an operator applies to each (uuid: `[null]` only). */
export const FILTER_TYPES: ReadonlySet<FieldType> = new Set([...EQUALS_TYPES, ...RANGE_TYPES, "uuid"]);

/** How values of a type compare when sorted or bounded; undefined when they are not ordered. */
export function orderingOf(type: FieldType): Ordering | undefined {
  switch (type) {
    case "string":
      return "text";
    case "enum":
      return "rank";
    case "integer":
    case "number":
      return "number";
    case "decimal":
      return "decimal";
    case "date":
      return "date";
    case "datetime":
      return "instant";
    case "boolean":
      return "boolean";
    default:
      return undefined;
  }
}

/**
 * The operators a filter field takes, in the order their parameters are listed: `in`, the
 * ranges, then `null` when a record may lack a value (`mayBeNull`: optional or nullable).
 */
export function operatorsOf(type: FieldType, mayBeNull: boolean): FilterOperator[] {
  return [
    ...(IN_TYPES.has(type) ? (["in"] as const) : []),
    ...(RANGE_TYPES.has(type) ? RANGE_OPERATORS : []),
    ...(mayBeNull ? (["null"] as const) : []),
  ];
}

/** `created_at` or `updated_at` as a field of a version: a date-time every record has, set by the server. */
export function timestampField(name: string): VersionField {
  return {
    name,
    storageName: name,
    type: "datetime",
    optional: false,
    nullable: false,
    hasDefault: false,
    readOnly: true,
    writeOnly: false,
    unique: false,
    input: false,
    requiredInput: false,
    output: true,
  };
}

