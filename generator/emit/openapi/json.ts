import { compareText } from "../../diagnostics/diagnostic.ts";

/** A JSON value, as the OpenAPI document holds it. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** An object whose keys are sorted: for maps whose order carries no meaning (paths, components). */
export function sortedObject(entries: Iterable<[string, Json]>): JsonObject {
  const list = [...entries].sort(([a], [b]) => compareText(a, b));
  const out: JsonObject = {};
  for (const [key, value] of list) out[key] = value;
  return out;
}

/** `{ $ref: "#/components/<kind>/<name>" }` */
export function ref(kind: "schemas" | "responses" | "headers" | "parameters", name: string): JsonObject {
  return { $ref: `#/components/${kind}/${name}` };
}

/** A copy of `object` without the keys whose value is undefined. */
export function defined(object: Record<string, Json | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) out[key] = value;
  return out;
}
