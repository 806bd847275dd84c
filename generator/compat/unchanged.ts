import { pathKey } from "./operations.ts";
import { documentParts, type DocumentParts } from "./parts.ts";
import type { JsonObject } from "./types.ts";

/**
 * The published and the new document of one version without the paths that are the same in
 * both: a path whose item is equal in the two documents, and whose `$ref`s reach only
 * components that are equal too, cannot show a change, so the gate need not compare it. In
 * `canon dev` a save changes the paths of one resource; comparing every other path again was
 * most of the gate's time. Equality is that of content numbers (parts.ts), cheap for the parts a
 * session keeps as the same objects. A path whose references form a cycle, or that compares as
 * one operation key with another path, is compared; when a reference is not to a component, the
 * documents are returned whole.
 */
export function withoutUnchangedPaths(oldDoc: JsonObject, newDoc: JsonObject): [JsonObject, JsonObject] {
  const before = documentParts(oldDoc);
  const after = documentParts(newDoc);
  const same = before && after ? samePaths(before, after) : null;
  if (!same || same.size === 0) return [oldDoc, newDoc];
  const keep = (doc: JsonObject): JsonObject => {
    const paths = doc.paths as JsonObject;
    return { ...doc, paths: Object.fromEntries(Object.entries(paths).filter(([path]) => !same.has(path))) };
  };
  return [keep(oldDoc), keep(newDoc)];
}

function samePaths(before: DocumentParts, after: DocumentParts): Set<string> {
  const keyCount = new Map<string, number>();
  for (const path of new Set([...before.paths.keys(), ...after.paths.keys()])) {
    keyCount.set(pathKey(path), (keyCount.get(pathKey(path)) ?? 0) + 1);
  }
  const same = new Set<string>();
  for (const path of after.paths.keys()) {
    if (!before.paths.has(path) || keyCount.get(pathKey(path)) !== 1) continue;
    // The same operations, reaching components of the same content, in both documents.
    const deep = after.deepOf(path);
    if (deep !== null && deep === before.deepOf(path)) same.add(path);
  }
  return same;
}
