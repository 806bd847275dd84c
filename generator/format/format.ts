import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { EmittedFile } from "../emit/emitter.ts";

/** Prettier options of every generated file: fixed, so output is the same on every machine. */
export const PRETTIER_OPTIONS = { printWidth: 110, trailingComma: "all", endOfLine: "lf" } as const;

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
  let prettier: typeof import("prettier") | null = null;
  const out: FormattedFile[] = [];
  for (const file of files) {
    if (!file.parser) {
      out.push({ path: file.path, content: ensureNewline(file.content) });
      continue;
    }
    const key = createHash("sha256").update(file.parser).update("\0").update(file.content).digest("base64url");
    let content = cache.get(key);
    if (content === undefined) {
      prettier ??= await import("prettier");
      try {
        content = await prettier.format(file.content, { ...PRETTIER_OPTIONS, parser: file.parser, filepath: file.path });
      } catch (error) {
        throw new Error(`canon produced ${file.path}, which prettier cannot parse: ${(error as Error).message}`);
      }
      stats.formatted++;
    } else {
      stats.cached++;
    }
    next.set(key, content);
    out.push({ path: file.path, content });
  }
  if (cacheFile && stats.formatted > 0) await writeCache(cacheFile, next);
  return { files: out, stats };
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
