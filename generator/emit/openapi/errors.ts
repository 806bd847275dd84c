import type { VersionModel } from "../../model/types.ts";
import { responseHeaders } from "./headers.ts";
import { ref, sortedObject, type Json, type JsonObject } from "./json.ts";
import { closedObject } from "./schemas.ts";

/**
 * Error responses: the envelope schema `Error`, and one shared response per status, each with
 * the envelope under `application/json`. Operations refer to them by status.
 */

interface ErrorStatus {
  status: number;
  name: string;
  code: string;
  description: string;
  message: string;
  headers?: string[];
  /** Headers some answers of this status carry, listed inline as not required. */
  optional?: Array<[string, JsonObject]>;
}

const errorStatuses: ErrorStatus[] = [
  {
    status: 400,
    name: "BadRequest",
    code: "VALIDATION_ERROR",
    description:
      "Invalid input: a malformed UUID, a missing, wrong-typed, unknown or read-only field, a bad query parameter or cursor, an unsupported Content-Type, or a body over the size limit. One detail per problem.",
    message: "The request is not valid.",
  },
  {
    status: 401,
    name: "Unauthorized",
    code: "UNAUTHENTICATED",
    description: "Missing or invalid credentials.",
    message: "Authentication is required.",
    headers: ["WWW-Authenticate"],
  },
  {
    status: 403,
    name: "Forbidden",
    code: "FORBIDDEN",
    description: "Authenticated, but not allowed.",
    message: "This action is not allowed.",
  },
  {
    status: 404,
    name: "NotFound",
    code: "NOT_FOUND",
    description: "No record has this id (the record, its parent, or the target of an action).",
    message: "The resource does not exist.",
  },
  {
    status: 409,
    name: "Conflict",
    code: "CONFLICT",
    description:
      "A duplicate of a unique field, an `If-Match` that is not the record's current ETag, or a POST whose `Idempotency-Key` is in use by a request still running. Nothing changed.",
    message: "The request conflicts with the current state.",
  },
  {
    status: 422,
    name: "UnprocessableEntity",
    code: "BUSINESS_RULE_VIOLATION",
    description:
      "Valid input that breaks a business rule, such as a reference to a record that does not exist, or an `Idempotency-Key` already used for another path or body.",
    message: "The request breaks a business rule.",
  },
  {
    status: 429,
    name: "TooManyRequests",
    code: "RATE_LIMITED",
    description: "Over the rate limit; retry after `Retry-After` seconds.",
    message: "Too many requests.",
    headers: ["Retry-After"],
  },
  {
    status: 500,
    name: "InternalError",
    code: "INTERNAL_ERROR",
    description:
      "An unexpected failure. The body carries no internals. When the database could not be reached, it carries `Retry-After`.",
    message: "Something went wrong.",
    optional: [
      [
        "Retry-After",
        {
          description: "Seconds to wait before retrying: the database could not be reached.",
          required: false,
          schema: { type: "integer", minimum: 0 },
        },
      ],
    ],
  },
  {
    status: 503,
    name: "ServiceUnavailable",
    code: "SERVICE_UNAVAILABLE",
    description: "The instance cannot answer now (its store does not answer); retry after `Retry-After` seconds.",
    message: "The service is not ready. Retry later.",
    headers: ["Retry-After"],
  },
];

/** Statuses every operation lists; 404 where a record is looked up; 409 and 422 on writes. */
export const commonErrors = [400, 401, 403, 429, 500];
export const lookupErrors = [404];
export const writeErrors = [409, 422];

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

export function errorResponseComponents(version: VersionModel): JsonObject {
  return sortedObject(
    errorStatuses.map((e): [string, Json] => [
      e.name,
      {
        description: `${e.code}: ${e.description}`,
        headers: { ...responseHeaders(version, null, e.headers), ...Object.fromEntries(e.optional ?? []) },
        content: {
          "application/json": {
            schema: ref("schemas", "Error"),
            example: { error: { code: e.code, message: e.message } },
          },
        },
      },
    ]),
  );
}

/** `responses` entries of the given error statuses, each a $ref to the shared response. */
export function errorResponses(statuses: number[]): Array<[string, Json]> {
  return [...statuses]
    .sort((a, b) => a - b)
    .map((status) => {
      const e = errorStatuses.find((s) => s.status === status);
      if (!e) throw new Error(`no error response for status ${status}`);
      return [String(status), ref("responses", e.name)];
    });
}
