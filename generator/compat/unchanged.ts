import { isDeepStrictEqual } from "node:util";
import { memoByText } from "../util/memo.ts";
import { pathKey } from "./operations.ts";
import type { Json, JsonObject } from "./types.ts";

/**
 * The published and the new document of one version without the paths that are the same in
 * both: a path whose text is equal in the two documents, and whose `$ref`s reach only
 * components whose text is equal too, cannot show a change, so the gate need not compare it.
 * In `canon dev` a save changes the paths of one resource; comparing every other path again
 * was most of the gate's time.
 *
 * Found on the text, as canon writes a document (`JSON.stringify(document, null, 2)`): a key at
 * depth d starts a line with 2d spaces. When anything is not as expected (another layout, a
 * `$ref` to something other than a component, references in a cycle, two paths that compare as
 * one operation key), the documents are returned whole.
 */
export function withoutUnchangedPaths(oldText: string, newText: string, oldDoc: JsonObject, newDoc: JsonObject): [JsonObject, JsonObject] {
  const whole: [JsonObject, JsonObject] = [oldDoc, newDoc];
  const same = samePathsByObject(oldDoc, newDoc) ?? samePathsByText(oldText, newText);
  if (!same || same.size === 0) return whole;
  const keep = (doc: JsonObject): JsonObject => {
    const paths = doc.paths as JsonObject;
    return { ...doc, paths: Object.fromEntries(Object.entries(paths).filter(([path]) => !same.has(path))) };
  };
  return [keep(oldDoc), keep(newDoc)];
}

/** The paths that are the same in both texts (see above); null when the texts are not in canon's layout. */
function samePathsByText(oldText: string, newText: string): Set<string> | null {
  const before = outline(oldText);
  const after = outline(newText);
  if (!before || !after) return null;
  // A component whose text changed (or that is in one document only) taints what reaches it.
  const changed = new Set<string>();
  for (const [pointer, text] of before.components) if (after.components.get(pointer)?.text !== text.text) changed.add(pointer);
  for (const pointer of after.components.keys()) if (!before.components.has(pointer)) changed.add(pointer);
  const tainted = taint(after.components, changed);
  if (!tainted) return null;
  const keyCount = operationKeyCount([...before.paths.keys(), ...after.paths.keys()]);
  const same = new Set<string>();
  for (const [path, text] of after.paths) {
    const old = before.paths.get(path);
    if (old === undefined || old !== text || keyCount.get(pathKey(path)) !== 1) continue;
    const refs = refsIn(text);
    if (refs === null || refs.some((r) => !after.components.has(r) || tainted.has(r))) continue;
    same.add(path);
  }
  return same;
}

/** How many of the distinct paths share each operation key. */
function operationKeyCount(paths: string[]): Map<string, number> {
  const count = new Map<string, number>();
  for (const path of new Set(paths)) count.set(pathKey(path), (count.get(pathKey(path)) ?? 0) + 1);
  return count;
}

/**
 * The paths that are the same in both documents, found by their objects: an operation or a
 * component that is the same object in both is the same (a `canon dev` session builds the parts
 * of unchanged resources once, see emit/openapi/document.ts). Null when the documents share no
 * object (then the texts are compared) or a reference is not to a component.
 */
function samePathsByObject(oldDoc: JsonObject, newDoc: JsonObject): Set<string> | null {
  const before = objectOutline(oldDoc);
  const after = objectOutline(newDoc);
  if (!before || !after) return null;
  let shared = false;
  const changed = new Set<string>();
  for (const [pointer, { value }] of before.components) {
    const now = after.components.get(pointer)?.value;
    if (now === value) shared = true;
    // Not the same object: the few built anew on every run (headers, error responses) and those of changed resources.
    else if (now === undefined || !isDeepStrictEqual(now, value)) changed.add(pointer);
  }
  for (const pointer of after.components.keys()) if (!before.components.has(pointer)) changed.add(pointer);
  const tainted = taint(after.components, changed);
  if (!tainted) return null;
  const keyCount = operationKeyCount([...before.paths.keys(), ...after.paths.keys()]);
  const same = new Set<string>();
  for (const [path, item] of after.paths) {
    const old = before.paths.get(path);
    if (old === undefined || keyCount.get(pathKey(path)) !== 1) continue;
    const methods = Object.keys(item);
    if (methods.length !== Object.keys(old).length || methods.some((m) => old[m] !== item[m])) continue;
    shared = true;
    const refs = methods.flatMap((m) => refsOfValue(item[m]!));
    if (refs.some((r) => r === null || !after.components.has(r) || tainted.has(r))) continue;
    same.add(path);
  }
  return shared ? same : null;
}

interface ObjectOutline {
  paths: Map<string, JsonObject>;
  components: Map<string, { value: Json; refs: string[] }>;
}

function objectOutline(doc: JsonObject): ObjectOutline | null {
  const paths = doc.paths;
  if (!isObject(paths)) return null;
  const out: ObjectOutline = { paths: new Map(), components: new Map() };
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) return null;
    out.paths.set(path, item);
  }
  const components = doc.components ?? {};
  if (!isObject(components)) return null;
  for (const [kind, named] of Object.entries(components)) {
    if (!isObject(named)) return null;
    for (const [name, value] of Object.entries(named)) {
      const refs = refsOfValue(value);
      if (refs.includes(null)) return null;
      out.components.set(`#/components/${escape(kind)}/${escape(name)}`, { value, refs: refs as string[] });
    }
  }
  return out;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `$ref` targets in an object, null for one that is not a component; remembered by the object. */
const objectRefs = new WeakMap<object, Array<string | null>>();

function refsOfValue(value: Json): Array<string | null> {
  if (typeof value !== "object" || value === null) return [];
  const known = objectRefs.get(value);
  if (known) return known;
  const refs: Array<string | null> = [];
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$ref" && typeof inner === "string") refs.push(/^#\/components\/[^/]+\/[^/]+$/.test(inner) ? inner : null);
    else refs.push(...refsOfValue(inner));
  }
  objectRefs.set(value, refs);
  return refs;
}

export interface Outline {
  /** The text of each path item, by path. */
  paths: Map<string, string>;
  /** The text of each component and the components it refers to, by JSON pointer. */
  components: Map<string, { text: string; refs: string[] }>;
}

/** A document's outline, remembered by its text: each save's new document is the next one's published one. */
export const outline = memoByText(outlineOf, 4);

function outlineOf(text: string): Outline | null {
  const top = children(text, 0, 2);
  const paths = top?.get("paths");
  const components = top?.get("components");
  if (!top || paths === undefined) return null;
  const pathItems = children(paths, 0, 4);
  if (!pathItems) return null;
  const out: Outline = { paths: pathItems, components: new Map() };
  if (components === undefined) return out;
  const kinds = children(components, 0, 4);
  if (!kinds) return null;
  for (const [kind, kindText] of kinds) {
    const named = children(kindText, 0, 6);
    if (!named) return null;
    for (const [name, itemText] of named) {
      const refs = refsIn(itemText);
      if (refs === null) return null;
      out.components.set(`#/components/${escape(kind)}/${escape(name)}`, { text: itemText, refs });
    }
  }
  return out;
}

/**
 * The members of the object that `text` holds from `from` on, whose keys sit at `indent`
 * spaces: the text of each from its key's line to the next one's. Null when there is no such
 * object or a key cannot be read.
 */
function children(text: string, from: number, indent: number): Map<string, string> | null {
  const keyLine = `\n${" ".repeat(indent)}"`;
  const close = `\n${" ".repeat(indent - 2)}}`;
  const end = text.indexOf(close, from);
  if (end < 0) return null;
  const members = new Map<string, string>();
  let at = text.indexOf(keyLine, from);
  while (at >= 0 && at < end) {
    const next = text.indexOf(keyLine, at + keyLine.length);
    const stop = next >= 0 && next < end ? next : end;
    const key = readKey(text, at + keyLine.length - 1);
    if (key === null) return null;
    members.set(key, text.slice(at, stop));
    at = next >= 0 && next < end ? next : -1;
  }
  return members;
}

const STRING = /"(?:[^"\\]|\\.)*"/y;

function readKey(text: string, at: number): string | null {
  STRING.lastIndex = at;
  const match = STRING.exec(text);
  return match ? (JSON.parse(match[0]) as string) : null;
}

const REF = /"\$ref": ("(?:[^"\\]|\\.)*")/g;

/** The `$ref` targets in a text; null when one is not a component. Remembered by the text. */
export const refsIn = memoByText(refsOf, 16_384);

function refsOf(text: string): string[] | null {
  if (!text.includes('"$ref"')) return [];
  const refs = [...text.matchAll(REF)].map((m) => (m[1]!.includes("\\") ? (JSON.parse(m[1]!) as string) : m[1]!.slice(1, -1)));
  return refs.every((r) => /^#\/components\/[^/]+\/[^/]+$/.test(r)) ? refs : null;
}

/** Components that are changed or reach a changed one; null when references form a cycle. */
function taint(components: ReadonlyMap<string, { refs: string[] }>, changed: Set<string>): Set<string> | null {
  const state = new Map<string, "active" | boolean>();
  let cyclic = false;
  const visit = (pointer: string): boolean => {
    const known = state.get(pointer);
    if (known === "active") {
      cyclic = true;
      return true;
    }
    if (known !== undefined) return known;
    state.set(pointer, "active");
    let result = changed.has(pointer) || !components.has(pointer);
    for (const ref of components.get(pointer)?.refs ?? []) if (visit(ref)) result = true;
    state.set(pointer, result);
    return result;
  };
  for (const pointer of components.keys()) visit(pointer);
  if (cyclic) return null;
  return new Set([...changed, ...[...state].filter(([, t]) => t === true).map(([p]) => p)]);
}

function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
