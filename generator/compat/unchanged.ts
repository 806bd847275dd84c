import { pathKey } from "./paths.ts";
import { documentParts, Sameness } from "./parts.ts";
import type { JsonObject } from "./types.ts";

/**
 * The published and the new document of one version without the paths that are the same in
 * both (parts.ts: the same operations, reaching the same components): such a path cannot show a
 * change, so the gate need not compare it. In `canon dev` a save changes the paths of one
 * resource; comparing every other path again was most of the gate's time. A path that compares
 * as one operation key with another path is always compared.
 */
export function withoutUnchangedPaths(oldDoc: JsonObject, newDoc: JsonObject): [JsonObject, JsonObject] {
  const before = documentParts(oldDoc);
  const after = documentParts(newDoc);
  const keyCount = new Map<string, number>();
  for (const path of new Set([...before.paths.keys(), ...after.paths.keys()])) {
    keyCount.set(pathKey(path), (keyCount.get(pathKey(path)) ?? 0) + 1);
  }
  const sameness = new Sameness(before, after);
  const same = new Set([...after.paths.keys()].filter((path) => keyCount.get(pathKey(path)) === 1 && sameness.path(path)));
  // An action that sets fields of its record is compared with the record's machine, which the
  // record's path shows (operations.ts, `compareSets`): that path stays when the action's does.
  for (const [path, item] of after.paths) {
    if (same.has(path) || !Object.values(item).some((o) => typeof o === "object" && o !== null && "x-canon-sets" in o)) continue;
    same.delete(path.slice(0, path.lastIndexOf("/")));
  }
  if (same.size === 0) return [oldDoc, newDoc];
  const keep = (doc: JsonObject): JsonObject => {
    const paths = doc.paths as JsonObject;
    return { ...doc, paths: Object.fromEntries(Object.entries(paths).filter(([path]) => !same.has(path))) };
  };
  return [keep(oldDoc), keep(newDoc)];
}
