import type { FieldDef, ResourceDef } from "../../model/types.ts";
import { closest } from "../../util/suggest.ts";
import { presentAt, q, resourceVersions, walkFields, type LintContext } from "../context.ts";
import { pluralWord } from "../naming.ts";

/**
 * field-name, field-reserved, field-id-type, reference-unknown: field keys are snake_case, the
 * fields canon provides are not declared, identifiers are UUIDs, references resolve.
 */
export const snakeCasePattern = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

const provided = new Set(["id", "created_at", "updated_at"]);

export function toSnakeCase(name: string): string {
  const snake = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^[_0-9]+|_+$/g, "");
  return snake || "field_name";
}

export function fieldRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    for (const { field, place, path, action } of walkFields(r)) {
      if (place !== "items") checkName(ctx, field, place === "object" ? path : field.name, place === "object" ? null : r.singular);
      const reserved = place !== "items" && checkReserved(ctx, field, place);
      if (!reserved) checkIdType(ctx, field);
      // The items of an array field of the resource itself are a relation (SPEC §12.3): on_delete applies.
      const relation = place === "items" && !action && /^[^.[\]]+\[\]$/.test(path);
      checkReferences(ctx, field, (place === "items" || place === "object") && !relation);
    }
    for (const field of r.fields) if (field.renamed) checkFromName(ctx, field);
    versionNameCollisions(ctx, r);
  }
}

/**
 * The fix names a valid field: when the snake_case spelling is one canon provides
 * (`createdAt` → `created_at`), the field is removed or gets a name of its own.
 */
function checkName(ctx: LintContext, field: FieldDef, shown: string, owner: string | null): void {
  if (snakeCasePattern.test(field.name)) return;
  const snake = toSnakeCase(field.name);
  const own = `${toSnakeCase(owner ?? "")}_${snake.replace(/_id$/, "_ref")}`;
  const fix =
    owner !== null && (provided.has(snake) || snake === "row_id")
      ? `remove it: canon adds ${q(snake)} to every record${snake === "row_id" ? " (never returned)" : ""}; if it means something else, rename it ${q(own)}`
      : `rename it ${q(snake)}`;
  ctx.report("field-name", field.at(), `field name ${q(shown)} is not snake_case (lowercase letters and digits, words joined by single underscores)`, fix);
}

function checkReserved(ctx: LintContext, field: FieldDef, place: string): boolean {
  const name = field.name;
  if (name === "row_id") {
    ctx.report(
      "field-reserved",
      field.at(),
      `"row_id" is the internal integer row key: it is never returned, accepted or put in a URL`,
      "remove it; canon identifies every record by its UUID v7 `id`",
    );
    return true;
  }
  if ((place === "resource" || place === "action") && provided.has(name)) {
    const owner = place === "action" ? "every action record" : "every record";
    ctx.report(
      "field-reserved",
      field.at(),
      `${q(name)} is provided by canon on ${owner} and may not be declared`,
      "remove it; canon adds id (UUID v7), created_at and updated_at as read-only fields",
    );
    return true;
  }
  return false;
}

function checkIdType(ctx: LintContext, field: FieldDef): void {
  const name = field.name;
  if ((name === "id" || name.endsWith("_id")) && field.type !== "uuid") {
    const stem = name === "id" ? "" : name.slice(0, -3);
    const target = stem ? pluralWord(stem.replace(/_/g, "-").split("-").pop()!) : "";
    const collection = stem ? [stem.replace(/_/g, "-"), stem.replace(/_/g, "-").replace(/[^-]+$/, target)].find((c) => ctx.collections.has(c)) : undefined;
    ctx.report(
      "field-id-type",
      field.at("type"),
      name === "id" ? `"id" is an identifier and must be type uuid` : `${q(name)} ends in _id and must be type uuid`,
      collection
        ? `use { type: uuid, references: ${collection} }`
        : `use type: uuid (identifiers are UUID v7, never integers), or rename the field if it is not an identifier`,
    );
    return;
  }
  if (name.endsWith("_ids") && field.type === "array" && field.items && field.items.type !== "uuid") {
    ctx.report(
      "field-id-type",
      field.items.at("type"),
      `${q(name)} ends in _ids: its items must be type uuid`,
      "use items: { type: uuid }, or rename the field if it does not hold identifiers",
    );
  }
}

function checkReferences(ctx: LintContext, field: FieldDef, nested: boolean): void {
  if (field.references === undefined) return;
  // An id inside an object (or an array inside one, or an action's array) is checked on every
  // write and always restricts a delete of the record it names (no cascade reaches inside a
  // field kept whole). The items of a resource's own array field are a relation, where it applies.
  if (nested && field.onDelete !== undefined) {
    ctx.report(
      "field-option",
      field.at("on_delete"),
      `on_delete of ${q(field.name)} does not apply to a reference inside an object or an action's array: such an id is checked when it is written (422), and it always restricts: the record it names cannot be deleted while it is named (422)`,
      "remove on_delete, or make the reference a field of its own (or the items of an array field of the resource)",
    );
  }
  if (field.type !== "uuid") {
    ctx.report(
      "field-option",
      field.at("references"),
      `${q(field.name)} has references but is type ${field.type}; only uuid fields reference a collection`,
      "make the field type uuid, or remove references",
    );
    return;
  }
  if (ctx.collections.has(field.references)) return;
  const guess = closest(field.references, ctx.collections);
  ctx.report(
    "reference-unknown",
    field.at("references"),
    `${q(field.name)} references ${q(field.references)}, which is not a defined collection`,
    guess ? `did you mean ${q(guess)}?` : `name one of the defined collections: ${[...ctx.collections].sort().join(", ") || "(none)"}`,
  );
}

function checkFromName(ctx: LintContext, field: FieldDef): void {
  const from = field.renamed?.from;
  if (typeof from !== "string" || from === field.name) return; // the same name is reported by version-ref
  const at = field.at("renamed", "from");
  if (!snakeCasePattern.test(from)) {
    ctx.report("field-name", at, `renamed.from ${q(from)} of ${q(field.name)} is not snake_case`, `write it as ${q(toSnakeCase(from))}`);
  } else if (from === "row_id" || provided.has(from)) {
    ctx.report("field-reserved", at, `${q(field.name)} may not have been called ${q(from)}: canon provides that field`, "correct renamed.from to the field's earlier name");
  } else if ((from === "id" || from.endsWith("_id")) && field.type !== "uuid") {
    ctx.report("field-id-type", at, `${q(from)} (the earlier name of ${q(field.name)}) ends in _id and must be type uuid`, "an identifier is a uuid in every version; keep a non-identifier name");
  }
}

/**
 * Two fields that one version shows under the same name (a renamed field's old name included); and
 * a field named like another one's `renamed.from`, whose old column the store keeps (a field is
 * stored under its key: the new one would land in the column the renamed field left).
 */
function versionNameCollisions(ctx: LintContext, r: ResourceDef): void {
  const seen = new Set<string>();
  const renamedIn = (f: FieldDef) => ctx.versionIndex(f.renamed?.in);
  for (const i of resourceVersions(ctx, r)) {
    const byName = new Map<string, FieldDef>();
    for (const f of r.fields) {
      if (!presentAt(ctx, i, f.added, f.removed)) continue;
      const until = renamedIn(f);
      const usesFrom = f.renamed !== undefined && until !== undefined && i < until;
      const name = usesFrom ? f.renamed!.from : f.name;
      const other = byName.get(name);
      if (!other) {
        byName.set(name, f);
        continue;
      }
      // Field keys are unique in a file, so one of the two goes by its renamed.from here.
      const culprit = usesFrom ? f : other;
      const key = `${culprit.name}|${name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const version = ctx.defs.versions[i]!.name;
      ctx.report(
        "field-name",
        culprit.at("renamed", "from"),
        `in ${version} two fields of ${r.collection} are called ${q(name)} (${q(culprit.name)} is called so before ${culprit.renamed?.in ?? "?"})`,
        "choose a renamed.from that no other field uses in the same versions",
      );
    }
  }
  for (const f of r.fields) {
    const renamed = r.fields.find((other) => other !== f && other.renamed?.from === f.name);
    // Said once: a version that shows both under that name was reported above.
    if (!renamed || seen.has(`${renamed.name}|${f.name}`)) continue;
    ctx.report(
      "field-name",
      f.at(),
      `${q(f.name)} is the name ${q(renamed.name)} had before ${renamed.renamed!.in}: the store keeps that field's old column under it`,
      `choose another name for ${q(f.name)}`,
    );
  }
}
