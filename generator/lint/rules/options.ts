import type { FieldDef, FieldType } from "../../model/types.ts";
import { q, walkFields, type FieldPlace, type LintContext } from "../context.ts";
import { fitsDefault } from "./defaults.ts";

/**
 * field-option, array-max-items, field-default: every option applies to its field's type,
 * options agree with each other, arrays stay within 100 items, defaults fit their field.
 */
const maxItemsLimit = 100;

const uniqueTypes: ReadonlySet<FieldType> = new Set(["string", "integer", "number", "uuid", "date", "datetime", "enum"]);

/** Options that belong to one type: [model property, YAML key, types it applies to]. */
const typeOptions: Array<[keyof FieldDef, string, FieldType[]]> = [
  ["minLength", "min_length", ["string"]],
  ["maxLength", "max_length", ["string"]],
  ["pattern", "pattern", ["string"]],
  ["format", "format", ["string"]],
  ["minimum", "minimum", ["integer", "number"]],
  ["maximum", "maximum", ["integer", "number"]],
  ["values", "values", ["enum"]],
  ["items", "items", ["array"]],
  ["maxItems", "max_items", ["array"]],
  ["fields", "fields", ["object"]],
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

/** Reports option problems of one field; true when the field's options are inconsistent. */
function checkOptions(ctx: LintContext, f: FieldDef, place: FieldPlace, path: string): boolean {
  let bad = false;
  const report = (key: string, message: string, fix: string) => {
    bad = true;
    ctx.report("field-option", f.at(key), message, fix);
  };
  for (const [prop, key, types] of typeOptions) {
    if (f[prop] === undefined || types.includes(f.type)) continue;
    report(key, `${key} does not apply to ${q(path)}, which is type ${f.type}: it applies to ${types.join(" and ")} only`, `remove ${key}, or change the type`);
  }
  const required: Array<[FieldType, keyof FieldDef, string, string]> = [
    ["enum", "values", "values", "values: [first, second]"],
    ["array", "items", "items", "items: { type: string }"],
    ["object", "fields", "fields", "fields: { name: { type: string } }"],
  ];
  for (const [type, prop, key, example] of required) {
    if (f.type === type && f[prop] === undefined) report("type", `${q(path)} is type ${type} and needs ${key}`, `add ${example}`);
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
    }
  }
  if (place === "items") {
    const modifiers: Array<[boolean, string]> = [
      [f.optional, "optional"],
      [f.hasDefault, "default"],
      [f.readOnly, "read_only"],
      [f.writeOnly, "write_only"],
    ];
    for (const [set, key] of modifiers) {
      if (set) report(key, `${key} does not apply to the items of an array; it applies to the array field itself`, `move ${key} next to the array's type`);
    }
  }
  return bad;
}
