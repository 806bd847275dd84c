/**
 * One PGlite folder, one process: PGlite is PostgreSQL in the process, with no server between
 * two processes, so a second one on the same folder would lose writes. Opening a folder takes
 * its lock file `canon.lock` (created exclusively, holding the pid); a second process finds it,
 * refuses to open the folder, and has written nothing. A lock whose process is gone (killed, or
 * a pid reused by this very process after a restart) is taken over.
 */
import { linkSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";

export const LOCK_FILE = "canon.lock";

/** Folders this process holds: a lock file with this process's pid is stale unless its folder is here. */
const held = new Set<string>();

export class FolderInUseError extends Error {
  readonly pid: number;

  constructor(folder: string, pid: number) {
    super(
      `${folder} is open in process ${pid}: one process at a time may open a PGlite folder (stop that process, or use a PostgreSQL server for several instances)`,
    );
    this.name = "FolderInUseError";
    this.pid = pid;
  }
}

export interface FolderLock {
  /** Removes the lock file, if it is still this process's. */
  release(): void;
}

/** The pid of the live process that holds `folder`, or null when none does. */
export function folderHolder(folder: string): number | null {
  if (held.has(path.resolve(folder))) return process.pid;
  const pid = lockPid(path.join(folder, LOCK_FILE));
  return pid !== null && pid !== process.pid && alive(pid) ? pid : null;
}

/** Takes the lock of `folder` (which must exist); throws FolderInUseError when a live process holds it. */
export function lockFolder(folder: string): FolderLock {
  const file = path.join(folder, LOCK_FILE);
  // Held by a live process: refuse before writing anything.
  const holder = folderHolder(folder);
  if (holder !== null) throw new FolderInUseError(folder, holder);
  // The lock appears whole or not at all: written beside it, then linked into place (EEXIST when taken).
  const mine = `${file}.${process.pid}`;
  writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 });
  try {
    linkSync(mine, file);
    return release(folder, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(mine, { force: true });
  }
  const now = folderHolder(folder);
  if (now !== null) throw new FolderInUseError(folder, now);
  // Stale (its process is gone): replaced atomically with ours; of two takers, the one whose pid stayed holds it.
  writeFileSync(mine, `${process.pid}\n`, { mode: 0o600 });
  renameSync(mine, file);
  if (lockPid(file) === process.pid) return release(folder, file);
  const taker = folderHolder(folder);
  throw new FolderInUseError(folder, taker ?? 0);
}

function release(folder: string, file: string): FolderLock {
  let released = false;
  held.add(path.resolve(folder));
  return {
    release() {
      if (released) return;
      released = true;
      held.delete(path.resolve(folder));
      try {
        if (lockPid(file) === process.pid) unlinkSync(file);
      } catch {
        // Gone already.
      }
    },
  };
}

function lockPid(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
