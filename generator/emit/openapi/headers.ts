import type { VersionModel, VersionResource, VersionSettings } from "../../model/types.ts";
import { ref, sortedObject, type Json, type JsonObject } from "./json.ts";

/**
 * Response headers: shared ones in `components/headers`, and the set each response lists.
 * On a deprecated version every response also lists Deprecation, Sunset and Link; the Link
 * of a collection's success responses names that collection in the successor version.
 */

/** The collection a response belongs to (its Link header), or null for shared responses. */
export type LinkTarget = string | null;

export function linkHeaderName(collection: string): string {
  return `Link.${collection}`;
}

/** `<https://api.example.com/v2/events>; rel="successor-version"` */
export function successorLink(version: VersionSettings, collection: string): string | null {
  if (!version.deprecation) return null;
  return `<${version.baseUrl}/${version.deprecation.successor}/${collection}>; rel="successor-version"`;
}

/** Every Link target of this version: one per resource, and the event feed. */
function linkTargets(version: VersionModel): Array<[string, string]> {
  const targets: Array<[string, string | null]> = version.resources.map((r: VersionResource) => [r.collection, r.successorLink]);
  if (version.events) targets.push(["events", successorLink(version, "events")]);
  // `/vN/health` and `/vN/ready` (health.ts) link to the same path in the successor.
  targets.push(["health", successorLink(version, "health")], ["ready", successorLink(version, "ready")]);
  return targets.flatMap(([collection, link]) => (link ? [[collection, link] as [string, string]] : []));
}

export function headerComponents(version: VersionModel): JsonObject {
  const headers: Array<[string, Json]> = [
    [
      "X-Request-Id",
      header("The request's id: the caller's `X-Request-Id` when it is a UUID v7, else a new UUID v7.", {
        type: "string",
        format: "uuid",
      }),
    ],
    ["ETag", header("The record's current version; send it back in `If-Match` to update only that version.", { type: "string" })],
    ["Location", header("Path of the created record, `/vN/<collection>/<id>`.", { type: "string" })],
    ["WWW-Authenticate", header("The authentication scheme to use: `Bearer`.", { type: "string" })],
    ["Retry-After", header("Seconds to wait before retrying.", { type: "integer", minimum: 0 })],
    [
      "Idempotent-Replayed",
      {
        description: "`true` on the kept answer of an earlier request with the same `Idempotency-Key`: nothing ran again.",
        required: false,
        schema: { type: "string", enum: ["true"] },
      },
    ],
  ];
  const deprecation = version.deprecation;
  if (deprecation) {
    headers.push(
      ["Deprecation", header(`This version is deprecated since ${deprecation.deprecated}.`, { type: "string", enum: ["true"] })],
      ["Sunset", header(`The sunset date of this version.`, { type: "string" }, deprecation.sunsetHttpDate)],
      [
        "Link",
        header(
          `The same collection in the successor version ${deprecation.successor}.`,
          { type: "string" },
          `<${version.baseUrl}/${deprecation.successor}/{collection}>; rel="successor-version"`,
        ),
      ],
      ...linkTargets(version).map(([collection, link]): [string, Json] => [
        linkHeaderName(collection),
        header(`The ${collection} collection in the successor version ${deprecation.successor}.`, { type: "string" }, link),
      ]),
    );
  }
  return sortedObject(headers);
}

function header(description: string, schema: JsonObject, example?: string): JsonObject {
  const out: JsonObject = { description, required: true, schema };
  if (example !== undefined) out.example = example;
  return out;
}

/**
 * The headers one response lists: X-Request-Id, the given extra ones, and on a deprecated
 * version Deprecation, Sunset and Link (the collection's when `link` names one).
 */
export function responseHeaders(version: VersionSettings, link: LinkTarget, extra: string[] = []): JsonObject {
  const out: JsonObject = {};
  for (const name of ["X-Request-Id", ...extra]) out[name] = ref("headers", name);
  if (version.deprecation) {
    out.Deprecation = ref("headers", "Deprecation");
    out.Sunset = ref("headers", "Sunset");
    out.Link = ref("headers", link ? linkHeaderName(link) : "Link");
  }
  return out;
}
