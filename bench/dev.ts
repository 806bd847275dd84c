// `canon dev` on the N = 100 synthetic API: from the save of one changed resource file to the
// new route answering over HTTP. Each round adds an action to one resource (a new route:
// POST /v2/<collection>/{id}/<action>), writes the file, waits for the server's "serving the new
// code" line and calls that route (polled should it not answer 201 yet); the time from just before
// the write to its 201 is the figure. (Until 26 November 2026 the route was polled every 5 ms from
// the write on: each poll was a request the dev server answered on the thread that regenerates.) The dev server runs
// over PGlite (the default store), opened once: the record the rounds post to is created once
// and stays.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fmtMs, log, median, repoRoot, table, workRoot, type Check } from "./lib.ts";
import { resourceYaml, syntheticResources, writeSynthetic } from "./synthetic.ts";

export interface DevPlan {
  n: number;
  rounds: number;
  store: string;
}

export const DEV_PLAN: DevPlan = { n: 100, rounds: 9, store: "pglite:.canon-data" };

export interface DevResult {
  n: number;
  store: string;
  /** Milliseconds from the save to the new route's first 201, per round. */
  rounds: number[];
  median: number;
  /** CPU time of the dev process over each round (user + system, Linux /proc; NaN elsewhere). */
  cpu: number[];
  cpuMedian: number;
}

/** CPU time a process has used so far, in milliseconds (Linux: /proc/<pid>/stat, 100 ticks a second). */
function cpuOf(pid: number | undefined): number {
  const file = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(file)) return NaN;
  const fields = readFileSync(file, "utf8").replace(/^.*\) /, "").split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Plural nouns, one new action per round. */
const ACTIONS = ["reviews", "ratings", "comments", "remarks", "audits", "votes", "stars", "pins", "labels", "notes", "marks", "flags"];

const headers = { authorization: "Bearer dev-writer", "content-type": "application/json" };

export async function benchDev(plan: DevPlan): Promise<DevResult> {
  const dir = path.join(workRoot, "dev");
  const definitions = path.join(dir, "definitions");
  rmSync(dir, { recursive: true, force: true });
  writeSynthetic(definitions, plan.n);
  const resource = syntheticResources(plan.n).find((r) => !r.parent && !r.action)!;
  const file = path.join(definitions, `${resource.name}.yaml`);
  const dev = await start(dir, plan.store);
  try {
    const created = await fetch(`${dev.base}/v2/${resource.name}`, {
      method: "POST",
      headers,
      body: JSON.stringify({ title: "bench", amount: 1, total: 1 }),
    });
    if (created.status !== 201) throw new Error(`create answered ${created.status}: ${await created.text()}`);
    const { id } = (await created.json()) as { id: string };
    const rounds: number[] = [];
    const cpu: number[] = [];
    const added: string[] = [];
    for (let i = 0; i < plan.rounds; i++) {
      const action = ACTIONS[i % ACTIONS.length]!;
      added.push(action);
      const text =
        resourceYaml(resource) +
        ["actions:", ...added.flatMap((a) => [`  ${a}:`, "    fields:", "      comment: { type: string, max_length: 200 }"])].join("\n") +
        "\n";
      const seen = dev.output().length;
      const cpuBefore = cpuOf(dev.process.pid);
      const started = performance.now();
      writeFileSync(file, text);
      // The server says when it serves the new code; then the new route must answer. (Polling the
      // route meanwhile would make the dev server answer a request every few milliseconds while it
      // regenerates, on the thread that does the work measured.)
      const said = await dev.said(/canon dev: (serving the new code|the new code did not start|the definitions have errors|the generation failed)/, seen, 20_000);
      if (!said.includes("serving the new code")) throw new Error(`canon dev did not serve the new code:\n${dev.output().slice(seen)}`);
      await until(async () => {
        const response = await fetch(`${dev.base}/v2/${resource.name}/${id}/${action}`, {
          method: "POST",
          headers,
          body: JSON.stringify({ comment: "x" }),
        });
        await response.arrayBuffer();
        return response.status === 201;
      }, 20_000, () => dev.output());
      rounds.push(performance.now() - started);
      cpu.push(cpuOf(dev.process.pid) - cpuBefore);
      // The phases this round printed (CANON_TIMINGS: both threads' generation, then the app's).
      if (process.env.CANON_BENCH_DEV_TIMINGS) log(dev.output().slice(seen).split("\n").filter((l) => /^canon( dev)?: /.test(l)).join("\n"));
      log(`  dev round ${i + 1}: ${fmtMs(rounds[rounds.length - 1]!)} (CPU ${fmtMs(cpu[cpu.length - 1]!)})`);
    }
    return { n: plan.n, store: plan.store, rounds, median: median(rounds), cpu, cpuMedian: median(cpu) };
  } finally {
    await stop(dev.process);
  }
}

interface Dev {
  process: ChildProcess;
  base: string;
  output: () => string;
  /** Resolves with the first match of `pattern` in the output after its first `from` characters (rejects after `timeoutMs`). */
  said: (pattern: RegExp, from: number, timeoutMs: number) => Promise<string>;
}

function start(cwd: string, store: string): Promise<Dev> {
  // Node's own flags for the dev process, to look into it (`CANON_BENCH_NODE_FLAGS="--trace-gc"`).
  const flags = process.env.CANON_BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...flags, path.join(repoRoot, "bin", "canon.js"), "dev", "--port", "0", "--store", store], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...(process.env.CANON_BENCH_DEV_TIMINGS ? { CANON_TIMINGS: "1" } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const waiters = new Set<() => void>();
  const said = (pattern: RegExp, from: number, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(output.slice(from));
        if (!match) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(match[0]);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`canon dev did not say ${pattern} within ${timeoutMs} ms:\n${output.slice(-2000)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`canon dev did not start:\n${output}`));
    }, 180_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const check of [...waiters]) check();
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ process: child, base: match[1]!, output: () => output, said });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`canon dev exited (${code}):\n${output}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

async function until(condition: () => Promise<boolean>, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`the new route did not answer within ${timeoutMs} ms:\n${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function devChecks(r: DevResult): Check[] {
  return [
    {
      name: `canon dev: save to new route, N=${r.n} (median)`,
      value: `${fmtMs(r.median)} (CPU ${fmtMs(r.cpuMedian)})`,
      target: "< 300 ms",
      met: r.median < 300,
      withinMargin: r.median < 600,
      margin: "< 600 ms",
    },
  ];
}

export function devMarkdown(r: DevResult): string {
  return table(
    ["N", "store", "save → new route answering (median)", "CPU of the dev process (median)", "every round"],
    [[String(r.n), r.store, fmtMs(r.median), fmtMs(r.cpuMedian), r.rounds.map(fmtMs).join(", ")]],
  );
}
