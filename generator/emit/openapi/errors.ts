import { ERROR_STATUSES, errorStatus } from "../../../runtime/errors.ts";
import type { VersionModel } from "../../model/types.ts";
import { responseHeaders } from "./headers.ts";
import { ref, sortedObject, type Json, type JsonObject } from "./json.ts";
import { ERROR_SCHEMA } from "./names.ts";
import { closedObject } from "./schemas.ts";

/**
 * Error responses: the envelope schema `Error` (named so unless a user's schema is: names.ts), and one shared response per status of the
 * runtime's table (runtime/errors.ts `ERROR_STATUSES`), each with the envelope under
 * `application/json`. Operations refer to them by status (the route record's `errors`).
 */

export function errorSchema(): JsonObject {
  const detail = closedObject(
    [
      [
        "field",
        {
          type: "string",
          description: "The dotted body path (`address.city`, `tags.0`) or the name of a query or path parameter.",
        },
      ],
      ["issue", { type: "string", description: "What is wrong." }],
    ],
    ["field", "issue"],
  );
  const error = closedObject(
    [
      ["code", { type: "string", description: "Machine-readable code, such as `VALIDATION_ERROR`." }],
      ["message", { type: "string", description: "Human-readable text." }],
      ["details", { type: "array", items: detail, description: "One entry per problem, for validation errors." }],
    ],
    ["code", "message"],
  );
  return closedObject([["error", error]], ["error"], "The envelope of every error response.");
}

export function errorResponseComponents(version: VersionModel, schemaName = ERROR_SCHEMA): JsonObject {
  return sortedObject(
    ERROR_STATUSES.map((e): [string, Json] => [
      e.response,
      {
        description: `${e.code}: ${e.description}`,
        headers: {
          ...responseHeaders(version, null, [...e.headers]),
          ...Object.fromEntries(e.optionalHeaders.map((h) => [h.name, optionalHeader(h.description)])),
        },
        content: {
          "application/json": {
            schema: ref("schemas", schemaName),
            example: { error: { code: e.code, message: e.message } },
          },
        },
      },
    ]),
  );
}

/** `responses` entries of the given error statuses, each a $ref to the shared response. */
export function errorResponses(statuses: readonly number[]): Array<[string, Json]> {
  return [...statuses].sort((a, b) => a - b).map((status) => [String(status), ref("responses", errorStatus(status).response)]);
}

/** A header some answers of a status carry (only `Retry-After`, a count of seconds, so far). */
function optionalHeader(description: string): JsonObject {
  return { description, required: false, schema: { type: "integer", minimum: 0 } };
}
