import { TextMemo } from "../util/memo.ts";
import { pathKey } from "./operations.ts";
import type { Json, JsonObject } from "./types.ts";

/**
 * A document's parts as the comparisons that skip or remember work see them: its path items and
 * its components, each with a number that stands for its content. Equal contents get equal
 * numbers; a number is computed once per object (by its compact JSON text), so a part that stays
 * the same object from one run to the next, as in a `canon dev` session (model/intern.ts,
 * emit/openapi/document.ts), costs nothing to number again.
 */
export interface DocumentParts {
  /** Each path item, by path. */
  paths: Map<string, JsonObject>;
  /** The path of each operation key (`/orders/{}`), when only one path of the document has it. */
  keyed: Map<string, string>;
  /** Each component's content number and the components it refers to, by JSON pointer. */
  components: Map<string, { id: number; refs: string[] }>;
  /**
   * A text that stands for a path item with every component it reaches (equal for two path
   * items that compare the same against anything); null when a reference is not to a component,
   * reaches a missing one, or references form a cycle.
   */
  deepOf(path: string): string | null;
}

const partsOf = new WeakMap<JsonObject, DocumentParts | null>();

/** The parts of a document (remembered by the document); null when a reference is not to a component. */
export function documentParts(doc: JsonObject): DocumentParts | null {
  if (partsOf.has(doc)) return partsOf.get(doc)!;
  const parts = collect(doc);
  partsOf.set(doc, parts);
  return parts;
}

function collect(doc: JsonObject): DocumentParts | null {
  const paths = new Map<string, JsonObject>();
  for (const [path, item] of Object.entries(objectOr(doc.paths) ?? {})) {
    const value = objectOr(item);
    if (!value) return null;
    paths.set(path, value);
  }
  const keyed = new Map<string, string>();
  const shared = new Set<string>();
  for (const path of paths.keys()) {
    const key = pathKey(path);
    if (keyed.has(key)) shared.add(key);
    keyed.set(key, path);
  }
  for (const key of shared) keyed.delete(key);
  const components = new Map<string, { id: number; refs: string[] }>();
  for (const [kind, named] of Object.entries(objectOr(doc.components) ?? {})) {
    for (const [name, value] of Object.entries(objectOr(named) ?? {})) {
      const refs = componentRefs(value);
      if (!refs) return null;
      components.set(`#/components/${escape(kind)}/${escape(name)}`, { id: contentId(value), refs });
    }
  }
  const deep = new Map<string, number | null>();
  const deepPaths = new Map<string, string | null>();
  const active = new Set<string>();
  const deepOfRefs = (own: string, refs: string[]): number | null => {
    const parts: Array<string | number> = [own];
    for (const ref of refs) {
      const reached = component(ref);
      if (reached === null) return null;
      parts.push(ref, reached);
    }
    return idOf(JSON.stringify(parts));
  };
  const component = (pointer: string): number | null => {
    if (deep.has(pointer)) return deep.get(pointer)!;
    const found = components.get(pointer);
    if (!found || active.has(pointer)) return null;
    active.add(pointer);
    const id = deepOfRefs(String(found.id), found.refs);
    active.delete(pointer);
    deep.set(pointer, id);
    return id;
  };
  return {
    paths,
    keyed,
    components,
    deepOf(path) {
      if (deepPaths.has(path)) return deepPaths.get(path)!;
      const item = paths.get(path);
      if (!item) return null;
      const refs: string[] = [];
      const own: string[] = [];
      for (const [method, operation] of Object.entries(item)) {
        const found = componentRefs(operation);
        if (!found) return null;
        refs.push(...found);
        own.push(`${method}:${contentId(operation)}`);
      }
      const id = deepOfRefs(own.join(" "), refs);
      const text = id === null ? null : `${path}\n${id}`;
      deepPaths.set(path, text);
      return text;
    },
  };
}

/**
 * A number for the content of a JSON value: equal for equal contents while both are
 * remembered, and never given to another content (a forgotten one gets a new number).
 */
export function contentId(value: Json): number {
  if (typeof value !== "object" || value === null) return idOf(JSON.stringify(value));
  let id = idsByObject.get(value);
  if (id === undefined) idsByObject.set(value, (id = idOf(JSON.stringify(value))));
  return id;
}

const idsByObject = new WeakMap<object, number>();
let nextId = 0;
const ids = new TextMemo<number>(65_536);

function idOf(text: string): number {
  return ids.get(text, () => nextId++);
}

/** The `$ref` targets in a value; null when one is not a component. Remembered by the object. */
function componentRefs(value: Json): string[] | null {
  if (typeof value !== "object" || value === null) return [];
  if (refsByObject.has(value)) return refsByObject.get(value)!;
  let refs: string[] | null = [];
  for (const [key, inner] of Object.entries(value)) {
    const found: string[] | null =
      key === "$ref" && typeof inner === "string" ? (COMPONENT.test(inner) ? [inner] : null) : componentRefs(inner);
    if (found === null) {
      refs = null;
      break;
    }
    refs.push(...found);
  }
  refsByObject.set(value, refs);
  return refs;
}

const refsByObject = new WeakMap<object, string[] | null>();
const COMPONENT = /^#\/components\/[^/]+\/[^/]+$/;

function objectOr(value: Json | undefined): JsonObject | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : null;
}

function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
