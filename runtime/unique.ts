/**
 * How `unique` fields compare, on every store: text by a normalized key — surrounding white
 * space trimmed (what `String.prototype.trim` removes), then Unicode NFC — and `format: email`
 * fields also without regard to the case of ASCII letters, `datetime` fields by the instant they
 * name (`instant`, as they sort). The value kept is the value sent;
 * only the comparison is normalized. The memory store compares `uniqueKey`s; the SQL store's
 * unique indexes are on `uniqueKeySql` of the column (the generator imports it from here), the
 * same function in PostgreSQL's terms.
 *
 * A composite constraint (`unique: [[organization_id, email]]`, SPEC §12.3) compares each of its
 * fields so, and holds only records that have every one of its fields: a record with one of them
 * null or absent is held by nothing, as a PostgreSQL unique index treats NULLs as distinct.
 */
import { ConflictError } from "./errors.ts";
import { instantKey } from "./sorting.ts";

/**
 * `text`: trimmed and NFC; `email`: also ASCII letters in lower case; `instant`: a `datetime` by
 * the instant it names, to the millisecond (as it sorts and filters: `…T10:00:00+02:00` and
 * `…T08:00:00Z` are one value).
 */
export type UniqueKind = "text" | "email" | "instant";

/** What `String.prototype.trim` removes: white space and line terminators of ECMAScript. */
const TRIMMED = [
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
  0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
];

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** The value a unique field is compared by; values other than text compare as they are. */
export function uniqueKey(value: unknown, kind: UniqueKind): unknown {
  if (typeof value !== "string") return value;
  if (kind === "instant") return instantKey(value);
  const text = value.trim().normalize("NFC");
  return kind === "email" ? text.replace(/[A-Z]+/g, (s) => s.toLowerCase()) : text;
}

/**
 * The SQL of `uniqueKey` over a text expression (immutable: usable in an index). An `instant` is
 * `instantSql` of runtime/sql-sort.ts, which the generator takes from there (emit/sql/snapshot.ts):
 * this file is loaded by the memory store too, which needs no SQL module.
 */
export function uniqueKeySql(text: string, kind: Exclude<UniqueKind, "instant">): string {
  const chars = TRIMMED.map((c) => `\\${c.toString(16).padStart(4, "0")}`).join("");
  const key = `normalize(btrim(${text}, U&'${chars}'), NFC)`;
  return kind === "email" ? `translate(${key}, '${UPPER}', '${UPPER.toLowerCase()}')` : key;
}

/**
 * The 409 of a write that repeats a unique value: one field (`unique: true`), or every field of
 * a composite constraint, one detail each. `tenant`: the tenant field of a tenant-scoped
 * collection, which joins every constraint (unique within the tenant): the scope, not one of the
 * fields the definition lists, so not named.
 */
export function uniqueConflict(all: readonly string[], tenant?: string): ConflictError {
  const fields = all.length > 1 && tenant !== undefined ? all.filter((f) => f !== tenant) : all;
  if (fields.length === 1) {
    const field = fields[0]!;
    return new ConflictError(`Another record has this ${field}.`, [{ field, issue: "is already taken" }]);
  }
  const listed = fields.join(", ");
  return new ConflictError(
    `Another record has this combination of ${listed}.`,
    fields.map((field) => ({
      field,
      issue: `is already taken together with ${fields.filter((f) => f !== field).join(", ")}`,
    })),
  );
}
