import path from "node:path";
import type { Diagnostic } from "./diagnostics/diagnostic.ts";
import { hasErrors } from "./diagnostics/diagnostic.ts";
import { createEmitContext, emitAll } from "./emit/index.ts";
import { formatFiles, type FormatStats, type FormattedFile } from "./format/format.ts";
import { runFrontEnd } from "./pipeline.ts";
import { applyDiff, diffOutput, type OutputDiff } from "./write/write.ts";

export interface GenerateOptions {
  definitions: string;
  out: string;
  /** Write the output (generate) or only compare it (check). */
  write: boolean;
  today?: string;
  /** Where the format cache lives; null: no cache. */
  cacheFile?: string | null;
}

export interface GenerateResult {
  diagnostics: Diagnostic[];
  /** Null when the definitions have errors: nothing was compared or written. */
  diff: OutputDiff | null;
  files: FormattedFile[];
  format: FormatStats;
  ms: number;
}

export function defaultCacheFile(cwd = process.cwd()): string {
  return path.join(cwd, "node_modules", ".cache", "canon", "format.json");
}

/**
 * The whole pipeline: load → validate → model → lint → emit → format → (compare | write).
 * `check` runs exactly this with `write: false`, so it compares the same formatted files.
 */
export async function generate(options: GenerateOptions): Promise<GenerateResult> {
  const started = performance.now();
  const front = await runFrontEnd(options.definitions, { today: options.today });
  const empty = { formatted: 0, cached: 0 };
  if (!front.model || hasErrors(front.diagnostics)) {
    return { diagnostics: front.diagnostics, diff: null, files: [], format: empty, ms: performance.now() - started };
  }
  const emitted = emitAll(front.model, createEmitContext());
  const cacheFile = options.cacheFile === undefined ? defaultCacheFile() : options.cacheFile;
  const { files, stats } = await formatFiles(emitted, cacheFile);
  const diff = await diffOutput(options.out, files);
  if (options.write) await applyDiff(options.out, files, diff);
  return { diagnostics: front.diagnostics, diff, files, format: stats, ms: performance.now() - started };
}
