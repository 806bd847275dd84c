/**
 * The export job: its one definition. The runtime keeps jobs as records of the store collection
 * `canon/exports` with these fields, and the generator reads the same table to make the
 * collection's SQL table (generator/model/snapshot.ts) and the `Export` schema of each version's
 * OpenAPI document (generator/emit/openapi/exports.ts). Nothing here is restated elsewhere.
 */
import type { Match, SortKey, StoredRecord, Values } from "./store.ts";

/** The store collection of export jobs: canon's own, never a resource's name (a `/` is in none). */
export const EXPORT_JOBS = "canon/exports";

/** File formats, the default first. */
export const EXPORT_FORMATS = ["ndjson", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** `pending` (queued), `running`, then `succeeded` (a link) or `failed`. */
export const EXPORT_STATUSES = ["pending", "running", "succeeded", "failed"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** The media type of each format, as documented; the runtime adds the charset of text. */
export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  ndjson: "application/x-ndjson",
  csv: "text/csv",
};

/** How the store keeps a field of a job. */
export interface ExportJobField {
  type: "string" | "enum" | "object" | "integer" | "datetime";
  optional?: true;
  maxLength?: number;
  minimum?: number;
  values?: readonly string[];
}

/** The fields of a stored job, in column order. */
export const EXPORT_JOB_FIELDS = {
  /** The version that took the request: the file shows records as it does. */
  version: { type: "string", maxLength: 16 },
  /** The collection exported. */
  resource: { type: "string", maxLength: 200 },
  format: { type: "enum", values: EXPORT_FORMATS },
  /** The principal who created the job: the only one who may see it. */
  owner: { type: "string", maxLength: 1000 },
  status: { type: "enum", values: EXPORT_STATUSES },
  /** The filters as the client gave them (this version's field names). */
  filters: { type: "object" },
  q: { type: "string", optional: true },
  /** The order of the file, `?sort=` of the list as the client gave it (this version's names). */
  sort: { type: "string", optional: true },
  /** The same filters, search and order as the store reads them (storage names; `sort` as SortKey[]). */
  match: { type: "object" },
  record_count: { type: "integer", minimum: 0 },
  attempts: { type: "integer", minimum: 0 },
  /** The attempt that holds (or last held) the job; names its file. */
  attempt: { type: "string", optional: true },
  /** The download link's token, once succeeded. */
  token: { type: "string", optional: true },
  expires_at: { type: "datetime", optional: true },
  started_at: { type: "datetime", optional: true },
  finished_at: { type: "datetime", optional: true },
  failure_reason: { type: "string", optional: true },
  /**
   * Who asked for the job (SPEC §12.5), as its service's `list` is told when the job runs: the
   * principal's id, scopes and tenant, and the request id of the POST that made it. Absent on a
   * job made before they were kept (its service is then told nothing).
   */
  principal: { type: "object", optional: true },
  request_id: { type: "string", optional: true, maxLength: 36 },
} as const satisfies Record<string, ExportJobField>;

/** Fields matched exactly, each with an index: a principal's jobs of a version, the jobs to resume. */
export const EXPORT_JOB_FILTERS = ["owner", "version", "status"] as const;

type Fields = typeof EXPORT_JOB_FIELDS;
type ValueOf<F> = F extends { values: readonly (infer V)[] }
  ? V
  : F extends { type: "integer" }
    ? number
    : F extends { type: "object" }
      ? Values
      : string;
type RequiredName = { [K in keyof Fields]: Fields[K] extends { optional: true } ? never : K }[keyof Fields];

/** The values of a stored job, as EXPORT_JOB_FIELDS defines them (`match` as the store reads it). */
export type ExportJobValues = { -readonly [K in Exclude<RequiredName, "match">]: ValueOf<Fields[K]> } & {
  -readonly [K in Exclude<keyof Fields, RequiredName>]?: ValueOf<Fields[K]>;
} & { match: Match & { sort?: readonly SortKey[] } };

export type ExportJob = StoredRecord<ExportJobValues>;

/**
 * A job as the API shows it: the `Export` schema of every version's OpenAPI document, whose
 * emitter documents each of these fields (generator/emit/openapi/exports.ts) and takes the
 * required ones from `EXPORT_VIEW_REQUIRED` and `EXPORT_VIEW_WHEN_SUCCEEDED`.
 */
export interface ExportView {
  id: string;
  resource: string;
  format: ExportFormat;
  status: ExportStatus;
  filters: Values;
  q?: string;
  sort?: string;
  record_count: number;
  download_url?: string;
  expires_at?: string;
  failure_reason?: string;
  created_at: string;
  updated_at: string;
  started_at?: string;
  finished_at?: string;
}

type RequiredOf<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];

/** The fields every job shows. */
export const EXPORT_VIEW_REQUIRED = [
  "id",
  "resource",
  "format",
  "status",
  "filters",
  "record_count",
  "created_at",
  "updated_at",
] as const satisfies readonly RequiredOf<ExportView>[];

/** The fields a succeeded job shows too. */
export const EXPORT_VIEW_WHEN_SUCCEEDED = [
  "download_url",
  "expires_at",
  "finished_at",
] as const satisfies readonly (keyof ExportView)[];

export function exportView(job: ExportJob): ExportView {
  const v = job.values;
  const succeeded = v.status === "succeeded" && v.token !== undefined && v.expires_at !== undefined;
  const finished = v.status === "succeeded" || v.status === "failed";
  return {
    id: job.id,
    resource: v.resource,
    format: v.format,
    status: v.status,
    filters: v.filters,
    ...(v.q === undefined ? {} : { q: v.q }),
    ...(v.sort === undefined ? {} : { sort: v.sort }),
    record_count: v.record_count,
    ...(succeeded
      ? { download_url: `/${v.version}/exports/${job.id}/files/${v.token}`, expires_at: v.expires_at }
      : {}),
    ...(v.status === "failed" && v.failure_reason ? { failure_reason: v.failure_reason } : {}),
    created_at: job.created_at,
    updated_at: job.updated_at,
    ...(v.started_at ? { started_at: v.started_at } : {}),
    ...(finished && v.finished_at ? { finished_at: v.finished_at } : {}),
  };
}
