/**
 * Where export files are kept. Each attempt at a job writes a file of its own; the file becomes
 * the job's (`publish`) only when complete, so a file never holds two attempts' records and a
 * half-written one is never served. `ExportFiles` is the interface; `FolderExportFiles` keeps
 * the files in a folder of this machine.
 */
import { once } from "node:events";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { open, readdir, rename, rm, stat } from "node:fs/promises";
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
  /** Removes files whose link expired more than `linkTtlMs` ago and attempts that died. */
  sweep(linkTtlMs: number): Promise<void>;
}

/** A `.part` file nobody has written to for this long belongs to an attempt that died. */
export const ABANDONED_MS = 15 * 60_000;
/** How often a service sweeps its files. */
export const SWEEP_MS = 60_000;

/** Files in a folder: `<id>.<attempt>.part` while written, then `<id>.<attempt>.<format>`. */
export class FolderExportFiles implements ExportFiles {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = path.resolve(directory);
  }

  async start(): Promise<void> {
    // Only this user may read the files (the OS temp folder is shared).
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
  }

  async create(file: ExportFileName): Promise<ExportFileWriter> {
    const part = this.partOf(file);
    const out = createWriteStream(part, { flags: "wx", mode: 0o600 });
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
      handle = await open(this.pathOf(file), "r");
      const { size } = await handle.stat();
      return { stream: handle.createReadStream(), size };
    } catch (error) {
      await handle?.close();
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  async sweep(linkTtlMs: number): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.directory)) {
      const file = path.join(this.directory, name);
      const info = await stat(file).catch(() => null);
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

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}
