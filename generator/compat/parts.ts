import { createHash } from "node:crypto";
import { compareText } from "../diagnostics/diagnostic.ts";
import { engineState } from "../engine.ts";
import { pathKey } from "./paths.ts";
import type { Json, JsonObject } from "./types.ts";

/**
 * A document's parts as the comparisons that skip or remember work see them: its path items and
 * its components, by path and by JSON pointer.
 */
export interface DocumentParts {
  /** Each path item, by path. */
  paths: Map<string, JsonObject>;
  /** The path of each operation key (`/orders/{}`), when only one path of the document has it. */
  keyed: Map<string, string>;
  /** Each component, by JSON pointer (`#/components/schemas/Order`). */
  components: Map<string, Json>;
}

/** The parts of a document, remembered by the document (in the run's engine, engine.ts). */
export function documentParts(doc: JsonObject): DocumentParts {
  const partsOf = engineState("document parts", () => new WeakMap<JsonObject, DocumentParts>());
  let parts = partsOf.get(doc);
  if (!parts) partsOf.set(doc, (parts = collect(doc)));
  return parts;
}

function collect(doc: JsonObject): DocumentParts {
  const paths = new Map<string, JsonObject>();
  for (const [path, item] of Object.entries(objectOr(doc.paths) ?? {})) paths.set(path, objectOr(item) ?? {});
  const keyed = new Map<string, string>();
  const shared = new Set<string>();
  for (const path of paths.keys()) {
    const key = pathKey(path);
    if (keyed.has(key)) shared.add(key);
    keyed.set(key, path);
  }
  for (const key of shared) keyed.delete(key);
  const components = new Map<string, Json>();
  for (const [kind, named] of Object.entries(objectOr(doc.components) ?? {})) {
    for (const [name, value] of Object.entries(objectOr(named) ?? {})) components.set(`#/components/${escape(kind)}/${escape(name)}`, value);
  }
  return { paths, keyed, components };
}

/**
 * What is the same in two documents: a path item whose operations are equal, and whose `$ref`s
 * reach only components that are equal in both (and so on, through their own references), shows
 * no change between them. Equal is the same object (a `canon dev` session builds the parts of
 * an unchanged resource once, so most are) or else the same content (compact JSON text,
 * remembered by the object). A reference to anything but a component, or references in a
 * cycle, count as different.
 */
export class Sameness {
  private readonly components = new Map<string, boolean>();
  private readonly active = new Set<string>();
  private readonly a: DocumentParts;
  private readonly b: DocumentParts;
  /** Each object's compact JSON text and its `$ref` targets, remembered by the object in the run's engine. */
  private readonly contents = engineState("json texts", () => new WeakMap<object, string>());
  private readonly refs = engineState("component refs", () => new WeakMap<object, string[] | null>());

  constructor(a: DocumentParts, b: DocumentParts) {
    this.a = a;
    this.b = b;
  }

  /** Whether `path` has the same item, reaching the same components, in both documents. */
  path(path: string): boolean {
    const x = this.a.paths.get(path);
    const y = this.b.paths.get(path);
    if (!x || !y) return false;
    const methods = Object.keys(y);
    if (methods.length !== Object.keys(x).length) return false;
    for (const method of methods) {
      const operation = y[method]!;
      if (!(method in x) || !this.equal(x[method]!, operation)) return false;
      const refs = componentRefs(operation, this.refs);
      if (!refs || !refs.every((r) => this.component(r))) return false;
    }
    return true;
  }

  private component(pointer: string): boolean {
    const known = this.components.get(pointer);
    if (known !== undefined) return known;
    if (this.active.has(pointer)) return false;
    const x = this.a.components.get(pointer);
    const y = this.b.components.get(pointer);
    this.active.add(pointer);
    const refs = y === undefined ? null : componentRefs(y, this.refs);
    const same = x !== undefined && y !== undefined && this.equal(x, y) && refs !== null && refs.every((r) => this.component(r));
    this.active.delete(pointer);
    this.components.set(pointer, same);
    return same;
  }

  private equal(x: Json, y: Json): boolean {
    return x === y || this.contentOf(x) === this.contentOf(y);
  }

  /** A value's compact JSON text, remembered by the object. */
  private contentOf(value: Json): string {
    if (typeof value !== "object" || value === null) return JSON.stringify(value);
    let text = this.contents.get(value);
    if (text === undefined) this.contents.set(value, (text = JSON.stringify(value)));
    return text;
  }
}

/**
 * Digests of a document's path items, each over the item and every component its `$ref`s reach
 * (through their own references): what the comparison of the operations at a path reads, the
 * same parts `Sameness` compares. Null for a path that reaches anything but a component, a
 * missing one, or references in a cycle (such a path is always compared).
 */
export class PartDigests {
  private readonly parts: DocumentParts;
  private readonly components = new Map<string, string | null>();
  private readonly active = new Set<string>();
  /** The sha256 of each part's JSON text: the text itself is not kept (at N = 1000 the parts of two documents are some 40 MB of it). */
  private readonly hashes = new WeakMap<object, string>();
  private readonly refs = engineState("component refs", () => new WeakMap<object, string[] | null>());

  constructor(parts: DocumentParts) {
    this.parts = parts;
  }

  path(path: string): string | null {
    const item = this.parts.paths.get(path);
    if (!item) return null;
    return this.digest(`path ${path}`, item);
  }

  private component(pointer: string): string | null {
    const known = this.components.get(pointer);
    if (known !== undefined) return known;
    if (this.active.has(pointer)) return null;
    const value = this.parts.components.get(pointer);
    this.active.add(pointer);
    const digest = value === undefined ? null : this.digest(pointer, value);
    this.active.delete(pointer);
    this.components.set(pointer, digest);
    return digest;
  }

  private digest(name: string, value: Json): string | null {
    const refs = componentRefs(value, this.refs);
    if (refs === null) return null;
    const hash = createHash("sha256").update(name).update("\0").update(this.hashOf(value));
    for (const ref of [...new Set(refs)].sort(compareText)) {
      const inner = this.component(ref);
      if (inner === null) return null;
      hash.update("\0").update(ref).update("\0").update(inner);
    }
    return hash.digest("base64url");
  }

  /** The sha256 of a value's compact JSON text, remembered by the object. */
  private hashOf(value: Json): string {
    if (typeof value !== "object" || value === null) return JSON.stringify(value);
    let digest = this.hashes.get(value);
    if (digest === undefined) this.hashes.set(value, (digest = createHash("sha256").update(JSON.stringify(value)).digest("base64url")));
    return digest;
  }
}


/** The `$ref` targets in a value; null when one is not a component. Remembered by the object. */
function componentRefs(value: Json, refsByObject: WeakMap<object, string[] | null>): string[] | null {
  if (typeof value !== "object" || value === null) return [];
  if (refsByObject.has(value)) return refsByObject.get(value)!;
  let refs: string[] | null = [];
  for (const [key, inner] of Object.entries(value)) {
    const found: string[] | null =
      key === "$ref" && typeof inner === "string" ? (COMPONENT.test(inner) ? [inner] : null) : componentRefs(inner, refsByObject);
    if (found === null) {
      refs = null;
      break;
    }
    refs.push(...found);
  }
  refsByObject.set(value, refs);
  return refs;
}

const COMPONENT = /^#\/components\/[^/]+\/[^/]+$/;

function objectOr(value: Json | undefined): JsonObject | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : null;
}

function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
