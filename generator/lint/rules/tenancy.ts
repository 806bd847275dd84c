import { q, walkFields, type LintContext } from "../context.ts";
import type { FieldDef, ResourceDef } from "../../model/types.ts";

/** A resource's tenant field (the first `tenant: true` among its own fields), if any. */
export function tenantFieldOf(r: ResourceDef): FieldDef | undefined {
  return r.fields.find((f) => f.tenant === true);
}

/**
 * Tenancy (SPEC §12.4):
 *  - tenant-field: `tenant: true` sits on a required, top-level uuid field with `references`, in
 *    every version of the resource (no added, removed or renamed), at most one per resource; every
 *    tenant field references the same collection (the tenant collection), which is not itself
 *    tenant-scoped; no action sets it.
 *  - tenant-scope: a child of a tenant-scoped resource is tenant-scoped too, and only a
 *    tenant-scoped resource (by a field of its own) references a tenant-scoped collection.
 */
export function tenancyRules(ctx: LintContext): void {
  let tenantCollection: { collection: string; where: string } | undefined;
  const scoped = new Set<string>();
  const declared = new Set<string>();
  for (const r of ctx.defs.resources) {
    let seen: string | undefined;
    for (const { field, place, path } of walkFields(r)) {
      if (!field.tenant) continue;
      // Declared tenant-scoped, even when the field breaks a rule: no second error about its references.
      if (place === "resource") declared.add(r.collection);
      const at = field.at("tenant");
      const report = (message: string, fix: string) => ctx.report("tenant-field", at, message, fix);
      if (place !== "resource") {
        report(`tenant on ${q(path)}: only a top-level field of the resource names its tenant`, `remove tenant from ${q(path)}, and put it on a top-level uuid field that references the tenant collection`);
        continue;
      }
      if (field.type !== "uuid" || !field.references) {
        report(`tenant on ${q(field.name)}, which is not a uuid field with references`, `make ${q(field.name)} { type: uuid, references: <tenant collection>, tenant: true }, or remove tenant`);
        continue;
      }
      if (field.optional || field.nullable) {
        report(`the tenant field ${q(field.name)} is ${field.optional ? "optional" : "nullable"}: every record of a tenant-scoped resource names its tenant`, `remove ${field.optional ? "optional" : "nullable"} from ${q(field.name)}`);
        continue;
      }
      if (field.added || field.removed || field.renamed) {
        report(`the tenant field ${q(field.name)} is ${field.added ? "added" : field.removed ? "removed" : "renamed"} in a version: a resource is tenant-scoped in every version it has`, `remove ${field.added ? "added" : field.removed ? "removed" : "renamed"} from ${q(field.name)}`);
        continue;
      }
      if (tenantCollection && tenantCollection.collection !== field.references) {
        report(
          `${q(field.name)} names a tenant in ${field.references}, but ${tenantCollection.where} names one in ${tenantCollection.collection}: an API has one tenant collection`,
          `make ${q(field.name)} reference ${tenantCollection.collection}, or remove tenant from it`,
        );
        continue;
      }
      if (seen) {
        report(`${r.collection} has two tenant fields, ${seen} and ${q(field.name)}`, `keep tenant: true on one of them`);
        continue;
      }
      seen = q(field.name);
      tenantCollection ??= { collection: field.references, where: `${r.collection}.${field.name}` };
      scoped.add(r.collection);
    }
  }
  if (!tenantCollection) return;
  const tc = tenantCollection.collection;
  const fix = (r: ResourceDef) => `add a tenant field to ${r.collection}: ${singularOf(tc)}_id: { type: uuid, references: ${tc}, tenant: true }`;
  for (const r of ctx.defs.resources) {
    const own = tenantFieldOf(r);
    if (r.collection === tc && own && scoped.has(r.collection)) {
      ctx.report("tenant-field", own.at("tenant"), `${tc} is the tenant collection and cannot itself be tenant-scoped`, `remove tenant from ${q(own.name)}`);
    }
    for (const action of r.actions) {
      for (const set of action.sets) {
        if (own && set.field === own.name) {
          ctx.report("tenant-field", action.at("sets"), `the action ${action.name} sets the tenant field ${q(own.name)}: a record never moves to another tenant`, `remove ${set.field} from sets`);
        }
      }
    }
    // A tenant-scoped resource's references, its actions' fields too, are looked up within the record's tenant.
    if (declared.has(r.collection)) continue;
    if (r.parent && scoped.has(r.parent)) {
      ctx.report("tenant-scope", r.at("parent"), `${r.collection} is a child of ${r.parent}, which is tenant-scoped, and is not tenant-scoped itself`, fix(r));
      continue;
    }
    for (const { field, path } of walkFields(r)) {
      const target = field.type === "uuid" ? field.references : undefined;
      if (target && scoped.has(target) && target !== r.collection && target !== tc) {
        ctx.report("tenant-scope", field.at("references"), `${q(path)} references ${target}, which is tenant-scoped, but ${r.collection} is not: its records could name another tenant's`, fix(r));
      }
    }
  }
}

function singularOf(collection: string): string {
  const last = collection.split("-").join("_");
  return last.endsWith("ies") ? `${last.slice(0, -3)}y` : last.endsWith("s") ? last.slice(0, -1) : last;
}
