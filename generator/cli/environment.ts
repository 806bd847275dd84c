import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The package setup canon's output needs: generated code is ESM TypeScript (`.ts` files with
 * `import`), so the package it lives in must say `"type": "module"`; under `"commonjs"` Node
 * refuses its imports and tsc reads it as CommonJS. (The Node version is checked before
 * anything loads, in bin/canon.js.)
 */
export function packageProblem(folders: string[]): string | null {
  const seen = new Set<string>();
  for (const folder of folders) {
    const file = nearestPackageJson(path.resolve(folder));
    if (!file || seen.has(file)) continue;
    seen.add(file);
    let type: unknown;
    try {
      type = (JSON.parse(readFileSync(file, "utf8")) as { type?: unknown }).type;
    } catch (error) {
      return `${file} is not valid JSON (${(error as Error).message}): fix it, then run canon again`;
    }
    if (type !== "module") {
      const now = type === undefined ? "has no \"type\"" : `has "type": ${JSON.stringify(type)}`;
      return `${file} ${now}; canon's generated code is ESM TypeScript: set "type": "module" there (canon init does it)`;
    }
  }
  return null;
}

/** The package.json that governs a folder (that may not exist yet): the nearest one above it. */
export function nearestPackageJson(folder: string): string | null {
  let dir = folder;
  for (;;) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) return file;
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}
