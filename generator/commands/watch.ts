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

/** Resolves true on the next save of a definition, false when the process is told to stop. */
export function nextSave(dir: string): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (saved: boolean) => {
      watcher.close();
      process.off("SIGTERM", stopped);
      process.off("SIGINT", stopped);
      resolve(saved);
    };
    const stopped = () => done(false);
    const watcher = watchDefinitions(dir, () => done(true));
    process.once("SIGTERM", stopped);
    process.once("SIGINT", stopped);
  });
}
