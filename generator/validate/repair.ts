import type { z } from "zod";

type Key = string | number;

/** Marks an array item to drop once every cut of a round is made (indices stay valid until then). */
const DROPPED = Symbol("dropped");

/**
 * A file that parses but breaks the schema is still checked by the later stages: the parts
 * the schema refuses are cut away until the rest fits, and that rest goes on to normalize and
 * lint. First the unknown key or the wrong value itself goes (an option falls back to its
 * default); when that leaves a required key missing, the map holding it goes (a field, an
 * action). A file whose top level cannot be made to fit (a required top-level key is missing)
 * gives null: its later checks do not run. The schema diagnostics, reported already, say
 * what was cut, so nothing here reports anything.
 */
export function repairToSchema<T>(schema: z.ZodType<T>, value: unknown, issues: readonly z.core.$ZodIssue[]): T | null {
  let current: unknown = structuredClone(value);
  let pending = issues;
  for (let round = 0; round < 8; round++) {
    const cuts: Key[][] = [];
    for (const issue of pending) {
      const where = issue.path.filter((p): p is Key => typeof p !== "symbol");
      if (issue.code === "unrecognized_keys") for (const key of issue.keys) cuts.push([...where, key]);
      // A required key that is missing (or was cut in an earlier round, such as a field's
      // unreadable type): the map holding it goes, the field and never more.
      else if (where.length > 0 && valueAt(current, where) === undefined) cuts.push(where.slice(0, -1));
      else cuts.push(where);
    }
    if (cuts.some((cut) => cut.length === 0)) return null;
    for (const cut of cuts) current = without(current, cut);
    const parsed = schema.safeParse(current, { jitless: true });
    if (parsed.success) return parsed.data;
    pending = parsed.error.issues;
  }
  return null;
}

function valueAt(value: unknown, at: Key[]): unknown {
  return at.reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Record<Key, unknown>)[key] : undefined), value);
}

/** `value` with the node at `at` removed (array items dropped, map keys deleted). */
function without(value: unknown, at: Key[]): unknown {
  const parent = at.slice(0, -1).reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Record<Key, unknown>)[key] : undefined), value);
  const last = at[at.length - 1]!;
  if (Array.isArray(parent) && typeof last === "number") parent[last] = DROPPED;
  else if (parent && typeof parent === "object") delete (parent as Record<Key, unknown>)[last];
  return compact(value);
}

function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== DROPPED).map(compact);
  if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) (value as Record<string, unknown>)[key] = compact(item);
  }
  return value;
}
