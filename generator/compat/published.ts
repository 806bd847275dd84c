import { componentPointer, documentParts, partDigestOf, type PartDigestTable } from "./parts.ts";
import type { Json, JsonObject } from "./types.ts";

/**
 * A published document read only as far as the gate needs it: its text is the one a run wrote
 * (`JSON.stringify(document, null, 2)`, emit/index.ts) and `table` the digests of its parts
 * recorded then, by the digest of that very text (gate.ts). Each path item whose operations
 * have the digests of the new document's (`now`), and each component with the digest of the new
 * one, is taken from `now` (the same content); only the others are parsed, from their slice of
 * the text. The result has the content and the key order of `JSON.parse(text)` (a test holds the
 * two equal), at a fraction of the cost when one resource changed: it is undefined when the text
 * is not laid out as that writer lays it out.
 */
export function publishedDocument(text: string, table: PartDigestTable, now: JsonObject): JsonObject | undefined {
  const top = members(text, 0, text.trimEnd().length, 2);
  if (!top) return undefined;
  const parts = documentParts(now);
  const doc: JsonObject = {};
  for (const { key, start, end } of top) {
    if (key === "paths") {
      const paths = members(text, start, end, 4);
      if (!paths) return undefined;
      const items: JsonObject = {};
      for (const path of paths) {
        const item = parts.paths.get(path.key);
        items[path.key] = item && sameOperations(item, table.operations[path.key]) ? item : (JSON.parse(text.slice(path.start, path.end)) as Json);
      }
      doc.paths = items;
    } else if (key === "components") {
      const kinds = members(text, start, end, 4);
      if (!kinds) return undefined;
      const components: JsonObject = {};
      for (const kind of kinds) {
        const named = members(text, kind.start, kind.end, 6);
        if (!named) return undefined;
        const values: JsonObject = {};
        for (const component of named) {
          const pointer = componentPointer(kind.key, component.key);
          const value = parts.components.get(pointer);
          const digest = table.components[pointer];
          values[component.key] = value !== undefined && digest !== undefined && partDigestOf(value) === digest ? value : (JSON.parse(text.slice(component.start, component.end)) as Json);
        }
        components[kind.key] = values;
      }
      doc.components = components;
    } else {
      doc[key] = JSON.parse(text.slice(start, end)) as Json;
    }
  }
  return doc;
}

/** Whether a path item of the new document has exactly the operations, in order, whose digests the table records. */
function sameOperations(item: JsonObject, recorded: Record<string, string> | undefined): boolean {
  if (!recorded) return false;
  const methods = Object.keys(item);
  const before = Object.keys(recorded);
  return methods.length === before.length && methods.every((m, i) => m === before[i] && partDigestOf(item[m]!) === recorded[m]);
}

/**
 * The members of the object whose text is `text.slice(start, end)`, as `JSON.stringify(…, null, 2)`
 * writes one whose members are indented by `indent`: each member's key and the slice of its value.
 * A string never holds a raw line break, so a line that starts with `indent` spaces and a quote is
 * one of these members' keys (deeper lines are indented further, and the lines that close a
 * member's value start with a bracket). Undefined when the text is not laid out so.
 */
function members(text: string, start: number, end: number, indent: number): Array<{ key: string; start: number; end: number }> | undefined {
  if (text.slice(start, end) === "{}") return [];
  const marker = `\n${" ".repeat(indent)}"`;
  const closing = `\n${" ".repeat(indent - 2)}}`;
  if (text[start] !== "{" || !text.startsWith(closing, end - closing.length)) return undefined;
  const found: Array<{ key: string; start: number; end: number }> = [];
  let line = text.indexOf(marker, start);
  while (line >= 0 && line < end) {
    const quote = line + marker.length - 1;
    const close = stringEnd(text, quote);
    if (!text.startsWith(": ", close)) return undefined;
    const next = text.indexOf(marker, close);
    const last = next < 0 || next >= end;
    const valueEnd = last ? end - closing.length : next - 1;
    if (!last && text[valueEnd] !== ",") return undefined;
    found.push({ key: JSON.parse(text.slice(quote, close)) as string, start: close + 2, end: valueEnd });
    line = last ? -1 : next;
  }
  return found;
}

/** Past the closing quote of the JSON string that opens at `quote`. */
function stringEnd(text: string, quote: number): number {
  let i = quote + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}
