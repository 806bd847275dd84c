import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const bin = path.join(repoRoot, "bin", "canon.js");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the canon CLI as a child process. */
export function canon(args: string[], cwd = repoRoot, env: NodeJS.ProcessEnv = {}): Run {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", env: { ...process.env, ...env, NO_COLOR: "1" } });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A fresh folder under test/.tmp (inside the repository, so that generated code resolves
 * fastify and zod from its node_modules), optionally holding a copy of a definitions folder.
 */
export function workspace(name: string, definitions?: string): string {
  const dir = path.join(repoRoot, "test", ".tmp", `${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  if (definitions) cpSync(path.join(repoRoot, definitions), path.join(dir, "definitions"), { recursive: true });
  return dir;
}

/** Every file of a folder with a hash of its content: a snapshot to compare before and after. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[path.relative(dir, full)] = createHash("sha256").update(readFileSync(full)).digest("hex");
    }
  };
  walk(dir);
  return out;
}
