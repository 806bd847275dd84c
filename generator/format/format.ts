import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { EmittedFile } from "../emit/emitter.ts";
import type { FormatJob, FormatReply } from "./worker.ts";

/** Prettier options of every generated file: fixed, so output is the same on every machine. */
export const PRETTIER_OPTIONS = { printWidth: 110, trailingComma: "all", endOfLine: "lf" } as const;

/**
 * The prettier parser for each language. TypeScript goes through `babel-ts`: it prints the same
 * code as the `typescript` parser (the tests check the output with the `typescript` parser too),
 * and loads and parses faster, which is most of the cost of regenerating a few files.
 */
const PRETTIER_PARSERS = { typescript: "babel-ts", json: "json", markdown: "markdown" } as const;

export interface FormattedFile {
  path: string;
  content: string;
}

export interface FormatStats {
  formatted: number;
  cached: number;
}

/**
 * Formats emitted files with prettier. A cache keyed by a hash of the unformatted text means
 * an unchanged file costs no formatting, and prettier is not even loaded when every file hits.
 */
export async function formatFiles(files: EmittedFile[], cacheFile: string | null): Promise<{ files: FormattedFile[]; stats: FormatStats }> {
  const cache = cacheFile ? await readCache(cacheFile) : new Map<string, string>();
  const next = new Map<string, string>();
  const stats: FormatStats = { formatted: 0, cached: 0 };
  const out: FormattedFile[] = files.map((f) => ({ path: f.path, content: f.parser ? "" : ensureNewline(f.content) }));
  const misses: Array<{ index: number; key: string; file: { path: string; content: string; parser: string } }> = [];
  files.forEach((file, index) => {
    if (!file.parser) return;
    const key = createHash("sha256").update(file.parser).update("\0").update(file.content).digest("base64url");
    const hit = cache.get(key);
    next.set(key, hit ?? "");
    if (hit === undefined) misses.push({ index, key, file: { path: file.path, content: file.content, parser: PRETTIER_PARSERS[file.parser] } });
    else {
      out[index]!.content = hit;
      stats.cached++;
    }
  });
  const formatted = await formatMany(misses.map((m) => m.file));
  misses.forEach((m, i) => {
    out[m.index]!.content = formatted[i]!;
    next.set(m.key, formatted[i]!);
  });
  stats.formatted = misses.length;
  if (cacheFile && stats.formatted > 0) await writeCache(cacheFile, next);
  return { files: out, stats };
}

/** Below this many files, starting workers costs more than it saves. */
const PARALLEL_THRESHOLD = 48;

/** Formats files with prettier, across worker threads when there are many. Results in input order. */
async function formatMany(files: Array<{ path: string; content: string; parser: string }>): Promise<string[]> {
  if (files.length === 0) return [];
  const workers = Math.min(availableParallelism(), 4, Math.ceil(files.length / PARALLEL_THRESHOLD));
  if (workers <= 1) {
    const prettier = await import("prettier");
    const results: string[] = [];
    for (const f of files) {
      try {
        results.push(await prettier.format(f.content, { ...PRETTIER_OPTIONS, parser: f.parser, filepath: f.path }));
      } catch (error) {
        throw new Error(`canon produced ${f.path}, which prettier cannot parse: ${(error as Error).message}`);
      }
    }
    return results;
  }
  // Interleave files over the workers so that each gets a similar mix of sizes.
  const batches = Array.from({ length: workers }, () => [] as number[]);
  files.forEach((_, i) => batches[i % workers]!.push(i));
  const results: string[] = new Array(files.length);
  const script = new URL(import.meta.url.endsWith(".ts") ? "./worker.ts" : "./worker.js", import.meta.url);
  await Promise.all(
    batches.map(async (indexes, id) => {
      const worker = new Worker(script);
      try {
        const reply = await new Promise<FormatReply>((resolve, reject) => {
          worker.once("message", resolve);
          worker.once("error", reject);
          const job: FormatJob = { id, files: indexes.map((i) => files[i]!), options: { ...PRETTIER_OPTIONS } };
          worker.postMessage(job);
        });
        if ("error" in reply) throw new Error(reply.error);
        reply.results.forEach((text, j) => (results[indexes[j]!] = text));
      } finally {
        await worker.terminate();
      }
    }),
  );
  return results;
}

function ensureNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

async function readCache(file: string): Promise<Map<string, string>> {
  try {
    const entries = JSON.parse(await readFile(file, "utf8")) as Array<[string, string]>;
    return new Map(entries);
  } catch {
    return new Map();
  }
}

async function writeCache(file: string, cache: Map<string, string>): Promise<void> {
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify([...cache]));
  } catch {
    // The cache only saves time; a read-only cache folder is fine.
  }
}
