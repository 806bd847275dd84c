import { watch } from "node:fs";

/** How long a save may keep firing events (truncate, write, rename) before it counts as one. */
const SETTLE_MS = 15;

export interface DefinitionWatcher {
  close(): void;
}

/** Calls `onSave` once per save of a definition file (`*.yaml`, `*.yml`) in `dir`. */
export function watchDefinitions(dir: string, onSave: () => void): DefinitionWatcher {
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dir, (_event, name) => {
    if (name && !/\.ya?ml$/.test(String(name))) return;
    clearTimeout(timer);
    timer = setTimeout(onSave, SETTLE_MS);
  });
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

/**
 * The definitions watched for the whole of a `canon dev` session, from before its first
 * generation: a save made while the session starts (generating, migrating, listening) is not
 * lost. Until `handOver`, a save is only noted; `handOver(onSave)` says whether one came after
 * the last generation began reading the definitions (`generating()`), and from then on each save
 * calls `onSave`. One watcher throughout: closing a second watcher of the same folder stopped the
 * first one's events.
 */
export function sessionWatcher(dir: string): { generating(): void; nextSave(): Promise<boolean>; handOver(onSave: () => void): boolean; close(): void } {
  let saved = -Infinity;
  let began = -Infinity;
  let handler: (() => void) | null = null;
  const watcher = watchDefinitions(dir, () => {
    if (handler) handler();
    else saved = performance.now();
  });
  return {
    generating: () => {
      began = performance.now();
    },
    // True on the next save, false when the process is told to stop first.
    nextSave: () =>
      new Promise<boolean>((resolve) => {
        const done = (saved: boolean) => {
          handler = null;
          process.off("SIGTERM", stopped);
          process.off("SIGINT", stopped);
          resolve(saved);
        };
        const stopped = () => done(false);
        handler = () => done(true);
        process.once("SIGTERM", stopped);
        process.once("SIGINT", stopped);
      }),
    handOver: (onSave) => {
      handler = onSave;
      return saved >= began;
    },
    close: () => watcher.close(),
  };
}
