/**
 * Exports (conventions §4.5): a report of every record of a collection is never an unbounded
 * list but a background job and a download link. `POST /vN/exports` stores a job (`pending`) and
 * queues it; a runner walks the collection with the store's cursor `list`, a page at a time, and
 * streams each record, as the version that took the request shows it, into a file; the job then
 * carries a download link with an unguessable token and an expiry.
 *
 * Jobs are records of the store's own collection `canon/exports` (exports-job.ts), so they are
 * as durable as the store: gone with the memory store, kept by PGlite and PostgreSQL. The queue
 * that runs them is in the process for the memory store and PGlite, and pg-boss for a PostgreSQL
 * server (exports-pgboss.ts), where instances share the work and a job whose runner died is run
 * again. Every attempt claims the job with a compare-and-set on its revision and writes a file
 * of its own (exports-files.ts), made the job's only when complete: an attempt that lost its
 * claim stops at its next write, and a file never holds two attempts' records. Files are kept in
 * the database on a PostgreSQL server (every instance serves every link) and in a private folder
 * otherwise. Every minute, files past their link and jobs past their retention are swept.
 */
import { createHash, randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { ConflictError } from "./errors.ts";
import type { ReadContext } from "./hooks.ts";
import { FolderExportFiles, SWEEP_MS, type ExportFileName, type ExportFiles } from "./exports-files.ts";
import { DatabaseExportFiles } from "./exports-files-sql.ts";
import {
  EXPORT_JOBS,
  EXPORT_MEDIA_TYPES,
  type ExportFormat,
  type ExportJob,
  type ExportJobValues,
} from "./exports-job.ts";
import { deleteFinishedJobs, insertWithinLimit } from "./exports-limits.ts";
import type { PgBossExportQueue, PgBossQueueOptions } from "./exports-pgboss.ts";
import { InProcessExportQueue, type ExportQueue } from "./exports-queue.ts";
import { writeRecords, type ExportSource } from "./exports-writing.ts";
import type { SqlDriver } from "./sql-driver.ts";
import type { CursorQuery, Match, SortKey, Store, Values } from "./store.ts";
import { newId } from "./uuid.ts";

export interface ExportOptions {
  /**
   * Folder of the files on the memory store and PGlite (on a PostgreSQL server they are kept in
   * the database). Default: `CANON_EXPORTS_DIR`, else `canon-exports-<uid>` in the OS temp
   * folder. Created `0700`; the service refuses to start on one that is a symbolic link, belongs
   * to another user, or is open to the group or to others.
   */
  directory?: string;
  /** How long a download link works after the job succeeded. Default 3600 (one hour). */
  linkTtlSeconds?: number;
  /** How long a finished job is kept once it failed, or once its link expired, in seconds. Default 604800 (7 days). */
  retentionSeconds?: number;
  /** Pending or running jobs one principal may have at once; one more answers 429 with `Retry-After`. Default 3. */
  maxJobsPerPrincipal?: number;
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

export class ExportService {
  readonly directory: string;
  private readonly store: Store;
  private readonly files: ExportFiles;
  private readonly linkTtlMs: number;
  private readonly retentionMs: number;
  private readonly maxJobsPerPrincipal: number;
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
      options.directory ??
        process.env.CANON_EXPORTS_DIR ??
        path.join(tmpdir(), `canon-exports-${process.getuid?.() ?? "user"}`),
    );
    const server = servers.get(store);
    this.files = server ? new DatabaseExportFiles(server.driver) : new FolderExportFiles(this.directory);
    this.linkTtlMs = (options.linkTtlSeconds ?? 3600) * 1000;
    this.retentionMs = (options.retentionSeconds ?? 7 * 24 * 60 * 60) * 1000;
    this.maxJobsPerPrincipal = Math.max(1, options.maxJobsPerPrincipal ?? 3);
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

  /**
   * Stores a job, `pending`, and queues it. When the owner has `maxJobsPerPrincipal` jobs
   * pending or running already, the job is taken back and the request answers 429.
   */
  async create(input: {
    owner: string;
    version: string;
    resource: string;
    format: ExportFormat;
    filters: Values;
    q?: string | undefined;
    match: Match;
    /** The order of the file: `sort` as the client gave it, and as the store reads it. */
    sort?: { text: string; keys: readonly SortKey[] } | undefined;
    /** Who asks (the generated route gives it): kept with the job, told to the service's `list` when it runs. */
    context?: ReadContext | undefined;
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
      ...(input.sort?.keys.length ? { sort: input.sort.text } : {}),
      match: JSON.parse(
        JSON.stringify(input.sort?.keys.length ? { ...input.match, sort: input.sort.keys } : input.match),
      ) as Match,
      record_count: 0,
      attempts: 0,
      ...(input.context === undefined ? {} : keptContext(input.context)),
    };
    const job = await insertWithinLimit(
      this.store,
      { id: newId(), created_at: now, updated_at: now, revision: 1, values },
      this.maxJobsPerPrincipal,
    );
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
    await this.files.start();
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
    this.sweeper = setInterval(
      () => void this.sweep().catch((error) => this.onError(error, "sweep")),
      SWEEP_MS,
    );
    this.sweeper.unref();
  }

  /**
   * Deletes the jobs that finished more than `retentionSeconds` ago (a succeeded one counts from
   * its link's expiry), then the files no job serves any longer: links that expired, attempts
   * that died. Every instance sweeps; what one deletes, the others find gone.
   */
  async sweep(now = Date.now()): Promise<void> {
    await deleteFinishedJobs(this.store, now, this.retentionMs);
    await this.files.sweep(now, this.linkTtlMs);
  }

  /** Stops: running jobs stop at their next page and go back to `pending`. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    if (this.started) await this.queue?.stop();
    this.started = false;
  }

  /**
   * Runs one job: claims it, streams every record into a file of this attempt, makes the file
   * the job's and marks the job succeeded. A job already finished, or taken over meanwhile, is
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
    const file: ExportFileName = { id, attempt, format: job.values.format };
    const writer = await this.files.create(file);
    try {
      let progressAt = Date.now();
      const count = await writeRecords(writer, job, source, this.pageSize, async (written) => {
        if (this.stopping) throw new ExportInterrupted();
        if (signal?.aborted) throw new ClaimLost();
        if (Date.now() - progressAt < PROGRESS_MS) return;
        progressAt = Date.now();
        const next = await this.claim(job, { ...job.values, record_count: written });
        if (!next) throw new ClaimLost();
        job = next;
      });
      await writer.close();
      await this.files.publish(file);
      const done = await this.claim(job, {
        ...job.values,
        status: "succeeded",
        record_count: count,
        token: randomBytes(32).toString("base64url"),
        expires_at: new Date(Date.now() + this.linkTtlMs).toISOString(),
        finished_at: new Date().toISOString(),
      });
      if (!done) await this.files.remove(file);
    } catch (error) {
      await writer.discard();
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
    const { format, attempt, resource } = job.values;
    const file = await this.files.open({ id: job.id, attempt: attempt ?? "none", format });
    if (!file) return null;
    return {
      ...file,
      mediaType: format === "csv" ? `${EXPORT_MEDIA_TYPES.csv}; charset=utf-8` : EXPORT_MEDIA_TYPES[format],
      fileName: `${resource}-${job.id}.${format}`,
    };
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
      schema: pgBossSchema(server.schema),
      concurrency: this.concurrency,
    });
    queue.deadLetters((id) => this.fail(id, "The export was interrupted too many times; create a new one."));
    return queue;
  }

  /** Writes the job's new values if it is still at the revision this runner holds; null when it is not. */
  private async claim(job: ExportJob, values: ExportJobValues): Promise<ExportJob | null> {
    try {
      return (await this.store.update({
        collection: EXPORT_JOBS,
        id: job.id,
        values,
        expectedRevision: job.revision,
        constraints: NO_CONSTRAINTS,
      })) as ExportJob | null;
    } catch (error) {
      if (error instanceof ConflictError) return null;
      throw error;
    }
  }

  private async settle(job: ExportJob, outcome: { status: "failed"; failure_reason: string }): Promise<void> {
    await this.claim(job, { ...job.values, ...outcome, finished_at: new Date().toISOString() });
  }
}

interface ExportServer {
  connectionString: string;
  schema: string;
  /** The store's driver: export files are kept in its database. */
  driver: SqlDriver;
}

const servers = new WeakMap<Store, ExportServer>();

/** The longest schema name pg-boss takes, in bytes (its names of tables and functions are built from it). */
const PGBOSS_SCHEMA_MAX = 50;

/**
 * pg-boss's schema beside the store's: `<schema>_pgboss`. A store schema is any SQL identifier of
 * up to 63 characters, but pg-boss refuses a schema name over 50 bytes, and did so when the export
 * service started: a schema of more than 43 characters stopped the app. When `<schema>_pgboss`
 * would be longer, it is the schema's first 34 characters, 8 hexadecimal digits of a SHA-256 of the
 * whole name (so that two long schemas with one beginning do not share a queue) and `_pgboss`:
 * 50 characters.
 */
export function pgBossSchema(storeSchema: string): string {
  const name = `${storeSchema}_pgboss`;
  if (Buffer.byteLength(name) <= PGBOSS_SCHEMA_MAX) return name;
  const hash = createHash("sha256").update(storeSchema).digest("hex").slice(0, 8);
  return `${storeSchema.slice(0, PGBOSS_SCHEMA_MAX - 16)}_${hash}_pgboss`;
}

/**
 * Tells exports which PostgreSQL server (and schema) a store keeps its records on, so that its
 * jobs go through pg-boss there and its files are kept in its database. The generated
 * `openStore` calls it for `postgres://` targets.
 */
/**
 * Who asked for a job, as it keeps it: the principal's id, scopes and tenant (not whatever else
 * `authenticate` put on it), and the request id.
 */
function keptContext(context: ReadContext): Pick<ExportJobValues, "principal" | "request_id"> {
  const { id, scopes, tenant } = context.principal;
  return {
    principal: { id, scopes: [...scopes], ...(tenant === undefined || tenant === null ? {} : { tenant }) },
    request_id: context.requestId,
  };
}

export function setExportServer(store: Store, server: ExportServer): void {
  servers.set(store, server);
}
