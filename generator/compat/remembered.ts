import { TextMemo } from "../util/memo.ts";
import { documentParts } from "./parts.ts";
import type { Change, JsonObject } from "./types.ts";

/**
 * The changes of the operations of one path, remembered from an earlier comparison: `canon dev`
 * compares nearly the same documents on every save (each version's CHANGES against the one
 * before), where one resource's paths changed. The changes of the operations at a path (one
 * operation key, `get /orders/{}`) are a function of the path's item in each document and of
 * every component its `$ref`s reach; the key names exactly that (the paths, and numbers that
 * stand for the contents, parts.ts), so a remembered answer is what comparing again gives. A
 * path whose operation key two paths of one document share, or whose references form a cycle,
 * is compared in full.
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

/** A memo for comparing `oldDoc` with `newDoc`; null when a reference in one is not to a component. */
export function operationMemo(oldDoc: JsonObject, newDoc: JsonObject): OperationMemo | null {
  const a = documentParts(oldDoc);
  const b = documentParts(newDoc);
  if (!a || !b) return null;
  // The key of each operation key's pair of paths.
  const keys = new Map<string, string | null>();
  const pairKey = (key: string): string | null => {
    if (keys.has(key)) return keys.get(key)!;
    const x = a.keyed.get(key);
    const y = b.keyed.get(key);
    let pair: string | null = null;
    if (x && y) {
      const xi = a.deepOf(x);
      const yi = b.deepOf(y);
      if (xi !== null && yi !== null) pair = `${xi}\n${yi}`;
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
