import { operatorOf, pathKey } from "./paths.ts";
import { describeModes, paginationModes, paginationParameters } from "./pagination.ts";
import type { OperationMemo } from "./remembered.ts";
import { child, identical, obj, resolve } from "./resolve.ts";
import { compareSchemas, sortKeyChanges, worded, type Direction, type SchemaChange } from "./schema.ts";
import type { Change, Json, JsonObject, OperationRef, Part } from "./types.ts";

const methods = ["get", "put", "post", "patch", "delete", "head", "options", "trace"];
/** Headers of deprecation: they come and go with a version's deprecation, which is no break. */
const lifecycleHeaders = new Set(["deprecation", "sunset", "link"]);

export interface Endpoint {
  method: string;
  path: string;
  /** The path without its version prefix and with unnamed parameters: `/orders/{}`. */
  key: string;
  pointer: string;
  operation: JsonObject;
  ref: OperationRef;
}

export function endpoints(doc: JsonObject): Endpoint[] {
  const out: Endpoint[] = [];
  for (const [path, item] of Object.entries(obj(doc.paths))) {
    for (const method of methods) {
      const operation = obj(item)[method];
      if (operation === undefined) continue;
      const o = obj(operation);
      const operationId = typeof o.operationId === "string" ? o.operationId : `${method.toUpperCase()} ${path}`;
      out.push({ method, path, key: `${method} ${pathKey(path)}`, pointer: child("#/paths", path, method), operation: o, ref: { method, path, operationId } });
    }
  }
  return out;
}

/**
 * The field a list under a referenced record is made by: its `x-canon-list-under`
 * (openapi/operations.ts), or, in a document written before the key, the field its description
 * names; undefined for any other operation.
 */
function listUnderNamed(e: Endpoint): string | undefined {
  if (e.method !== "get") return undefined;
  const named = e.operation["x-canon-list-under"];
  if (typeof named === "string") return named;
  if (typeof e.operation.description !== "string") return undefined;
  return /^The [^`]* whose `([a-z][a-z0-9_]*)` is this /.exec(e.operation.description)?.[1];
}

/** Is this the path of an action: a POST to `/<collection>/{id}/<action>`? */
function isActionPath(e: Endpoint): boolean {
  return e.method === "post" && /\/\{\}\/[^/{}]+$/.test(pathKey(e.path));
}

/**
 * Operations removed and added, and the changes of every operation in both documents. With a
 * memo (remembered.ts), the changes of the operations at a path it remembers are taken from it.
 */
export function compareOperations(oldDoc: JsonObject, newDoc: JsonObject, remembered: OperationMemo | null = null): Change[] {
  const out: Change[] = [];
  const slot = (name: string, key: string, find: () => Change[]) => {
    const known = remembered?.changes(name, key);
    if (known) return out.push(...known);
    const found = find();
    remembered?.found(name, key, found);
    out.push(...found);
  };
  const pathOf = (key: string) => key.slice(key.indexOf(" ") + 1);
  const memo = new Map<string, boolean>();
  const components = new Map<string, SchemaChange[]>();
  const before = endpoints(oldDoc);
  const after = endpoints(newDoc);
  const byKey = new Map(after.map((e) => [e.key, e]));
  const oldKeys = new Set(before.map((e) => e.key));
  const newPaths = new Set(after.map((e) => pathKey(e.path)));
  for (const e of before) {
    slot(`before ${e.key}`, pathOf(e.key), () => {
      const match = byKey.get(e.key);
      if (match) return compareOperation(oldDoc, newDoc, e, match, memo, components);
      const pathGone = !newPaths.has(pathKey(e.path));
      const kind = !pathGone ? "operation-removed" : isActionPath(e) ? "action-removed" : "path-removed";
      const subject = kind === "operation-removed" ? `${e.method.toUpperCase()} ${e.path}` : kind === "action-removed" ? `the action ${e.path}` : `the path ${e.path}`;
      const under = listUnderNamed(e);
      return [worded({ kind, breaking: true, operation: e.ref, part: { in: "operation" }, field: "", pointer: e.pointer, subject, detail: "was removed", ...(under ? { listUnderField: under } : {}) })];
    });
  }
  for (const e of after) {
    if (oldKeys.has(e.key)) continue;
    slot(`after ${e.key}`, pathOf(e.key), () => {
      const subject = `${e.method.toUpperCase()} ${e.path}`;
      return [worded({ kind: "operation-added", breaking: false, operation: e.ref, part: { in: "operation" }, field: "", pointer: e.pointer, subject, detail: "is new" })];
    });
  }
  remembered?.finish();
  return out;
}

function compareOperation(
  oldDoc: JsonObject,
  newDoc: JsonObject,
  a: Endpoint,
  b: Endpoint,
  memo: Map<string, boolean>,
  components: Map<string, SchemaChange[]>,
): Change[] {
  const out: Change[] = [];
  const add: Add = (part, c) => out.push(worded({ ...c, operation: b.ref, part }));
  const schemas: Schemas = (part, direction, x, y, px, py) =>
    compareSchemas({ oldDoc, newDoc, memo, components, direction, root: rootOf(part), report: (c) => add(part, c) }, x, y, px, py);

  if (a.operation.deprecated !== true && b.operation.deprecated === true) {
    add({ in: "operation" }, { kind: "operation-deprecated", breaking: false, field: "", pointer: b.pointer, subject: "the operation", detail: "is deprecated" });
  }
  // The same list path made by another field's list_under answers other records (SPEC §12.3).
  const underA = listUnderNamed(a);
  const underB = listUnderNamed(b);
  if (underA !== undefined && underB !== undefined && underA !== underB)
    add({ in: "operation" }, { kind: "list-under-changed", breaking: true, field: "", pointer: b.pointer, subject: `the list ${b.path}`, detail: `holds the records whose "${underB}" names the record, no longer those whose "${underA}" does`, listUnderField: underA });
  compareRequires(a, b, add);
  compareSets(newDoc, a, b, add);
  const pagination = comparePagination(oldDoc, newDoc, a, b);
  if (pagination) add({ in: "response", status: "200" }, pagination);
  compareParameters(oldDoc, newDoc, a, b, pagination !== null, add, schemas);
  if (!pagination) compareSortOrder(oldDoc, newDoc, a, b, add);
  compareRequestBody(oldDoc, newDoc, a, b, add, schemas);
  compareResponses(oldDoc, newDoc, a, b, pagination !== null, add, schemas);
  return out;
}

/**
 * What an action requires of its record (SPEC §12.5): a value of a field no longer listed (or a
 * field newly required) refuses an action the published version took, a break; a value newly
 * listed or a requirement gone only accepts more.
 */
function compareRequires(a: Endpoint, b: Endpoint, add: Add): void {
  const listed = (e: Endpoint) => new Map(Object.entries(obj(e.operation["x-canon-requires"])).map(([f, v]) => [f, Array.isArray(v) ? v : []]));
  const before = listed(a);
  const after = listed(b);
  const change = (kind: "requires-added" | "requires-removed", field: string, detail: string) =>
    add({ in: "operation" }, { kind, breaking: kind === "requires-added", field: "", keyword: "x-canon-requires", pointer: child(b.pointer, "x-canon-requires"), subject: "the action", detail: `${detail} of ${JSON.stringify(field)}` });
  for (const [field, values] of after) {
    const was = before.get(field);
    const newly = was === undefined ? values : was.filter((v) => !values.some((x) => JSON.stringify(x) === JSON.stringify(v)));
    if (was === undefined) change("requires-added", field, `now requires ${values.map((v) => JSON.stringify(v)).join(", ")}`);
    else if (newly.length) change("requires-added", field, `no longer takes ${newly.map((v) => JSON.stringify(v)).join(", ")}`);
    else if (values.length > was.length) change("requires-removed", field, "takes more values");
  }
  for (const field of before.keys()) if (!after.has(field)) change("requires-removed", field, "no longer requires values");
}

/**
 * What an action sets on its record (SPEC §12.5): a field newly set whose record field has a
 * state machine (`x-canon-transitions`) refuses the action where the record's value may not move
 * to it (422), where the published version took it: a break, like a new `requires`. On a field
 * without a machine it refuses nothing new. A set removed (or dated later with `rules_added`)
 * breaks too: the published action no longer changes the record as its document says (a client's
 * cancellation that no longer cancels); so does a set changed to another value or another `from`,
 * machine or not (an escalation that made the ticket `urgent` now makes it `high`).
 */
function compareSets(newDoc: JsonObject, a: Endpoint, b: Endpoint, add: Add): void {
  const sets = (e: Endpoint) => new Map(Object.entries(obj(e.operation["x-canon-sets"])).map(([f, v]) => [f, JSON.stringify(v)]));
  const before = sets(a);
  const after = sets(b);
  const change = (kind: "sets-added" | "sets-changed" | "sets-removed", breaking: boolean, detail: string) =>
    add({ in: "operation" }, { kind, breaking, field: "", keyword: "x-canon-sets", pointer: child(b.pointer, "x-canon-sets"), subject: "the action", detail });
  for (const [field, value] of after) {
    const was = before.get(field);
    if (was === value) continue;
    const machine = transitionsOf(newDoc, b, field);
    const refused = machine ? ", which its transitions may refuse" : "";
    if (was === undefined) change("sets-added", machine, `now sets ${JSON.stringify(field)} (${value})${refused}`);
    else change("sets-changed", true, `sets ${JSON.stringify(field)} to ${value} where the published action set ${was}${refused}`);
  }
  for (const field of before.keys()) if (!after.has(field)) change("sets-removed", true, `no longer sets ${JSON.stringify(field)}: the record keeps its value where the published action changed it`);
}

/** Whether the record an action acts on (`GET` of the path above the action's) has a state machine on `field`. */
function transitionsOf(doc: JsonObject, action: Endpoint, field: string): boolean {
  const recordPath = action.path.slice(0, action.path.lastIndexOf("/"));
  const read = obj(obj(obj(doc.paths)[recordPath]).get);
  const schema = obj(obj(obj(obj(obj(read.responses)["200"]).content)["application/json"]).schema);
  const record = resolve(doc, schema, "").node;
  const property = resolve(doc, obj(record.properties)[field], "").node;
  return property["x-canon-transitions"] !== undefined;
}

type Raw = Omit<SchemaChange, "text">;
type Add = (part: Part, c: Raw) => void;

function rootOf(part: Part): string {
  return part.in === "parameter" ? `${part.location} parameter "${part.name}"` : part.in === "request" ? "the request body" : "the response body";
}
type Schemas = (part: Part, direction: Direction, x: Json | undefined, y: Json | undefined, px: string, py: string) => void;

function listSchema(doc: JsonObject, e: Endpoint): Json | undefined {
  if (e.method !== "get") return undefined;
  const response = resolve(doc, obj(e.operation.responses)["200"], child(e.pointer, "responses", "200")).node;
  return obj(obj(response.content)["application/json"]).schema;
}

/**
 * A list sorts an enum in the order of its values (SPEC §12.1): values of a sort key's enum put
 * in another order reorder the records of a published list, and move a client's saved cursor.
 * Values only added or removed keep the others' order (and are reported as enum changes).
 */
function compareSortOrder(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint, add: Add): void {
  const before = sortKeys(oldDoc, a);
  const after = sortKeys(newDoc, b);
  if (!before || !after) return;
  for (const key of before.keys) {
    if (!after.keys.has(key)) continue;
    const was = itemEnum(oldDoc, a, key);
    const now = itemEnum(newDoc, b, key);
    if (!was || !now) continue;
    const kept = was.filter((v) => now.includes(v));
    const order = now.filter((v) => kept.includes(v));
    if (kept.every((v, i) => v === order[i])) continue;
    add(
      { in: "parameter", location: "query", name: "sort" },
      {
        kind: "sort-order-changed",
        breaking: true,
        field: "",
        sortKey: key,
        keyword: "enum",
        pointer: after.pointer,
        subject: 'query parameter "sort"',
        detail: `sorts ${JSON.stringify(key)} in another order: ${order.map((v) => JSON.stringify(v)).join(" < ")} instead of ${kept.map((v) => JSON.stringify(v)).join(" < ")}`,
      },
    );
  }
}

/** The keys the `sort` parameter of a list names (without `-`), and where it is. */
function sortKeys(doc: JsonObject, e: Endpoint): { keys: Set<string>; pointer: string } | null {
  if (e.method !== "get") return null;
  for (const p of parameters(doc, e).values()) {
    if (p.location !== "query" || p.name !== "sort") continue;
    const items = resolve(doc, resolve(doc, p.node.schema, "#").node.items, "#").node;
    const values = Array.isArray(items.enum) ? items.enum.filter((v): v is string => typeof v === "string") : [];
    return { keys: new Set(values.filter((v) => !v.startsWith("-"))), pointer: p.pointer };
  }
  return null;
}

/**
 * A list's `sort` parameter: its keys renamed (with their fields), gone and new, one change per
 * key (not one per value: `genre` and `-genre`), as an export's `sort` says them
 * (`sortKeyChanges`); the rest of its schema (how many keys) compared as any parameter's.
 */
function compareSort(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint, p: Parameter, match: Parameter, part: Part, label: string, add: Add, schemas: Schemas): void {
  const renames = renamedSortKeys(oldDoc, newDoc, a, b);
  for (const [from, to] of renames) {
    add(part, { kind: "sort-key-renamed", breaking: true, field: "", keyword: "enum", sortKey: from, renamedTo: to, pointer: p.pointer, subject: label, detail: `takes "${to}" where it took "${from}" (its field was renamed)` });
  }
  const before = sortKeys(oldDoc, a);
  const after = sortKeys(newDoc, b);
  let schema: Json | undefined = p.node.schema;
  if (before && after) {
    const renamed = [...before.keys].map((k) => renames.get(k) ?? k);
    for (const c of sortKeyChanges(renamed, [...after.keys])) add(part, { ...c, field: "", keyword: "enum", pointer: c.breaking ? p.pointer : match.pointer, subject: label });
    // The values compared: the new ones, where the keys are all that changed.
    schema = withEnum(schema, sortValues(newDoc, match));
  }
  schemas(part, "input", schema, match.node.schema, child(p.pointer, "schema"), child(match.pointer, "schema"));
}

/** The values of a `sort` parameter's items (`name`, `-name`, …). */
function sortValues(doc: JsonObject, p: Parameter): Json[] {
  const items = resolve(doc, resolve(doc, p.node.schema, "#").node.items, "#").node;
  return Array.isArray(items.enum) ? items.enum : [];
}

/** A `sort` parameter's schema with `values` as its items' enum. */
function withEnum(schema: Json | undefined, values: Json[]): Json | undefined {
  const node = obj(schema);
  const items = obj(node.items);
  if (!Array.isArray(items.enum)) return schema;
  return { ...node, items: { ...items, enum: values } };
}

/**
 * Sort keys that left a list's `sort` while one came whose field is the same as the one that left
 * (a field renamed, found as schema.ts finds it: a property of the same schema in its place). Old
 * name to new.
 */
function renamedSortKeys(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint): Map<string, string> {
  const before = sortKeys(oldDoc, a);
  const after = sortKeys(newDoc, b);
  const renames = new Map<string, string>();
  if (!before || !after) return renames;
  const gone = [...before.keys].filter((k) => !after.keys.has(k) && itemProperty(newDoc, b, k) === undefined);
  const fresh = [...after.keys].filter((k) => !before.keys.has(k) && itemProperty(oldDoc, a, k) === undefined);
  const memo = new Map<string, boolean>();
  for (const key of gone) {
    const was = itemProperty(oldDoc, a, key);
    const match = fresh.find((k) => ![...renames.values()].includes(k) && was !== undefined && identical(oldDoc, newDoc, was, itemProperty(newDoc, b, k), memo));
    if (match) renames.set(key, match);
  }
  return renames;
}

/** The schema of a field of a list's items, if the list's items have it. */
function itemProperty(doc: JsonObject, e: Endpoint, field: string): Json | undefined {
  const page = resolve(doc, listSchema(doc, e), "#").node;
  const items = resolve(doc, obj(resolve(doc, obj(page.properties).data, "#").node).items, "#").node;
  return obj(items.properties)[field];
}

/** The enum values of a field of a list's items, in their order (null aside), if it is an enum. */
function itemEnum(doc: JsonObject, e: Endpoint, field: string): Json[] | null {
  const page = resolve(doc, listSchema(doc, e), "#").node;
  const items = resolve(doc, obj(resolve(doc, obj(page.properties).data, "#").node).items, "#").node;
  const property = resolve(doc, obj(items.properties)[field], "#").node;
  const variants = Array.isArray(property.anyOf) ? property.anyOf : Array.isArray(property.oneOf) ? property.oneOf : [property];
  for (const variant of variants) {
    const node = resolve(doc, variant, "#").node;
    if (Array.isArray(node.enum)) return node.enum.filter((v) => v !== null);
  }
  return null;
}

function comparePagination(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint): Raw | null {
  const before = paginationModes(oldDoc, listSchema(oldDoc, a));
  const after = paginationModes(newDoc, listSchema(newDoc, b));
  if (before === after || before === "" || after === "") return null;
  return {
    kind: "pagination-changed",
    breaking: true,
    field: "",
    pointer: child(a.pointer, "responses", "200"),
    subject: "the pagination",
    detail: `changed from ${describeModes(before)} to ${describeModes(after)}`,
  };
}

interface Parameter {
  node: JsonObject;
  pointer: string;
  location: string;
  name: string;
}

/** Parameters by place and name; path parameters by position, as their names do not matter to a client. */
function parameters(doc: JsonObject, e: Endpoint): Map<string, Parameter> {
  const list = Array.isArray(e.operation.parameters) ? e.operation.parameters : [];
  const slots: string[] = e.path.match(/\{[^}]*\}/g) ?? [];
  const out = new Map<string, Parameter>();
  list.forEach((p, i) => {
    const r = resolve(doc, p, child(e.pointer, "parameters", i));
    const location = String(r.node.in);
    const name = String(r.node.name);
    const key = location === "path" ? `path:#${slots.indexOf(`{${name}}`)}` : `${location}:${name}`;
    out.set(key, { ...r, location, name });
  });
  return out;
}

function compareParameters(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint, paginationChanged: boolean, add: Add, schemas: Schemas): void {
  const before = parameters(oldDoc, a);
  const after = parameters(newDoc, b);
  const skip = (key: string) => paginationChanged && paginationParameters.has(key);
  const renamed = renamedParameters(oldDoc, newDoc, before, after);
  for (const [key, p] of before) {
    const part: Part = { in: "parameter", location: p.location, name: p.name };
    const label = `${p.location} parameter "${p.name}"`;
    const match = after.get(key);
    if (!match) {
      const to = renamed.get(key);
      if (to) add(part, { kind: "parameter-renamed", breaking: true, field: "", renamedTo: to.name, pointer: p.pointer, subject: label, detail: `was renamed "${to.name}"` });
      else if (!skip(key)) add(part, { kind: "parameter-removed", breaking: true, field: "", pointer: p.pointer, subject: label, detail: "was removed" });
      continue;
    }
    if (p.node.required !== true && match.node.required === true) {
      add(part, { kind: "parameter-required", breaking: true, field: "", keyword: "required", pointer: p.pointer, subject: label, detail: "is now required" });
    }
    if (skip(key)) continue;
    if (key === "query:sort") {
      compareSort(oldDoc, newDoc, a, b, p, match, part, label, add, schemas);
      continue;
    }
    schemas(part, "input", p.node.schema, match.node.schema, child(p.pointer, "schema"), child(match.pointer, "schema"));
  }
  const renamedTo = new Set([...renamed.values()]);
  for (const [key, p] of after) {
    if (before.has(key) || skip(key) || renamedTo.has(p)) continue;
    const required = p.node.required === true;
    add(
      { in: "parameter", location: p.location, name: p.name },
      { kind: "parameter-added", breaking: required, field: "", pointer: p.pointer, subject: `${p.location} parameter "${p.name}"`, detail: `is new and ${required ? "required" : "optional"}` },
    );
  }
}

/**
 * Query parameters that disappeared while one appeared with the same operator, the same schema and
 * the same `required`: a filter (`status`, `status[in]`) whose field was renamed, as a property
 * that disappeared while one with the same schema appeared was (schema.ts). By the old key.
 */
function renamedParameters(oldDoc: JsonObject, newDoc: JsonObject, before: Map<string, Parameter>, after: Map<string, Parameter>): Map<string, Parameter> {
  const gone = [...before].filter(([key, p]) => p.location === "query" && !after.has(key));
  const fresh = [...after].filter(([key, p]) => p.location === "query" && !before.has(key)).map(([, p]) => p);
  const renamed = new Map<string, Parameter>();
  const memo = new Map<string, boolean>();
  for (const [key, p] of gone) {
    const match = fresh.find(
      (x) =>
        ![...renamed.values()].includes(x) &&
        operatorOf(x.name) === operatorOf(p.name) &&
        (x.node.required === true) === (p.node.required === true) &&
        identical(oldDoc, newDoc, p.node.schema, x.node.schema, memo),
    );
    if (match) renamed.set(key, match);
  }
  return renamed;
}

function compareRequestBody(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint, add: Add, schemas: Schemas): void {
  const part: Part = { in: "request" };
  const x = a.operation.requestBody === undefined ? null : resolve(oldDoc, a.operation.requestBody, child(a.pointer, "requestBody"));
  const y = b.operation.requestBody === undefined ? null : resolve(newDoc, b.operation.requestBody, child(b.pointer, "requestBody"));
  if (!x && !y) return;
  if (!x) {
    const required = y!.node.required === true;
    add(part, { kind: "request-body-added", breaking: required, field: "", pointer: y!.pointer, subject: "a request body", detail: `is ${required ? "required" : "accepted"}` });
    return;
  }
  if (!y) {
    add(part, { kind: "request-body-removed", breaking: true, field: "", pointer: x.pointer, subject: "the request body", detail: "is no longer accepted" });
    return;
  }
  if (x.node.required !== true && y.node.required === true) {
    add(part, { kind: "request-body-required", breaking: true, field: "", pointer: x.pointer, subject: "the request body", detail: "is now required" });
  }
  compareContent(add, schemas, part, "input", x, y);
}

function compareContent(add: Add, schemas: Schemas, part: Part, direction: Direction, x: { node: JsonObject; pointer: string }, y: { node: JsonObject; pointer: string }): void {
  const before = obj(x.node.content);
  const after = obj(y.node.content);
  for (const [media, value] of Object.entries(before)) {
    const pointer = child(x.pointer, "content", media);
    if (!(media in after)) {
      add(part, { kind: "media-type-removed", breaking: true, field: "", pointer, subject: media, detail: `is no longer ${direction === "input" ? "accepted" : "answered"}` });
      continue;
    }
    schemas(part, direction, obj(value).schema, obj(after[media]).schema, child(pointer, "schema"), child(y.pointer, "content", media, "schema"));
  }
}

function compareResponses(oldDoc: JsonObject, newDoc: JsonObject, a: Endpoint, b: Endpoint, paginationChanged: boolean, add: Add, schemas: Schemas): void {
  const before = obj(a.operation.responses);
  const after = obj(b.operation.responses);
  for (const [status, value] of Object.entries(before)) {
    const part: Part = { in: "response", status };
    const x = resolve(oldDoc, value, child(a.pointer, "responses", status));
    if (!(status in after)) {
      add(part, { kind: "status-removed", breaking: true, field: "", pointer: x.pointer, subject: `status ${status}`, detail: "is no longer answered" });
      continue;
    }
    const y = resolve(newDoc, after[status], child(b.pointer, "responses", status));
    compareHeaders(add, part, x, y);
    const hadBody = Object.keys(obj(x.node.content)).length > 0;
    const hasBody = Object.keys(obj(y.node.content)).length > 0;
    if (hadBody && !hasBody) {
      add(part, { kind: "response-body-removed", breaking: true, field: "", pointer: x.pointer, subject: `status ${status}`, detail: "no longer has a body" });
      continue;
    }
    if (paginationChanged && status === "200") continue;
    compareContent(add, schemas, part, "output", x, y);
  }
  for (const status of Object.keys(after)) {
    if (status in before) continue;
    add({ in: "response", status }, { kind: "status-added", breaking: false, field: "", pointer: child(b.pointer, "responses", status), subject: `status ${status}`, detail: "is new" });
  }
}

function compareHeaders(add: Add, part: Part, x: { node: JsonObject; pointer: string }, y: { node: JsonObject; pointer: string }): void {
  const names = (h: JsonObject) => Object.keys(obj(h.headers)).filter((n) => !lifecycleHeaders.has(n.toLowerCase()));
  const before = names(x.node);
  const after = new Set(names(y.node));
  for (const n of before) {
    if (!after.has(n)) add(part, { kind: "header-removed", breaking: true, field: "", pointer: child(x.pointer, "headers", n), subject: `header ${n}`, detail: "is no longer sent" });
  }
  const had = new Set(before);
  for (const n of after) {
    if (!had.has(n)) add(part, { kind: "header-added", breaking: false, field: "", pointer: child(y.pointer, "headers", n), subject: `header ${n}`, detail: "is new" });
  }
}
