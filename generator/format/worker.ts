// A formatting worker: receives batches of files, answers with prettier's output.
import { parentPort } from "node:worker_threads";
import * as prettier from "prettier";

export interface FormatJob {
  id: number;
  files: Array<{ path: string; content: string; parser: string }>;
  options: Record<string, unknown>;
}

export type FormatReply = { id: number; results: string[] } | { id: number; error: string };

parentPort?.on("message", async (job: FormatJob) => {
  try {
    const results: string[] = [];
    for (const f of job.files) {
      try {
        results.push(await prettier.format(f.content, { ...job.options, parser: f.parser, filepath: f.path }));
      } catch (error) {
        throw new Error(`canon produced ${f.path}, which prettier cannot parse: ${(error as Error).message}`);
      }
    }
    parentPort?.postMessage({ id: job.id, results } satisfies FormatReply);
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: (error as Error).message } satisfies FormatReply);
  }
});
