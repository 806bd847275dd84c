// The second thread of a `canon dev` session (emit/thread.ts): runs THREAD_EMITTERS on each model
// it is sent. Its engine (units, rendered templates, compared paths), the model's parts and
// canon's own files (templates, runtime files) last as long as the session, as the main thread's do.
import { parentPort, workerData } from "node:worker_threads";
import { partDigests, type PartDigestTable } from "../compat/parts.ts";
import type { JsonObject } from "../compat/types.ts";
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
    const { files, digests } = engine.within(() => {
      const files = chosen.flatMap((e) => {
        const emitted = e.emit(model, context);
        phase(e.name);
        return emitted;
      });
      // The digests of each document's parts: most are known already (the resources' parts
      // are built with theirs), so this reads little.
      const digests: Record<string, PartDigestTable> = {};
      for (const version of model.versions) digests[version.name] = partDigests(context.openapiDocument(model, version) as JsonObject);
      phase("part digests");
      return { files, digests };
    });
    parentPort?.postMessage({ id: job.id, files, digests } satisfies ThreadReply);
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: (error as Error).stack ?? String(error) } satisfies ThreadReply);
  }
});
