/**
 * `decimal` values (SPEC §12.6). A decimal is exact: it stays a string from the
 * request to the store and back, and is compared as a BigInt of its scaled digits, never as a
 * JavaScript number. Only reading, normalizing and comparing are needed, so this is written by
 * hand rather than taken from a decimal arithmetic library. The generator imports the same
 * functions to check and normalize the definitions' bounds and defaults: one definition, both
 * sides.
 */
import { z } from "zod";
import { ISSUES } from "./messages.ts";

/** A decimal as a client may send it: JSON number grammar without exponent, as a string. */
const DECIMAL_TEXT = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?$/;

/** The parts of a decimal text, or undefined when it is not one (`1e3`, `+1`, `NaN`, `.5`, `01`). */
export function decimalParts(
  text: string,
): { negative: boolean; integer: string; fraction: string } | undefined {
  const m = DECIMAL_TEXT.exec(text);
  if (!m) return undefined;
  return { negative: m[1] === "-", integer: m[2]!, fraction: m[3] ?? "" };
}

/**
 * Why `text` is not a decimal of `numeric(precision, scale)`, or undefined when it is one: at
 * most `precision - scale` digits before the point and `scale` after it.
 */
export function decimalProblem(text: string, precision: number, scale: number): string | undefined {
  // Longer than any valid value: refused before the pattern reads it.
  const parts = text.length <= precision + 3 ? decimalParts(text) : undefined;
  if (!parts) return ISSUES.decimal(precision, scale);
  const integerDigits = parts.integer === "0" ? 0 : parts.integer.length;
  if (integerDigits > precision - scale || parts.fraction.length > scale)
    return ISSUES.decimal(precision, scale);
  return undefined;
}

/**
 * The canonical form of a valid decimal: no leading zeros, exactly `scale` fraction digits
 * (padded with zeros), no minus sign on zero. `"12.5"` → `"12.50"`, `"-0"` → `"0.00"`.
 */
export function canonicalDecimal(text: string, scale: number): string {
  const parts = decimalParts(text);
  if (!parts) return text;
  const fraction = parts.fraction.padEnd(scale, "0");
  const zero = parts.integer === "0" && /^0*$/.test(fraction);
  const sign = parts.negative && !zero ? "-" : "";
  return scale > 0 ? `${sign}${parts.integer}.${fraction}` : `${sign}${parts.integer}`;
}

/** A valid decimal as an integer count of units of its last digit at `scale`: `"12.5"` at 2 → 1250n. */
export function scaledDecimal(text: string, scale: number): bigint {
  const parts = decimalParts(text);
  if (!parts) throw new Error(`not a decimal: ${text}`);
  const digits = BigInt(`${parts.integer}${parts.fraction.padEnd(scale, "0").slice(0, scale)}`);
  return parts.negative ? -digits : digits;
}

/** -1, 0 or 1 as `a` is below, equal to or above `b` (both valid decimals of at most `scale` fraction digits). */
export function compareDecimals(a: string, b: string, scale: number): number {
  const x = scaledDecimal(a, scale);
  const y = scaledDecimal(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

export interface DecimalBounds {
  minimum?: string;
  maximum?: string;
}

/**
 * zod schema of a `decimal` field: a JSON string (a JSON number answers 400: it may already have
 * lost digits), within precision, scale and bounds, read as its canonical form.
 */
export function decimalSchema(precision: number, scale: number, bounds: DecimalBounds = {}) {
  const issue = ISSUES.decimal(precision, scale);
  return z.string({ error: issue }).transform((text, ctx) => {
    const problem = decimalProblem(text, precision, scale);
    if (problem) {
      ctx.issues.push({ code: "custom", message: problem, input: text });
      return z.NEVER;
    }
    if (bounds.minimum !== undefined && compareDecimals(text, bounds.minimum, scale) < 0) {
      ctx.issues.push({ code: "custom", message: ISSUES.decimalBound("least", bounds.minimum), input: text });
      return z.NEVER;
    }
    if (bounds.maximum !== undefined && compareDecimals(text, bounds.maximum, scale) > 0) {
      ctx.issues.push({ code: "custom", message: ISSUES.decimalBound("most", bounds.maximum), input: text });
      return z.NEVER;
    }
    return canonicalDecimal(text, scale);
  });
}

/** A decimal field of a collection, as its writes must hold it (`ResourceSpec.decimals`). */
export interface DecimalField extends DecimalBounds {
  field: string;
  /**
   * Where the decimal is inside `field`, when it is not the field itself: each step a field of an
   * object, `[]` for every item of an array or `{}` for every value of a map
   * (`lines: [{ unit_price }]` is `{ field: "lines", path: ["[]", "unit_price"] }`).
   */
  path?: readonly string[];
  precision: number;
  scale: number;
}

/**
 * The decimals of `values` in their canonical form (`"1.5"` at scale 3 → `"1.500"`), for values a
 * hook set or wrote through its store handle, which no request validator read (SPEC §12.6: always
 * `scale` fraction digits, on every store). A value the field cannot hold (not a decimal's text,
 * too many digits, out of bounds) is the hook's fault, not the client's: it throws, and the
 * request answers 500 on every store, the error naming the field.
 */
export function decimalValues(
  fields: readonly DecimalField[] | undefined,
  values: Record<string, unknown>,
): void {
  if (!fields) return;
  for (const decimal of fields) {
    const value = values[decimal.field];
    // A value not of the shape the field declares is the hook's to keep (docs/hooks.md), written as given.
    const canonical = changedAt(
      value,
      decimal.path ?? [],
      (v, at) => canonicalOf(decimal, v, at),
      decimal.field,
    );
    if (canonical !== value) values[decimal.field] = canonical;
  }
}

/** The canonical form of a decimal a hook wrote at `at`, or the error that it is none its field can hold. */
function canonicalOf(decimal: DecimalField, value: unknown, at: string): string {
  const { precision, scale, minimum, maximum } = decimal;
  const problem =
    typeof value !== "string"
      ? ISSUES.decimal(precision, scale)
      : (decimalProblem(value, precision, scale) ??
        (minimum !== undefined && compareDecimals(value, minimum, scale) < 0
          ? ISSUES.decimalBound("least", minimum)
          : maximum !== undefined && compareDecimals(value, maximum, scale) > 0
            ? ISSUES.decimalBound("most", maximum)
            : undefined));
  if (problem)
    throw new Error(`a hook wrote ${JSON.stringify(value)} to the decimal field "${at}": it ${problem}`);
  return canonicalDecimal(value as string, scale);
}

/**
 * A decimal kept at another scale brought to `numeric(precision, scale)` (SPEC §12.6: always
 * `scale` fraction digits), as a migration converts a SQL store's values: its canonical text at the
 * new scale (`"1.20"` at 3 → `"1.200"`, `"1.200"` at 1 → `"1.2"`; a JSON number by its text), or
 * undefined when the new type cannot keep it exactly (`"1.25"` at scale 1, too many digits before
 * the point, a text that is no decimal).
 */
export function rescaledDecimal(
  value: string | number,
  precision: number,
  scale: number,
): string | undefined {
  const parts = decimalParts(typeof value === "number" ? String(value) : value);
  if (!parts || !/^0*$/.test(parts.fraction.slice(scale))) return undefined;
  const fraction = parts.fraction.slice(0, scale);
  const text = `${parts.negative ? "-" : ""}${parts.integer}${fraction ? `.${fraction}` : ""}`;
  return decimalProblem(text, precision, scale) ? undefined : canonicalDecimal(text, scale);
}

/**
 * `value` with each value that `path` reaches in it (a field of an object, `[]` every item of an
 * array, `{}` every value of a map: `DecimalField.path`) replaced by `change` of it, told where it
 * is (`at`, then the keys and indexes on the way: `lines.0.unit_price`): copies along the path, the
 * same object where nothing changes. A value not of the shape the path needs is left as it is, as
 * are `null` and a field left out.
 */
export function changedAt(
  value: unknown,
  path: readonly string[],
  change: (value: unknown, at: string) => unknown,
  at = "",
): unknown {
  if (value === undefined || value === null) return value;
  if (path.length === 0) return change(value, at);
  if (typeof value !== "object") return value;
  const [step, ...rest] = path as [string, ...string[]];
  if (step === "[]") {
    if (!Array.isArray(value)) return value;
    const items = value.map((item, i) => changedAt(item, rest, change, `${at}.${i}`));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (Array.isArray(value)) return value;
  const entries = value as Record<string, unknown>;
  const keys = step === "{}" ? Object.keys(entries) : Object.hasOwn(entries, step) ? [step] : [];
  let changed: Record<string, unknown> | null = null;
  for (const key of keys) {
    const next = changedAt(entries[key], rest, change, `${at}.${key}`);
    if (next !== entries[key]) (changed ??= { ...entries })[key] = next;
  }
  return changed ?? value;
}

/** Each value `path` reaches in `value` (see `changedAt`) with where it is: `at` and the keys and indexes on the way. */
export function valuesAt(
  value: unknown,
  path: readonly string[],
  at: string,
): Array<{ at: string; value: unknown }> {
  const found: Array<{ at: string; value: unknown }> = [];
  changedAt(
    value,
    path,
    (v, where) => {
      found.push({ at: where, value: v });
      return v;
    },
    at,
  );
  return found;
}
