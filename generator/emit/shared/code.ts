import type { VersionField } from "../../model/types.ts";

/** A JavaScript literal for a JSON-like value, with stable key order. */
export function literal(value: unknown): string {
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return `[${value.map(literal).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{ ${entries.map(([k, v]) => `${propertyKey(k)}: ${literal(v)}`).join(", ")} }`;
  }
  if (typeof value === "number") return numberLiteral(value);
  return JSON.stringify(value);
}

/** A number as prettier prints it: `1e21`, not `1e+21`. */
export function numberLiteral(value: number): string {
  return String(value).replace("e+", "e");
}

export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/**
 * A regular-expression literal for a definition's pattern: every `/` that is not escaped yet is
 * escaped (also inside a character class, where it is harmless), and line breaks are written as
 * escapes, since a literal cannot hold them.
 */
export function regexLiteral(pattern: string): string {
  const breaks: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\u2029": "\\u2029" };
  let out = "";
  let escaped = false;
  for (const ch of pattern) {
    if (escaped) {
      // An escaped line break is the line break itself.
      out = breaks[ch] ? out.slice(0, -1) + breaks[ch] : out + ch;
      escaped = false;
    } else if (ch === "\\") {
      out += ch;
      escaped = true;
    } else {
      out += ch === "/" ? "\\/" : (breaks[ch] ?? ch);
    }
  }
  return `/${out}/`;
}

/**
 * The TypeScript type of a field's value. `shadowed`: the names the file declares itself (a
 * collection `records` declares `Record`); TypeScript's own of them is written `globalThis.Record`.
 */
export function tsType(field: VersionField, shadowed: ReadonlySet<string> = NOTHING): string {
  const base = baseType(field, shadowed);
  return field.nullable ? `${base} | null` : base;
}

const NOTHING: ReadonlySet<string> = new Set();

function baseType(field: VersionField, shadowed: ReadonlySet<string>): string {
  const global = (name: string) => (shadowed.has(name) ? `globalThis.${name}` : name);
  switch (field.type) {
    case "string":
    case "uuid":
    case "date":
    case "datetime":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "enum":
      return (field.values ?? []).map((v) => JSON.stringify(v)).join(" | ");
    case "array": {
      const item = field.items ? tsType(field.items, shadowed) : "unknown";
      return /[|]/.test(item) ? `${global("Array")}<${item}>` : `${item}[]`;
    }
    case "object":
      return `{ ${(field.fields ?? []).map((f) => `${propertyKey(f.name)}${f.optional ? "?" : ""}: ${tsType(f, shadowed)}`).join("; ")} }`;
    case "decimal":
      // Exact: the decimal's canonical text, never a number.
      return "string";
    case "map":
      return `${global("Record")}<string, ${field.items ? tsType(field.items, shadowed) : "unknown"}>`;
  }
}

/** Text that can stand inside a `/** … *\/` comment: a `*\/` in it would end the comment. */
export function commentText(text: string): string {
  return text.replace(/\*\//g, "*\\/").trim();
}

/** JSDoc text for a field: its description and its limits, in one line. */
export function fieldDoc(field: VersionField): string | undefined {
  const notes: string[] = [];
  if (field.description) notes.push(commentText(field.description));
  if (field.type === "uuid") notes.push(field.references ? `UUID of a record of ${field.references}.` : "A UUID.");
  if (field.format) notes.push(`Format: ${field.format}.`);
  if (field.type === "date") notes.push("ISO date, YYYY-MM-DD.");
  if (field.type === "datetime") notes.push("ISO date-time.");
  if (field.type === "decimal") notes.push(`Decimal string, ${field.precision} digits, ${field.scale} after the point.`);
  if (field.type === "map") notes.push(`At most ${field.maxItems ?? 100} keys of 1 to 40 letters, digits, _, - or .`);
  return notes.length ? notes.join(" ") : undefined;
}

/** `a`, `a or b`, `a, b or c`: a list of alternatives in prose. */
export function orList(items: readonly string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}
