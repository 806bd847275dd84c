import { diagnostic, type RuleId } from "../diagnostics/catalog.ts";
import type { Diagnostic, SourceLocation } from "../diagnostics/diagnostic.ts";
import type { ActionDef, Definitions, FieldDef, ResourceDef } from "../model/types.ts";

/** What every lint rule gets: the definitions, today's date, and a place to report. */
export interface LintContext {
  defs: Definitions;
  today: string;
  /** Every collection defined, to resolve `parent` and `references`. */
  collections: ReadonlySet<string>;
  /** The first resource defining each collection. */
  byCollection: ReadonlyMap<string, ResourceDef>;
  /** Position of a version key in api.yaml, or undefined when it is not a key there. */
  versionIndex(name: string | undefined): number | undefined;
  report(rule: RuleId, location: SourceLocation, message: string, fix: string): void;
}

export type Rule = (ctx: LintContext) => void;

export function createContext(defs: Definitions, today: string, out: Diagnostic[]): LintContext {
  const byCollection = new Map<string, ResourceDef>();
  for (const r of defs.resources) if (!byCollection.has(r.collection)) byCollection.set(r.collection, r);
  const index = new Map(defs.versions.map((v, i) => [v.name, i]));
  return {
    defs,
    today,
    collections: new Set(byCollection.keys()),
    byCollection,
    versionIndex: (name) => (name === undefined ? undefined : index.get(name)),
    report: (rule, location, message, fix) => out.push(diagnostic(rule, location, message, fix)),
  };
}

/** Where a field sits: a resource's own field, a field of an object field, the items of an array, or an action's field. */
export type FieldPlace = "resource" | "object" | "items" | "action";

export interface FieldVisit {
  field: FieldDef;
  resource: ResourceDef;
  place: FieldPlace;
  /** The action the field belongs to (directly or nested), if any. */
  action?: ActionDef;
  /** Dotted path for messages: `dimensions.width_mm`, `tags[]`, `metadata.*` (a map's values), `cancellations.reason`. */
  path: string;
}

/**
 * Every field of a resource, depth first: own fields, their sub-fields and items, then action
 * fields. A list, not a generator: most rules walk every resource, mostly in code not compiled
 * yet (a cold `canon generate`), where resuming nested generators costs several times the walk.
 */
export function walkFields(resource: ResourceDef): FieldVisit[] {
  const visits: FieldVisit[] = [];
  const walk = (field: FieldDef, place: FieldPlace, action: ActionDef | undefined, path: string): void => {
    visits.push({ field, resource, place, action, path });
    if (field.items) walk(field.items, "items", action, field.type === "map" ? `${path}.*` : `${path}[]`);
    for (const sub of field.fields ?? []) walk(sub, "object", action, `${path}.${sub.name}`);
  };
  for (const field of resource.fields) walk(field, "resource", undefined, field.name);
  for (const action of resource.actions) {
    for (const field of action.fields) walk(field, "action", action, `${action.name}.${field.name}`);
  }
  return visits;
}

/** `"name"` for messages. */
export function q(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** Days from `from` to `to` (both YYYY-MM-DD), or undefined when either is not a real date. */
export function daysBetween(from: string | undefined, to: string | undefined): number | undefined {
  const a = dateValue(from);
  const b = dateValue(to);
  return a === undefined || b === undefined ? undefined : Math.round((b - a) / 86_400_000);
}

/** Milliseconds of a real calendar date YYYY-MM-DD at 00:00 UTC, or undefined. */
export function dateValue(text: string | undefined): number | undefined {
  if (typeof text !== "string") return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(year, month - 1, day);
  const d = new Date(ms);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day ? ms : undefined;
}

export function addDays(date: string, days: number): string {
  const ms = dateValue(date);
  return ms === undefined ? date : new Date(ms + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Is something with these added/removed present at version position `i`? Unknown version
 * names (reported by version-ref) count as absent bounds, so rules keep going.
 */
export function presentAt(ctx: LintContext, i: number, added: string | undefined, removed: string | undefined): boolean {
  const from = ctx.versionIndex(added) ?? 0;
  const until = ctx.versionIndex(removed) ?? Number.POSITIVE_INFINITY;
  return i >= from && i < until;
}

/** Positions of the versions in which a resource exists. */
export function resourceVersions(ctx: LintContext, r: ResourceDef): number[] {
  return ctx.defs.versions.map((_, i) => i).filter((i) => presentAt(ctx, i, r.added, r.removed));
}
