import type { ListCondition, ListSortKey, VersionField } from "../../model/types.ts";
import { PRINT_WIDTH } from "../../format/prettier.ts";
import { literal, numberLiteral, orList, propertyKey, regexLiteral } from "./code.ts";

/** How a field is read: in a create/replace body, in a PATCH body, or nested inside another value. */
export type ZodMode = "create" | "update" | "nested";

/** The zod expression that validates one field's value in a request body. */
export function zodField(field: VersionField, mode: ZodMode): string {
  let expr = zodBase(field);
  if (field.nullable) expr += ".nullable()";
  if (mode === "update") return `${expr}.optional()`;
  if (field.hasDefault) return `${expr}.default(${literal(field.default)})`;
  // The tenant field of a create or replace body is filled from the principal when absent (SPEC §12.4).
  if (field.optional || (field.tenant && mode === "create")) return `${expr}.optional()`;
  return expr;
}

function zodBase(field: VersionField): string {
  switch (field.type) {
    case "string": {
      let expr = field.format === "email" ? "z.email()" : field.format === "uri" ? urlSchema(field.schemes) : "z.string()";
      if (field.minLength !== undefined) expr += `.min(${field.minLength})`;
      if (field.maxLength !== undefined) expr += `.max(${field.maxLength})`;
      if (field.pattern !== undefined) expr += `.regex(${regexLiteral(field.pattern)})`;
      return expr;
    }
    case "integer":
    case "number": {
      let expr = field.type === "integer" ? "z.int()" : "z.number()";
      if (field.minimum !== undefined) expr += `.min(${numberLiteral(field.minimum)})`;
      if (field.maximum !== undefined) expr += `.max(${numberLiteral(field.maximum)})`;
      return expr;
    }
    case "boolean":
      return "z.boolean()";
    case "uuid":
      return "uuidSchema";
    case "date":
      return "dateSchema";
    case "datetime":
      return "z.iso.datetime({ offset: true })";
    case "enum":
      return zodEnum(field.values ?? []);
    case "array": {
      const expr = `z.array(${field.items ? zodField(field.items, "nested") : "z.unknown()"}).max(${field.maxItems ?? 100})`;
      // An array of referencing ids is a relation (SPEC §12.3): each record at most once.
      const ids = field.items?.type === "uuid" && field.items.references !== undefined && !field.items.nullable;
      return ids ? `${expr}.refine(distinctIds, { error: REPEATED_ID_ISSUE })` : expr;
    }
    case "object":
      return `z.strictObject({ ${(field.fields ?? []).map((f) => `${propertyKey(f.name)}: ${zodField(f, "nested")}`).join(", ")} })`;
    case "decimal": {
      const bounds = [
        field.decimalMinimum === undefined ? undefined : `minimum: ${JSON.stringify(field.decimalMinimum)}`,
        field.decimalMaximum === undefined ? undefined : `maximum: ${JSON.stringify(field.decimalMaximum)}`,
      ].filter((b) => b !== undefined);
      return `decimalSchema(${field.precision ?? 0}, ${field.scale ?? 0}${bounds.length ? `, { ${bounds.join(", ")} }` : ""})`;
    }
    case "map":
      return `mapSchema(${field.items ? zodField(field.items, "nested") : "z.unknown()"}, ${field.maxItems ?? 100})`;
  }
}

/** One of `values`. */
function zodEnum(values: string[]): string {
  return `z.enum([${values.map((v) => JSON.stringify(v)).join(", ")}])`;
}

/** A URL whose scheme is one of `schemes` (`protocol` is matched against the scheme, lowercase). */
function urlSchema(schemes: string[] = ["http", "https"]): string {
  const names = schemes.map((s) => s.replace(/[.+]/g, "\\$&")).join("|");
  return `z.url({ protocol: /^(?:${names})$/, error: ${JSON.stringify(`must be a URL with scheme ${orList(schemes)}`)} })`;
}

/** The zod expression that reads a filter's value from the query string. */
export function zodQuery(field: VersionField): string {
  switch (field.type) {
    // Within the field's bounds, as OpenAPI states them for the parameter (SPEC §12.2: a value not
    // valid for the field answers 400 naming the parameter).
    case "integer":
    case "number": {
      const read = field.type === "integer" ? "queryInteger" : "queryNumber";
      return field.minimum === undefined && field.maximum === undefined ? read : `${read}.pipe(${zodBase(field)})`;
    }
    case "boolean":
      return "queryBoolean";
    case "enum":
      return zodEnum(field.values ?? []);
    case "date":
      return "dateSchema";
    default:
      return zodBase(field);
  }
}

/** The zod expression that reads an operator filter's parameter. */
export function conditionSchema(c: ListCondition): string {
  switch (c.op) {
    case "in":
      return `inParam(${zodQuery(c.field)})`;
    case "null":
      return "queryNull";
    default:
      return c.field.type === "datetime" ? "queryInstant" : zodQuery(c.field);
  }
}

/** `sortParam({ … })`: each key `?sort=` takes, the storage field it orders by and how its values compare. */
export function sortSchema(keys: ListSortKey[]): string {
  // Written as prettier prints it (one key a line, a key too wide broken into its properties and,
  // an enum's ranks too wide, one a line), for a property at the first level of an object: the
  // formatter then has nothing to vouch for.
  const entries = keys.map((k) => {
    const key = propertyKey(k.name);
    const field = `field: ${JSON.stringify(k.storageName)}`;
    const ordering = `ordering: ${JSON.stringify(k.ordering)}`;
    const ranks = k.rank?.map((v) => JSON.stringify(v));
    const line = `    ${key}: { ${field}, ${ordering}${ranks ? `, rank: [${ranks.join(", ")}]` : ""} },`;
    if (line.length <= PRINT_WIDTH) return line;
    const rankLine = ranks ? `      rank: [${ranks.join(", ")}],` : "";
    const rank = !ranks ? [] : rankLine.length <= PRINT_WIDTH ? [rankLine] : ["      rank: [", ...ranks.map((r) => `        ${r},`), "      ],"];
    return [`    ${key}: {`, `      ${field},`, `      ${ordering},`, ...rank, "    },"].join("\n");
  });
  return `sortParam({\n${entries.join("\n")}\n  })`;
}

/**
 * The zod expression that reads an operator filter in a JSON body (an export's `filters`): its
 * value typed as JSON (`"status[in]": ["open", "pending"]`, `"due_at[gte]": "2026-…"`, `"x[null]": true`).
 */
export function conditionBodySchema(c: ListCondition): string {
  const value = zodField({ ...c.field, nullable: false, hasDefault: false, optional: false }, "nested");
  switch (c.op) {
    case "in":
      return `inList(${value}).optional()`;
    case "null":
      return "z.boolean().optional()";
    default:
      return `${value}.optional()`;
  }
}
