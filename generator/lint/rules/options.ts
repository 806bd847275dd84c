import type { FieldDef, FieldType } from "../../model/types.ts";
import { q, walkFields, type FieldPlace, type LintContext } from "../context.ts";
import { compareDecimals, decimalProblem } from "../../../runtime/decimal.ts";
import { MAP_MAX_KEYS } from "../../../runtime/map.ts";
import { fitsDefault } from "./defaults.ts";

/**
 * field-option, array-max-items, map-max-items, map-nesting, field-default: every option
 * applies to its field's type, options agree with each other, arrays and maps stay within 100
 * items or keys, maps nest at most two deep, defaults fit their field.
 */
const maxItemsLimit = 100;

/** Most decimal digits: PostgreSQL's numeric takes more, but no client language's decimal type does. */
const maxPrecision = 38;

/** Most maps on one path into a value: a map of maps, never a map of maps of maps. */
const mapDepthLimit = 2;

const uniqueTypes: ReadonlySet<FieldType> = new Set(["string", "integer", "number", "uuid", "date", "datetime", "enum", "decimal"]);

// The tables below are read for every field of every resource, mostly by code that has not been
// compiled yet (a cold `canon generate`): their entries are objects, read by name, because
// destructuring a tuple goes through the iteration protocol, which costs far more there.

/** Options that belong to one type: the model property, the YAML key, the types it applies to. */
const typeOptions: ReadonlyArray<{ prop: keyof FieldDef; key: string; types: FieldType[] }> = [
  { prop: "minLength", key: "min_length", types: ["string"] },
  { prop: "maxLength", key: "max_length", types: ["string"] },
  { prop: "pattern", key: "pattern", types: ["string"] },
  { prop: "format", key: "format", types: ["string"] },
  { prop: "minimum", key: "minimum", types: ["integer", "number"] },
  { prop: "maximum", key: "maximum", types: ["integer", "number"] },
  { prop: "values", key: "values", types: ["enum"] },
  { prop: "items", key: "items", types: ["array", "map"] },
  { prop: "maxItems", key: "max_items", types: ["array", "map"] },
  { prop: "fields", key: "fields", types: ["object"] },
  { prop: "precision", key: "precision", types: ["decimal"] },
  { prop: "scale", key: "scale", types: ["decimal"] },
];

/** The options a type cannot do without: the model property, the YAML key, an example for the fix. */
const requiredOptions: Partial<Record<FieldType, ReadonlyArray<{ prop: keyof FieldDef; key: string; example: string }>>> = {
  enum: [{ prop: "values", key: "values", example: "values: [first, second]" }],
  array: [{ prop: "items", key: "items", example: "items: { type: string }" }],
  object: [{ prop: "fields", key: "fields", example: "fields: { name: { type: string } }" }],
  map: [{ prop: "items", key: "items", example: "items: { type: string, max_length: 500 }" }],
  decimal: [
    { prop: "precision", key: "precision", example: "precision: 12" },
    { prop: "scale", key: "scale", example: "scale: 2" },
  ],
};

/** A decimal's bounds as the model keeps them (strings), by the YAML key they are written under. */
const decimalBounds: ReadonlyArray<{ prop: "decimalMinimum" | "decimalMaximum"; key: string }> = [
  { prop: "decimalMinimum", key: "minimum" },
  { prop: "decimalMaximum", key: "maximum" },
];

export function optionRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    for (const { field, place, path } of walkFields(r)) {
      const bad = checkOptions(ctx, field, place, path);
      if (field.hasDefault && !bad) {
        const problem = fitsDefault(field, field.default);
        if (problem) {
          const fix =
            field.default === null
              ? "add nullable: true, or remove the default"
              : field.type === "enum" && typeof field.default === "string"
                ? `use one of: ${(field.values ?? []).join(", ")}`
                : "change the default to a valid value of the field, or remove it";
          ctx.report("field-default", field.at("default"), `default of ${q(path)}: ${problem}`, fix);
        }
      }
    }
  }
}

/**
 * A decimal's options: precision 1 to 38, scale 0 to precision, bounds as decimal strings within
 * them and in order. True when something was reported.
 */
function checkDecimal(f: FieldDef, path: string, report: (key: string, message: string, fix: string) => void): boolean {
  let bad = false;
  const say = (key: string, message: string, fix: string) => {
    bad = true;
    report(key, message, fix);
  };
  for (const [key, value] of [["minimum", f.minimum], ["maximum", f.maximum]] as const) {
    if (value !== undefined) say(key, `${key} of decimal field ${q(path)} is a number: a decimal's bounds are strings, so that no digit is lost`, `quote it: ${key}: "${value}"`);
  }
  const { precision, scale } = f;
  if (precision !== undefined && (precision < 1 || precision > maxPrecision)) {
    say("precision", `precision ${precision} of ${q(path)} is not from 1 to ${maxPrecision}`, `use a precision from 1 to ${maxPrecision}, such as precision: 12`);
  }
  if (scale !== undefined && precision !== undefined && (scale < 0 || scale > precision)) {
    say("scale", `scale ${scale} of ${q(path)} is not from 0 to its precision ${precision}`, `use a scale from 0 to ${precision}, such as scale: ${Math.min(2, precision)}`);
  }
  if (bad || precision === undefined || scale === undefined) return bad;
  const bounds: Array<["minimum" | "maximum", string | undefined]> = [["minimum", f.decimalMinimum], ["maximum", f.decimalMaximum]];
  for (const [key, value] of bounds) {
    if (value === undefined) continue;
    const problem = decimalProblem(value, precision, scale);
    if (problem) say(key, `${key} ${q(value)} of ${q(path)} is not a decimal of precision ${precision} and scale ${scale}: it ${problem}`, `write a decimal string such as "${"9".repeat(Math.max(1, Math.min(precision - scale, 5)))}${scale ? `.${"9".repeat(scale)}` : ""}"`);
  }
  if (!bad && f.decimalMinimum !== undefined && f.decimalMaximum !== undefined && compareDecimals(f.decimalMinimum, f.decimalMaximum, scale) > 0) {
    say("minimum", `minimum ${f.decimalMinimum} of ${q(path)} is greater than its maximum ${f.decimalMaximum}`, "make minimum at most maximum");
  }
  return bad;
}

/** How many maps deep a value of `f` nests: through map values, array items and object fields. */
function mapDepth(f: FieldDef): number {
  const inner = Math.max(0, ...(f.items ? [mapDepth(f.items)] : []), ...(f.fields ?? []).map(mapDepth));
  return inner + (f.type === "map" ? 1 : 0);
}

/** The collection some uuid inside a map's values references, if any. */
function mapItemsReferencing(f: FieldDef): string | undefined {
  const inside = (g: FieldDef): string | undefined =>
    g.references ?? (g.items ? inside(g.items) : undefined) ?? (g.fields ?? []).map(inside).find((r) => r !== undefined);
  return f.items ? inside(f.items) : undefined;
}

/** Reports option problems of one field; true when the field's options are inconsistent. */
function checkOptions(ctx: LintContext, f: FieldDef, place: FieldPlace, path: string): boolean {
  let bad = false;
  const report = (key: string, message: string, fix: string) => {
    bad = true;
    ctx.report("field-option", f.at(key), message, fix);
  };
  for (const { prop, key, types } of typeOptions) {
    // A decimal's numeric bounds are reported below, with how to write them.
    if (f[prop] === undefined || types.includes(f.type) || (f.type === "decimal" && (prop === "minimum" || prop === "maximum"))) continue;
    report(key, `${key} does not apply to ${q(path)}, which is type ${f.type}: it applies to ${types.join(" and ")} only`, `remove ${key}, or change the type`);
  }
  for (const { prop, key, example } of requiredOptions[f.type] ?? []) {
    if (f[prop] === undefined) report("type", `${q(path)} is type ${f.type} and needs ${key}`, `add ${example}`);
  }
  if (f.onDelete !== undefined && f.references === undefined) {
    report("on_delete", `on_delete of ${q(path)} applies to a field with references`, "add references: <collection>, or remove on_delete");
  }
  if (f.type === "object" && f.fields && f.fields.length === 0) report("fields", `object field ${q(path)} has no fields`, "declare its fields, or remove the field");
  if (f.type === "enum" && f.values) {
    const dup = f.values.find((v, i) => f.values!.indexOf(v) !== i);
    if (dup !== undefined) report("values", `enum ${q(path)} lists the value ${q(dup)} twice`, "list each value once");
    if (f.values.some((v) => v.length === 0)) report("values", `enum ${q(path)} has an empty value`, "remove the empty value");
  }
  if (f.schemes !== undefined && f.format !== "uri") {
    report("schemes", `schemes of ${q(path)} apply to format: uri only`, "add format: uri, or remove schemes");
  }
  if (f.type === "string") {
    if (f.minLength !== undefined && f.maxLength !== undefined && f.minLength > f.maxLength) {
      report("min_length", `min_length ${f.minLength} of ${q(path)} is greater than its max_length ${f.maxLength}`, "make min_length at most max_length");
    }
    if (f.pattern !== undefined) {
      try {
        new RegExp(f.pattern);
      } catch (error) {
        report("pattern", `pattern of ${q(path)} is not a valid regular expression: ${(error as Error).message}`, "write a JavaScript regular expression, such as '^[A-Z]{3}$'");
      }
    }
  }
  if (f.type === "integer" || f.type === "number") {
    if (f.minimum !== undefined && f.maximum !== undefined && f.minimum > f.maximum) {
      report("minimum", `minimum ${f.minimum} of ${q(path)} is greater than its maximum ${f.maximum}`, "make minimum at most maximum");
    }
    if (f.type === "integer") {
      for (const [prop, key] of [["minimum", "minimum"], ["maximum", "maximum"]] as const) {
        const v = f[prop];
        if (v !== undefined && !Number.isInteger(v)) report(key, `${key} ${v} of integer field ${q(path)} is not an integer`, `use a whole number, or make the field type number`);
      }
    }
  }
  for (const { prop, key } of decimalBounds) {
    const v = f[prop];
    if (v !== undefined && f.type !== "decimal") {
      const applies = f.type === "integer" || f.type === "number";
      report(
        key,
        applies ? `${key} of ${q(path)} is the string ${q(v)}: ${f.type} bounds are numbers` : `${key} does not apply to ${q(path)}, which is type ${f.type}: it applies to integer, number and decimal only`,
        applies ? `write it as a number: ${key}: ${Number.isFinite(Number(v)) ? Number(v) : 0}` : `remove ${key}, or change the type`,
      );
    }
  }
  if (f.type === "decimal") bad = checkDecimal(f, path, report) || bad;
  if (f.type === "map") {
    if (f.maxItems !== undefined && f.maxItems > MAP_MAX_KEYS) {
      bad = true;
      ctx.report(
        "map-max-items",
        f.at("max_items"),
        `max_items ${f.maxItems} of ${q(path)} is over ${MAP_MAX_KEYS}: a map holds at most ${MAP_MAX_KEYS} keys`,
        `use max_items: ${MAP_MAX_KEYS} or less (the default is ${MAP_MAX_KEYS}); model more entries as a child collection with parent:`,
      );
    }
    if (f.items && mapDepth(f) > mapDepthLimit) {
      bad = true;
      ctx.report(
        "map-nesting",
        f.at("items"),
        `${q(path)} nests maps ${mapDepth(f)} deep: maps nest at most ${mapDepthLimit} deep (a map of maps)`,
        "give the inner map's values a type that is not a map, or declare the structure with type: object and its fields",
      );
    }
    const referencing = mapItemsReferencing(f);
    if (referencing) report("items", `the values of map ${q(path)} reference ${q(referencing)}: references inside a map are not checked`, "use an array of ids (items: { type: uuid, references: ... }), or remove references");
  }
  if (f.type === "array" && f.maxItems !== undefined && f.maxItems > maxItemsLimit) {
    bad = true;
    ctx.report(
      "array-max-items",
      f.at("max_items"),
      `max_items ${f.maxItems} of ${q(path)} is over ${maxItemsLimit}: no response holds more than ${maxItemsLimit} records`,
      `use max_items: ${maxItemsLimit} or less (the default is ${maxItemsLimit}); model a longer list as a child collection with parent:`,
    );
  }
  if (f.readOnly && f.writeOnly) {
    report("write_only", `${q(path)} is both read_only and write_only, so it could never be set or seen`, "keep one of read_only and write_only");
  }
  if (f.unique) {
    if (!uniqueTypes.has(f.type)) {
      report("unique", `unique does not apply to ${q(path)}, which is type ${f.type}`, `remove unique; it applies to ${[...uniqueTypes].join(", ")}`);
    } else if (place === "object" || place === "items") {
      report("unique", `unique applies to a resource's own fields, not to ${q(path)} inside another field`, "remove unique, or move the field to the top level of the resource");
    } else if (f.writeOnly) {
      report("unique", `${q(path)} is write_only and unique: a 409 would tell a client that another record holds a value that is never returned`, "remove unique, or make the field readable");
    }
  }
  if (place === "object") {
    // An object is written and returned whole: no request body refuses, and no answer, event or
    // export leaves out, one of its fields (SPEC §12: nothing accepted and silently ignored).
    for (const [set, key, what] of [
      [f.readOnly, "read_only", "accepted from clients"],
      [f.writeOnly, "write_only", "returned"],
    ] as const) {
      if (set) report(key, `${key} does not apply to ${q(path)}, a field inside an object: an object is ${what} whole`, `move ${key} to the object field itself, or declare ${q(f.name)} at the top level`);
    }
  }
  if (place === "items") {
    const kind = path.endsWith(".*") ? "a map" : "an array";
    const modifiers: Array<[boolean, string]> = [
      [f.optional, "optional"],
      [f.hasDefault, "default"],
      [f.readOnly, "read_only"],
      [f.writeOnly, "write_only"],
    ];
    for (const [set, key] of modifiers) {
      if (set) report(key, `${key} does not apply to the items of ${kind}; it applies to the ${kind === "a map" ? "map" : "array"} field itself`, `move ${key} next to the ${kind === "a map" ? "map" : "array"}'s type`);
    }
    // Each id of an array of references names a record (a relation is a link table on SQL, which
    // holds no null): a null would be kept by one store and refused by another.
    if (f.nullable && f.references !== undefined && kind === "an array") {
      report("nullable", `the items of ${q(path.slice(0, -2))} reference ${f.references}: each names a record, and null names none`, "remove nullable from the items; leave an id out of the array rather than send null");
    }
  }
  return bad;
}
