/**
 * Exports (conventions §4.5): a background job and a download link. One file per subject:
 *   exports-job.ts      the job: its stored fields, statuses, formats and view (the generator reads it too)
 *   exports-service.ts  ExportService: creates, runs, resumes and serves jobs
 *   exports-writing.ts  a job's records as NDJSON or CSV, a page at a time
 *   exports-limits.ts   jobs per principal, and how long finished jobs are kept
 *   exports-files.ts    where the files are kept (a folder), exports-files-sql.ts (the database)
 *   exports-queue.ts    the queue interface, and the queue in the process
 *   exports-pgboss.ts   the queue shared by every instance over a PostgreSQL server
 *   exports-http.ts     what the generated /vN/exports routes call
 */
export * from "./exports-files-sql.ts";
export * from "./exports-files.ts";
export * from "./exports-http.ts";
export * from "./exports-job.ts";
export * from "./exports-limits.ts";
export * from "./exports-queue.ts";
export * from "./exports-service.ts";
export * from "./exports-writing.ts";
