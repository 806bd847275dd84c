import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { compareText } from "../diagnostics/diagnostic.ts";
import type { FormattedFile } from "../format/format.ts";

/** How the output folder differs from what canon would write. */
export interface OutputDiff {
  added: string[];
  changed: string[];
  /** Files in the output folder that canon would not write. */
  stale: string[];
  unchanged: number;
}

const JOURNAL = ".canon-journal.json";
const TEMP_SUFFIX = ".canon-tmp";

/** Files canon keeps for itself in the output folder; never compared, never listed. */
function isOwnFile(relative: string): boolean {
  return relative === JOURNAL || relative.endsWith(TEMP_SUFFIX);
}

/** Every file below `dir`, relative to it with `/`; empty when the folder does not exist. */
export async function listFiles(dir: string, base = dir): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const out: string[] = [];
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(full, base)));
    else out.push(path.relative(base, full).split(path.sep).join("/"));
  }
  return out;
}

/** Compares the wanted files with the output folder, reading each existing file once. */
export async function diffOutput(outDir: string, files: FormattedFile[]): Promise<OutputDiff> {
  await recover(outDir);
  const existing = (await listFiles(outDir)).filter((f) => !isOwnFile(f));
  const wanted = new Map(files.map((f) => [f.path, f.content]));
  const diff: OutputDiff = { added: [], changed: [], stale: [], unchanged: 0 };
  const present = new Set(existing);
  await inParallel(files, async (f) => {
    if (!present.has(f.path)) {
      diff.added.push(f.path);
      return;
    }
    const current = await readFile(path.join(outDir, f.path), "utf8");
    if (current === f.content) diff.unchanged++;
    else diff.changed.push(f.path);
  });
  diff.stale = existing.filter((f) => !wanted.has(f));
  diff.added.sort(compareText);
  diff.changed.sort(compareText);
  diff.stale.sort(compareText);
  return diff;
}

interface Journal {
  writes: Array<[temp: string, target: string]>;
  deletes: string[];
}

/**
 * Applies a diff so that a crash at any moment leaves either the old output or the new one:
 * new contents go to temporary files first; a journal naming every rename and deletion is then
 * written in one step; only then are files renamed into place. A run that finds a journal
 * finishes it; temporary files without a journal are thrown away.
 */
export async function applyDiff(outDir: string, files: FormattedFile[], diff: OutputDiff): Promise<void> {
  const toWrite = new Set([...diff.added, ...diff.changed]);
  if (toWrite.size === 0 && diff.stale.length === 0) return;
  const tag = randomBytes(4).toString("hex");
  const journal: Journal = { writes: [], deletes: diff.stale };
  const writes = files.filter((f) => toWrite.has(f.path));
  // Folders first, then the files, many at a time: each step waits on the disk, not on the CPU.
  const folders = [...new Set(writes.map((f) => path.dirname(path.join(outDir, f.path))))].sort(compareText);
  await inParallel(folders, (folder) => mkdir(folder, { recursive: true }));
  await inParallel(writes, (file) => writeFile(`${path.join(outDir, file.path)}.${tag}${TEMP_SUFFIX}`, file.content));
  for (const file of writes) journal.writes.push([file.path + `.${tag}${TEMP_SUFFIX}`, file.path]);
  await mkdir(outDir, { recursive: true });
  const journalFile = path.join(outDir, JOURNAL);
  await writeFile(`${journalFile}.${tag}${TEMP_SUFFIX}`, JSON.stringify(journal));
  await rename(`${journalFile}.${tag}${TEMP_SUFFIX}`, journalFile);
  await finish(outDir, journal);
}

async function finish(outDir: string, journal: Journal): Promise<void> {
  await inParallel(journal.writes, async ([temp, target]) => {
    try {
      await rename(path.join(outDir, temp), path.join(outDir, target));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  });
  for (const stale of journal.deletes) {
    await rm(path.join(outDir, stale), { force: true });
    await removeEmptyParents(outDir, path.dirname(path.join(outDir, stale)));
  }
  await rm(path.join(outDir, JOURNAL), { force: true });
}

/** File operations in flight at once: enough to keep the disk and libuv's threads busy. */
const FILE_CONCURRENCY = 32;

/**
 * Runs `task` on every item, at most FILE_CONCURRENCY at a time (so that no run opens more files
 * at once than a process may). After a failure no new task starts; once the running ones have
 * settled, the first failure is thrown.
 */
export async function inParallel<T>(items: T[], task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < items.length && failure === null) {
      try {
        await task(items[next++]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FILE_CONCURRENCY, items.length) }, worker));
  if (failure) throw (failure as { error: unknown }).error;
}

async function removeEmptyParents(root: string, dir: string): Promise<void> {
  let current = dir;
  while (path.relative(root, current) && !path.relative(root, current).startsWith("..")) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}

/** Finishes an interrupted write, or throws away its temporary files. */
export async function recover(outDir: string): Promise<void> {
  let journal: Journal | null = null;
  try {
    journal = JSON.parse(await readFile(path.join(outDir, JOURNAL), "utf8")) as Journal;
  } catch {
    journal = null;
  }
  if (journal) await finish(outDir, journal);
  for (const f of await listFiles(outDir)) {
    if (f.endsWith(TEMP_SUFFIX)) await rm(path.join(outDir, f), { force: true });
  }
}
