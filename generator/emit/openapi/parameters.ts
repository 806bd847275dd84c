import type { ListCondition, ListSortKey, VersionResource } from "../../model/types.ts";
import { MAX_IN_VALUES, MAX_SORT_KEYS, SEARCH_MAX_LENGTH } from "../../../runtime/pagination.ts";
import { fieldSchema } from "./fieldSchema.ts";
import { ref, sortedObject, type Json, type JsonObject } from "./json.ts";

/**
 * Parameters: the shared page, cursor, search, If-Match and Idempotency-Key parameters in
 * `components/parameters`, and the per-operation path id and filter parameters.
 */

export function parameterComponents(searchMinLength: number): JsonObject {
  const pageSize: JsonObject = { type: "integer", minimum: 1, maximum: 100, default: 20 };
  const entries: Array<[string, Json]> = [
    ["limit", query("limit", "Page size in cursor mode (at most 100).", pageSize)],
    ["cursor", query("cursor", "Opaque: the `next_cursor` of the previous page.", { type: "string" })],
    [
      "q",
      query(
        "q",
        `Case-insensitive substring match over the resource's searchable fields, at least ${searchMinLength} characters (surrounding spaces not counted). A search always answers in cursor mode.`,
        { type: "string", minLength: searchMinLength, maxLength: SEARCH_MAX_LENGTH },
      ),
    ],
    ["page", query("page", "Page number in offset mode, from 1.", { type: "integer", minimum: 1, default: 1 })],
    ["per_page", query("per_page", "Page size in offset mode (at most 100).", pageSize)],
    [
      "If-Match",
      {
        name: "If-Match",
        in: "header",
        required: false,
        description: "The ETag of the version to change; when it is not the current one the answer is 409 and nothing changes.",
        schema: { type: "string" },
      },
    ],
    [
      "Idempotency-Key",
      {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description:
          "Makes the POST safe to retry: the first request with a key runs, and its success answer is kept for 24 hours for the caller; a repeat with the same key, path and body gets that answer again with `Idempotent-Replayed: true`, creating nothing. The same key with another path or body: 422; while the first is still running: 409. An error answer is not kept.",
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
      },
    ],
  ];
  return sortedObject(entries);
}

function query(name: string, description: string, schema: JsonObject): JsonObject {
  return { name, in: "query", required: false, description, schema };
}

/** The `{id}` path parameter: the record's id, or the parent's on a child list; `words`: what it names, in prose (`names.words`). */
export function idParameter(words: string): JsonObject {
  return {
    name: "id",
    in: "path",
    required: true,
    description: `The ${words}'s id (UUID v7).`,
    schema: { type: "string", format: "uuid" },
  };
}

export const ifMatchParameter = ref("parameters", "If-Match");

export const idempotencyKeyParameter = ref("parameters", "Idempotency-Key");

/**
 * Query parameters of a list in the resource's pagination mode, then `sort`, one per
 * exact-match filter, and one per operator filter under its full name (`due_at[gte]`).
 */
export function listParameters(resource: VersionResource): Json[] {
  const paging = resource.pagination === "offset" ? ["page", "per_page", "limit", "cursor", "q"] : ["limit", "cursor", "q"];
  return [
    ...paging.map((name) => ref("parameters", name)),
    ...(resource.sort.length ? [sortParameter(resource.sort)] : []),
    ...resource.filters.map((f): JsonObject =>
      query(f.name, `Only the records whose \`${f.name}\` equals this value.`, fieldSchema(f, "filter")),
    ),
    ...resource.conditions.map(conditionParameter),
  ];
}

/**
 * `sort`: comma-separated keys (form style, not exploded), each a field or `-` and a field. As an
 * array of an enum, removing a key is a narrowed input (breaking) and adding one is not.
 */
function sortParameter(keys: ListSortKey[]): JsonObject {
  const names = keys.map((k) => k.name);
  return {
    ...query(
      "sort",
      `Order of the list: up to ${MAX_SORT_KEYS} comma-separated keys among ${names.map((n) => `\`${n}\``).join(", ")}, each ascending, or descending with a leading \`-\`; \`id\` breaks ties in the direction of the last key, and records without a value come last either way. Enums sort in the order of their values, text by code point. Without \`sort\`: ascending \`id\`.`,
      {
        type: "array",
        items: { type: "string", enum: names.flatMap((n) => [n, `-${n}`]) },
        minItems: 1,
        maxItems: MAX_SORT_KEYS,
        uniqueItems: true,
      },
    ),
    style: "form",
    explode: false,
  };
}

const RANGE_WORDS: Record<string, string> = { gt: "after (greater than)", gte: "at or after (at least)", lt: "before (less than)", lte: "at or before (at most)" };

/** One operator filter: `status[in]` (a comma-separated list), `due_at[gte]`, `assignee_id[null]`. */
function conditionParameter(c: ListCondition): JsonObject {
  const name = c.field.name;
  switch (c.op) {
    case "in":
      return {
        ...query(c.param, `Only the records whose \`${name}\` is one of these comma-separated values (at most ${MAX_IN_VALUES}).`, {
          type: "array",
          items: fieldSchema(c.field, "filter"),
          minItems: 1,
          maxItems: MAX_IN_VALUES,
        }),
        style: "form",
        explode: false,
      };
    case "null":
      return query(c.param, `\`true\`: only the records with no \`${name}\` (null or absent); \`false\`: only those with a value.`, { type: "boolean" });
    default:
      return query(
        c.param,
        `Only the records whose \`${name}\` is ${RANGE_WORDS[c.op]} this value; records without one never match. Combined with the other bounds by AND.`,
        fieldSchema(c.field, "filter"),
      );
  }
}

/** The event feed pages in cursor mode and takes no search or filter. */
export function eventListParameters(): Json[] {
  return [ref("parameters", "limit"), ref("parameters", "cursor")];
}
