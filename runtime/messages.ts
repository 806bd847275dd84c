/**
 * canon's words for every validation problem, in one place. zod says what failed; this error
 * map says it to the client, the same way for every field and parameter, naming the limit:
 * "must be at least 0", "must be at most 500 characters", "must match ^ORD-[0-9]{6}$". A
 * message a schema sets itself comes first, as zod ranks a schema's own error above the map
 * given to `safeParse`: those messages are the ISSUES below, so that every word a client reads
 * in a detail is written here.
 */
import type { z } from "zod";

/** The issues that schemas and handlers name themselves (page sizes, cursors, UUIDs, …). */
export const ISSUES = {
  required: "is required",
  notAllowed: "is not allowed",
  readOnly: "is read-only",
  uuid: "must be a valid UUID",
  integer: "must be an integer",
  number: "must be a number",
  boolean: "must be true or false",
  text: "must be a string",
  once: "must be given once (list several values comma-separated, as the parameter's description says)",
  jsonObject: "must be a JSON object",
  page: "must be an integer of 1 or more",
  pageSize: (max: number) => `must be an integer from 1 to ${max}`,
  /** An integer in a query written with a leading zero (`05`): the issue of its parameter, and why. */
  leadingZero: (issue: string) => `${issue}, written without a leading zero`,
  cursor: "must be a cursor from next_cursor",
  foreignCursor: "is not a cursor of this list: use next_cursor as returned",
  ifMatch: "does not match the current ETag",
  /** A text's length: "must be at least 3 characters". */
  length: (side: "least" | "most", limit: number) => bound(side, "string", limit),
  /** A `decimal` (./decimal.ts): its form and digits, then its bounds. */
  decimal: (precision: number, scale: number) => {
    const integer = precision - scale >= 2 ? "12" : precision - scale === 1 ? "1" : "0";
    const example = scale === 0 ? integer : `${integer}.${"5".padEnd(scale, "0")}`;
    return scale === 0
      ? `must be a decimal string of at most ${precision} digits, such as "${example}"`
      : `must be a decimal string with at most ${precision - scale} digits before the point and ${scale} after, such as "${example}"`;
  },
  decimalBound: (side: "least" | "most", limit: string) => `must be at ${side} ${limit}`,
  /** A key of a `map`, and its number of keys. */
  mapKey: "is not a valid key: 1 to 40 letters, digits, _, - or .",
  mapSize: (max: number) => `must have at most ${max} key${max === 1 ? "" : "s"}`,
  /** Parameters of the other mode of an offset list (./lists.ts). */
  /** `[in]` with too many values. */
  inCount: (max: number) => `must list at most ${max} comma-separated values`,
  /** A value of `[in]` that is not valid for its field: "each value must be one of: open, closed". */
  eachValue: (issue: string) => `each value ${issue}`,
  sortKeys: (names: readonly string[]) =>
    names.length
      ? `must be comma-separated keys among ${names.join(", ")}, each optionally preceded by - for descending order`
      : "is not allowed: this list has no sort keys",
  sortCount: (max: number) => `must name at most ${max} keys`,
  sortTwice: (name: string) => `names ${name} twice`,
  listMode: {
    search: "is not allowed in a search (with q): pages of a search take limit and cursor",
    offset: "is not allowed without q: pages of this list take page and per_page",
  },
} as const;

/** What a JSON value of each type is called in a message. */
const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  record: "an object",
  date: "a date",
};

/** What a string of each zod format must be. */
const FORMATS: Record<string, string> = {
  email: "must be an email address",
  url: "must be a URL",
  uuid: ISSUES.uuid,
  date: "must be a date (YYYY-MM-DD)",
  datetime: "must be a date-time with a time zone (YYYY-MM-DDTHH:MM:SSZ)",
};

/** The message of one issue: canon's error map, given to every `safeParse` of ./http.ts. */
export function validationMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined) return ISSUES.required;
      const expected = TYPE_NAMES[isInteger(issue.inst) ? "int" : issue.expected] ?? issue.expected;
      return issue.input === null ? `must be ${expected}, not null` : `must be ${expected}`;
    }
    case "too_small":
      return bound("least", issue.origin, issue.minimum, issue.inclusive);
    case "too_big":
      return bound("most", issue.origin, issue.maximum, issue.inclusive);
    case "invalid_format":
      if (issue.format === "regex") return `must match ${patternText(issue.pattern)}`;
      return FORMATS[issue.format] ?? `must be in the format ${issue.format}`;
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${show(issue.values[0])}`
        : `must be one of: ${issue.values.map(show).join(", ")}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}`;
    case "unrecognized_keys":
      return ISSUES.notAllowed;
    case "invalid_key":
      return ISSUES.mapKey;
    default:
      return "is not valid";
  }
}

/**
 * The issue of a detail: its message, except that a missing value is always "is required",
 * even where a schema sets its own message for wrong values (`uuidSchema`).
 */
export function detailIssue(issue: z.core.$ZodIssue): string {
  return issue.code === "invalid_type" && issue.input === undefined ? ISSUES.required : issue.message;
}

/** Is this schema `z.int()` (an integer format of number)? */
function isInteger(inst: unknown): boolean {
  const def = (inst as { _zod?: { def?: { type?: string; format?: string } } } | undefined)?._zod?.def;
  return (
    def?.type === "number" && (def.format === "safeint" || def.format === "int32" || def.format === "uint32")
  );
}

/** "must be at least 0", "must be at most 500 characters", "must have at most 100 items". */
function bound(side: "least" | "most", origin: string, limit: number | bigint, inclusive = true): string {
  const n = String(limit);
  switch (origin) {
    case "string":
      return `must be at ${side} ${n} character${n === "1" ? "" : "s"}`;
    case "array":
    case "set":
      return `must have at ${side} ${n} item${n === "1" ? "" : "s"}`;
    default:
      if (!inclusive) return `must be ${side === "least" ? "greater" : "less"} than ${n}`;
      return `must be at ${side} ${n}`;
  }
}

/** `/^A$/` (as zod reports a pattern) → `^A$`. */
function patternText(pattern: string | undefined): string {
  if (!pattern) return "the pattern";
  const m = /^\/(.*)\/[a-z]*$/s.exec(pattern);
  return m ? m[1]! : pattern;
}

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
