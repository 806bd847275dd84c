import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import { once } from "node:events";
import { availableParallelism } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { EmittedFile } from "../emit/emitter.ts";
import type { RememberedFormat } from "../session.ts";
import { laidOut, layoutInPieces, type LaidOut } from "./layout.ts";
import { defineUnit, Engine, type FormattedBy, type OutputFile } from "../engine.ts";
import { formatterIdentity, PRETTIER_OPTIONS, PRETTIER_PARSERS } from "./prettier.ts";
import type { FormatJob, FormatReply } from "./worker.ts";

export { PRETTIER_OPTIONS } from "./prettier.ts";

export interface FormattedFile {
  path: string;
  content: string;
  /**
   * The output folder holds this very text (a file the engine recalled by its size and time,
   * `OutputFile.onDisk`): `content` is read from there when asked, and the comparison takes the
   * file as unchanged without reading it.
   */
  onDisk?: boolean;
}

export interface FormatStats {
  /** Files prettier formatted in this run. */
  formatted: number;
  /** Files whose prettier output came from the cache. */
  cached: number;
  /** Prettier-style files that canon laid out itself (format/layout.ts), without prettier. */
  laidOut: number;
  /** Files that needed prettier: formatted in this run or taken from the cache. */
  prettier: number;
}

/**
 * Formats emitted files. A prettier-style file is laid out by canon itself when the result is
 * certain (format/layout.ts); every other file goes through prettier. A cache keyed by a hash of
 * the unformatted text means an unchanged file costs no formatting, and prettier is not even
 * loaded when every file hits. `digests`: the sha256 (base64url) of each file the engine's
 * records recalled as written, by path (checked by the recall; the stamp need not hash it again).
 */
export async function formatFiles(
  files: EmittedFile[],
  cacheFile: string | null,
  memory?: Map<string, RememberedFormat>,
): Promise<{ files: FormattedFile[]; stats: FormatStats; digests: Map<string, string> }> {
  const stats: FormatStats = { formatted: 0, cached: 0, laidOut: 0, prettier: 0 };
  const out: FormattedFile[] = files.map((f) => ({ path: f.path, content: "" }));
  const by: Array<RememberedFormat["by"]> = files.map(() => "none");
  // The sha256 (base64url) of each file recalled as written, by path: what the stamp would hash again.
  const digests = new Map<string, string>();
  // A file emitted as the session's last run emitted it is formatted as it was then.
  const fresh = files.flatMap((file, index) => {
    const known = memory?.get(file.path);
    if (!known || known.emitted !== file.content) return [index];
    out[index]!.content = known.formatted;
    by[index] = known.by;
    if (known.by === "laidOut") stats.laidOut++;
    if (known.by === "prettier") stats.cached++;
    return [];
  });
  const misses: Array<{ index: number; key: string; file: { path: string; content: string; parser: string } }> = [];
  let cache: Map<string, string> | null = null;
  // Each file laid out through the engine (the unit's result), by the index of its file.
  const laidOutFiles: Array<[object, number]> = [];
  // A file recalled from the output folder as written (engine.ts, `EngineRecords`): formatted already.
  const asWritten = (index: number, recalled: OutputFile, formatted: FormattedBy, digest: string | undefined) => {
    if (recalled.onDisk) {
      // Read from the output folder only if something asks for it.
      Object.defineProperty(out[index]!, "content", { enumerable: true, get: () => recalled.content });
      out[index]!.onDisk = true;
    } else out[index]!.content = recalled.content;
    if (digest !== undefined) digests.set(out[index]!.path, digest);
    by[index] = formatted;
    if (formatted === "laidOut") stats.laidOut++;
    if (formatted === "prettier") stats.cached++;
  };
  for (const index of fresh) {
    const file = files[index]!;
    if (file.formatted) {
      asWritten(index, file as OutputFile, file.formatted, file.digest);
      continue;
    }
    if (!file.parser) {
      out[index]!.content = ensureNewline(file.content);
      continue;
    }
    if (file.prettierStyle) {
      // A session lays out the pieces of a file that changed since its last run only; a run
      // without one recalls a file emitted as before as it was written (from the output folder,
      // through the engine's records), and lays out only the pieces of a large file that changed.
      const engine = Engine.current();
      let laid: LaidOut;
      if (!engine) laid = laidOut(file.content);
      else if (memory) {
        const pieces = engine.memo<LaidOut>("laid-out pieces", 16_384);
        laid = layoutInPieces(file.content, (piece) => pieces.get(piece, () => laidOut(piece)));
      } else {
        const piece = (text: string): LaidOut => {
          const result = engine.run(laidOutPiece, { text }, undefined);
          return { text: result.text ?? text, certain: result.certain };
        };
        const recorded = engine.run(laidOutFile, { path: file.path, text: file.content }, file.content.length < PIECEWISE_LAYOUT ? laidOut : (text) => layoutInPieces(text, piece));
        laidOutFiles.push([recorded, index]);
        if (recorded.formatted) {
          asWritten(index, recorded, recorded.formatted, recorded.digest);
          continue;
        }
        laid = { text: recorded.content, certain: recorded.certain };
      }
      if (laid.certain) {
        out[index]!.content = laid.text;
        by[index] = "laidOut";
        stats.laidOut++;
        continue;
      }
    }
    cache ??= cacheFile ? await readCache(cacheFile) : new Map<string, string>();
    const key = prettierKey(file.parser, file.content);
    by[index] = "prettier";
    const hit = cache.get(key);
    if (hit === undefined) misses.push({ index, key, file: { path: file.path, content: file.content, parser: PRETTIER_PARSERS[file.parser] } });
    else {
      out[index]!.content = hit;
      stats.cached++;
    }
  }
  const formatted = await formatMany(misses.map((m) => m.file));
  misses.forEach((m, i) => (out[m.index]!.content = formatted[i]!));
  stats.formatted = misses.length;
  stats.prettier = stats.formatted + stats.cached;
  if (cacheFile && stats.formatted > 0) {
    // The cache keeps the entries of this run: those of the files that went to prettier.
    const next = new Map<string, string>();
    files.forEach((file, index) => {
      if (by[index] === "prettier" && file.parser) next.set(prettierKey(file.parser, file.content), out[index]!.content);
    });
    await writeCache(cacheFile, next);
  }
  // The engine's records name a file a unit returned by the text it is written with (engine.ts).
  const engine = Engine.current();
  if (engine?.recording) {
    files.forEach((file, index) => engine.written(file, out[index]!, by[index]!));
    for (const [laid, index] of laidOutFiles) engine.written(laid, out[index]!, by[index]!);
  }
  if (memory) {
    memory.clear();
    files.forEach((file, index) => memory.set(file.path, { emitted: file.content, formatted: out[index]!.content, by: by[index]! }));
  }
  return { files: out, stats, digests };
}

/**
 * A prettier-style file laid out by canon (`layout`: whole, or piece by piece for a large file),
 * a unit of its path and its text. The engine's records keep it by the text it is written with
 * (engine.ts): recalled, it is that text (`formatted` says how it was made, by canon's layout or
 * by prettier), read from the output folder.
 */
const laidOutFile = defineUnit(
  "laid-out file",
  ({ path, text }: { path: string; text: string }, layout: (text: string) => LaidOut): OutputFile & { certain: boolean } => {
    const laid = layout(text);
    return { path, content: laid.text, certain: laid.certain };
  },
);

/**
 * From this length on, a file is laid out piece by piece, each piece a unit (the clients, the
 * services, the SQL schema: a change touches few of their pieces); a smaller one is laid out
 * whole, where a unit per piece would cost more than it saves.
 */
const PIECEWISE_LAYOUT = 32_768;

/** A piece of a file laid out (a unit of its text), with its text only when the layout changed it. */
const laidOutPiece = defineUnit("laid-out piece", ({ text }: { text: string }): { text?: string; certain: boolean } => {
  const laid = laidOut(text);
  return laid.text === text ? { certain: laid.certain } : laid;
});

/** The format cache's key of a file: the formatter's identity, the parser and the text. */
function prettierKey(parser: string, content: string): string {
  return createHash("sha256").update(formatterIdentity()).update("\0").update(parser).update("\0").update(content).digest("base64url");
}

/** Old-generation heap of a formatting worker: ample for the largest file canon writes. */
const WORKER_HEAP_MB = 384;

/** Files per message to a worker. */
const BATCH_SIZE = 32;

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
  // Each worker takes the next small batch when it is done with one: the load stays balanced, and
  // neither side ever holds more than a batch of files in flight.
  const results: string[] = new Array(files.length);
  const script = new URL(import.meta.url.endsWith(".ts") ? "./worker.ts" : "./worker.js", import.meta.url);
  let next = 0;
  let batchId = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      // A bounded heap makes each worker collect its garbage early instead of growing with the run.
      const worker = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
      try {
        while (next < files.length) {
          const start = next;
          next = Math.min(files.length, next + BATCH_SIZE);
          const job: FormatJob = { id: batchId++, files: files.slice(start, next), options: { ...PRETTIER_OPTIONS } };
          const reply = await new Promise<FormatReply>((resolve, reject) => {
            const onError = (error: Error) => reject(error);
            worker.once("error", onError);
            worker.once("message", (message: FormatReply) => {
              worker.off("error", onError);
              resolve(message);
            });
            worker.postMessage(job);
          });
          if ("error" in reply) throw new Error(reply.error);
          reply.results.forEach((text, j) => (results[start + j] = text));
        }
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

/** The cache file: one `key<TAB>JSON text` line per entry, written and read entry by entry. */
async function readCache(file: string): Promise<Map<string, string>> {
  const cache = new Map<string, string>();
  try {
    for (const line of (await readFile(file, "utf8")).split("\n")) {
      const tab = line.indexOf("\t");
      if (tab > 0) cache.set(line.slice(0, tab), JSON.parse(line.slice(tab + 1)) as string);
    }
  } catch {
    return new Map();
  }
  return cache;
}

/**
 * Writes the cache beside its place and renames it over the old one: a reader (another canon
 * run at the same time) sees the old cache or the new one, never half of one.
 */
async function writeCache(file: string, cache: Map<string, string>): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    const out = createWriteStream(temporary);
    for (const [key, text] of cache) {
      if (!out.write(`${key}\t${JSON.stringify(text)}\n`)) await once(out, "drain");
    }
    out.end();
    await once(out, "close");
    await rename(temporary, file);
  } catch {
    // The cache only saves time; a read-only cache folder is fine.
    await rm(temporary, { force: true }).catch(() => {});
  }
}
