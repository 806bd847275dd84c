import { child, identical, isObject, obj, resolve, sameJson, show, typesOf, type Located } from "./resolve.ts";
import type { Change, Json, JsonObject } from "./types.ts";
import { compareDecimals, decimalParts } from "../../runtime/decimal.ts";

/**
 * Compares two JSON Schemas of one place of an operation. What breaks a client depends on the
 * direction: an input (request body, parameter) may grow but not narrow; an output (response)
 * may narrow but not grow, except that a new property is never a break.
 */
export type Direction = "input" | "output";

/** A change as a schema comparison reports it; the caller adds the operation and the part. */
export type SchemaChange = Omit<Change, "operation" | "part">;

export interface SchemaContext {
  oldDoc: JsonObject;
  newDoc: JsonObject;
  /** Which pairs of referenced schemas are identical, shared by every comparison of two documents. */
  memo: Map<string, boolean>;
  /** The changes inside each pair of component schemas, per direction, relative to the component. */
  components: Map<string, SchemaChange[]>;
  direction: Direction;
  /** Words for the compared value itself: `the request body`, `query parameter "status"`. */
  root: string;
  report(change: SchemaChange): void;
}

/** A change in words: what it is about (subject) and what happened (detail). */
export function worded<T extends { subject: string; detail: string }>(c: T): T & { text: string } {
  return { ...c, text: `${c.subject} ${c.detail}` };
}

/** Where a comparison is: the pointers in both documents and the field path. */
interface Place {
  oldPointer: string;
  newPointer: string;
  /** From the root of the body or parameter. */
  field: string;
  /** The component schema last entered, and the field path inside it. */
  schema?: { name: string; field: string };
}

export function compareSchemas(ctx: SchemaContext, oldValue: Json | undefined, newValue: Json | undefined, oldPointer: string, newPointer: string): void {
  walk(ctx, oldValue, newValue, { oldPointer, newPointer, field: "" }, new Set());
}

const upperLimits = ["maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties"];
const lowerLimits = ["minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties"];
const compositions = ["oneOf", "anyOf", "allOf"];

function walk(ctx: SchemaContext, oldValue: Json | undefined, newValue: Json | undefined, place: Place, seen: Set<string>): void {
  const viaRef = isObject(oldValue) && typeof oldValue.$ref === "string" && isObject(newValue) && typeof newValue.$ref === "string";
  // Most components of two documents are the same: skip them in one look.
  if (viaRef && identical(ctx.oldDoc, ctx.newDoc, oldValue, newValue, ctx.memo)) return;
  const o = resolve(ctx.oldDoc, oldValue, place.oldPointer, place.schema?.name);
  const n = resolve(ctx.newDoc, newValue, place.newPointer, place.schema?.name);
  const key = `${o.pointer}|${n.pointer}`;
  if (seen.has(key)) return;
  const entered = viaRef && o.component !== undefined && o.component !== place.schema?.name;
  seen.add(key);
  try {
    if (!entered) {
      compareResolved(ctx, o, n, place, seen);
      return;
    }
    // A component is shown by many operations: compare it once, then place its changes at each use.
    const cacheKey = `${ctx.direction}|${key}`;
    let changes = ctx.components.get(cacheKey);
    if (!changes) {
      const found: SchemaChange[] = [];
      compareResolved({ ...ctx, report: (c) => found.push(c) }, o, n, { oldPointer: o.pointer, newPointer: n.pointer, field: "" }, seen);
      ctx.components.set(cacheKey, (changes = found));
    }
    for (const c of changes) ctx.report(placed(ctx, c, place.field));
  } finally {
    seen.delete(key);
  }
}

/** A field path under `prefix`: `data[]` + `sum` → `data[].sum`; `tags` + `[]` → `tags[]`. */
function under(prefix: string, field: string): string {
  return !prefix ? field : !field ? prefix : field.startsWith("[]") ? `${prefix}${field}` : `${prefix}.${field}`;
}

/** A change found inside a component, as seen where the component is used. */
function placed(ctx: SchemaContext, c: SchemaChange, prefix: string): SchemaChange {
  if (!prefix) return worded({ ...c, subject: describe(ctx, c.field) });
  const field = under(prefix, c.field);
  return worded({ ...c, field, subject: describe(ctx, field), ...(c.renamedTo !== undefined ? { renamedTo: under(prefix, c.renamedTo) } : {}) });
}

function compareResolved(ctx: SchemaContext, o: Located, n: Located, place: Place, inner: Set<string>): void {
  const schema =
    o.component === undefined ? place.schema : o.component === place.schema?.name ? place.schema : { name: o.component, field: "" };
  const here: Place = { oldPointer: o.pointer, newPointer: n.pointer, field: place.field, schema };
  const report: Report = (c) =>
    ctx.report(worded({ ...c, subject: describe(ctx, here.field), field: here.field, schema: here.schema, pointer: c.pointer ?? here.oldPointer }));
  const old = o.node;
  const now = n.node;
  const input = ctx.direction === "input";

  for (const k of compositions) {
    const a = old[k];
    const b = now[k];
    if (a === undefined && b === undefined) continue;
    const refsA = Array.isArray(a) ? refsOf(a) : null;
    const refsB = Array.isArray(b) ? refsOf(b) : null;
    if (k !== "allOf" && refsA && refsB && refsA.join() !== refsB.join()) {
      // A union of named schemas (an export's body, one member per exportable collection): the
      // members named in both are compared, a member added takes more input or answers another
      // shape, a member gone the reverse.
      refsA.forEach((ref, i) => {
        const j = refsB.indexOf(ref);
        if (j >= 0) walk(ctx, (a as Json[])[i], (b as Json[])[j], { ...here, oldPointer: child(here.oldPointer, k, i), newPointer: child(here.newPointer, k, j) }, inner);
        else report({ kind: "schema-changed", breaking: input, keyword: k, detail: `no longer takes ${ref.split("/").pop()} (${k})` });
      });
      for (const ref of refsB) {
        if (!refsA.includes(ref)) report({ kind: "schema-changed", breaking: !input, keyword: k, detail: `may also be ${ref.split("/").pop()} (${k})` });
      }
    } else if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => walk(ctx, x, b[i], { ...here, oldPointer: child(here.oldPointer, k, i), newPointer: child(here.newPointer, k, i) }, inner));
    } else {
      report({ kind: "schema-changed", breaking: true, keyword: k, detail: `changed its shape (${k})` });
    }
    return;
  }

  const ot = typesOf(old);
  const nt = typesOf(now);
  if (ot.types.join() !== nt.types.join()) {
    report({
      kind: "type-changed",
      breaking: true,
      keyword: "type",
      detail: `changed type from ${typeLabel(old, ot.types)} to ${typeLabel(now, nt.types)}`,
    });
    return;
  }
  if (ot.nullable !== nt.nullable) {
    const breaking = input ? ot.nullable : nt.nullable;
    report({ kind: "nullable-changed", breaking, keyword: "type", detail: `${nt.nullable ? "may now be null" : "may no longer be null"}` });
  }
  compareFormat(old, now, input, report);
  compareEnum(old, now, input, report);
  compareTransitions(old, now, report);
  const namesReferences = namesAllReferences(ctx.oldDoc);
  compareLimits(old, now, input, namesReferences, report);
  if (input && namesReferences) compareReferences(old, now, report);
  if (!input) compareOnDelete(old, now, report);
  if (input) compareUnique(old, now, listsUniqueFields(ctx.oldDoc), report);
  if (input || namesTenantOnRecords(ctx.oldDoc)) compareTenant(old, now, report);
  if (input) compareSortKeys(old, now, report);
  if (input && !sameJson(old.default, now.default)) {
    report({ kind: "default-changed", breaking: false, keyword: "default", detail: `defaults to ${show(now.default)} instead of ${show(old.default)}` });
  }
  if (isObject(old.properties) || isObject(now.properties) || ot.types.includes("object")) compareObject(ctx, old, now, here, inner, report);
  if (old.items !== undefined || now.items !== undefined) {
    const field = `${here.field}[]`;
    const schemaField = here.schema ? { ...here.schema, field: `${here.schema.field}[]` } : undefined;
    walk(ctx, old.items, now.items, { oldPointer: child(here.oldPointer, "items"), newPointer: child(here.newPointer, "items"), field, schema: schemaField }, inner);
  }
}

/**
 * A schema's type as a definition writes it, for the words of a change: a decimal (a string of
 * `format: decimal`, SPEC §12.6) is `decimal` and a map (an object whose `additionalProperties` is
 * a schema) `map`, not the JSON types a client would read as another change (`integer` to
 * `string` for a field that became a decimal).
 */
function typeLabel(schema: JsonObject, types: string[]): string {
  if (types.length === 1 && types[0] === "string" && schema.format === "decimal") return "decimal";
  if (types.length === 1 && types[0] === "object" && isObject(schema.additionalProperties) && !isObject(schema.properties)) return "map";
  return types.join(" | ") || "any";
}

type Report = (c: Omit<SchemaChange, "field" | "schema" | "pointer" | "subject" | "text"> & { pointer?: string }) => void;

function describe(ctx: SchemaContext, field: string): string {
  if (!field) return ctx.root;
  // The items of the compared value itself (a parameter's array, `sort`): no field to name.
  return namesNoField(field) ? `${ctx.root} (its items)` : `field "${field}"`;
}

/** A field path made only of array items and map values (`[]`, `*`): the compared value's own items. */
export function namesNoField(field: string): boolean {
  return /^(\[\]|\.?\*)+$/.test(field);
}

function compareFormat(old: JsonObject, now: JsonObject, input: boolean, report: Report): void {
  const a = old.format;
  const b = now.format;
  if (a === b) return;
  // A new format narrows what a value may be: a break for inputs; a dropped one widens: a break for
  // outputs. A decimal is another type written as a string (SPEC §12): a change to or from it breaks both.
  const breaking = a !== undefined && b !== undefined ? true : a === "decimal" || b === "decimal" ? true : input ? b !== undefined : a !== undefined;
  report({ kind: "format-changed", breaking, keyword: "format", detail: `changed format from ${show(a)} to ${show(b)}` });
}

function enumValues(schema: JsonObject): Json[] | undefined {
  return Array.isArray(schema.enum) ? schema.enum.filter((v) => v !== null) : undefined;
}

function compareEnum(old: JsonObject, now: JsonObject, input: boolean, report: Report): void {
  const a = enumValues(old);
  const b = enumValues(now);
  if (a === undefined && b === undefined) return;
  if (a === undefined) {
    report({ kind: "limit-tightened", breaking: input, keyword: "enum", detail: `is now limited to ${b!.map(show).join(", ")}` });
    return;
  }
  if (b === undefined) {
    report({ kind: "enum-value-added", breaking: !input, keyword: "enum", detail: `is no longer limited to ${a.map(show).join(", ")}` });
    return;
  }
  for (const v of a) {
    if (!b.some((x) => sameJson(x, v))) report({ kind: "enum-value-removed", breaking: input, keyword: "enum", detail: `no longer has the value ${show(v)}` });
  }
  for (const v of b) {
    if (!a.some((x) => sameJson(x, v))) report({ kind: "enum-value-added", breaking: !input, keyword: "enum", detail: `has a new value ${show(v)}` });
  }
}

function compareLimits(old: JsonObject, now: JsonObject, input: boolean, namesReferences: boolean, report: Report): void {
  const limit = (keyword: string, tighter: boolean) =>
    report({
      kind: tighter ? "limit-tightened" : "limit-loosened",
      // Outputs within tighter or looser limits never surprise a client that accepts the type.
      breaking: input && tighter,
      keyword,
      detail: `has ${keyword} ${show(now[keyword])} instead of ${show(old[keyword])}`,
    });
  for (const [keywords, smallerIsTighter] of [[upperLimits, true], [lowerLimits, false]] as const) {
    for (const k of keywords) {
      const a = typeof old[k] === "number" ? (old[k] as number) : undefined;
      const b = typeof now[k] === "number" ? (now[k] as number) : undefined;
      if (a === b) continue;
      if (a === undefined) limit(k, true);
      else if (b === undefined) limit(k, false);
      else limit(k, smallerIsTighter ? b < a : b > a);
    }
  }
  // An array that becomes a relation (SPEC §12.3) refuses repeated ids: tighter for an input; one
  // change with its items' reference when the published document names references (compareReferences).
  const relation = (schema: JsonObject) => (isObject(schema.items) ? schema.items["x-canon-references"] : undefined);
  if ((old.uniqueItems === true) !== (now.uniqueItems === true) && !(namesReferences && relation(old) !== relation(now)))
    limit("uniqueItems", now.uniqueItems === true);
  // A decimal's pattern follows from its digits, compared below as numbers.
  if (old.format === "decimal" && now.format === "decimal") {
    compareDecimalLimits(old, now, input, report);
    return;
  }
  if (old.pattern !== now.pattern) limit("pattern", now.pattern !== undefined);
}

/**
 * Two decimals: fewer digits before or after the point, or a tighter bound, narrow what an input
 * takes (a break); more digits (a wider precision) or a looser bound do not. Outputs within other
 * limits break nothing, as for every limit, but an output's scale is its form (SPEC §12.6: always
 * `scale` fraction digits): another scale changes every value a client of the version reads
 * (`"0.100"` becomes `"0.1000"`, which the published pattern refuses), a break either way.
 */
function compareDecimalLimits(old: JsonObject, now: JsonObject, input: boolean, report: Report): void {
  const digits = (schema: JsonObject) => {
    const precision = typeof schema["x-precision"] === "number" ? schema["x-precision"] : 0;
    const scale = typeof schema["x-scale"] === "number" ? schema["x-scale"] : 0;
    return { integer: precision - scale, scale };
  };
  const a = digits(old);
  const b = digits(now);
  const change = (keyword: string, tighter: boolean, detail: string) =>
    report({ kind: tighter ? "limit-tightened" : "limit-loosened", breaking: input && tighter, keyword, detail });
  if (a.integer !== b.integer) change("x-precision", b.integer < a.integer, `has ${b.integer} digits before the point instead of ${a.integer}`);
  if (a.scale !== b.scale) {
    if (input) change("x-scale", b.scale < a.scale, `has ${b.scale} digits after the point instead of ${a.scale}`);
    else
      report({
        kind: "format-changed",
        breaking: true,
        keyword: "x-scale",
        detail: `is written with ${b.scale} digits after the point instead of ${a.scale}: every value it answers changes form`,
      });
  }
  const scale = Math.max(a.scale, b.scale);
  const bound = (keyword: "x-minimum" | "x-maximum") => {
    const x = typeof old[keyword] === "string" && decimalParts(old[keyword]) ? old[keyword] : undefined;
    const y = typeof now[keyword] === "string" && decimalParts(now[keyword]) ? now[keyword] : undefined;
    if (x === y || (x !== undefined && y !== undefined && compareDecimals(x, y, scale) === 0)) return;
    const order = x === undefined || y === undefined ? 0 : compareDecimals(y, x, scale);
    const tighter = x === undefined ? true : y === undefined ? false : keyword === "x-minimum" ? order > 0 : order < 0;
    change(keyword, tighter, `has ${keyword.slice(2)} ${show(y)} instead of ${show(x)}`);
  };
  bound("x-minimum");
  bound("x-maximum");
}

/** The state machine of `x-canon-transitions`: each value → the values it may change to; null without one. */
function transitionsOf(schema: JsonObject): Map<string, string[]> | null {
  const machine = schema["x-canon-transitions"];
  if (!isObject(machine)) return null;
  return new Map(Object.entries(machine).map(([from, to]) => [from, Array.isArray(to) ? to.filter((v): v is string => typeof v === "string") : []]));
}

/**
 * The state machine of an enum field (SPEC §12.5): a new machine refuses changes the published
 * version allowed (422), a break; so does a value that may no longer change to another (a value
 * that is not a key is final). A machine gone, or a change newly allowed, only accepts more.
 */
function compareTransitions(old: JsonObject, now: JsonObject, report: Report): void {
  const a = transitionsOf(old);
  const b = transitionsOf(now);
  if (!a && !b) return;
  const keyword = "x-canon-transitions";
  if (!a) {
    report({ kind: "transitions-added", breaking: true, keyword, detail: "has new transitions: a change of its value off them now answers 422" });
    return;
  }
  if (!b) {
    report({ kind: "transitions-removed", breaking: false, keyword, detail: "no longer has transitions: its value may change to any other" });
    return;
  }
  const values = [...new Set([...a.keys(), ...b.keys()])];
  for (const from of values) {
    const before = a.get(from) ?? [];
    const after = b.get(from) ?? [];
    const lost = before.filter((to) => !after.includes(to));
    const gained = after.filter((to) => !before.includes(to));
    if (lost.length) report({ kind: "transitions-narrowed", breaking: true, keyword, detail: `may no longer change from ${show(from)} to ${lost.map(show).join(", ")}` });
    if (gained.length) report({ kind: "transitions-widened", breaking: false, keyword, detail: `may now change from ${show(from)} to ${gained.map(show).join(", ")}` });
  }
}

/** The `$ref` of each member of a union, or null when one is not a bare reference. */
function refsOf(members: Json[]): string[] | null {
  const refs: string[] = [];
  for (const m of members) {
    if (!isObject(m) || typeof m.$ref !== "string" || Object.keys(m).length !== 1) return null;
    refs.push(m.$ref);
  }
  return new Set(refs).size === refs.length ? refs : null;
}

/**
 * Whether a published document names the collection of every id that must name a record
 * (`info.x-canon-references`); one written before canon named them names none, and its ids are
 * not compared (the gate warns, gate.ts).
 */
export function namesAllReferences(doc: JsonObject): boolean {
  return isObject(doc.info) && doc.info["x-canon-references"] === true;
}

/**
 * The keys an export's `sort` takes (`x-canon-sort-keys`, SPEC §12.1: exports honour the list's
 * sort): a key gone refuses (400) an export the published version took, a break; a key added
 * takes more. Said as the list's `sort` parameter says them (`sortKeyChanges`), so that a key
 * removed from both is one diagnostic. Compared only where both documents list them.
 */
function compareSortKeys(old: JsonObject, now: JsonObject, report: Report): void {
  const a = old["x-canon-sort-keys"];
  const b = now["x-canon-sort-keys"];
  if (!Array.isArray(a) || !Array.isArray(b)) return;
  // Keyword `enum`, as the list's: a key gone from both is one break.
  for (const c of sortKeyChanges(a.map(String), b.map(String))) report({ ...c, keyword: "enum" });
}

/** The sort keys (field names, without `-`) of `before` gone from `after` (breaking) and new in it; in their order. */
export function sortKeyChanges(before: string[], after: string[]): Array<{ kind: "enum-value-removed" | "enum-value-added"; breaking: boolean; sortKey: string; detail: string }> {
  return [
    ...before.filter((k) => !after.includes(k)).map((k) => ({ kind: "enum-value-removed" as const, breaking: true, sortKey: k, detail: `no longer takes the sort key ${JSON.stringify(k)}` })),
    ...after.filter((k) => !before.includes(k)).map((k) => ({ kind: "enum-value-added" as const, breaking: false, sortKey: k, detail: `takes the new sort key ${JSON.stringify(k)}` })),
  ];
}

/**
 * The collection an input id must name (`x-canon-references`, SPEC §12.3): one added or changed
 * answers 422 for ids the published version took, a break; one removed takes more.
 */
function compareReferences(old: JsonObject, now: JsonObject, report: Report): void {
  const a = typeof old["x-canon-references"] === "string" ? old["x-canon-references"] : undefined;
  const b = typeof now["x-canon-references"] === "string" ? now["x-canon-references"] : undefined;
  if (a === b) return;
  const keyword = "x-canon-references";
  if (b === undefined) report({ kind: "references-removed", breaking: false, keyword, detail: `no longer has to name a record of ${a}` });
  else if (a !== undefined) report({ kind: "references-changed", breaking: true, keyword, detail: `must name a record of ${b} instead of ${a}: an id of ${a} now answers 422` });
  else report({ kind: "references-added", breaking: true, keyword, detail: `must now name a record of ${b}: any other id answers 422` });
}

/**
 * What deleting the record an id names does to the record that holds it (`x-canon-on-delete`,
 * SPEC §12.3), compared on records: `restrict` → `cascade` deletes records a delete of the
 * published version refused to touch, `cascade` → `restrict` refuses (422) a delete it took; any
 * change breaks. Compared only where both documents say it (a document written before canon
 * named it says nothing).
 */
function compareOnDelete(old: JsonObject, now: JsonObject, report: Report): void {
  const a = old["x-canon-on-delete"];
  const b = now["x-canon-on-delete"];
  if (typeof a !== "string" || typeof b !== "string" || a === b) return;
  report({
    kind: "on-delete-changed",
    breaking: true,
    keyword: "x-canon-on-delete",
    detail: `is on_delete ${b} instead of ${a}: deleting the record it names now ${b === "cascade" ? "takes this record with it (from an array, the id), where it answered 422" : "answers 422, where it took this record with it (from an array, the id)"}`,
  });
}

/**
 * Whether a published document names the tenant field on its records too (`x-canon-tenant` on the
 * record schema, `info.x-canon-tenant-records`), so that a resource with no write body made
 * tenant-scoped is seen; in one written before, only write bodies are compared for it.
 */
function namesTenantOnRecords(doc: JsonObject): boolean {
  return isObject(doc.info) && doc.info["x-canon-tenant-records"] === true;
}

/**
 * Whether a published document lists the fields unique on their own in `x-canon-unique` (lists of
 * one, `info.x-canon-unique-fields`); in one written before, they are not compared.
 */
function listsUniqueFields(doc: JsonObject): boolean {
  return isObject(doc.info) && doc.info["x-canon-unique-fields"] === true;
}

/** The lists of `x-canon-unique`, each as its sorted fields (the order of a list does not matter); lists of one only with `singles`. */
function uniqueLists(schema: JsonObject, singles: boolean): Map<string, string[]> {
  const lists = Array.isArray(schema["x-canon-unique"]) ? schema["x-canon-unique"] : [];
  const out = new Map<string, string[]>();
  for (const list of lists) {
    if (!Array.isArray(list) || (list.length === 1 && !singles)) continue;
    const fields = list.filter((f): f is string => typeof f === "string");
    out.set(JSON.stringify([...fields].sort()), fields);
  }
  return out;
}

/**
 * Composite unique constraints of a write body (SPEC §12.3): a new list refuses (409) a write the
 * published version accepted, a break, unless it holds every field of a published list (two
 * records that repeat it repeat the published one, which was already refused: it only accepts
 * more); a list gone only accepts more.
 */
function compareUnique(old: JsonObject, now: JsonObject, singles: boolean, report: Report): void {
  const a = uniqueLists(old, singles);
  const b = uniqueLists(now, singles);
  const published = [...a.values()];
  const named = (fields: string[]) => (fields.length === 1 ? `unique field "${fields[0]}"` : `composite unique constraint [${fields.join(", ")}]`);
  const oldFields = isObject(old.properties) ? old.properties : {};
  const newFields = isObject(now.properties) ? now.properties : {};
  // A field the published body does not take, new here without a default: no write of the
  // published version sets it, and no stored row holds it, so a list with it refuses none of
  // them (a record with a list's field absent is held by nothing, runtime/unique.ts).
  const unsetByPublished = (field: string) => !Object.hasOwn(oldFields, field) && isObject(newFields[field]) && !Object.hasOwn(newFields[field], "default");
  for (const [key, fields] of b) {
    if (a.has(key)) continue;
    const wider = published.some((list) => list.every((field) => fields.includes(field)));
    const field = fields.length === 1 ? { uniqueField: fields[0]! } : {};
    const unset = !wider && fields.find(unsetByPublished);
    if (unset) {
      report({ kind: "unique-added", breaking: false, keyword: "x-canon-unique", ...field, detail: `has the new ${named(fields)}, which holds only records that have the new field "${unset}": it refuses no write that leaves it out` });
      continue;
    }
    report(
      wider
        ? { kind: "unique-widened", breaking: false, keyword: "x-canon-unique", ...field, detail: `has the composite unique constraint [${fields.join(", ")}], which holds a published one's fields and more: it refuses no write the version took` }
        : {
            kind: "unique-added",
            breaking: true,
            keyword: "x-canon-unique",
            ...field,
            detail: fields.length === 1 ? `has a new unique field "${fields[0]}": a write repeating its value now answers 409` : `has a new composite unique constraint [${fields.join(", ")}]: a write repeating those values now answers 409`,
          },
    );
  }
  for (const [key, fields] of a) {
    if (!b.has(key)) report({ kind: "unique-removed", breaking: false, keyword: "x-canon-unique", ...(fields.length === 1 ? { uniqueField: fields[0]! } : {}), detail: `no longer has the ${named(fields)}` });
  }
}

/**
 * Tenancy of a write body or a record (`x-canon-tenant`, SPEC §12.4): a resource made tenant-scoped refuses
 * (404, 403, 422) what the published version let a principal with a tenant do, a break; so does
 * a resource no longer tenant-scoped, or scoped by another field (what each tenant sees changes).
 */
function compareTenant(old: JsonObject, now: JsonObject, report: Report): void {
  const a = typeof old["x-canon-tenant"] === "string" ? old["x-canon-tenant"] : null;
  const b = typeof now["x-canon-tenant"] === "string" ? now["x-canon-tenant"] : null;
  if (a === b) return;
  const keyword = "x-canon-tenant";
  if (a === null) report({ kind: "tenant-added", breaking: true, keyword, detail: `is now tenant-scoped by ${show(b)}: a principal with a tenant sees and changes only its tenant's records` });
  else report({ kind: "tenant-removed", breaking: true, keyword, detail: b === null ? `is no longer tenant-scoped by ${show(a)}` : `is tenant-scoped by ${show(b)} instead of ${show(a)}` });
}

function compareObject(ctx: SchemaContext, old: JsonObject, now: JsonObject, here: Place, seen: Set<string>, report: Report): void {
  const input = ctx.direction === "input";
  // A map (`additionalProperties` a schema: its values) is another type than an object of fields.
  const oldMap = isObject(old.additionalProperties);
  const newMap = isObject(now.additionalProperties);
  if (oldMap !== newMap) {
    report({
      kind: "type-changed",
      breaking: true,
      keyword: "additionalProperties",
      detail: oldMap ? "changed type from a map to an object of fields" : "changed type from an object of fields to a map",
    });
    return;
  }
  if (oldMap && newMap) {
    const field = here.field ? `${here.field}.*` : "*";
    const schemaField = here.schema ? { ...here.schema, field: here.schema.field ? `${here.schema.field}.*` : "*" } : undefined;
    walk(ctx, old.additionalProperties, now.additionalProperties, { oldPointer: child(here.oldPointer, "additionalProperties"), newPointer: child(here.newPointer, "additionalProperties"), field, schema: schemaField }, seen);
  }
  const a = obj(old.properties);
  const b = obj(now.properties);
  const aReq = new Set(Array.isArray(old.required) ? old.required : []);
  const bReq = new Set(Array.isArray(now.required) ? now.required : []);
  const removed = Object.keys(a).filter((k) => !(k in b));
  const added = Object.keys(b).filter((k) => !(k in a));
  const join = (name: string) => (here.field ? `${here.field}.${name}` : name);
  const at = (name: string): Pick<Place, "field" | "schema"> => ({
    field: join(name),
    schema: here.schema ? { ...here.schema, field: here.schema.field ? `${here.schema.field}.${name}` : name } : undefined,
  });
  const fieldReport = (name: string, c: Omit<SchemaChange, "field" | "schema" | "subject" | "text">) =>
    ctx.report(worded({ ...c, ...at(name), subject: `field "${join(name)}"` }));

  // A property that disappeared while one with the same schema appeared was renamed.
  const renamed = new Map<string, string>();
  for (const r of removed) {
    const match = added.find((x) => ![...renamed.values()].includes(x) && aReq.has(r) === bReq.has(x) && identical(ctx.oldDoc, ctx.newDoc, a[r], b[x], ctx.memo));
    if (match !== undefined) renamed.set(r, match);
  }
  for (const r of removed) {
    const pointer = child(here.oldPointer, "properties", r);
    const to = renamed.get(r);
    if (to !== undefined) {
      fieldReport(r, { kind: "field-renamed", breaking: true, renamedTo: join(to), pointer, detail: `was renamed "${to}"` });
    } else {
      fieldReport(r, { kind: "field-removed", breaking: true, pointer, detail: "was removed" });
    }
  }
  for (const x of added) {
    if ([...renamed.values()].includes(x)) continue;
    const required = bReq.has(x);
    fieldReport(x, {
      kind: "field-added",
      breaking: input && required,
      pointer: child(here.newPointer, "properties", x),
      detail: input ? (required ? "is new and required" : "is new and optional") : required ? "is new" : "is new (optional)",
    });
  }
  for (const k of Object.keys(a)) {
    if (!(k in b)) continue;
    const pointer = child(here.oldPointer, "properties", k);
    if (aReq.has(k) !== bReq.has(k)) {
      const nowRequired = bReq.has(k);
      fieldReport(k, {
        kind: nowRequired ? "field-required" : "field-optional",
        breaking: input ? nowRequired : !nowRequired,
        keyword: "required",
        pointer,
        detail: input ? (nowRequired ? "is now required" : "is no longer required") : nowRequired ? "is now always present" : "may now be absent",
      });
    }
    walk(ctx, a[k], b[k], { oldPointer: pointer, newPointer: child(here.newPointer, "properties", k), ...at(k) }, seen);
  }
  if (input && old.additionalProperties !== false && now.additionalProperties === false) {
    report({ kind: "closed-object", breaking: true, keyword: "additionalProperties", detail: "no longer accepts other properties" });
  }
}
