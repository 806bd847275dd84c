/**
 * Writing an export's file: the records of a job, walked with the collection's cursor `list` a
 * page at a time, each shown as the job's version shows it, serialised as NDJSON (one JSON
 * record per line) or CSV (RFC 4180, a header row), and handed to a sink page by page. Where
 * the text goes (a file in a folder, chunks in the database) is the sink's business
 * (exports-files.ts).
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Principal } from "./auth.ts";
import type { ExportFormat, ExportJob } from "./exports-job.ts";
import type { ReadContext } from "./hooks.ts";
import { positionOf } from "./sorting.ts";
import type { CursorQuery, SortPosition, StoredRecord, Values } from "./store.ts";

/** One exportable collection of one version: how its records are read and shown. */
export interface ExportSource<V extends Values = Values> {
  version: string;
  resource: string;
  /** Field names of a record as the version shows it, in order: the CSV header. */
  columns: readonly string[];
  /** The columns that hold decimals (a number's canonical text): written to CSV as they are. */
  decimals?: readonly string[];
  /** The cursor list of the collection (its service's), told who asked for the job (`jobContext`). */
  list(query: CursorQuery, context?: ReadContext): Promise<{ records: StoredRecord<V>[]; hasMore: boolean }>;
  /** The version's own view of a record: what its read operation answers. */
  view(record: StoredRecord<V>): object;
}

/** Where the text of a file goes; `write` resolves when the sink can take more. */
export interface ExportSink {
  write(text: string): Promise<void>;
}

/** The first line of a file (the CSV header), and the line of each record. */
export function recordLines(
  format: ExportFormat,
  columns: readonly string[],
  decimals: readonly string[] = [],
): { header: string; line: (view: Record<string, unknown>) => string } {
  if (format === "csv") {
    return {
      header: `${columns.map((c) => csvValue(c)).join(",")}\r\n`,
      line: (view) => `${columns.map((c) => csvValue(view[c], decimals.includes(c))).join(",")}\r\n`,
    };
  }
  return { header: "", line: (view) => `${JSON.stringify(view)}\n` };
}

/**
 * Writes the records of a job into `sink`: every record the list would show, in the list's order
 * (the job's `sort`, else ascending id), none created after the export was requested (an id
 * after the job's own). A page at a time; `onPage` is told the count after every page, and the
 * event loop gets a turn. Returns the count.
 */
export async function writeRecords(
  sink: ExportSink,
  job: ExportJob,
  source: ExportSource,
  pageSize: number,
  onPage: (written: number) => Promise<void>,
): Promise<number> {
  const { header, line } = recordLines(job.values.format, source.columns, source.decimals);
  let count = 0;
  if (header) await sink.write(header);
  const sort = job.values.match.sort;
  const sorted = sort !== undefined && sort.length > 0;
  let after: string | undefined;
  let afterPosition: SortPosition | undefined;
  const context = jobContext(job);
  for (;;) {
    const page = await source.list(
      {
        ...job.values.match,
        limit: pageSize,
        ...(after ? { after } : {}),
        ...(afterPosition ? { afterPosition } : {}),
      },
      context,
    );
    let chunk = "";
    let done = !page.hasMore || page.records.length === 0;
    for (const record of page.records) {
      if (record.id > job.id) {
        // In id order every record after it is newer too; in another order, newer ones are skipped.
        if (sorted) continue;
        done = true;
        break;
      }
      chunk += line(source.view(record) as Record<string, unknown>);
      count += 1;
    }
    if (chunk) await sink.write(chunk);
    if (done) break;
    const last = page.records[page.records.length - 1]!;
    if (sorted) afterPosition = positionOf(last, sort);
    else after = last.id;
    await onPage(count);
    await nextTurn();
  }
  return count;
}

/** Who asked for `job`, as its service's `list` is told: undefined for a job that did not keep it. */
export function jobContext(job: ExportJob): ReadContext | undefined {
  const { principal, request_id: requestId } = job.values;
  if (principal === undefined || requestId === undefined) return undefined;
  return { principal: principal as unknown as Principal, requestId };
}

/**
 * A text cell that a spreadsheet would take for a formula: one that begins with `=`, `+`, `-`,
 * `@`, a tab or a carriage return (OWASP, "CSV Injection").
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell. RFC 4180: quoted when it holds a comma, quote or line break (or edge spaces);
 * arrays and objects as JSON. A string that a spreadsheet would run as a formula is neutralised
 * with a leading `'` (`=HYPERLINK(…)` is written `'=HYPERLINK(…)`), as OWASP recommends; numbers
 * are written as they are (`-5` stays a number), and so is a decimal (`decimal`: the text of a
 * `decimal` field, `-5.00`, which is a number's and never a formula).
 */
export function csvValue(value: unknown, decimal = false): string {
  if (value === undefined || value === null) return "";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (typeof value === "string" && !decimal && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}
