/**
 * Where export files are kept. Each attempt at a job writes a file of its own; the file becomes
 * the job's (`publish`) only when complete, so a file never holds two attempts' records and a
 * half-written one is never served. `ExportFiles` is the interface; `FolderExportFiles` keeps
 * the files in a private folder of this machine (the memory store and PGlite, one process), and
 * `DatabaseExportFiles` (exports-files-sql.ts) in the database (a PostgreSQL server, where every
 * instance serves every file).
 */
import { once } from "node:events";
import { constants, lstatSync, mkdirSync, type WriteStream } from "node:fs";
import { lstat, open, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type { ExportFormat } from "./exports-job.ts";
import type { ExportSink } from "./exports-writing.ts";

/** One attempt's file of a job. */
export interface ExportFileName {
  id: string;
  attempt: string;
  format: ExportFormat;
}

/** A file being written: the text goes in through `write`, then `close` or `discard`. */
export interface ExportFileWriter extends ExportSink {
  /** Completes the file (not yet the job's: see `publish`). */
  close(): Promise<void>;
  /** Removes what was written. */
  discard(): Promise<void>;
}

export interface ExportFiles {
  /** Prepares the storage (a service calls it when it starts). */
  start(): Promise<void>;
  /** A new, empty file of one attempt. */
  create(file: ExportFileName): Promise<ExportFileWriter>;
  /** Makes a closed attempt's file the one `open` serves. */
  publish(file: ExportFileName): Promise<void>;
  /** Removes a published file (its attempt lost the job after all). */
  remove(file: ExportFileName): Promise<void>;
  /** A published file, for reading, or null when it is no longer kept. */
  open(file: ExportFileName): Promise<{ stream: Readable; size: number } | null>;
  /** Removes, as of `now`, the files of links that have expired (`linkTtlMs` after they were made) and of attempts that died. */
  sweep(now: number, linkTtlMs: number): Promise<void>;
}

/** A `.part` file nobody has written to for this long belongs to an attempt that died. */
export const ABANDONED_MS = 15 * 60_000;
/** How often a service sweeps its files. */
export const SWEEP_MS = 60_000;

/** Opened without following a symbolic link: one planted in the folder is refused (ELOOP). */
const WRITE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const READ = constants.O_RDONLY | constants.O_NOFOLLOW;

/**
 * Files in a private folder: `<id>.<attempt>.part` while written, then `<id>.<attempt>.<format>`,
 * each `0600`. The folder is created `0700`; at start, one that is a symbolic link, belongs to
 * another user or is open to the group or to others is refused, and the service does not start.
 */
export class FolderExportFiles implements ExportFiles {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = path.resolve(directory);
  }

  async start(): Promise<void> {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    checkPrivateFolder(this.directory);
  }

  async create(file: ExportFileName): Promise<ExportFileWriter> {
    const part = this.partOf(file);
    const out = (await open(part, WRITE_NEW, 0o600)).createWriteStream();
    out.on("error", () => {});
    return {
      write: (text) => write(out, text),
      async close() {
        out.end();
        await finished(out);
      },
      async discard() {
        out.destroy();
        await rm(part, { force: true });
      },
    };
  }

  async publish(file: ExportFileName): Promise<void> {
    await rename(this.partOf(file), this.pathOf(file));
  }

  async remove(file: ExportFileName): Promise<void> {
    await rm(this.pathOf(file), { force: true });
  }

  async open(file: ExportFileName): Promise<{ stream: Readable; size: number } | null> {
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      handle = await open(this.pathOf(file), READ);
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        return null;
      }
      return { stream: handle.createReadStream(), size: info.size };
    } catch (error) {
      await handle?.close();
      // Gone, or a symbolic link put in its place: not a file this service wrote.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ELOOP") return null;
      throw error;
    }
  }

  /** A file's age is all a folder knows: one older than a link's lifetime (and a minute) has expired. */
  async sweep(now: number, linkTtlMs: number): Promise<void> {
    for (const name of await readdir(this.directory)) {
      const file = path.join(this.directory, name);
      const info = await lstat(file).catch(() => null);
      if (!info?.isFile()) continue;
      const age = now - info.mtimeMs;
      if (name.endsWith(".part") ? age > ABANDONED_MS : age > linkTtlMs + SWEEP_MS) {
        await rm(file, { force: true });
      }
    }
  }

  private partOf(file: ExportFileName): string {
    return path.join(this.directory, `${file.id}.${file.attempt}.part`);
  }

  private pathOf(file: ExportFileName): string {
    return path.join(this.directory, `${file.id}.${file.attempt}.${file.format}`);
  }
}

/** Throws, saying what to change, unless `directory` is a real folder of this user that only it can use. */
export function checkPrivateFolder(directory: string): void {
  const info = lstatSync(directory);
  const refuse = (why: string, fix: string) => {
    throw new Error(
      `the exports folder ${directory} ${why}: ${fix} (exports.directory or CANON_EXPORTS_DIR)`,
    );
  };
  if (info.isSymbolicLink()) refuse("is a symbolic link", "give the real folder");
  if (!info.isDirectory()) refuse("is not a folder", "give a folder");
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    refuse(`belongs to user ${info.uid}, not to this process's user ${uid}`, "give a folder of this user");
  }
  const mode = info.mode & 0o777;
  if (mode & 0o077) {
    refuse(
      `is open to other users (mode ${mode.toString(8).padStart(4, "0")})`,
      "chmod 700 it, or give another",
    );
  }
}

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}
