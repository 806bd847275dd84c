import type { UniqueKind } from "../../runtime/unique.ts";
import type { VersionField } from "./types.ts";

/**
 * How a `unique` field compares (runtime/unique.ts): string fields by their normalized key,
 * `format: email` ones also without regard to ASCII case; null for a field that is not unique
 * or not a string (it compares by value). Read by the SQL emitter (unique indexes) and the
 * services emitter (the memory store's `emails`).
 */
export function uniqueKindOf(field: Pick<VersionField, "unique" | "type" | "format">): UniqueKind | null {
  return field.unique ? compareKindOf(field) : null;
}

/**
 * How a field compares when some unique constraint holds it (its own `unique`, or a composite
 * one): as `uniqueKindOf`, whether or not the field itself is unique.
 */
export function compareKindOf(field: Pick<VersionField, "type" | "format">): UniqueKind | null {
  if (field.type === "datetime") return "instant";
  if (field.type !== "string") return null;
  return field.format === "email" ? "email" : "text";
}
