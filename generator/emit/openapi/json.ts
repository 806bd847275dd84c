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

/**
 * `JSON.stringify(value, null, 2)`, with each object for which `textOf` has a text written as
 * that text (the object's own `JSON.stringify(part, null, 2)`, made once when the part was
 * built) indented to the depth the object is at. JSON text holds no line break but between its
 * tokens (one in a string is written `\n`), so indenting every line of a part's text after its
 * first places it as `JSON.stringify` would. What the document of a version adds around the
 * parts of its resources is small: writing it here costs what that is, not what the parts are.
 * test/openapi.test.ts checks it against `JSON.stringify` on random values.
 */
export function jsonText(value: Json, textOf: (part: JsonObject | Json[]) => string | undefined): string {
  return written(value, "\n", textOf);
}

/** `value`'s text at the indentation `indent` (a line break and the spaces that start each line). */
function written(value: Json, indent: string, textOf: (part: JsonObject | Json[]) => string | undefined): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const known = textOf(value);
  if (known !== undefined) return indent === "\n" ? known : known.replaceAll("\n", indent);
  const inner = `${indent}  `;
  // Built by appending only (V8 joins the pieces once, when the whole text is read).
  let text: string;
  let separator = inner;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    text = "[";
    for (const item of value) {
      text += `${separator}${written(item, inner, textOf)}`;
      separator = `,${inner}`;
    }
    return `${text}${indent}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return "{}";
  text = "{";
  for (const key of keys) {
    text += `${separator}${JSON.stringify(key)}: ${written(value[key]!, inner, textOf)}`;
    separator = `,${inner}`;
  }
  return `${text}${indent}}`;
}
