import { engineState } from "../engine.ts";
import type { Json, JsonObject } from "./types.ts";

/** Reading OpenAPI documents: `$ref` resolution and small accessors that never throw. */

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function obj(value: Json | undefined): JsonObject {
  return isObject(value) ? value : {};
}

/** A node with the JSON pointer where it sits, and the component it was reached through. */
export interface Located {
  node: JsonObject;
  pointer: string;
  /** Name of the last `#/components/schemas/<name>` followed, if any. */
  component?: string;
}

/** `#/a/b~1c` → the node, or undefined; remembered by the document in the run's engine. */
export function atPointer(doc: JsonObject, pointer: string): Json | undefined {
  const pointerCache = engineState("json pointers", () => new WeakMap<JsonObject, Map<string, Json | undefined>>());
  let cache = pointerCache.get(doc);
  if (!cache) pointerCache.set(doc, (cache = new Map()));
  if (cache.has(pointer)) return cache.get(pointer);
  const node = lookup(doc, pointer);
  cache.set(pointer, node);
  return node;
}

function lookup(doc: JsonObject, pointer: string): Json | undefined {
  if (!pointer.startsWith("#/")) return undefined;
  let node: Json | undefined = doc;
  for (const raw of pointer.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    node = isObject(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Follows `$ref`s (at most 20) from a node; keeps the pointer and component of the last target. */
export function resolve(doc: JsonObject, value: Json | undefined, pointer: string, component?: string): Located {
  let node = obj(value);
  let at = pointer;
  let name = component;
  for (let i = 0; i < 20 && typeof node.$ref === "string"; i++) {
    const target = node.$ref;
    const m = /^#\/components\/schemas\/([^/]+)$/.exec(target);
    if (m) name = m[1]!.replace(/~1/g, "/").replace(/~0/g, "~");
    at = target;
    node = obj(atPointer(doc, target));
  }
  return { node, pointer: at, component: name };
}

/** Appends one key to a JSON pointer. */
export function child(pointer: string, ...keys: Array<string | number>): string {
  let out = pointer;
  for (const k of keys) {
    const text = String(k);
    out += `/${text.includes("~") || text.includes("/") ? text.replace(/~/g, "~0").replace(/\//g, "~1") : text}`;
  }
  return out;
}

/** The non-null types a schema allows, sorted, and whether it allows null. */
export function typesOf(schema: JsonObject): { types: string[]; nullable: boolean } {
  const raw = Array.isArray(schema.type) ? schema.type : typeof schema.type === "string" ? [schema.type] : [];
  const names = raw.filter((t): t is string => typeof t === "string");
  const enumNull = Array.isArray(schema.enum) && schema.enum.includes(null);
  return { types: names.filter((t) => t !== "null").sort(), nullable: names.includes("null") || enumNull };
}

/** Exact structural equality of JSON values: enum members, defaults, examples. */
export function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

/**
 * What a value inside a JSON Schema is: a schema (its keywords are read as keywords), a map of
 * names to schemas (`properties`: its keys are field names, compared whatever they are), a list
 * of schemas (`oneOf`), or data (`enum`, `default`, `required`: compared exactly).
 */
type Role = "schema" | "names" | "schemas" | "data";

/** Keywords that only say something to a reader: a change to one never breaks a client. */
const ANNOTATIONS = new Set(["description", "summary", "title", "example", "examples", "$comment"]);
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
const SCHEMA_VALUED = new Set([
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "items",
  "additionalItems",
  "unevaluatedItems",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "contentSchema",
]);
const SCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf", "prefixItems"]);

/** The role of the value under `key` of a schema. */
function roleOf(key: string, value: Json): Role {
  if (NAME_MAPS.has(key)) return "names";
  if (SCHEMA_LISTS.has(key)) return "schemas";
  if (SCHEMA_VALUED.has(key)) return Array.isArray(value) ? "schemas" : "schema";
  return "data";
}

/**
 * Do two schemas (one per document) mean the same, following `$ref`s on both sides? Annotation
 * keywords of a schema (`description`, `example`, …) are ignored; everything else is compared,
 * and the keys of `properties` are names: a field called `description` is a field like any
 * other. Answers for referenced components are kept in `memo`, so each pair of components is
 * compared once per pair of documents.
 */
export function identical(oldDoc: JsonObject, newDoc: JsonObject, a: Json | undefined, b: Json | undefined, memo: Map<string, boolean>, role: Role = "schema"): boolean {
  if (role === "data") return sameJson(a, b);
  if (role === "schemas") {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => identical(oldDoc, newDoc, x, b[i], memo));
  }
  if (role === "names") {
    if (!isObject(a) || !isObject(b)) return sameJson(a, b);
    const names = Object.keys(a);
    if (names.length !== Object.keys(b).length) return false;
    return names.every((k) => Object.hasOwn(b, k) && identical(oldDoc, newDoc, a[k], b[k], memo));
  }
  const aRef = isObject(a) && typeof a.$ref === "string" ? a.$ref : undefined;
  const bRef = isObject(b) && typeof b.$ref === "string" ? b.$ref : undefined;
  if (aRef !== undefined || bRef !== undefined) {
    const key = `${aRef ?? ""}|${bRef ?? ""}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    memo.set(key, true); // a cycle compares as equal on its way back
    const answer = identical(oldDoc, newDoc, resolve(oldDoc, a, "#").node, resolve(newDoc, b, "#").node, memo);
    memo.set(key, answer);
    return answer;
  }
  // One object in both documents is not one content when `$ref`s in it reach components, which
  // each document resolves in its own: a published document takes the parts that did not change
  // from the new one (published.ts), `ExportCreate` among them, while a component it names
  // (`OrderExportCreate`) may have changed. So an object is walked like any other (its
  // references followed, each pair once: `memo`), which costs no more than two equal copies.
  if (a === b && (typeof a !== "object" || a === null)) return true;
  if (!isObject(a) || !isObject(b)) return sameJson(a, b);
  const ka = Object.keys(a).filter((k) => !ANNOTATIONS.has(k));
  const kb = Object.keys(b).filter((k) => !ANNOTATIONS.has(k));
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && !ANNOTATIONS.has(k) && identical(oldDoc, newDoc, a[k], b[k], memo, roleOf(k, a[k]!)));
}

/** Text of a value for messages. */
export function show(value: Json | undefined): string {
  return value === undefined ? "none" : JSON.stringify(value);
}
