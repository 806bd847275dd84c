import { TextMemo } from "../util/memo.ts";
import { pathKey } from "./operations.ts";
import type { Change } from "./types.ts";
import { outline, refsIn, type Outline } from "./unchanged.ts";

/**
 * The changes of the operations of one path, remembered from an earlier comparison: `canon dev`
 * compares nearly the same documents on every save (each version's CHANGES against the one
 * before), where one resource's paths changed. The changes of the operations at a path (one
 * operation key, `get /orders/{}`) are a function of the path's text in each document and of
 * the text of every component its `$ref`s reach; the key names exactly that (the texts, and
 * for components numbers that stand for their texts), so a remembered answer is what comparing
 * again gives. Found on the text as canon writes it (see unchanged.ts); a path whose operation
 * key two paths of one document share, or documents with references in a cycle, are compared
 * in full.
 */
export interface OperationMemo {
  /** The remembered changes of an endpoint (`before get /orders/{}`), or undefined when its path is not remembered. */
  changes(slot: string, key: string): Change[] | undefined;
  /** Keeps the changes found for an endpoint. */
  found(slot: string, key: string, changes: Change[]): void;
  /** Remembers what was found. */
  finish(): void;
}

const remembered = new TextMemo<Map<string, Change[]>>(8192);

/** A memo for comparing the document `oldText` with `newText`; null when they are not in canon's layout. */
export function operationMemo(oldText: string, newText: string): OperationMemo | null {
  const before = outline(oldText);
  const after = outline(newText);
  if (!before || !after) return null;
  const a = indexed(before);
  const b = indexed(after);
  if (!a || !b) return null;
  // The key of each operation key's pair of paths.
  const keys = new Map<string, string | null>();
  const pairKey = (key: string): string | null => {
    if (keys.has(key)) return keys.get(key)!;
    const x = a.paths.get(key);
    const y = b.paths.get(key);
    let pair: string | null = null;
    if (x && y) {
      const xi = a.deepOf(before.paths.get(x)!);
      const yi = b.deepOf(after.paths.get(y)!);
      if (xi !== null && yi !== null) pair = `${x}\n${y}\n${xi}\n${yi}\n${before.paths.get(x)}\n${after.paths.get(y)}`;
    }
    keys.set(key, pair);
    return pair;
  };
  const pending = new Map<string, Map<string, Change[]>>();
  return {
    changes(slot, key) {
      const pair = pairKey(key);
      if (pair === null) return undefined;
      const known = remembered.peek(pair);
      return known ? (known.get(slot) ?? []) : undefined;
    },
    found(slot, key, changes) {
      const pair = pairKey(key);
      if (pair === null || remembered.peek(pair)) return;
      let slots = pending.get(pair);
      if (!slots) pending.set(pair, (slots = new Map()));
      if (changes.length) slots.set(slot, changes);
    },
    finish() {
      for (const [pair, slots] of pending) remembered.get(pair, () => slots);
      for (const pair of keys.values()) if (pair !== null) remembered.get(pair, () => new Map());
    },
  };
}

interface Indexed {
  /** The path of each operation key (`/orders/{}`), when one path of the document has it. */
  paths: Map<string, string>;
  /** A number for a text with every component it reaches; null within a cycle. */
  deepOf(text: string): number | null;
}

const indexes = new WeakMap<Outline, Indexed | null>();

function indexed(doc: Outline): Indexed | null {
  if (indexes.has(doc)) return indexes.get(doc)!;
  const paths = new Map<string, string>();
  const shared = new Set<string>();
  for (const path of doc.paths.keys()) {
    const key = pathKey(path);
    if (paths.has(key)) shared.add(key);
    paths.set(key, path);
  }
  for (const key of shared) paths.delete(key);
  const deep = new Map<string, number | null>();
  const active = new Set<string>();
  const deepOfRefs = (own: string, refs: string[]): number | null => {
    const parts: Array<string | number> = [idOf(own)];
    for (const ref of refs) {
      const reached = component(ref);
      if (reached === null) return null;
      parts.push(ref, reached);
    }
    return idOf(JSON.stringify(parts));
  };
  const component = (pointer: string): number | null => {
    if (deep.has(pointer)) return deep.get(pointer)!;
    const found = doc.components.get(pointer);
    if (!found || active.has(pointer)) return null;
    active.add(pointer);
    const id = deepOfRefs(found.text, found.refs);
    active.delete(pointer);
    deep.set(pointer, id);
    return id;
  };
  const index: Indexed = {
    paths,
    deepOf(text) {
      const refs = refsIn(text);
      return refs === null ? null : deepOfRefs("", refs);
    },
  };
  indexes.set(doc, index);
  return index;
}

/**
 * A number per distinct text: equal texts get equal numbers while both are remembered, and a
 * number is never given to another text (a forgotten text gets a new one), so keys built from
 * them never match wrongly.
 */
let nextId = 0;
const ids = new TextMemo<number>(65_536);

function idOf(text: string): number {
  return ids.get(text, () => nextId++);
}
