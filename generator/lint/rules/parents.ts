import type { ResourceDef } from "../../model/types.ts";
import { snakeCase } from "../../util/names.ts";
import { closest } from "../../util/suggest.ts";
import { presentAt, q, resourceVersions, type LintContext } from "../context.ts";

/**
 * reference-unknown (for parent), parent-cycle, parent-field: a parent is a defined
 * collection, parent chains end, and a child has exactly one uuid field that names its
 * parent's record in every version in which the child exists.
 */
export function parentRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    if (r.parent === undefined) continue;
    if (r.parent === r.collection) {
      ctx.report("parent-cycle", r.at("parent"), `${r.collection} names itself as its parent`, "remove parent, or name the collection it is listed under");
      continue;
    }
    const parent = ctx.byCollection.get(r.parent);
    if (!parent) {
      const guess = closest(r.parent, [...ctx.collections].filter((c) => c !== r.collection));
      ctx.report(
        "reference-unknown",
        r.at("parent"),
        `parent ${q(r.parent)} of ${r.collection} is not a defined collection`,
        guess ? `did you mean ${q(guess)}?` : `name one of the defined collections, or add ${r.parent}.yaml`,
      );
      continue;
    }
    const loop = cycleThrough(ctx, r);
    if (loop) {
      ctx.report("parent-cycle", r.at("parent"), `the parent chain loops: ${loop.join(" → ")}`, `remove parent from one of ${[...new Set(loop)].join(", ")}`);
    }
    parentField(ctx, r, parent);
  }
}

/** The loop of parents that starts and ends at `r`, or undefined if r's chain ends or joins another loop. */
function cycleThrough(ctx: LintContext, r: ResourceDef): string[] | undefined {
  const chain = [r.collection];
  const seen = new Set(chain);
  let current: ResourceDef | undefined = r;
  while (current?.parent !== undefined) {
    const next = current.parent;
    chain.push(next);
    if (next === r.collection) return chain;
    if (seen.has(next)) return undefined;
    seen.add(next);
    current = ctx.byCollection.get(next);
  }
  return undefined;
}

function parentField(ctx: LintContext, r: ResourceDef, parent: ResourceDef): void {
  const links = r.fields.filter((f) => f.type === "uuid" && f.references === parent.collection);
  const expectedName = `${snakeCase(parent.singular)}_id`;
  if (links.length === 0) {
    const named = r.fields.find((f) => f.name === expectedName);
    ctx.report(
      "parent-field",
      r.at("parent"),
      `${r.collection} has parent ${parent.collection} but no uuid field that references ${parent.collection}`,
      named
        ? `add references: ${parent.collection} to ${q(expectedName)} (and make it type uuid)`
        : `add the field ${expectedName}: { type: uuid, references: ${parent.collection} }`,
    );
    return;
  }
  if (links.length > 1) {
    for (const extra of links.slice(1)) {
      ctx.report(
        "parent-field",
        extra.at("references"),
        `${r.collection} has ${links.length} uuid fields that reference its parent ${parent.collection} (${links.map((f) => f.name).join(", ")}); exactly one links a record to its parent`,
        `keep references: ${parent.collection} on one of them, or remove parent and use filters`,
      );
    }
    return;
  }
  const link = links[0]!;
  const missing = resourceVersions(ctx, r).filter((i) => !presentAt(ctx, i, link.added, link.removed));
  if (missing.length > 0) {
    const names = missing.map((i) => ctx.defs.versions[i]!.name).join(", ");
    ctx.report(
      "parent-field",
      link.at(missing.some((i) => i < (ctx.versionIndex(link.added) ?? 0)) ? "added" : "removed"),
      `${q(link.name)} links ${r.collection} to its parent ${parent.collection} but is missing in ${names}`,
      `keep ${q(link.name)} in every version of ${r.collection}: remove its added and removed`,
    );
  }
  if (link.writeOnly) {
    ctx.report(
      "parent-field",
      link.at("write_only"),
      `${q(link.name)} links ${r.collection} to its parent ${parent.collection} and may not be write_only: GET /vN/${parent.collection}/{id}/${r.collection} would reveal the value it never returns`,
      `remove write_only from ${q(link.name)}`,
    );
  }
  for (const key of ["optional", "nullable"] as const) {
    if (!link[key]) continue;
    ctx.report(
      "parent-field",
      link.at(key),
      `${q(link.name)} links ${r.collection} to its parent ${parent.collection} and may not be ${key}: every ${r.singular} belongs to a ${parent.singular}`,
      `remove ${key} from ${q(link.name)}`,
    );
  }
}
