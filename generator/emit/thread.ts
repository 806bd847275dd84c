import { Worker } from "node:worker_threads";
import type { ModelParts, SentModel } from "../model/intern.ts";
import type { ApiModel } from "../model/types.ts";
import type { EmittedFile } from "./emitter.ts";

/**
 * The emitters a `canon dev` session runs on a second thread, beside the others: each version's
 * OpenAPI document and its CHANGES.md (the comparison of two documents). They read no previous
 * output. Measured at N = 100 in `canon dev`: the thread takes about 45 ms a save, the main
 * thread's emitters about 60 (the typed client, 30 ms with its layout, was tried on the thread:
 * the thread then took longer than the main thread waits for it).
 */
export const THREAD_EMITTERS: readonly string[] = ["openapi", "changes"];

/** A request to the thread: the model as text, its parts apart (cheaper to send than the objects). */
export interface ThreadJob {
  id: number;
  model: SentModel;
}

export type ThreadReply = { id: number; files: EmittedFile[] } | { id: number; error: string };

/**
 * A worker thread that runs `THREAD_EMITTERS` (emit/thread-worker.ts). It lives as long as the
 * session that made it; between jobs it does not keep the process alive.
 */
export class EmitThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (files: EmittedFile[]) => void; reject: (error: Error) => void }>();
  private next = 0;
  private failure: Error | null = null;

  /** Where the thread keeps compiled templates (createEmitContext's cache folder). */
  readonly cacheDir: string | undefined;

  constructor(cacheDir?: string) {
    this.cacheDir = cacheDir;
    const script = new URL(import.meta.url.endsWith(".ts") ? "./thread-worker.ts" : "./thread-worker.js", import.meta.url);
    this.worker = new Worker(script, { workerData: { cacheDir } });
    this.worker.unref();
    this.worker.on("message", (reply: ThreadReply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if (!waiting) return;
      if ("error" in reply) waiting.reject(new Error(reply.error));
      else waiting.resolve(reply.files);
    });
    this.worker.on("error", (error) => this.fail(error));
    // A reply that cannot be read would leave its run waiting for ever.
    this.worker.on("messageerror", (error) => this.fail(error));
    this.worker.on("exit", (code) => this.fail(new Error(`the emit thread stopped (exit code ${code})`)));
  }

  /** Whether the thread has stopped (it failed or was closed): a session then starts another. */
  get stopped(): boolean {
    return this.failure !== null;
  }

  /** Whether this thread runs the emitter named `name`. */
  runs(name: string): boolean {
    return THREAD_EMITTERS.includes(name);
  }

  /** The files of `THREAD_EMITTERS` for `model` (interned by `parts`), made on the thread. */
  emit(model: ApiModel, parts: ModelParts): Promise<EmittedFile[]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.next++;
    const job: ThreadJob = { id, model: parts.send(model) };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage(job);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error("the emit thread is closed");
    await this.worker.terminate();
  }

  /** Ends the thread: every run waiting for it fails with `error`, and the session starts another. */
  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
    // A thread that failed but still runs is not kept (nor does it keep the process alive).
    this.worker.unref();
    void this.worker.terminate();
  }
}
