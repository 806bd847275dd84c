/**
 * The one order of the keys of a stored value's objects (nested objects and maps), the same on
 * every store: each object is rebuilt with its keys inserted in code-unit order (which is code
 * point order for the ASCII keys canon allows). jsonb keeps keys shorter-first, the memory
 * store as the body sent them; both are read through this. JavaScript itself lists keys that are
 * array indexes (`"7"`, `"2024"`) first, in numeric order, whatever the insertion: that part of
 * the order is the language's, and so the same on every store too.
 */

/** `value` with the keys of every object in it in the stored order; arrays and scalars as they are. */
export function orderedJson<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(orderedJson) as T;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of sortedKeys(source)) out[key] = orderedJson(source[key]);
  return out as T;
}

/**
 * The keys of `source` in code-unit order. An object of a few keys (the usual stored object) is
 * put in order in the array `Object.keys` made, by insertion: `Array.prototype.sort` would copy
 * it into a work array first, which was a seventh of what a list of 20 records read from
 * PostgreSQL allocated.
 */
function sortedKeys(source: Record<string, unknown>): string[] {
  const keys = Object.keys(source);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/** A record's values with each object value's keys ordered (the fields themselves keep their order). */
export function orderedValues<T extends Record<string, unknown>>(values: T): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(values)) out[key] = orderedJson(values[key]);
  return out as T;
}
