// The second thread of a `canon dev` session (emit/thread.ts): runs THREAD_EMITTERS on each model
// it is sent. Its engine (units, rendered templates, compared paths), the model's parts and
// canon's own files (templates, runtime files) last as long as the session, as the main thread's do.
import { parentPort, workerData } from "node:worker_threads";
import { Engine } from "../engine.ts";
import { ModelParts } from "../model/intern.ts";
import { phaseTimer } from "../util/timings.ts";
import { CanonFiles, createEmitContext, emitters } from "./index.ts";
import { THREAD_EMITTERS, type ThreadJob, type ThreadReply } from "./thread.ts";

const { cacheDir } = workerData as { cacheDir?: string };
const chosen = emitters.filter((e) => THREAD_EMITTERS.includes(e.name));
const engine = new Engine();
const parts = new ModelParts(engine);
const canonFiles = new CanonFiles();

parentPort?.on("message", (job: ThreadJob) => {
  try {
    const phase = phaseTimer("canon: emit thread");
    const model = parts.revive(job.model);
    phase("receive the model");
    const context = createEmitContext(undefined, undefined, cacheDir, canonFiles);
    const files = engine.within(() =>
      chosen.flatMap((e) => {
        const emitted = e.emit(model, context);
        phase(e.name);
        return emitted;
      }),
    );
    parentPort?.postMessage({ id: job.id, files } satisfies ThreadReply);
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: (error as Error).stack ?? String(error) } satisfies ThreadReply);
  }
});
