import type { VersionSettings } from "../../model/types.ts";
import { responseHeaders } from "./headers.ts";
import { ref, type Json, type JsonObject } from "./json.ts";

/** Building blocks of operations: the operation object, JSON responses and request bodies. */

/** One operation at one path. */
export interface PathOperation {
  path: string;
  method: "get" | "put" | "post" | "patch" | "delete";
  operation: JsonObject;
}

export interface OperationParts {
  description?: string;
  parameters?: Json[];
  requestBody?: JsonObject;
  responses: Array<[string, Json]>;
}

/** The operation object: tagged with its collection, `deprecated` on a deprecated version. */
export function operationObject(
  version: VersionSettings,
  collection: string,
  operationId: string,
  summary: string,
  parts: OperationParts,
): JsonObject {
  const operation: JsonObject = { operationId, summary, tags: [collection] };
  if (parts.description) operation.description = parts.description;
  if (version.deprecation) operation.deprecated = true;
  if (parts.parameters?.length) operation.parameters = parts.parameters;
  if (parts.requestBody) operation.requestBody = parts.requestBody;
  operation.responses = Object.fromEntries(parts.responses);
  return operation;
}

/** A success response with a JSON body and the collection's headers plus `headers`. */
export function jsonResponse(
  version: VersionSettings,
  collection: string,
  status: string,
  description: string,
  schema: Json,
  headers: string[],
): [string, JsonObject] {
  return [
    status,
    { description, headers: responseHeaders(version, collection, headers), content: { "application/json": { schema } } },
  ];
}

/** A 204 response: headers, no body. */
export function noContent(version: VersionSettings, collection: string, description: string): [string, JsonObject] {
  return ["204", { description, headers: responseHeaders(version, collection) }];
}

/** A required JSON request body of a component schema. */
export function jsonBody(schema: string): JsonObject {
  return { required: true, content: { "application/json": { schema: ref("schemas", schema) } } };
}
