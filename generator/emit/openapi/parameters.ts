import type { VersionResource } from "../../model/types.ts";
import { SEARCH_MAX_LENGTH } from "../../../runtime/pagination.ts";
import { fieldSchema } from "./fieldSchema.ts";
import { ref, sortedObject, type Json, type JsonObject } from "./json.ts";

/**
 * Parameters: the shared page, cursor, search and If-Match parameters in
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
  ];
  return sortedObject(entries);
}

function query(name: string, description: string, schema: JsonObject): JsonObject {
  return { name, in: "query", required: false, description, schema };
}

/** The `{id}` path parameter: the record's id, or the parent's on a child list. */
export function idParameter(singular: string): JsonObject {
  return {
    name: "id",
    in: "path",
    required: true,
    description: `The ${singular.replace(/[-_]/g, " ")}'s id (UUID v7).`,
    schema: { type: "string", format: "uuid" },
  };
}

export const ifMatchParameter = ref("parameters", "If-Match");

/** Query parameters of a list in the resource's pagination mode, then one per filter field. */
export function listParameters(resource: VersionResource): Json[] {
  const paging = resource.pagination === "offset" ? ["page", "per_page", "limit", "cursor", "q"] : ["limit", "cursor", "q"];
  return [
    ...paging.map((name) => ref("parameters", name)),
    ...resource.filters.map((f): JsonObject =>
      query(f.name, `Only the records whose \`${f.name}\` equals this value.`, fieldSchema(f, "filter")),
    ),
  ];
}

/** The event feed pages in cursor mode and takes no search or filter. */
export function eventListParameters(): Json[] {
  return [ref("parameters", "limit"), ref("parameters", "cursor")];
}
