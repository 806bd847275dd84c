import { API_EVENT_KEYS } from "../../../runtime/events.ts";
import type { VersionModel } from "../../model/types.ts";
import { COMMON_ERRORS, LOOKUP_ERRORS } from "../../model/routes.ts";
import { errorResponses } from "./errors.ts";
import { ref, type Json, type JsonObject } from "./json.ts";
import { eventListParameters, idParameter } from "./parameters.ts";
import { jsonResponse, operationObject, type PathOperation } from "./operation.ts";
import { closedObject, cursorPageSchema, idSchema } from "./schemas.ts";

/** The event feed (`events: true`): its schemas, `GET /vN/events` and `GET /vN/events/{id}`. */

export const eventsTag = "events";

export function eventSchemas(): Array<[string, Json]> {
  const event = closedObject(
    [
      ["id", idSchema],
      [
        "type",
        {
          type: "string",
          description: "`<singular>.created`, `.updated` or `.deleted`, or `<singular>.<action singular>.created`.",
        },
      ],
      ["occurred_at", { type: "string", format: "date-time" }],
      ["data", { type: "object", description: "The record as the version that served the write shows it." }],
    ],
    // Required keys from the runtime's one definition of the event's shape.
    [...API_EVENT_KEYS],
    "A write: every create, update, replace, delete and action records one.",
  );
  return [
    ["Event", event],
    ["EventCursorPage", cursorPageSchema("Event")],
  ];
}

export function eventOperations(version: VersionModel): PathOperation[] {
  const base = `/${version.name}/events`;
  const op = (operationId: string, summary: string, parts: Parameters<typeof operationObject>[4]) =>
    operationObject(version, eventsTag, operationId, summary, parts);
  return [
    {
      path: base,
      method: "get",
      operation: op("listEvents", "List events", {
        description: "Cursor pages in ascending id order, so in the order the events occurred: follow `next_cursor`.",
        parameters: eventListParameters(),
        responses: [
          jsonResponse(version, eventsTag, "200", "A page of events.", ref("schemas", "EventCursorPage"), []),
          ...errorResponses(COMMON_ERRORS),
        ],
      }),
    },
    {
      path: `${base}/{id}`,
      method: "get",
      operation: op("getEvent", "Get an event", {
        parameters: [idParameter("event")],
        responses: [
          jsonResponse(version, eventsTag, "200", "The event.", ref("schemas", "Event"), []),
          ...errorResponses([...COMMON_ERRORS, ...LOOKUP_ERRORS]),
        ],
      }),
    },
  ];
}

export function eventsTagObject(): JsonObject {
  return { name: eventsTag, description: "The events recorded for every write, oldest first." };
}
