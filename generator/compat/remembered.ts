import { createHash } from "node:crypto";
import { Engine, engineState } from "../engine.ts";
import { documentParts, PartDigests, Sameness, type DocumentParts } from "./parts.ts";
import type { Change, JsonObject } from "./types.ts";

/**
 * The changes of the operations of one path, remembered from the last comparison of the same two
 * versions: `canon dev` compares nearly the same documents on every save (each version's
 * CHANGES against the one before), where one resource's paths changed. The changes of the
 * operations at a path (one operation key, `get /orders/{}`) are a function of the path's item in
 * each document and of every component its `$ref`s reach; when both are the same as in the last
 * comparison (parts.ts), its changes are taken. A path whose operation key two paths of one
 * document share is compared in full.
 */
export interface OperationMemo {
  /** The remembered changes of an endpoint (`before get /orders/{}`), or undefined when its path is not remembered. */
  changes(slot: string, key: string): Change[] | undefined;
  /** Keeps the changes found for an endpoint. */
  found(slot: string, key: string, changes: Change[]): void;
  /** Remembers what was found. */
  finish(): void;
}

interface Comparison {
  a: DocumentParts;
  b: DocumentParts;
  /** The changes found at each operation key, by endpoint (`before get /orders/{}`); none: no entry. */
  found: Map<string, Map<string, Change[]>>;
}

/** The name of the changes at each path of a pair of documents in the engine's records (by the digests of the paths). */
const RECORD = "compat/changes by path";

/** How many comparisons (pairs of versions) the run's engine keeps: a few at most. */
const KEPT_COMPARISONS = 16;

/** A memo for comparing `oldDoc` with `newDoc`. */
export function operationMemo(oldDoc: JsonObject, newDoc: JsonObject): OperationMemo {
  // The last comparison of each pair of versions (by the two documents' `info`), kept by the run's engine.
  const comparisons = engineState("operation comparisons", () => new Map<string, Comparison>());
  const name = JSON.stringify([oldDoc.info ?? null, newDoc.info ?? null]);
  const last = comparisons.get(name);
  const now: Comparison = { a: documentParts(oldDoc), b: documentParts(newDoc), found: new Map() };
  const sameA = last && new Sameness(last.a, now.a);
  const sameB = last && new Sameness(last.b, now.b);
  // The paths of an operation key in both documents, when both have exactly one.
  const pair = (key: string): [string, string] | null => {
    const x = now.a.keyed.get(key);
    const y = now.b.keyed.get(key);
    return x && y ? [x, y] : null;
  };
  // A run that keeps the engine's records on disk (a cold `canon generate`) has no last
  // comparison: there the changes at each path are recorded by a digest of what comparing them
  // reads, the path's item and the components it reaches in each document, all of the pair's in
  // one record (one to read and one to write, however many paths). Not in a first run (no
  // records read): the digests of every part of both documents raise a first run's peak memory
  // at N = 1000 by a fifth, and a first run is followed by a check or a generate that records them.
  const engine = Engine.current();
  const digests = engine?.recording && engine.recalling ? { a: new PartDigests(now.a), b: new PartDigests(now.b) } : null;
  const pairDigest = createHash("sha256").update(name).digest("base64url");
  const recorded = engine && digests ? (engine.recalledBy(RECORD, pairDigest) as Record<string, Record<string, Change[]>> | undefined) : undefined;
  const keyDigests = new Map<string, string | null>();
  const digestOf = (key: string): string | null => {
    const paths = pair(key);
    if (!paths || !digests) return null;
    let digest = keyDigests.get(key);
    if (digest === undefined) {
      const a = digests.a.path(paths[0]);
      const b = digests.b.path(paths[1]);
      keyDigests.set(key, (digest = a && b ? createHash("sha256").update([key, paths[0], paths[1], a, b].join("\0")).digest("base64url") : null));
    }
    return digest;
  };
  const reused = new Map<string, Map<string, Change[]> | undefined>();
  const known = (key: string): Map<string, Change[]> | undefined => {
    if (reused.has(key)) return reused.get(key);
    const paths = pair(key);
    let slots = last?.found.get(key);
    if (!paths || !last || !sameA || !sameB || last.a.keyed.get(key) !== paths[0] || last.b.keyed.get(key) !== paths[1]) slots = undefined;
    else if (slots && !(sameA.path(paths[0]) && sameB.path(paths[1]))) slots = undefined;
    if (!slots && recorded) {
      const digest = digestOf(key);
      const found = digest === null ? undefined : recorded[digest];
      if (found) slots = new Map(Object.entries(found));
    }
    reused.set(key, slots);
    return slots;
  };
  return {
    changes(slot, key) {
      const slots = known(key);
      if (!slots) return undefined;
      now.found.set(key, slots);
      return slots.get(slot) ?? [];
    },
    found(slot, key, changes) {
      if (!pair(key)) return;
      let slots = now.found.get(key);
      if (!slots) now.found.set(key, (slots = new Map()));
      if (changes.length) slots.set(slot, changes);
    },
    finish() {
      // Every key with a path in both documents was compared in full or taken: all its endpoints are known.
      for (const key of now.b.keyed.keys()) if (pair(key) && !now.found.has(key)) now.found.set(key, new Map());
      if (engine && digests) {
        const changes: Record<string, Record<string, Change[]>> = {};
        for (const [key, slots] of now.found) {
          const digest = digestOf(key);
          if (digest !== null) changes[digest] = Object.fromEntries(slots);
        }
        engine.record(RECORD, pairDigest, changes);
      }
      comparisons.delete(name);
      comparisons.set(name, now);
      if (comparisons.size > KEPT_COMPARISONS) comparisons.delete(comparisons.keys().next().value!);
    },
  };
}
