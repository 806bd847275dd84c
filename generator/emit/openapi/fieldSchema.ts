import type { VersionField } from "../../model/types.ts";
import { orList } from "../shared/code.ts";
import { defined, type Json, type JsonObject } from "./json.ts";

/**
 * How a field is shown:
 *  - `output`: in a record the service returns;
 *  - `create`: in a create or replace body (defaults stated, required = requiredInput);
 *  - `patch`: in an update body (no defaults, nothing required);
 *  - `whole`: a nested value given whole in an update body (required like `create`, no defaults);
 *  - `filter`: as a query parameter (no null, no default, no description).
 */
export type FieldMode = "output" | "create" | "patch" | "whole" | "filter";

/** The JSON Schema (2020-12, as OpenAPI 3.1 uses it) of one field. */
export function fieldSchema(field: VersionField, mode: FieldMode): JsonObject {
  const schema = typeSchema(field, mode);
  const nullable = field.nullable && mode !== "filter";
  if (nullable) {
    schema.type = [schema.type as string, "null"];
    if (Array.isArray(schema.enum)) schema.enum = [...schema.enum, null];
  }
  return defined({
    ...schema,
    description: mode === "filter" ? undefined : describe(field),
    default: mode === "create" && field.hasDefault ? (field.default as Json) : undefined,
  });
}

/** The field's description; a URL field's also names the schemes it accepts, which `format: uri` does not. */
function describe(field: VersionField): string | undefined {
  if (!field.schemes) return field.description;
  const note = `A URL with scheme ${orList(field.schemes)}.`;
  return field.description ? `${field.description} ${note}` : note;
}

function typeSchema(field: VersionField, mode: FieldMode): JsonObject {
  switch (field.type) {
    case "string":
      return defined({
        type: "string",
        format: field.format,
        minLength: field.minLength,
        maxLength: field.maxLength,
        pattern: field.pattern,
      });
    case "integer":
    case "number":
      return defined({ type: field.type, minimum: field.minimum, maximum: field.maximum });
    case "boolean":
      return { type: "boolean" };
    case "uuid":
      return { type: "string", format: "uuid" };
    case "date":
      return { type: "string", format: "date" };
    case "datetime":
      return { type: "string", format: "date-time" };
    case "enum":
      return { type: "string", enum: [...(field.values ?? [])] };
    case "array":
      return defined({
        type: "array",
        items: field.items ? fieldSchema(field.items, nestedMode(mode)) : {},
        maxItems: field.maxItems ?? 100,
      });
    case "object":
      return objectSchema(field.fields ?? [], nestedMode(mode));
  }
}

/** Values inside an array or object are given whole: in an update body they are replaced, not merged. */
function nestedMode(mode: FieldMode): "output" | "create" | "whole" {
  return mode === "output" ? "output" : mode === "create" ? "create" : "whole";
}

/**
 * An object of fields, closed (`additionalProperties: false`). In `output` mode it holds the
 * returned fields and requires the non-optional ones; in the other modes the accepted fields,
 * requiring the required inputs except in `patch` mode.
 */
export function objectSchema(fields: VersionField[], mode: "output" | "create" | "patch" | "whole"): JsonObject {
  const shown = fields.filter((f) => (mode === "output" ? f.output : f.input));
  const required = shown
    .filter((f) => (mode === "output" ? !f.optional : mode === "patch" ? false : f.requiredInput))
    .map((f) => f.name);
  return defined({
    type: "object",
    properties: Object.fromEntries(shown.map((f) => [f.name, fieldSchema(f, mode)])),
    required: required.length ? required : undefined,
    additionalProperties: false,
  });
}
