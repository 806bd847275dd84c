import type { SourceLocation } from "../../diagnostics/diagnostic.ts";
import type { ActionDef, FieldDef, ResourceDef } from "../../model/types.ts";
import { presentAt, q, resourceVersions, walkFields, type LintContext } from "../context.ts";

/**
 * version-ref, version-added-required: added, removed and renamed.in name versions of
 * api.yaml in a sensible order; only a resource's own fields are versioned; a field added
 * later than its resource can be left out by clients of older versions.
 */
export function versionRefRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    const window = resourceWindow(ctx, r);
    parentVersions(ctx, r);
    for (const f of r.fields) fieldVersions(ctx, r, f, window);
    for (const a of r.actions) actionRulesVersion(ctx, r, a, window);
    exportVersion(ctx, r, window);
    referenceVersions(ctx, r);
    for (const { field, place, path } of walkFields(r)) {
      if (place === "resource") continue;
      for (const key of ["added", "removed", "renamed"] as const) {
        if (field[key] === undefined) continue;
        const inside = place === "action" ? "an action field" : place === "items" ? "the items of an array" : "a field inside an object field";
        const owner = place === "action" ? "add a new action instead" : `version the top-level field ${q(path.split(/[.[]/)[0])} instead`;
        ctx.report("version-ref", field.at(key), `${key} is not allowed on ${inside} (${q(path)}); only a resource's own fields are versioned`, `remove ${key}; ${owner}`);
      }
    }
  }
}

/** Checks that a version key exists; returns its position or undefined. */
function known(ctx: LintContext, name: string | undefined, at: () => SourceLocation, key: string, owner: string): number | undefined {
  if (name === undefined) return undefined;
  const i = ctx.versionIndex(name);
  if (i !== undefined) return i;
  const names = ctx.defs.versions.map((v) => v.name);
  // Version names are too alike for a did-you-mean; only a difference of case is guessed.
  const guess = names.find((n) => n.toLowerCase() === name.toLowerCase());
  ctx.report(
    "version-ref",
    at(),
    `${key} ${q(name)} of ${owner} is not a version of api.yaml`,
    guess ? `did you mean ${q(guess)}?` : `use one of: ${names.join(", ") || "(no versions defined)"}`,
  );
  return undefined;
}

/**
 * An action's `added` names a version in which its resource exists; its `rules_added` one in
 * which the resource exists, after the action's first (from the first, the rules simply hold
 * in every version: leave it out), and the action has `requires` or `sets` for it to date.
 */
function actionRulesVersion(ctx: LintContext, r: ResourceDef, a: ActionDef, window: Window): void {
  const owner = `the action ${q(a.name)}`;
  const added = known(ctx, a.added, () => a.at("added"), "added", owner);
  let start = window.start;
  if (added !== undefined && added < window.start) {
    ctx.report("version-ref", a.at("added"), `${owner} is added in ${a.added}, before ${r.collection} exists`, `remove added, or use ${ctx.defs.versions[window.start]?.name ?? "v1"} or later`);
  } else if (added !== undefined && added >= window.end) {
    ctx.report("version-ref", a.at("added"), `${owner} is added in ${a.added}, when ${r.collection} no longer exists`, "remove the action, or add it earlier");
  } else if (added !== undefined) start = added;
  const since = known(ctx, a.rulesAdded, () => a.at("rules_added"), "rules_added", owner);
  if (a.rulesAdded === undefined) return;
  if (!a.requires.length && !a.sets.length) {
    ctx.report("version-ref", a.at("rules_added"), `rules_added on ${owner}, which has no requires or sets, dates nothing`, "remove rules_added, or add requires or sets");
    return;
  }
  if (since === undefined) return;
  if (since <= start) {
    ctx.report(
      "version-ref",
      a.at("rules_added"),
      `rules_added ${q(a.rulesAdded)} of ${owner} is not after its first version: its rules hold in every version that has it`,
      "remove rules_added",
    );
  } else if (since >= window.end) {
    ctx.report("version-ref", a.at("rules_added"), `rules_added ${q(a.rulesAdded)} of ${owner} is a version without ${r.collection}`, "use a version in which the resource exists");
  }
}

/** `export: { added }` names a version in which the resource exists, after its first (from the first, leave it out). */
function exportVersion(ctx: LintContext, r: ResourceDef, window: Window): void {
  const at = () => r.at("export", "added");
  const added = known(ctx, r.exportAdded, at, "added", `the export of ${r.collection}`);
  if (added === undefined) return;
  if (added <= window.start) {
    ctx.report("version-ref", at(), `the export of ${r.collection} is added in ${r.exportAdded}, not after the resource's first version: it is offered in every version that has the resource`, "remove added");
  } else if (added >= window.end) {
    ctx.report("version-ref", at(), `the export of ${r.collection} is added in ${r.exportAdded}, a version without ${r.collection}`, "use a version in which the resource exists");
  }
}

interface Window {
  start: number;
  end: number;
}

function resourceWindow(ctx: LintContext, r: ResourceDef): Window {
  const added = known(ctx, r.added, () => r.at("added"), "added", r.collection);
  const removed = known(ctx, r.removed, () => r.at("removed"), "removed", r.collection);
  const start = added ?? 0;
  const end = removed ?? Number.POSITIVE_INFINITY;
  if (removed !== undefined && removed <= start) {
    ctx.report(
      "version-ref",
      r.at("removed"),
      `${r.collection} is removed in ${r.removed}, not after it is added in ${ctx.defs.versions[start]?.name ?? "v1"}: it would never exist`,
      "make removed a later version than added, or delete the resource file",
    );
  }
  return { start, end };
}

function parentVersions(ctx: LintContext, r: ResourceDef): void {
  const parent = r.parent !== undefined && r.parent !== r.collection ? ctx.byCollection.get(r.parent) : undefined;
  if (!parent) return;
  const missing = resourceVersions(ctx, r).filter((i) => !presentAt(ctx, i, parent.added, parent.removed));
  if (missing.length === 0) return;
  const names = missing.map((i) => ctx.defs.versions[i]!.name).join(", ");
  ctx.report(
    "version-ref",
    r.at("parent"),
    `${r.collection} exists in ${names}, where its parent ${parent.collection} does not`,
    `add ${r.collection} no earlier and remove it no later than ${parent.collection}`,
  );
}

function fieldVersions(ctx: LintContext, r: ResourceDef, f: FieldDef, window: Window): void {
  const name = q(f.name);
  const v = (i: number) => ctx.defs.versions[i]?.name ?? `v${i + 1}`;
  const added = known(ctx, f.added, () => f.at("added"), "added", name);
  const removed = known(ctx, f.removed, () => f.at("removed"), "removed", name);
  const renamedIn = f.renamed ? known(ctx, f.renamed.in, () => f.at("renamed", "in"), "renamed.in", name) : undefined;
  if (added !== undefined && added < window.start) {
    ctx.report("version-ref", f.at("added"), `${name} is added in ${v(added)}, before ${r.collection} exists (${v(window.start)})`, `remove added, or use ${v(window.start)} or later`);
  }
  if (added !== undefined && added >= window.end) {
    ctx.report("version-ref", f.at("added"), `${name} is added in ${v(added)}, when ${r.collection} no longer exists`, "remove the field, or add it earlier");
  }
  const start = Math.max(added ?? 0, window.start);
  if (removed !== undefined && removed <= start) {
    ctx.report("version-ref", f.at("removed"), `${name} is removed in ${v(removed)}, not after it is added in ${v(start)}: it would never exist`, "make removed a later version than added, or delete the field");
  }
  if (renamedIn !== undefined) {
    if (renamedIn <= start) {
      ctx.report(
        "version-ref",
        f.at("renamed", "in"),
        `${name} is renamed in ${v(renamedIn)}, but it only exists from ${v(start)} on: its old name ${q(f.renamed!.from)} would never be used`,
        `use a version after ${v(start)} in renamed.in, or remove renamed`,
      );
    } else if (removed !== undefined && renamedIn >= removed) {
      ctx.report("version-ref", f.at("renamed", "in"), `${name} is renamed in ${v(renamedIn)}, but removed in ${v(removed)}`, `rename it before ${v(removed)}, or remove renamed`);
    }
    if (f.renamed!.from === f.name) {
      ctx.report("version-ref", f.at("renamed", "from"), `${name} is renamed from its own name`, "write the field's earlier name in renamed.from, or remove renamed");
    }
  }
  if (added !== undefined && added > window.start && added < window.end && !f.optional && !f.hasDefault && !f.readOnly) {
    ctx.report(
      "version-added-required",
      f.at("added"),
      `${name} is added in ${v(added)}, after the first version of ${r.collection} (${v(window.start)}), so it must be optional or have a default`,
      `add optional: true or a default: writes through ${v(added - 1)} do not send ${name}`,
    );
  }
}

/**
 * reference-version: every `references` (a field, an array's items, an object's field, an
 * action's field) names a collection that the versions in which the referring field exists
 * serve too; else a client of such a version holds ids of records it cannot read.
 */
function referenceVersions(ctx: LintContext, r: ResourceDef): void {
  const own = resourceVersions(ctx, r);
  for (const { field, place, path, action } of walkFields(r)) {
    if (field.type !== "uuid" || field.references === undefined || field.references === r.collection) continue;
    // The parent's id: version-ref says it of the resource itself (parentVersions).
    if (place === "resource" && field.references === r.parent) continue;
    const target = ctx.byCollection.get(field.references);
    if (!target) continue;
    // The versions in which the referring path exists: its top-level field's, or its action's.
    const root = place === "action" ? undefined : r.fields.find((f) => f.name === path.split(/[.[]/)[0]);
    const present = own.filter((i) =>
      action ? presentAt(ctx, i, action.added, undefined) : presentAt(ctx, i, root?.added, root?.removed),
    );
    const missing = present.filter((i) => !presentAt(ctx, i, target.added, target.removed));
    if (missing.length === 0) continue;
    const names = missing.map((i) => ctx.defs.versions[i]!.name).join(", ");
    ctx.report(
      "reference-version",
      field.at("references"),
      `${q(path)} references ${target.collection}, which ${names} ${missing.length === 1 ? "does" : "do"} not serve: its clients would hold ids of records they cannot read`,
      action
        ? `keep ${target.collection} in ${names} (an action is in every version of its resource from its first)`
        : `keep ${target.collection} in ${names}, or leave the field ${q(path.split(/[.[]/)[0])} out of ${names} (added/removed)`,
    );
  }
}
