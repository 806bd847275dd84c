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

/** `#/a/b~1c` → the node, or undefined. */
const pointerCache = new WeakMap<JsonObject, Map<string, Json | undefined>>();

export function atPointer(doc: JsonObject, pointer: string): Json | undefined {
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

/** Structural equality of JSON values, ignoring `description`, `summary` and `example`. */
export function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = (o: JsonObject) => Object.keys(o).filter((k) => !ignored.has(k)).sort();
  const ka = keys(a);
  const kb = keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameJson(a[k], b[k]));
}

const ignored = new Set(["description", "summary", "example", "examples"]);

/**
 * Do two schemas (one per document) mean the same, following `$ref`s on both sides? Words are
 * ignored. Answers for referenced components are kept in `memo`, so each pair of components is
 * compared once per pair of documents.
 */
export function identical(oldDoc: JsonObject, newDoc: JsonObject, a: Json | undefined, b: Json | undefined, memo: Map<string, boolean>): boolean {
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
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => identical(oldDoc, newDoc, x, b[i], memo));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => !ignored.has(k));
  const kb = Object.keys(b).filter((k) => !ignored.has(k));
  if (ka.length !== kb.length) return false;
  return ka.every((k) => k in b && !ignored.has(k) && identical(oldDoc, newDoc, a[k], b[k], memo));
}

/** Text of a value for messages. */
export function show(value: Json | undefined): string {
  return value === undefined ? "none" : JSON.stringify(value);
}
