import { q, type LintContext } from "../context.ts";

/**
 * table-conflict: an action's records and a many-to-many array's links are each kept in a table
 * named after the resource and the action or field (`orders__label_ids`: the action `label-ids`,
 * or the field `label_ids` of items `references: tags`); the two must not share one.
 */
export function tableRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    const links = new Map<string, string>();
    for (const field of r.fields) {
      if (field.type === "array" && field.items?.type === "uuid" && field.items.references !== undefined) {
        links.set(field.name, field.name);
      }
    }
    if (links.size === 0) continue;
    for (const action of r.actions) {
      if (typeof action.name !== "string") continue;
      const field = links.get(action.name.replace(/-/g, "_"));
      if (field === undefined) continue;
      ctx.report(
        "table-conflict",
        action.at(),
        `the action ${q(action.name)} and the many-to-many field ${q(field)} of ${r.collection} would both be kept in the table ${r.collection.replace(/-/g, "_")}__${field}`,
        `rename the action (another plural noun), or the field`,
      );
    }
  }
}
