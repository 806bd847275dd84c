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
    for (const [name, value] of Object.entries(objectOr(named) ?? {})) components.set(componentPointer(kind, name), value);
  }
  return { paths, keyed, components };
}

/**
 * What is the same in two documents: a path item whose operations are equal, and whose `$ref`s
 * reach only components that are equal in both (and so on, through their own references), shows
 * no change between them. Equal is the same object (a `canon dev` session builds the parts of
 * an unchanged resource once, so most are) or else the same content (the digest of its compact
 * JSON text, remembered by the object: `partDigestOf`). A reference to anything but a component, or
 * references in a cycle, count as different.
 */
export class Sameness {
  private readonly components = new Map<string, boolean>();
  private readonly active = new Set<string>();
  private readonly a: DocumentParts;
  private readonly b: DocumentParts;

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
      const refs = refsOf(operation);
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
    // The new document's references: where the two are equal, so are their references.
    const refs = y === undefined ? null : refsOf(y);
    const same = x !== undefined && y !== undefined && this.equal(x, y) && refs !== null && refs.every((r) => this.component(r));
    this.active.delete(pointer);
    this.components.set(pointer, same);
    return same;
  }

  private equal(x: Json, y: Json): boolean {
    return x === y || partDigestOf(x) === partDigestOf(y);
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
  private readonly paths = new Map<string, string | null>();
  private readonly components = new Map<string, string | null>();
  private readonly active = new Set<string>();

  constructor(parts: DocumentParts) {
    this.parts = parts;
  }

  /** Over each operation's digest (the ones `Sameness` compares) and the components they reach. */
  path(path: string): string | null {
    let digest = this.paths.get(path);
    if (digest === undefined) this.paths.set(path, (digest = this.pathDigest(path)));
    return digest;
  }

  private pathDigest(path: string): string | null {
    const item = this.parts.paths.get(path);
    if (!item) return null;
    const text = [`path ${path}`];
    const refs: string[] = [];
    for (const [method, operation] of Object.entries(item)) {
      const found = refsOf(operation);
      if (found === null) return null;
      text.push(method, partDigestOf(operation));
      refs.push(...found);
    }
    return this.reached(text, refs);
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
    const refs = refsOf(value);
    if (refs === null) return null;
    return this.reached([name, partDigestOf(value)], refs);
  }

  /**
   * The sha256 of `text` and of the digests of the components `refs` name (through their own
   * references), hashed as one text (a hash update per piece cost more than the hashing).
   */
  private reached(text: string[], refs: string[]): string | null {
    for (const ref of [...new Set(refs)].sort(compareText)) {
      const inner = this.component(ref);
      if (inner === null) return null;
      text.push(ref, inner);
    }
    return createHash("sha256").update(text.join("\0")).digest("base64url");
  }
}

/** A value's digest and the components its `$ref`s name, as computed together (`digested`). */
export interface Digested {
  /** The sha256 of its compact JSON text (a number's, string's… own JSON text). */
  digest: string;
  /** The `$ref` targets in it, each a component pointer; null when one is not. */
  refs: string[] | null;
}

/**
 * A value's digest, remembered by the object in the run's engine (as its references, `refsOf`):
 * both are read from one compact JSON text, which is not kept (at N = 1000 the parts of two
 * documents are some 40 MB of it), and shared by every comparison of the run (CHANGES.md's and
 * the gate's read the same new documents). A part whose digest is known already is not read at
 * all (`knowDigested`).
 */
export function partDigestOf(value: Json): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  return known().digests.get(value) ?? remember(value).digest;
}

/** The `$ref` targets in a value (null when one is not a component), remembered by the object (see `partDigestOf`). */
function refsOf(value: Json): string[] | null {
  if (typeof value !== "object" || value === null) return [];
  const refs = known().refs.get(value);
  return refs !== undefined ? refs : remember(value).refs;
}

function known(): { digests: WeakMap<object, string>; refs: WeakMap<object, string[] | null> } {
  return engineState("json digests", () => ({ digests: new WeakMap<object, string>(), refs: new WeakMap<object, string[] | null>() }));
}

function remember(value: Json & object): Digested {
  const found = digested(value);
  knowDigested(value, found);
  return found;
}

/** A value's digest and `$ref` targets, computed (see `partDigestOf`). */
export function digested(value: Json): Digested {
  const text = JSON.stringify(value);
  return { digest: createHash("sha256").update(text).digest("base64url"), refs: refsIn(text) ?? componentRefs(value) };
}

/**
 * Tells the run's engine the digest and references of a part, computed when it was built (the
 * OpenAPI parts of a resource, a unit: emit/openapi/document.ts).
 */
export function knowDigested(value: Json, found: Digested): void {
  if (typeof value !== "object" || value === null) return;
  const { digests, refs } = known();
  digests.set(value, found.digest);
  refs.set(value, found.refs);
}

/**
 * The digests of a document's operations (by path and method) and of its components (by JSON
 * pointer): what the gate records for each document it is given, by the digest of its text, so
 * that the next run, which reads that text as the published document, does not digest it again.
 * (Of a published document the comparisons read digests only: where a part is the same in both
 * documents, its references are the new one's.)
 */
export interface PartDigestTable {
  operations: Record<string, Record<string, string>>;
  components: Record<string, string>;
}

/**
 * A digest of a document's content, made from the digests of its parts (`partDigestOf`: known
 * already for the operations and schemas of the resources, emit/openapi/document.ts): the sha256
 * of the document's JSON with each operation (`paths.<path>.<method>`) and each component
 * (`components.<kind>.<name>`) written as its digest. Equal documents get equal digests, and the
 * JSON text of a whole document is not written.
 */
export function documentDigest(doc: JsonObject): string {
  const outline = { ...doc, paths: outlined(doc.paths, 2), components: outlined(doc.components, 2) };
  return createHash("sha256").update(JSON.stringify(outline)).digest("base64url");
}

/** `value` with each value `depth` levels below it written as its digest. */
function outlined(value: Json | undefined, depth: number): Json | undefined {
  if (value === undefined) return undefined;
  if (depth === 0) return partDigestOf(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map((inner) => outlined(inner, depth - 1)!);
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) out[key] = outlined(inner, depth - 1)!;
  return out;
}

/** The digests of a document's parts (see `PartDigestTable`). */
export function partDigests(doc: JsonObject): PartDigestTable {
  const parts = documentParts(doc);
  const table: PartDigestTable = { operations: {}, components: {} };
  for (const [path, item] of parts.paths) {
    const operations: Record<string, string> = {};
    for (const [method, operation] of Object.entries(item)) operations[method] = partDigestOf(operation);
    table.operations[path] = operations;
  }
  for (const [pointer, value] of parts.components) table.components[pointer] = partDigestOf(value);
  return table;
}


/**
 * The `$ref` targets in a compact JSON text, read from the text: in JSON.stringify's output a
 * `$ref` key is the only place where `{"$ref":` or `,"$ref":` occurs (in a string, a quote is
 * written `\"`). Undefined when a `$ref` holds anything but a string (then the value is walked).
 */
function refsIn(text: string): string[] | null | undefined {
  const refs: string[] = [];
  let count = 0;
  for (let at = text.indexOf('"$ref":'); at >= 0; at = text.indexOf('"$ref":', at + 7)) {
    if (text[at - 1] === "{" || text[at - 1] === ",") count++;
  }
  for (const match of text.matchAll(REF)) refs.push(JSON.parse(match[1]!) as string);
  if (refs.length !== count) return undefined;
  return refs.every((r) => COMPONENT.test(r)) ? refs : null;
}

/** A `$ref` key with a string value in compact JSON (its JSON literal captured). */
const REF = /[{,]"\$ref":("(?:[^"\\]|\\.)*")/g;

/** The `$ref` targets in a value, walked; null when one is not a component. */
function componentRefs(value: Json): string[] | null {
  if (typeof value !== "object" || value === null) return [];
  let refs: string[] | null = [];
  for (const [key, inner] of Object.entries(value)) {
    const found: string[] | null = key === "$ref" && typeof inner === "string" ? (COMPONENT.test(inner) ? [inner] : null) : componentRefs(inner);
    if (found === null) {
      refs = null;
      break;
    }
    refs.push(...found);
  }
  return refs;
}

const COMPONENT = /^#\/components\/[^/]+\/[^/]+$/;

function objectOr(value: Json | undefined): JsonObject | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : null;
}

/** The JSON pointer of a component: `#/components/schemas/Order`. */
export function componentPointer(kind: string, name: string): string {
  return `#/components/${escape(kind)}/${escape(name)}`;
}

function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
