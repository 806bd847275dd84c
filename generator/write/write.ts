import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, open, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { compareText } from "../diagnostics/diagnostic.ts";
import type { FormattedFile } from "../format/format.ts";
import { GENERATED_PREFIX_BYTES, isGenerated } from "../util/generated.ts";

/** How the output folder differs from what canon would write. */
export interface OutputDiff {
  added: string[];
  changed: string[];
  /** Files canon wrote earlier (they carry its notice) and would not write now: generate removes them. */
  stale: string[];
  /**
   * Files canon did not write (no notice), where it would write or beside what it writes:
   * generate refuses to run while there is one. Dot-files and dot-folders are never listed.
   */
  foreign: string[];
  unchanged: number;
}

const JOURNAL = ".canon-journal.json";
const TEMP_SUFFIX = ".canon-tmp";

/** Files canon keeps for itself in the output folder; never compared, never listed. */
function isOwnFile(relative: string): boolean {
  return relative === JOURNAL || relative.endsWith(TEMP_SUFFIX);
}

/**
 * Every file below `dir`, relative to it with `/`; empty when the folder does not exist. Entries
 * whose name starts with a dot (`.git/`, `.notes`, `.gitkeep`) are left out, at every depth:
 * canon never reads, compares or removes them.
 */
export async function listFiles(dir: string): Promise<string[]> {
  return listFilesSync(dir);
}

/**
 * The listing, folder by folder without waiting on the thread pool: a few hundred folders are
 * read in milliseconds this way, where awaiting each on a busy machine took hundreds.
 */
export function listFilesSync(dir: string, prefix = ""): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    if (entry.isDirectory()) out.push(...listFilesSync(path.join(dir, entry.name), `${prefix}${entry.name}/`));
    else out.push(`${prefix}${entry.name}`);
  }
  return out;
}

/**
 * Compares the wanted files with the output folder, reading each existing file once. With
 * `known` (the files this run has read already, or a `dev` session's record of what its last run
 * left there), a file listed there is taken to hold that content and is not read again; `read`
 * receives the text of each file read whole.
 */
export async function diffOutput(outDir: string, files: FormattedFile[], known?: ReadonlyMap<string, string> | null, read?: Map<string, string>): Promise<OutputDiff> {
  const existing = (await recover(outDir)).filter((f) => !isOwnFile(f));
  const wanted = new Set(files.map((f) => f.path));
  const diff: OutputDiff = { added: [], changed: [], stale: [], foreign: [], unchanged: 0 };
  const present = new Set(existing);
  const readWhole = (file: string) => {
    const text = readFileSync(path.join(outDir, file), "utf8");
    read?.set(file, text);
    return text;
  };
  // Read one after the other, without the thread pool: the files were just listed (and are
  // mostly in the page cache), where handing each read to the pool cost two to three times the CPU.
  for (const f of files) {
    if (!present.has(f.path)) {
      diff.added.push(f.path);
      continue;
    }
    // Recalled as the folder holds it (its size and time as recorded): not read.
    if (f.onDisk) {
      diff.unchanged++;
      continue;
    }
    const current = known?.get(f.path) ?? readWhole(f.path);
    if (current === f.content) diff.unchanged++;
    else if (isGenerated(current)) diff.changed.push(f.path);
    else diff.foreign.push(f.path);
  }
  await inParallel(
    existing.filter((f) => !wanted.has(f)),
    async (f) => (isGenerated(known?.get(f) ?? (await head(path.join(outDir, f)))) ? diff.stale : diff.foreign).push(f),
  );
  for (const list of [diff.added, diff.changed, diff.stale, diff.foreign]) list.sort(compareText);
  return diff;
}

/** The first bytes of a file, enough to tell whether canon wrote it. */
async function head(file: string): Promise<string> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(GENERATED_PREFIX_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
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
  if (diff.foreign.length > 0) throw new Error(`canon did not write ${diff.foreign.join(", ")}: nothing written`);
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

/** Finishes an interrupted write whose journal was written (its renames and deletions). */
export async function finishInterrupted(outDir: string): Promise<void> {
  let journal: Journal | null = null;
  try {
    journal = JSON.parse(await readFile(path.join(outDir, JOURNAL), "utf8")) as Journal;
  } catch {
    journal = null;
  }
  if (journal) await finish(outDir, journal);
}

/** Finishes an interrupted write, or throws away its temporary files; gives the files then there. */
export async function recover(outDir: string): Promise<string[]> {
  await finishInterrupted(outDir);
  const listed = await listFiles(outDir);
  const temporary = listed.filter((f) => f.endsWith(TEMP_SUFFIX));
  for (const f of temporary) await rm(path.join(outDir, f), { force: true });
  return temporary.length ? listed.filter((f) => !f.endsWith(TEMP_SUFFIX)) : listed;
}
