/**
 * `map` values (SPEC §12.6): free-form keys to values of one item type. The generator imports
 * the key rule and the limit (lint, OpenAPI): one definition, both sides.
 */
import { z } from "zod";
import { ISSUES } from "./messages.ts";

/** Most keys a map may hold, whatever its `max_items`. */
export const MAP_MAX_KEYS = 100;

/** A key of a map: 1 to 40 letters, digits, `_`, `-` and `.` (SPEC §12.6). */
export const MAP_KEY_PATTERN = "^[A-Za-z0-9_.-]{1,40}$";

const MAP_KEY = new RegExp(MAP_KEY_PATTERN);

/** Whether `key` may name an entry of a map (`__proto__` never: it would be no entry of a plain object). */
export function isMapKey(key: string): boolean {
  return MAP_KEY.test(key) && key !== "__proto__";
}

/** A map field of a collection, as its writes must hold it (`ResourceSpec.maps`). */
export interface MapField {
  field: string;
  /** Its `max_items`: most keys. */
  maxItems: number;
}

/**
 * Checks the maps of `values` that a hook set or wrote through its store handle, which no request
 * validator read, against the rules every map holds to (SPEC §12.6): an object of at most
 * `max_items` keys, each of 1 to 40 letters, digits, `_`, `-` or `.`, none without a value. A map
 * that breaks one is the hook's fault, not the client's: it throws, and the request answers 500
 * on every store, the error naming the field and the key (the values' own type is the hook's to
 * keep, as for every other field a hook sets: docs/hooks.md).
 */
export function mapValues(fields: readonly MapField[] | undefined, values: Record<string, unknown>): void {
  if (!fields) return;
  for (const { field, maxItems } of fields) {
    const value = values[field];
    if (value === undefined || value === null) continue;
    const wrote = `a hook wrote ${JSON.stringify(value)?.slice(0, 200)} to the map field "${field}": it`;
    if (typeof value !== "object" || Array.isArray(value))
      throw new Error(`${wrote} is not an object of keys to values`);
    const keys = Object.keys(value);
    if (keys.length > maxItems) throw new Error(`${wrote} ${ISSUES.mapSize(maxItems)}`);
    for (const key of keys) {
      if (!isMapKey(key))
        throw new Error(`${wrote} has the key ${JSON.stringify(key)}, which ${ISSUES.mapKey}`);
      if ((value as Record<string, unknown>)[key] === undefined)
        throw new Error(`${wrote} has no value for the key ${JSON.stringify(key)}`);
    }
  }
}

/**
 * zod schema of a `map` field: an object of at most `maxItems` keys, each following the key
 * rules, to values of `items`. A bad key is a detail of its own (`metadata.<key>`); too many
 * keys are one detail naming the map, and its values are then not read.
 */
export function mapSchema<T extends z.ZodType>(items: T, maxItems: number) {
  const entries = z.record(z.string().refine(isMapKey, { error: ISSUES.mapKey }), items);
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return;
      if (Object.keys(value).length > maxItems)
        ctx.addIssue({ code: "custom", message: ISSUES.mapSize(maxItems) });
      // zod's record skips this key; Fastify's parser refuses it already, but a schema never drops input.
      else if (Object.hasOwn(value, "__proto__"))
        ctx.addIssue({ code: "custom", message: ISSUES.mapKey, path: ["__proto__"] });
    })
    .pipe(entries);
}
