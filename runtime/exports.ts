/**
 * Exports (conventions §4.5): a report of every record of a collection is never an unbounded
 * list but a background job and a download link. `POST /vN/exports` stores a job (`pending`) and
 * queues it; a runner walks the collection with the store's cursor `list`, a page at a time, and
 * streams each record, as the version that took the request shows it, into a file; the job then
 * carries a download link with an unguessable token and an expiry.
 *
 * Jobs are records of the store's own collection `canon/exports`, so they are as durable as the
 * store: gone with the memory store, kept by PGlite and PostgreSQL. The queue that runs them is
 * in the process for the memory store and PGlite, and pg-boss for a PostgreSQL server
 * (exports-pgboss.ts), where instances share the work and a job whose runner died is run again.
 * Every attempt claims the job with a compare-and-set on its revision and writes a file of its
 * own, renamed into place only when complete: an attempt that lost its claim stops at its next
 * write, and a file never holds two attempts' records.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { open, readdir, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Authorize } from "./auth.ts";
import { ConflictError, NotFoundError } from "./errors.ts";
import { authorizeOrThrow, principalOf } from "./http.ts";
import type { PgBossExportQueue, PgBossQueueOptions } from "./exports-pgboss.ts";
import type { CursorQuery, Match, Store, StoredRecord, Values } from "./store.ts";
import { newId } from "./uuid.ts";

export type ExportFormat = "ndjson" | "csv";
export type ExportStatus = "pending" | "running" | "succeeded" | "failed";

/** The store collection of export jobs: canon's own, never a resource's name. */
export const EXPORT_JOBS = "canon/exports";

export interface ExportJobValues extends Values {
  /** The version that took the request: the file shows records as it does. */
  version: string;
  /** The collection exported. */
  resource: string;
  format: ExportFormat;
  /** The principal who created the job: the only one who may see it. */
  owner: string;
  status: ExportStatus;
  /** The filters as the client gave them (this version's field names). */
  filters: Values;
  q?: string;
  /** The same filters and search as the store reads them (storage names). */
  match: Match;
  record_count: number;
  attempts: number;
  /** The attempt that holds (or last held) the job; names its file. */
  attempt?: string;
  /** The download link's token, once succeeded. */
  token?: string;
  expires_at?: string;
  started_at?: string;
  finished_at?: string;
  failure_reason?: string;
}

export type ExportJob = StoredRecord<ExportJobValues>;

/** One exportable collection of one version: how its records are read and shown. */
export interface ExportSource<V extends Values = Values> {
  version: string;
  resource: string;
  /** Field names of a record as the version shows it, in order: the CSV header. */
  columns: readonly string[];
  /** The store's cursor list of the collection (ascending id). */
  list(query: CursorQuery): Promise<{ records: StoredRecord<V>[]; hasMore: boolean }>;
  /** The version's own view of a record: what its read operation answers. */
  view(record: StoredRecord<V>): object;
}

/** Runs jobs: in the process, or shared by several instances (pg-boss). */
export interface ExportQueue {
  /**
   * Starts taking jobs; `run` runs one and rejects when it was interrupted (to be run again). A
   * queue that can tell that a worker lost a job (its claim lapsed) aborts `signal`.
   */
  start(run: (id: string, signal?: AbortSignal) => Promise<void>): Promise<void>;
  /** Queues a job; queueing one that is queued or running already changes nothing. */
  enqueue(id: string): Promise<void>;
  /** Stops taking jobs and waits for the running ones to stop. */
  stop(): Promise<void>;
}

export interface ExportOptions {
  /** Folder of the files. Default: `CANON_EXPORTS_DIR`, else `canon-exports` in the OS temp folder. Instances that share jobs must share it. */
  directory?: string;
  /** How long a download link works after the job succeeded. Default 3600 (one hour). */
  linkTtlSeconds?: number;
  /** Records read per page of the store's list. Default 500. */
  pageSize?: number;
  /** Jobs one instance runs at once. Default 1. */
  concurrency?: number;
  /** The queue; default: pg-boss on a PostgreSQL server store (opened by `openStore`), else in the process. */
  queue?: ExportQueue;
  /** Settings of the default pg-boss queue: heartbeats, retries, polling. */
  pgBoss?: Omit<PgBossQueueOptions, "connectionString" | "schema" | "concurrency">;
  /** Told of a job that failed unexpectedly (the job says only that it failed). */
  onError?: (error: unknown, jobId: string) => void;
}

const MEDIA_TYPES: Record<ExportFormat, string> = {
  ndjson: "application/x-ndjson",
  csv: "text/csv; charset=utf-8",
};

/** Thrown into a running job when its service stops: the job goes back to `pending`, to run again. */
export class ExportInterrupted extends Error {
  constructor() {
    super("the export was interrupted: the service is stopping");
  }
}

/** The attempt lost its claim (another runner took the job over): it stops without a trace. */
class ClaimLost extends Error {}

const NO_CONSTRAINTS = { unique: [] };
const PROGRESS_MS = 1000;
const SWEEP_MS = 60_000;
/** A `.part` file nobody has written to for this long belongs to an attempt that died. */
const ABANDONED_MS = 15 * 60_000;

export class ExportService {
  readonly directory: string;
  private readonly store: Store;
  private readonly linkTtlMs: number;
  private readonly pageSize: number;
  private readonly concurrency: number;
  private readonly onError: (error: unknown, jobId: string) => void;
  private readonly pgBoss: ExportOptions["pgBoss"];
  private readonly sources = new Map<string, ExportSource>();
  private queue: ExportQueue | undefined;
  private started = false;
  private stopping = false;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(store: Store, options: ExportOptions = {}) {
    this.store = store;
    this.directory = path.resolve(
      options.directory ?? process.env.CANON_EXPORTS_DIR ?? path.join(tmpdir(), "canon-exports"),
    );
    this.linkTtlMs = (options.linkTtlSeconds ?? 3600) * 1000;
    this.pageSize = options.pageSize ?? 500;
    this.concurrency = options.concurrency ?? 1;
    this.queue = options.queue;
    this.onError = options.onError ?? (() => {});
    this.pgBoss = options.pgBoss;
  }

  /** Makes a collection of a version exportable (the generated routes do it). */
  register<V extends Values>(source: ExportSource<V>): void {
    this.sources.set(`${source.version}/${source.resource}`, source as unknown as ExportSource);
  }

  /** Stores a job, `pending`, and queues it. */
  async create(input: {
    owner: string;
    version: string;
    resource: string;
    format: ExportFormat;
    filters: Values;
    q?: string | undefined;
    match: Match;
  }): Promise<ExportJob> {
    if (!this.sources.has(`${input.version}/${input.resource}`)) {
      throw new Error(`${input.version} does not export ${input.resource}`);
    }
    const now = new Date().toISOString();
    const q = input.q?.trim() ? input.q : undefined;
    const values: ExportJobValues = {
      version: input.version,
      resource: input.resource,
      format: input.format,
      owner: input.owner,
      status: "pending",
      filters: Object.fromEntries(Object.entries(input.filters).filter(([, v]) => v !== undefined)),
      ...(q === undefined ? {} : { q }),
      match: JSON.parse(JSON.stringify(input.match)) as Match,
      record_count: 0,
      attempts: 0,
    };
    const job = (await this.store.insert(
      EXPORT_JOBS,
      { id: newId(), created_at: now, updated_at: now, revision: 1, values },
      NO_CONSTRAINTS,
    )) as ExportJob;
    // Before start(), the job waits: start() queues every pending job.
    if (this.started && this.queue) await this.queue.enqueue(job.id);
    return job;
  }

  async get(id: string): Promise<ExportJob | null> {
    return (await this.store.get(EXPORT_JOBS, id)) as ExportJob | null;
  }

  /** Jobs in ascending id order (for the cursor list of a principal's jobs). */
  async list(query: CursorQuery): Promise<{ records: ExportJob[]; hasMore: boolean }> {
    return (await this.store.list(EXPORT_JOBS, query)) as { records: ExportJob[]; hasMore: boolean };
  }

  /** Starts running jobs, and queues those a previous run of the service left pending or running. */
  async start(): Promise<void> {
    if (this.started) return;
    this.stopping = false;
    // Only this user may read the files (the OS temp folder is shared).
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    this.queue ??= await this.defaultQueue();
    await this.queue.start((id, signal) => this.run(id, signal));
    this.started = true;
    for (const status of ["running", "pending"] as const) {
      let after: string | undefined;
      for (;;) {
        const page = await this.list({ where: { status }, limit: 500, ...(after ? { after } : {}) });
        for (const job of page.records) await this.queue.enqueue(job.id);
        if (!page.hasMore || page.records.length === 0) break;
        after = page.records[page.records.length - 1]!.id;
      }
    }
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), SWEEP_MS);
    this.sweeper.unref();
  }

  /** Stops: running jobs stop at their next page and go back to `pending`. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.started) await this.queue?.stop();
    this.started = false;
  }

  /**
   * Runs one job: claims it, streams every record into a file of this attempt, renames the file
   * into place and marks the job succeeded. A job already finished, or taken over meanwhile, is
   * left alone. Rejects with ExportInterrupted when the service stops during the job.
   */
  async run(id: string, signal?: AbortSignal): Promise<void> {
    const found = await this.get(id);
    if (!found || found.values.status === "succeeded" || found.values.status === "failed") return;
    const source = this.sources.get(`${found.values.version}/${found.values.resource}`);
    if (!source) {
      await this.settle(found, {
        status: "failed",
        failure_reason: `${found.values.version} no longer exports ${found.values.resource}.`,
      });
      return;
    }
    if (this.stopping) throw new ExportInterrupted();
    const attempt = randomBytes(12).toString("base64url");
    const claimed = await this.claim(found, {
      ...found.values,
      status: "running",
      attempts: found.values.attempts + 1,
      attempt,
      record_count: 0,
      started_at: new Date().toISOString(),
    });
    if (!claimed) return;
    let job: ExportJob = claimed;
    const part = path.join(this.directory, `${id}.${attempt}.part`);
    const file = this.fileOf(job);
    try {
      let progressAt = Date.now();
      const count = await writeRecords(part, job, source, this.pageSize, async (written) => {
        if (this.stopping) throw new ExportInterrupted();
        if (signal?.aborted) throw new ClaimLost();
        if (Date.now() - progressAt < PROGRESS_MS) return;
        progressAt = Date.now();
        const next = await this.claim(job, { ...job.values, record_count: written });
        if (!next) throw new ClaimLost();
        job = next;
      });
      await rename(part, file);
      const done = await this.claim(job, {
        ...job.values,
        status: "succeeded",
        record_count: count,
        token: randomBytes(32).toString("base64url"),
        expires_at: new Date(Date.now() + this.linkTtlMs).toISOString(),
        finished_at: new Date().toISOString(),
      });
      if (!done) await rm(file, { force: true });
    } catch (error) {
      await rm(part, { force: true });
      if (error instanceof ClaimLost) return;
      if (error instanceof ExportInterrupted) {
        await this.claim(job, { ...job.values, status: "pending", record_count: 0 });
        throw error;
      }
      this.onError(error, id);
      await this.settle(job, {
        status: "failed",
        failure_reason: "The export could not be written; create a new one.",
      });
    }
  }

  /** The file of a succeeded job, opened for reading, or null when it is no longer kept. */
  async openFile(
    job: ExportJob,
  ): Promise<{ stream: Readable; size: number; mediaType: string; fileName: string } | null> {
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      handle = await open(this.fileOf(job), "r");
      const { size } = await handle.stat();
      return {
        stream: handle.createReadStream(),
        size,
        mediaType: MEDIA_TYPES[job.values.format],
        fileName: `${job.values.resource}-${job.id}.${job.values.format}`,
      };
    } catch (error) {
      await handle?.close();
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  /** Marks a job failed unless it has finished (the dead-letter queue calls it). */
  async fail(id: string, reason: string): Promise<void> {
    const job = await this.get(id);
    if (job && job.values.status !== "succeeded" && job.values.status !== "failed") {
      await this.settle(job, { status: "failed", failure_reason: reason });
    }
  }

  /** pg-boss when the store is on a PostgreSQL server that `openStore` opened, else in the process. */
  private async defaultQueue(): Promise<ExportQueue> {
    const server = servers.get(this.store);
    if (!server) return new InProcessExportQueue(this.concurrency);
    const { PgBossExportQueue } = await import("./exports-pgboss.ts");
    const queue: PgBossExportQueue = new PgBossExportQueue({
      onError: (error) => this.onError(error, "pg-boss"),
      ...this.pgBoss,
      connectionString: server.connectionString,
      schema: `${server.schema}_pgboss`.slice(0, 63),
      concurrency: this.concurrency,
    });
    queue.deadLetters((id) => this.fail(id, "The export was interrupted too many times; create a new one."));
    return queue;
  }

  private fileOf(job: ExportJob): string {
    return path.join(this.directory, `${job.id}.${job.values.attempt ?? "none"}.${job.values.format}`);
  }

  /** Writes the job's new values if it is still at the revision this runner holds; null when it is not. */
  private async claim(job: ExportJob, values: ExportJobValues): Promise<ExportJob | null> {
    try {
      return (await this.store.update(
        EXPORT_JOBS,
        job.id,
        values,
        job.revision,
        NO_CONSTRAINTS,
      )) as ExportJob | null;
    } catch (error) {
      if (error instanceof ConflictError) return null;
      throw error;
    }
  }

  private async settle(job: ExportJob, outcome: { status: "failed"; failure_reason: string }): Promise<void> {
    await this.claim(job, { ...job.values, ...outcome, finished_at: new Date().toISOString() });
  }

  /** Deletes files whose link has expired, and parts of attempts that died. */
  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.directory)) {
      const file = path.join(this.directory, name);
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) continue;
      const age = now - info.mtimeMs;
      if (name.endsWith(".part") ? age > ABANDONED_MS : age > this.linkTtlMs + SWEEP_MS) {
        await rm(file, { force: true });
      }
    }
  }
}

const servers = new WeakMap<Store, { connectionString: string; schema: string }>();

/**
 * Tells exports which PostgreSQL server (and schema) a store keeps its records on, so that its
 * jobs go through pg-boss there. The generated `openStore` calls it for `postgres://` targets.
 */
export function setExportServer(store: Store, server: { connectionString: string; schema: string }): void {
  servers.set(store, server);
}

/**
 * Streams the records of a job into `file`: every record the list would show, in ascending id
 * order, up to the job's own id (so records created after the export was requested are not in
 * it). A page at a time; the event loop gets a turn after every page. Returns the count.
 */
async function writeRecords(
  file: string,
  job: ExportJob,
  source: ExportSource,
  pageSize: number,
  onPage: (written: number) => Promise<void>,
): Promise<number> {
  const out = createWriteStream(file, { flags: "wx", mode: 0o600 });
  out.on("error", () => {});
  const csv = job.values.format === "csv";
  const line = csv
    ? (view: Record<string, unknown>) => `${source.columns.map((c) => csvValue(view[c])).join(",")}\r\n`
    : (view: Record<string, unknown>) => `${JSON.stringify(view)}\n`;
  let count = 0;
  try {
    if (csv) await write(out, `${source.columns.join(",")}\r\n`);
    let after: string | undefined;
    for (;;) {
      const page = await source.list({ ...job.values.match, limit: pageSize, ...(after ? { after } : {}) });
      let chunk = "";
      let done = !page.hasMore || page.records.length === 0;
      for (const record of page.records) {
        if (record.id > job.id) {
          done = true;
          break;
        }
        chunk += line(source.view(record) as Record<string, unknown>);
        count += 1;
      }
      if (chunk) await write(out, chunk);
      if (done) break;
      after = page.records[page.records.length - 1]!.id;
      await onPage(count);
      await nextTurn();
    }
    out.end();
    await finished(out);
    return count;
  } catch (error) {
    out.destroy();
    throw error;
  }
}

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

/** RFC 4180: quoted when it holds a comma, quote or line break (or edge spaces); arrays and objects as JSON. */
export function csvValue(value: unknown): string {
  if (value === undefined || value === null) return "";
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Runs jobs in this process, `concurrency` at a time, in the order they were queued. */
export class InProcessExportQueue implements ExportQueue {
  private readonly concurrency: number;
  private readonly waiting: string[] = [];
  private readonly queued = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private run: ((id: string) => Promise<void>) | undefined;
  private stopped = false;

  constructor(concurrency = 1) {
    this.concurrency = Math.max(1, concurrency);
  }

  async start(run: (id: string, signal?: AbortSignal) => Promise<void>): Promise<void> {
    this.run = run;
    this.stopped = false;
    this.pump();
  }

  async enqueue(id: string): Promise<void> {
    if (this.queued.has(id)) return;
    this.queued.add(id);
    this.waiting.push(id);
    this.pump();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    while (this.run && !this.stopped && this.running.size < this.concurrency && this.waiting.length > 0) {
      const id = this.waiting.shift()!;
      const task: Promise<void> = this.run(id)
        .catch(() => {})
        .finally(() => {
          this.running.delete(task);
          this.queued.delete(id);
          this.pump();
        });
      this.running.add(task);
    }
  }
}

/* ---------- what the generated routes call ---------- */

/** A job as the API shows it. */
export interface ExportView {
  id: string;
  resource: string;
  format: ExportFormat;
  status: ExportStatus;
  filters: Values;
  q?: string;
  record_count: number;
  download_url?: string;
  expires_at?: string;
  failure_reason?: string;
  created_at: string;
  updated_at: string;
  started_at?: string;
  finished_at?: string;
}

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

/** `{ resource }` of a create body: one of the version's exportable collections. */
export function exportResourceSchema<const T extends readonly [string, ...string[]]>(collections: T) {
  return z.looseObject({
    resource: z.enum(collections, {
      error: (issue) =>
        issue.input === undefined ? "is required" : `must be one of: ${collections.join(", ")}`,
    }),
  });
}

/** What `authorize` is told of a job: its values, without the link's token. */
function accessRecord(job: ExportJob): { id: string; values: object } {
  const { token: _token, attempt: _attempt, ...values } = job.values;
  return { id: job.id, values };
}

/**
 * A job of this version that the caller created, after `authorize` (read) said yes. Anyone
 * else's job, or one of another version, answers 404 as if it did not exist.
 */
export async function ownExport(
  exports: ExportService,
  authorize: Authorize,
  request: FastifyRequest,
  version: string,
  id: string,
): Promise<ExportJob> {
  const job = await exports.get(id);
  if (!job || job.values.owner !== principalOf(request).id || job.values.version !== version) {
    throw new NotFoundError("No export has this id.");
  }
  await authorizeOrThrow(authorize, request, "read", "exports", accessRecord(job));
  return job;
}

function sameToken(a: string, b: string): boolean {
  const digest = (t: string) => createHash("sha256").update(t).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Streams a job's file when `token` is its link's and the link has not expired; else 404. */
export async function sendExportFile(
  reply: FastifyReply,
  exports: ExportService,
  job: ExportJob,
  token: string,
): Promise<FastifyReply> {
  const v = job.values;
  if (v.status !== "succeeded" || !v.token || !sameToken(v.token, token)) {
    throw new NotFoundError("No export file has this link.");
  }
  if (!v.expires_at || Date.parse(v.expires_at) <= Date.now()) {
    throw new NotFoundError("The download link has expired: create a new export.");
  }
  const file = await exports.openFile(job);
  if (!file) throw new NotFoundError("The export's file is no longer kept: create a new export.");
  return reply
    .code(200)
    .type(file.mediaType)
    .header("content-length", file.size)
    .header("content-disposition", `attachment; filename="${file.fileName}"`)
    .header("cache-control", "private, no-store")
    .send(file.stream);
}
