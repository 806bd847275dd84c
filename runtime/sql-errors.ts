/**
 * PostgreSQL's errors as the API's: a unique violation is 409 naming the field (every field of a
 * composite constraint), a foreign-key violation 422 naming the field (or, on delete, the
 * collection still referring to the record),
 * a check or not-null violation 400 naming the field, a unique text too long for its index 400
 * naming the field. Anything else is left as it is (500).
 */
import { BusinessRuleError, ConflictError, ValidationError } from "./errors.ts";
import type { SqlSchema } from "./sql-schema.ts";
import { uniqueConflict } from "./unique.ts";

export type SqlOperation = "read" | "write" | "delete";

/** The API error of a failed statement on `collection`, or `error` itself when it is no such case. */
export function translateSqlError(
  error: unknown,
  schema: SqlSchema,
  collection: string,
  op: SqlOperation,
): unknown {
  const e = error as { code?: unknown; constraint?: unknown; column?: unknown; detail?: unknown };
  if (typeof e?.code !== "string") return error;
  const constraint = typeof e.constraint === "string" ? schema.constraints[e.constraint] : undefined;
  switch (e.code) {
    case "23505": {
      const field = constraint?.field ?? /^Key \(([^)]+)\)/.exec(String(e.detail ?? ""))?.[1] ?? "id";
      if (field === "id")
        return new ConflictError("A record with this id exists.", [{ field: "id", issue: "is taken" }]);
      return uniqueConflict(
        constraint?.fields ?? [field],
        constraint ? schema.collections[constraint.collection]?.tenant : undefined,
      );
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
    case "55P03":
      // lock_timeout (a cascading delete's): another request holds records this one must change.
      return new ConflictError("Another request is changing records this one must change. Retry.");
    case "54000":
      // An index entry over PostgreSQL's limit (about 2,700 bytes): a unique text too long to index.
      if (constraint?.kind === "unique")
        return new ValidationError(
          (constraint.fields ?? [constraint.field]).map((field) => ({
            field,
            issue: "is too long to be kept unique: at most about 2,700 bytes",
          })),
        );
      return error;
    case "23502":
      return new ValidationError([
        { field: typeof e.column === "string" ? e.column : "body", issue: "is required" },
      ]);
    case "23514": {
      const name = typeof e.constraint === "string" ? e.constraint : "";
      const table = schema.collections[collection]?.table ?? "";
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
