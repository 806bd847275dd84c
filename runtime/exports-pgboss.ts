/**
 * The export queue of a PostgreSQL server store: pg-boss (https://github.com/timgit/pg-boss), a
 * job queue kept in PostgreSQL. Every instance over the same database works the same queue, one
 * job at a time each (or `concurrency`): instances split the work. A worker sends heartbeats while
 * it runs a job; when its process dies they stop, and pg-boss hands the job to another worker
 * (after `heartbeatSeconds`, checked every `superviseIntervalSeconds`). A job interrupted by a
 * stopping service is retried at once. After `retryLimit` retries the job goes to a dead-letter
 * queue whose worker marks the export failed.
 *
 * pg-boss keeps its tables in a schema of its own, next to the store's: `<store schema>_pgboss`.
 * The export job's id is the pg-boss job's id, so queueing a job twice queues it once. The
 * package is imported only when this queue starts, so services on other stores never load it.
 */
import type { ExportQueue } from "./exports-queue.ts";
import { postgresUrl } from "./sql-driver.ts";

export interface PgBossQueueOptions {
  /** The server, as `postgres://…` (a `schema` query parameter is ignored: see `schema`). */
  connectionString: string;
  /** pg-boss's schema. */
  schema: string;
  /** Jobs this instance runs at once. Default 1. */
  concurrency?: number;
  /** Seconds without a heartbeat after which a running job is handed to another worker (at least 10). Default 30. */
  heartbeatSeconds?: number;
  /** How often pg-boss looks for jobs whose heartbeat stopped, in seconds. Default 15. */
  superviseIntervalSeconds?: number;
  /** How often a worker looks for a queued job (NOTIFY wakes an idle one at once), in seconds (at least 0.5). Default 1. */
  pollingIntervalSeconds?: number;
  /** Retries of a job (after a crash or an interruption) before it is marked failed. Default 5. */
  retryLimit?: number;
  /** Connections pg-boss opens at most. Default 4. */
  poolSize?: number;
  /** Told of pg-boss's own errors (a lost connection, a failed maintenance pass). */
  onError?: (error: unknown) => void;
}

/** The queue of exports, and the queue of exports retried too often. */
export const EXPORT_QUEUE = "canon-exports";
export const EXPORT_DEAD_LETTERS = "canon-exports-dead";

interface BossJob {
  id: string;
  data: { id?: string };
  signal?: AbortSignal;
}
interface Boss {
  on(event: "error", listener: (error: unknown) => void): void;
  start(): Promise<unknown>;
  stop(options?: { graceful?: boolean; close?: boolean; timeout?: number }): Promise<void>;
  createQueue(name: string, options?: Record<string, unknown>): Promise<void>;
  send(name: string, data: object, options?: Record<string, unknown>): Promise<string | null>;
  work(
    name: string,
    options: Record<string, unknown>,
    handler: (jobs: BossJob[]) => Promise<unknown>,
  ): Promise<string>;
}
type BossConstructor = new (options: Record<string, unknown>) => Boss;

export class PgBossExportQueue implements ExportQueue {
  private readonly options: PgBossQueueOptions;
  private boss: Boss | undefined;
  private onDeadLetter: ((id: string) => Promise<void>) | undefined;

  constructor(options: PgBossQueueOptions) {
    this.options = options;
  }

  /** What to do with a job that was retried too often (ExportService marks it failed). */
  deadLetters(handler: (id: string) => Promise<void>): void {
    this.onDeadLetter = handler;
  }

  async start(run: (id: string, signal?: AbortSignal) => Promise<void>): Promise<void> {
    const specifier: string = "pg-boss";
    const { PgBoss } = (await import(specifier)) as { PgBoss: BossConstructor };
    const o = this.options;
    const url = postgresUrl(o.connectionString);
    url.searchParams.delete("schema");
    const supervise = o.superviseIntervalSeconds ?? 15;
    const boss = new PgBoss({
      connectionString: url.toString(),
      schema: o.schema,
      max: o.poolSize ?? 4,
      application_name: "canon-exports",
      // pg-boss's own queries (fetch, heartbeat, complete) are short; one the server has not answered
      // in 30 s is on a connection the network stopped carrying (a stall: the server's
      // statement_timeout cannot end it). pg's query_timeout fails it, and pg-pool then drops its
      // connection; without it the worker's fetch waited forever and no export ran again.
      query_timeout: 30_000,
      superviseIntervalSeconds: supervise,
      monitorIntervalSeconds: supervise,
      schedule: false,
      // A new job wakes a worker at once (NOTIFY); polling stays as the backstop.
      useListenNotify: true,
    });
    // Only the message and code: pg-boss's errors can carry the pg client, its connection
    // parameters (a password) and the cancel key with it.
    boss.on("error", (error) => o.onError?.(loggableError(error)));
    await boss.start();
    this.boss = boss;
    await boss.createQueue(EXPORT_DEAD_LETTERS, { retryLimit: 3, retryDelay: 1 });
    await boss.createQueue(EXPORT_QUEUE, {
      retryLimit: o.retryLimit ?? 5,
      retryDelay: 1,
      heartbeatSeconds: o.heartbeatSeconds ?? 30,
      // A job may run for hours; the heartbeat says whether its worker is alive.
      expireInSeconds: 24 * 60 * 60,
      deleteAfterSeconds: 7 * 24 * 60 * 60,
      deadLetter: EXPORT_DEAD_LETTERS,
      notify: true,
    });
    // NOTIFY wakes an idle worker when a job is sent; a worker that has just finished one finds
    // the next queued job at its next poll.
    const every = o.pollingIntervalSeconds ?? 1;
    const polling = { batchSize: 1, pollingIntervalSeconds: every, notifyPollingIntervalSeconds: every };
    await boss.work(
      EXPORT_QUEUE,
      { ...polling, localConcurrency: Math.max(1, o.concurrency ?? 1) },
      async ([job]) => {
        if (job?.data.id) await run(job.data.id, job.signal);
      },
    );
    const rarely = { batchSize: 1, pollingIntervalSeconds: 10, notifyPollingIntervalSeconds: 10 };
    await boss.work(EXPORT_DEAD_LETTERS, rarely, async ([job]) => {
      if (job?.data.id && this.onDeadLetter) await this.onDeadLetter(job.data.id);
    });
  }

  async enqueue(id: string): Promise<void> {
    if (!this.boss) throw new Error("the export queue is not started");
    // The same id again is a no-op: pg-boss keeps one job per id.
    await this.boss.send(EXPORT_QUEUE, { id }, { id });
  }

  async stop(): Promise<void> {
    const boss = this.boss;
    this.boss = undefined;
    // Graceful: running jobs see the service stopping, go back to pending and fail their attempt,
    // so that pg-boss retries them (here after a restart, or on another instance at once).
    await boss?.stop({ graceful: true, close: true, timeout: 30_000 });
  }
}

/** A copy of `error` with its message and code only, safe to log. */
export function loggableError(error: unknown): Error {
  const e = error as { message?: unknown; code?: unknown } | null;
  const copy = new Error(typeof e?.message === "string" ? e.message : String(error));
  if (typeof e?.code === "string") (copy as Error & { code: string }).code = e.code;
  return copy;
}
