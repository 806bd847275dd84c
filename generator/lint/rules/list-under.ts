import { q, walkFields, type LintContext } from "../context.ts";

/**
 * list-under: `list_under: true` (SPEC §12.3) sits on a top-level uuid field with `references`
 * that is not the parent field, and no two such fields (nor the parent) name the same collection:
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
            ? "remove list_under; listing under an array's ids (many-to-many) is not built yet"
            : "remove list_under, or move the reference to a field of the resource",
        );
        continue;
      }
      if (field.type !== "uuid" || !field.references) {
        report(`list_under on ${q(field.name)}, which references no collection`, `add references: <collection> to ${q(field.name)}, or remove list_under`);
        continue;
      }
      if (field.references === r.parent) {
        report(
          `list_under on ${q(field.name)}: ${r.collection} is already listed under ${field.references}, its parent (GET /vN/${field.references}/{id}/${r.collection})`,
          "remove list_under",
        );
        continue;
      }
      const other = taken.get(field.references);
      if (other) {
        report(
          `list_under on ${q(field.name)} and on ${other} both give GET /vN/${field.references}/{id}/${r.collection}: the path would be ambiguous`,
          `keep list_under on one field that references ${field.references}`,
        );
        continue;
      }
      taken.set(field.references, q(field.name));
    }
  }
}
