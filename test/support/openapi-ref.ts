// The local `$ref`s of an OpenAPI document (`#/components/...`), followed the same way by every
// test that reads a document.
import assert from "node:assert/strict";

type Obj = Record<string, any>;

/** What a local reference (`#/components/schemas/Order`) names in `doc`, or undefined. */
export function refTarget(doc: Obj, ref: string): unknown {
  return ref
    .slice(2)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce((at: Obj | undefined, key: string) => at?.[key], doc);
}

/** `value` itself, or if it is a `$ref`, what that names (followed until it is not one). */
export function resolveRef(doc: Obj, value: Obj): Obj {
  if (typeof value?.$ref !== "string") return value;
  const target = refTarget(doc, value.$ref) as Obj | undefined;
  assert.ok(target, `dangling $ref ${value.$ref}`);
  return resolveRef(doc, target);
}
