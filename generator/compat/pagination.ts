import { obj, resolve } from "./resolve.ts";
import type { Json, JsonObject } from "./types.ts";

/** Parameters that belong to the pagination mode rather than to the resource. */
export const paginationParameters = new Set(["query:limit", "query:cursor", "query:page", "query:per_page"]);

/**
 * The pagination modes a list response may answer in: `cursor`, `offset`, or both (an offset
 * list answers a search in cursor mode). Empty when the schema is not a page.
 */
export function paginationModes(doc: JsonObject, schema: Json | undefined): string {
  const top = resolve(doc, schema, "#").node;
  const variants = Array.isArray(top.oneOf) ? top.oneOf : Array.isArray(top.anyOf) ? top.anyOf : [top];
  const modes = new Set<string>();
  for (const v of variants) {
    const page = resolve(doc, v, "#").node;
    const pagination = obj(resolve(doc, obj(page.properties).pagination, "#").node.properties);
    if ("next_cursor" in pagination) modes.add("cursor");
    if ("total_pages" in pagination || "page" in pagination) modes.add("offset");
  }
  return [...modes].sort().join("+");
}

/** `cursor`, `offset` (a search answers in cursor mode), in words. */
export function describeModes(modes: string): string {
  return modes === "cursor+offset" ? "offset (cursor for a search)" : modes;
}
