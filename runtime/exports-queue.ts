/**
 * The queue that runs export jobs. `ExportQueue` is what ExportService needs of one;
 * `InProcessExportQueue` runs jobs in this process (the memory store and PGlite), and
 * `PgBossExportQueue` (exports-pgboss.ts) shares them between every instance over a PostgreSQL
 * server.
 */
import { outsideRequest } from "./client-scope.ts";

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
      // A job queued by a request runs on its own: its client leaving does not stop it.
      const task: Promise<void> = outsideRequest(() => this.run!(id))
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
