import { MAX_IN_VALUES, MAX_SORT_KEYS, SEARCH_MAX_LENGTH } from "../../../runtime/pagination.ts";
import {
  EXPORT_FORMATS,
  EXPORT_MEDIA_TYPES,
  EXPORT_STATUSES,
  EXPORT_VIEW_REQUIRED,
  EXPORT_VIEW_WHEN_SUCCEEDED,
  type ExportView,
} from "../../../runtime/exports-job.ts";
import type { ExportFormat, ListCondition, VersionExport, VersionModel } from "../../model/types.ts";
import { COMMON_ERRORS, LOOKUP_ERRORS, WRITE_ERRORS } from "../../model/routes.ts";
import { errorResponses } from "./errors.ts";
import { fieldSchema } from "./fieldSchema.ts";
import { linkHeaderName, responseHeaders, successorLink } from "./headers.ts";
import { ref, type Json, type JsonObject } from "./json.ts";
import { jsonBody, jsonResponse, operationObject, type PathOperation } from "./operation.ts";
import { idParameter, eventListParameters } from "./parameters.ts";
import { closedObject, cursorPageSchema, idSchema } from "./schemas.ts";

/**
 * Exports (conventions §4.5: a report of all records is a background job and a download link,
 * never an unbounded list), in every version that has a resource with `export: true`:
 * `POST /vN/exports` makes a job, `GET /vN/exports` and `/vN/exports/{id}` show the caller's
 * jobs, and `GET /vN/exports/{id}/files/{token}` downloads the file once the job has succeeded.
 */

export const exportsTag = "exports";

const timestamp: JsonObject = { type: "string", format: "date-time" };

/** An operator filter of an export's `filters`: its JSON value. */
function conditionSchema(c: ListCondition): Json {
  const value = fieldSchema(c.field, "filter");
  if (c.op === "in") return { type: "array", items: value, minItems: 1, maxItems: MAX_IN_VALUES };
  if (c.op === "null") return { type: "boolean" };
  return value;
}

function formatsOf(exports: VersionExport[]): ExportFormat[] {
  const all = new Set(exports.flatMap((e) => e.formats));
  return EXPORT_FORMATS.filter((f) => all.has(f));
}

export function exportSchemas(exports: VersionExport[], searchMinLength: number): Array<[string, Json]> {
  const collections = exports.map((e) => e.collection);
  // Every field the runtime's view shows (a field added there must be documented here).
  const properties: Record<keyof ExportView, Json> = {
    id: idSchema,
    resource: { type: "string", enum: collections, description: "The collection exported." },
    format: { type: "string", enum: formatsOf(exports), description: "The file's format." },
    status: {
      type: "string",
      enum: [...EXPORT_STATUSES],
      description: "`pending` (queued), `running`, `succeeded` (the file is ready: `download_url`) or `failed` (`failure_reason`).",
    },
    filters: { anyOf: exports.map((e) => ref("schemas", e.symbols.exportFilters)), description: "The filters the export was made with." },
    q: { type: "string", description: "The search the export was made with, if any." },
    sort: { type: "string", description: "The order of the file, as `sort` on the list, if one was given; else ascending `id`." },
    record_count: { type: "integer", minimum: 0, description: "Records written to the file so far; once succeeded, every record in it." },
    download_url: {
      type: "string",
      description:
        "Once succeeded: where to download the file, `/vN/exports/{id}/files/{token}` (a path on this API, with the same credentials). It carries an unguessable token and works until `expires_at`.",
    },
    expires_at: { ...timestamp, description: "Once succeeded: when the download link stops working." },
    failure_reason: { type: "string", description: "Once failed: what went wrong." },
    created_at: timestamp,
    updated_at: timestamp,
    started_at: { ...timestamp, description: "When the job last started running." },
    finished_at: { ...timestamp, description: "When the job succeeded or failed." },
  };
  const job = closedObject(
    Object.entries(properties),
    [...EXPORT_VIEW_REQUIRED],
    "An export job: every record of a collection that the list would show (with the same filters and `q`), written in the background to one file, in the order of its `sort` (ascending id without one), as this version shows it. Only the principal who created it can see it.",
  );
  job.if = { properties: { status: { const: "succeeded" } }, required: ["status"] };
  job.then = { required: [...EXPORT_VIEW_WHEN_SUCCEEDED] };

  const variants = exports.map((e): Array<[string, Json]> => {
    const filters = closedObject(
      [
        ...e.filters.map((f): [string, Json] => [f.name, fieldSchema(f, "filter")]),
        ...e.conditions.map((c): [string, Json] => [c.param, conditionSchema(c)]),
      ],
      [],
      e.conditions.length
        ? `Filters of ${e.names.pluralWords}, as on its list: a field's value (equals), or an operator under the parameter's name with a JSON value (\`"status[in]": ["open"]\`, \`"due_at[gte]": "…"\`, \`"assignee_id[null]": true\`).`
        : `Exact-match filters of ${e.names.pluralWords}, as on its list.`,
    );
    const create = closedObject(
      [
        ["resource", { type: "string", const: e.collection }],
        ["format", { type: "string", enum: [...e.formats], default: e.formats[0]!, description: "The file's format." }],
        [
          "q",
          {
            type: "string",
            minLength: searchMinLength,
            maxLength: SEARCH_MAX_LENGTH,
            description: e.search.length
              ? `Only the records whose ${e.search.map((f) => `\`${f.name}\``).join(", ")} contains this text (case-insensitive), as \`q\` on the list.`
              : "As `q` on the list.",
          },
        ],
        ["filters", ref("schemas", e.symbols.exportFilters)],
        ...(e.sort.length
          ? [
              [
                "sort",
                {
                  type: "string",
                  description: `The order of the file, as \`sort\` on the list: up to ${MAX_SORT_KEYS} comma-separated keys among ${e.sort.map((k) => `\`${k.name}\``).join(", ")}, \`-\` for descending. Without it: ascending \`id\`.`,
                  // The keys, for the breaking-change gate (a key gone refuses a published export).
                  "x-canon-sort-keys": e.sort.map((k) => k.name),
                },
              ] as [string, Json],
            ]
          : []),
      ],
      ["resource"],
      `An export of ${e.names.pluralWords}.`,
    );
    return [
      [e.symbols.exportCreate, create],
      [e.symbols.exportFilters, filters],
    ];
  });
  const create: JsonObject = {
    description: "What to export: `resource` names the collection; `filters` and `q` narrow it as on its list.",
    oneOf: exports.map((e) => ref("schemas", e.symbols.exportCreate)),
    discriminator: {
      propertyName: "resource",
      mapping: Object.fromEntries(exports.map((e) => [e.collection, `#/components/schemas/${e.symbols.exportCreate}`])),
    },
  };
  return [["Export", job], ["ExportCreate", create], ["ExportCursorPage", cursorPageSchema("Export")], ...variants.flat()];
}

function tokenParameter(): JsonObject {
  return {
    name: "token",
    in: "path",
    required: true,
    description: "The token of the download link, as `download_url` gives it.",
    schema: { type: "string" },
  };
}

export function exportOperations(version: VersionModel, exports: VersionExport[]): PathOperation[] {
  const base = `/${version.name}/exports`;
  const op = (operationId: string, summary: string, parts: Parameters<typeof operationObject>[4]) =>
    operationObject(version, exportsTag, operationId, summary, parts);
  const job = (status: string, description: string, headers: string[]) =>
    jsonResponse(version, exportsTag, status, description, ref("schemas", "Export"), ["ETag", ...headers]);
  const formats = formatsOf(exports);
  const file: [string, JsonObject] = [
    "200",
    {
      description: "The file: NDJSON (one JSON record per line) or CSV (a header row of field names, then one row per record), in the order of the job's `sort` (ascending id without one).",
      headers: responseHeaders(version, exportsTag, ["Content-Disposition"]),
      content: Object.fromEntries(
        formats.map((f) => [
          EXPORT_MEDIA_TYPES[f],
          {
            schema: {
              type: "string",
              description: f === "ndjson" ? "One record per line, as the record's read operation shows it." : "RFC 4180 CSV with a header row; arrays and objects as JSON text; an absent value is empty.",
            },
          },
        ]),
      ),
    },
  ];
  return [
    {
      path: base,
      method: "post",
      operation: op("createExport", "Create an export", {
        description: `Starts a background export of ${exports.map((e) => `\`${e.collection}\``).join(", ")}: answers at once with the job (\`pending\`); poll \`GET ${base}/{id}\` until it has \`succeeded\`, then download its \`download_url\`. An export reads the collection as its list does, so it needs the right to list it.`,
        requestBody: jsonBody("ExportCreate"),
        responses: [job("201", "The job, pending.", ["Location"]), ...errorResponses([...COMMON_ERRORS, ...WRITE_ERRORS])],
      }),
    },
    {
      path: base,
      method: "get",
      operation: op("listExports", "List exports", {
        description: "The caller's export jobs of this version. Cursor pages in ascending id order: follow `next_cursor`.",
        parameters: eventListParameters(),
        responses: [
          jsonResponse(version, exportsTag, "200", "A page of export jobs.", ref("schemas", "ExportCursorPage"), []),
          ...errorResponses(COMMON_ERRORS),
        ],
      }),
    },
    {
      path: `${base}/{id}`,
      method: "get",
      operation: op("getExport", "Get an export", {
        description: "One of the caller's export jobs; another principal's answers 404.",
        parameters: [idParameter("export")],
        responses: [job("200", "The job.", []), ...errorResponses([...COMMON_ERRORS, ...LOOKUP_ERRORS])],
      }),
    },
    {
      path: `${base}/{id}/files/{token}`,
      method: "get",
      operation: op("getExportFile", "Download an export's file", {
        description:
          "The file of a succeeded export, streamed. Only its creator may download it; an unknown or foreign export, a job that has not succeeded, a wrong token and a link past `expires_at` answer 404.",
        parameters: [idParameter("export"), tokenParameter()],
        responses: [file, ...errorResponses([...COMMON_ERRORS, ...LOOKUP_ERRORS])],
      }),
    },
  ];
}

/** Headers only exports use: the file's name, and on a deprecated version the successor's exports. */
export function exportHeaderComponents(version: VersionModel): Array<[string, Json]> {
  const out: Array<[string, Json]> = [
    [
      "Content-Disposition",
      {
        description: "`attachment` with the file's name, `<collection>-<export id>.<ndjson|csv>`.",
        required: true,
        schema: { type: "string" },
      },
    ],
  ];
  const link = successorLink(version, exportsTag);
  if (version.deprecation && link) {
    out.push([
      linkHeaderName(exportsTag),
      {
        description: `The exports collection in the successor version ${version.deprecation.successor}.`,
        required: true,
        schema: { type: "string" },
        example: link,
      },
    ]);
  }
  return out;
}

export function exportsTagObject(): JsonObject {
  return {
    name: exportsTag,
    description: "Background exports of whole collections: a job, then a download link (conventions §4.5). Each principal sees only its own.",
  };
}
