// runtime/json-order.ts: the stored order of object keys (code-unit order, array-index keys
// first as JavaScript lists them), checked against `Array.prototype.sort` on random objects of
// 0 to 24 keys, nested, so that the insertion sort it uses for small objects orders exactly as
// the language's sort does.
import assert from "node:assert/strict";
import { test } from "node:test";
import { orderedJson } from "../../runtime/json-order.ts";

function reference(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(reference);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = reference((value as Record<string, unknown>)[key]);
  return out;
}

test("orderedJson orders keys as Array.prototype.sort does, at every depth and size", () => {
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const alphabet = ["a", "b", "B", "z", "_", "0", "9", "é", "aa", "ab", "a_b", "10", "2", "ẞ", "😀"];
  const key = () => Array.from({ length: 1 + random(3) }, () => alphabet[random(alphabet.length)]).join("");
  const make = (depth: number): unknown => {
    const n = random(25);
    const object: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) object[key()] = depth > 0 && random(4) === 0 ? make(depth - 1) : random(100);
    return random(5) === 0 ? [object, random(3)] : object;
  };
  for (let round = 0; round < 500; round++) {
    const value = make(2);
    const ordered = orderedJson(value);
    assert.deepEqual(ordered, reference(value));
    assert.equal(JSON.stringify(ordered), JSON.stringify(reference(value)));
  }
});
