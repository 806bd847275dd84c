// tsc over generated code, with the compiler options of SPEC §4 (or others), from a config file
// written beside what it checks.
import { execFile, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./cli.ts";

const TSC = path.join(repoRoot, "node_modules", ".bin", "tsc");

/** The compiler options of SPEC §4. */
export const SPEC_COMPILER_OPTIONS = {
  strict: true,
  module: "nodenext",
  moduleResolution: "nodenext",
  target: "es2023",
  allowImportingTsExtensions: true,
  noEmit: true,
  skipLibCheck: true,
  types: ["node"],
};

/** Runs tsc with `compilerOptions` over `include` (folders or files), the config written as `config`. */
export function tsc(config: string, compilerOptions: object, include: string[]): { code: number; output: string } {
  writeConfig(config, compilerOptions, include);
  const result = spawnSync(TSC, ["-p", config], { encoding: "utf8" });
  return { code: result.status ?? -1, output: result.stdout + result.stderr };
}

/**
 * `tsc`, without blocking the event loop: for a test whose service runs in the same process. A
 * check of several seconds under spawnSync stops the server's timers too, and the keep-alive
 * connection the next request reuses is then closed under it (ECONNRESET).
 */
export function tscAsync(config: string, compilerOptions: object, include: string[]): Promise<{ code: number; output: string }> {
  writeConfig(config, compilerOptions, include);
  return new Promise((resolve) => {
    execFile(TSC, ["-p", config], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, output: stdout + stderr });
    });
  });
}

/** The config file `config`: `compilerOptions` over `include`, each path relative to the config's folder. */
function writeConfig(config: string, compilerOptions: object, include: string[]): void {
  const dir = path.dirname(config);
  mkdirSync(dir, { recursive: true });
  writeFileSync(config, JSON.stringify({ compilerOptions, include: include.map((p) => path.relative(dir, p)) }));
}
