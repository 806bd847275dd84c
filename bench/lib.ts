// Shared helpers of the benchmarks: statistics, timing child processes, formatting.
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
/** Work folders of the benchmarks (git-ignored), inside the repository so that node_modules resolve. */
export const workRoot = path.join(repoRoot, ".bench");

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function min(values: number[]): number {
  return Math.min(...values);
}

export function max(values: number[]): number {
  return Math.max(...values);
}

export interface ProcessRun {
  /** Wall-clock time from spawn to exit, in milliseconds. */
  ms: number;
  /** Peak resident set size of the process (worker threads included), in bytes (NaN unless measured). */
  maxRss: number;
  /** CPU time of the process, user + system, every thread, in milliseconds (NaN unless measured). */
  cpuMs: number;
  code: number;
  stdout: string;
  stderr: string;
}

const rssHook = new URL("./rss-hook.mjs", import.meta.url);

/**
 * Runs a Node script as a child process and measures its wall time and, with `rss`, its peak
 * RSS and CPU time, from a preloaded hook that writes `process.resourceUsage()` at exit: it
 * covers every thread of the process, and needs no GNU time.
 */
export function timeNode(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; rss?: boolean },
): Promise<ProcessRun> {
  const dir = options.rss ? mkdtempSync(path.join(tmpdir(), "canon-bench-")) : null;
  const rssFile = dir ? path.join(dir, "rss") : "";
  const nodeArgs = dir ? ["--import", rssHook.href, ...args] : args;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, nodeArgs, {
      cwd: options.cwd,
      env: {
        ...process.env,
        ...options.env,
        NO_COLOR: "1",
        ...(dir ? { CANON_BENCH_RSS_FILE: rssFile } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    gather(child, reject, (code, stdout, stderr) => {
      const ms = performance.now() - started;
      let maxRss = NaN;
      let cpuMs = NaN;
      if (dir) {
        if (existsSync(rssFile)) {
          const usage = JSON.parse(readFileSync(rssFile, "utf8")) as { maxRSS: number; cpu: number };
          maxRss = usage.maxRSS * 1024;
          cpuMs = usage.cpu / 1000;
        }
        rmSync(dir, { recursive: true, force: true });
      }
      resolve({ ms, maxRss, cpuMs, code: code ?? -1, stdout, stderr });
    });
  });
}

/** Gathers a child's stdout and stderr and hands them to `closed` with its exit code; `failed` if it cannot start. */
function gather(
  child: ChildProcessByStdio<null, Readable, Readable>,
  failed: (error: Error) => void,
  closed: (code: number | null, stdout: string, stderr: string) => void,
): void {
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.on("error", failed);
  child.on("close", (code) => closed(code, stdout, stderr));
}

/** The value of `--<name>` on the command line, or `fallback`. */
export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** Runs any command; resolves with its output; rejects on a non-zero exit. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string } = {},
): Promise<{ ms: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: options.cwd ?? repoRoot, stdio: ["ignore", "pipe", "pipe"] });
    gather(child, reject, (code, stdout, stderr) => {
      if (code === 0) resolve({ ms: performance.now() - started, stdout, stderr });
      else reject(new Error(`${command} ${args.join(" ")} exited ${code}\n${stdout}\n${stderr}`));
    });
  });
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "–";
  return ms >= 10_000
    ? `${(ms / 1000).toFixed(1)} s`
    : ms >= 1000
      ? `${(ms / 1000).toFixed(2)} s`
      : `${Math.round(ms)} ms`;
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "–";
  return bytes >= 1024 ** 3
    ? `${(bytes / 1024 ** 3).toFixed(2)} GiB`
    : `${Math.round(bytes / 1024 ** 2)} MiB`;
}

export function fmtRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : "–";
}

export function fmtCount(n: number): string {
  if (!Number.isFinite(n)) return "–";
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(0)} k`;
  return n.toFixed(0);
}

/** A markdown table. */
export function table(header: string[], rows: string[][]): string {
  const lines = [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
  ];
  for (const row of rows) lines.push(`| ${row.join(" | ")} |`);
  return lines.join("\n");
}

/** A target checked by the benchmark: met in full mode, or not fallen clearly below it in quick mode. */
export interface Check {
  name: string;
  /** The measured figure, as printed. */
  value: string;
  target: string;
  met: boolean;
  /** Quick mode fails when this is false: the figure is beyond the target by more than noise. */
  withinMargin: boolean;
  margin: string;
}

export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
