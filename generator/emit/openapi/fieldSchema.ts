import type { VersionField } from "../../model/types.ts";
import { MAP_KEY_PATTERN } from "../../../runtime/map.ts";
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
    // The state machine (SPEC §12.5): the values each value may change to, as written.
    "x-canon-transitions": mode === "filter" || !field.transitions ? undefined : (field.transitions as Json),
  });
}

/**
 * The field's description; a URL field's also names the schemes it accepts, which `format: uri`
 * does not, and a decimal's its digits and bounds, which JSON Schema cannot state of a string.
 */
function describe(field: VersionField): string | undefined {
  const note = field.tenant
    ? "The record's tenant (x-canon-tenant): a principal with a tenant sees and changes only its tenant's records; on create it is filled from the principal's tenant when absent (a principal without a tenant must give it: 400 otherwise), and another tenant's id answers 403."
    : field.schemes
    ? `A URL with scheme ${orList(field.schemes)}.`
    : field.type === "decimal"
      ? decimalNote(field)
      : field.transitions
        ? transitionsNote(field.values ?? [], field.transitions)
        : undefined;
  if (!note) return field.description;
  return field.description ? `${field.description} ${note}` : note;
}

/** The state machine in words: `Changes only from new to open; … closed is final. …` */
function transitionsNote(values: string[], transitions: Record<string, string[]>): string {
  const moves = values.filter((v) => transitions[v]?.length).map((v) => `from ${v} to ${orList(transitions[v]!)}`);
  const final = values.filter((v) => !transitions[v]?.length);
  const finals = final.length ? `; ${final.length === 1 ? `${final[0]} is` : `${orList(final).replace(/ or /, " and ")} are`} final` : "";
  const changes = moves.length ? `Changes only ${moves.join("; ")}${finals}.` : "Never changes once set.";
  return `${changes} Any other change by an update, a replace or an action answers 422; a create takes any value.`;
}

function decimalNote(field: VersionField): string {
  const bounds = [
    field.decimalMinimum === undefined ? undefined : `at least ${field.decimalMinimum}`,
    field.decimalMaximum === undefined ? undefined : `at most ${field.decimalMaximum}`,
  ].filter((b) => b !== undefined);
  const range = bounds.length ? `, ${bounds.join(" and ")}` : "";
  return `An exact decimal as a string, up to ${field.precision} digits with ${field.scale} after the point${range}.`;
}

/**
 * The pattern of a decimal's text: in a response, always `scale` fraction digits (`"12.50"`); in
 * a request, 1 to `scale` of them or none (`"12.5"` and `"12"` are read as `"12.50"`).
 */
export function decimalPattern(precision: number, scale: number, output: boolean): string {
  const integerDigits = precision - scale;
  const integer = integerDigits === 0 ? "0" : integerDigits === 1 ? "[0-9]" : `(0|[1-9][0-9]{0,${integerDigits - 1}})`;
  const fraction = scale === 0 ? "" : output ? `\\.[0-9]{${scale}}` : `(\\.[0-9]{1,${scale}})?`;
  return `^-?${integer}${fraction}$`;
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
      // The collection whose record the id must name (SPEC §12.3; 422 otherwise), and what deleting
      // that record does to this one (`on_delete`): the gate compares both.
      return defined({
        type: "string",
        format: "uuid",
        "x-canon-references": mode === "filter" ? undefined : field.references,
        "x-canon-on-delete": mode === "filter" ? undefined : field.onDelete,
      });
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
        // An array of referencing ids is a relation (SPEC §12.3): it names each record once.
        uniqueItems: field.items?.type === "uuid" && field.items.references !== undefined && !field.items.nullable ? true : undefined,
      });
    case "object":
      return objectSchema(field.fields ?? [], nestedMode(mode));
    case "decimal":
      // `x-` keywords state what the gate compares (and SDK generators may read): digits and bounds.
      return defined({
        type: "string",
        format: "decimal",
        pattern: decimalPattern(field.precision ?? 0, field.scale ?? 0, mode === "output"),
        "x-precision": field.precision,
        "x-scale": field.scale,
        "x-minimum": field.decimalMinimum,
        "x-maximum": field.decimalMaximum,
      });
    case "map":
      return {
        type: "object",
        additionalProperties: field.items ? fieldSchema(field.items, nestedMode(mode)) : {},
        propertyNames: { pattern: MAP_KEY_PATTERN },
        maxProperties: field.maxItems ?? 100,
      };
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
