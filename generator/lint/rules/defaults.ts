import { compareDecimals, decimalProblem } from "../../../runtime/decimal.ts";
import { isMapKey } from "../../../runtime/map.ts";
import type { FieldDef } from "../../model/types.ts";
import { dateValue, q } from "../context.ts";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const datetimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Why `value` is not a valid value of `field`, as the end of a sentence; undefined when it fits. */
export function fitsDefault(field: FieldDef, value: unknown): string | undefined {
  if (value === null) return field.nullable ? undefined : "null is not allowed: the field is not nullable";
  const shown = shorten(q(value));
  switch (field.type) {
    case "string": {
      if (typeof value !== "string") return `${shown} is not a string`;
      if (field.minLength !== undefined && value.length < field.minLength) return `${shown} is shorter than min_length ${field.minLength}`;
      if (field.maxLength !== undefined && value.length > field.maxLength) return `${shown} is longer than max_length ${field.maxLength}`;
      if (field.pattern !== undefined) {
        let re: RegExp | undefined;
        try {
          re = new RegExp(field.pattern);
        } catch {
          re = undefined;
        }
        if (re && !re.test(value)) return `${shown} does not match the pattern ${field.pattern}`;
      }
      if (field.format === "email" && !emailPattern.test(value)) return `${shown} is not an email address`;
      if (field.format === "uri" && !URL.canParse(value)) return `${shown} is not an absolute URI`;
      return undefined;
    }
    case "integer":
    case "number": {
      if (typeof value !== "number" || !Number.isFinite(value)) return `${shown} is not a number`;
      if (field.type === "integer" && !Number.isInteger(value)) return `${shown} is not an integer`;
      if (field.minimum !== undefined && value < field.minimum) return `${shown} is below the minimum ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `${shown} is above the maximum ${field.maximum}`;
      return undefined;
    }
    case "boolean":
      return typeof value === "boolean" ? undefined : `${shown} is not true or false`;
    case "uuid":
      return typeof value === "string" && uuidPattern.test(value) ? undefined : `${shown} is not a UUID`;
    case "date":
      return typeof value === "string" && dateValue(value) !== undefined ? undefined : `${shown} is not a date such as 2026-01-31`;
    case "datetime":
      return typeof value === "string" && datetimePattern.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : `${shown} is not a date-time such as 2026-01-31T12:00:00Z`;
    case "enum":
      return typeof value === "string" && (field.values ?? []).includes(value)
        ? undefined
        : `${shown} is not one of the values ${(field.values ?? []).join(", ")}`;
    case "array": {
      if (!Array.isArray(value)) return `${shown} is not a list`;
      if (field.maxItems !== undefined && value.length > field.maxItems) return `${value.length} items are more than max_items ${field.maxItems}`;
      if (!field.items) return undefined;
      for (const [i, item] of value.entries()) {
        const problem = fitsDefault(field.items, item);
        if (problem) return `item ${i}: ${problem}`;
      }
      return undefined;
    }
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) return `${shown} is not an object`;
      const record = value as Record<string, unknown>;
      const fields = field.fields ?? [];
      const unknown = Object.keys(record).find((k) => !fields.some((f) => f.name === k));
      if (unknown !== undefined) return `the key ${q(unknown)} is not a field of the object`;
      for (const sub of fields) {
        if (!(sub.name in record)) {
          if (!sub.optional && !sub.hasDefault) return `the required field ${q(sub.name)} is missing`;
          continue;
        }
        const problem = fitsDefault(sub, record[sub.name]);
        if (problem) return `field ${q(sub.name)}: ${problem}`;
      }
      return undefined;
    }
    case "decimal": {
      if (typeof value === "number") return `${shown} is a number: write the decimal as a string, "${value}"`;
      if (typeof value !== "string") return `${shown} is not a decimal string`;
      if (field.precision === undefined || field.scale === undefined) return undefined;
      const problem = decimalProblem(value, field.precision, field.scale);
      if (problem) return `${shown} ${problem}`;
      if (field.decimalMinimum !== undefined && compareDecimals(value, field.decimalMinimum, field.scale) < 0) return `${shown} is below the minimum ${field.decimalMinimum}`;
      if (field.decimalMaximum !== undefined && compareDecimals(value, field.decimalMaximum, field.scale) > 0) return `${shown} is above the maximum ${field.decimalMaximum}`;
      return undefined;
    }
    case "map": {
      if (typeof value !== "object" || Array.isArray(value)) return `${shown} is not a map (an object)`;
      const entries = Object.entries(value as Record<string, unknown>);
      if (field.maxItems !== undefined && entries.length > field.maxItems) return `${entries.length} keys are more than max_items ${field.maxItems}`;
      for (const [key, item] of entries) {
        if (!isMapKey(key)) return `the key ${q(key)} is not 1 to 40 letters, digits, _, - or .`;
        const problem = field.items ? fitsDefault(field.items, item) : undefined;
        if (problem) return `key ${q(key)}: ${problem}`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
