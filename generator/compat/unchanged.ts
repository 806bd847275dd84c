import { memoByText } from "../util/memo.ts";
import { pathKey } from "./operations.ts";
import type { JsonObject } from "./types.ts";

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
  const before = outline(oldText);
  const after = outline(newText);
  if (!before || !after) return whole;
  // A component whose text changed (or that is in one document only) taints what reaches it.
  const changed = new Set<string>();
  for (const [pointer, text] of before.components) if (after.components.get(pointer)?.text !== text.text) changed.add(pointer);
  for (const pointer of after.components.keys()) if (!before.components.has(pointer)) changed.add(pointer);
  const tainted = taint(after.components, changed);
  if (!tainted) return whole;
  const keyCount = new Map<string, number>();
  for (const path of new Set([...before.paths.keys(), ...after.paths.keys()])) {
    keyCount.set(pathKey(path), (keyCount.get(pathKey(path)) ?? 0) + 1);
  }
  const same = new Set<string>();
  for (const [path, text] of after.paths) {
    const old = before.paths.get(path);
    if (old === undefined || old !== text || keyCount.get(pathKey(path)) !== 1) continue;
    const refs = refsIn(text);
    if (refs === null || refs.some((r) => !after.components.has(r) || tainted.has(r))) continue;
    same.add(path);
  }
  if (same.size === 0) return whole;
  const keep = (doc: JsonObject): JsonObject => {
    const paths = doc.paths as JsonObject;
    return { ...doc, paths: Object.fromEntries(Object.entries(paths).filter(([path]) => !same.has(path))) };
  };
  return [keep(oldDoc), keep(newDoc)];
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
function taint(components: Outline["components"], changed: Set<string>): Set<string> | null {
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
