import { q, walkFields, type LintContext } from "../context.ts";

/**
 * list-under: `list_under: true` (SPEC §12.3) sits on a top-level uuid field with `references`
 * that is not the parent field, or on a top-level array of such ids (many-to-many), never write_only (the list would reveal
 * the value), and no two such fields (nor the parent) name the same collection:
 * each gives the path GET /vN/<referenced>/{id}/<resource>, which must be one list.
 */
export function listUnderRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    const taken = new Map<string, string>();
    if (r.parent) taken.set(r.parent, "the parent");
    for (const { field, place, path } of walkFields(r)) {
      if (!field.listUnder) continue;
      const at = field.at("list_under");
      const report = (message: string, fix: string) => ctx.report("list-under", at, message, fix);
      if (place !== "resource") {
        report(
          `list_under on ${q(path)}: only a field of the resource itself can list it under another record`,
          place === "items"
            ? "move list_under to the array field itself (list_under: true beside type: array)"
            : "remove list_under, or move the reference to a field of the resource",
        );
        continue;
      }
      // An array of referencing ids (many-to-many) lists the records whose array holds the id.
      const references = field.type === "uuid" ? field.references : field.type === "array" && field.items?.type === "uuid" ? field.items.references : undefined;
      if (!references) {
        report(
          `list_under on ${q(field.name)}, which references no collection`,
          field.type === "array"
            ? `give ${q(field.name)} items: { type: uuid, references: <collection> }, or remove list_under`
            : `add references: <collection> to ${q(field.name)}, or remove list_under`,
        );
        continue;
      }
      if (field.writeOnly) {
        report(
          `list_under on the write_only field ${q(field.name)}: listing ${r.collection} under the record it names would reveal a value that is never returned`,
          `remove list_under, or remove write_only from ${q(field.name)}`,
        );
        continue;
      }
      if (references === r.parent) {
        report(
          `list_under on ${q(field.name)}: ${r.collection} is already listed under ${references}, its parent (GET /vN/${references}/{id}/${r.collection})`,
          "remove list_under",
        );
        continue;
      }
      const other = taken.get(references);
      if (other) {
        report(
          `list_under on ${q(field.name)} and on ${other} both give GET /vN/${references}/{id}/${r.collection}: the path would be ambiguous`,
          `keep list_under on one field that references ${references}`,
        );
        continue;
      }
      taken.set(references, q(field.name));
    }
  }
}
