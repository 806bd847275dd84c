// What an Idempotency-Key costs a POST (SPEC §12.7, issue 26 point 5): POST /v2/products answered
// by one `canon serve` over the PostgreSQL server, each request with a new `Idempotency-Key`
// (claimed, marked in the write's transaction, its answer kept: what a typed client's POST does)
// and without one, measured with wrk. The showcase with no rate limit, generated into a folder
// of its own under .bench/, over a fresh schema (dropped afterwards). Within a round the two run
// at the same time against the same service (two wrk, half the connections each: on a shared
// machine both meet the same load); the ratio is taken within a round, and the median of the
// rounds is reported. Every request creates a new product
// (a unique sku from a wrk script); a response other than 201 fails the run.
//
//   node bench/run.ts --only idempotency
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../test/store/stores.ts";
import { fmtCount, log, median, repoRoot, run, table, workRoot, type Check } from "./lib.ts";
import { wrkArgs, wrkResult, type WrkResult } from "./runtime.ts";

export interface IdempotencyPlan {
  rounds: number;
  /** Seconds per measured wrk run. */
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export const IDEMPOTENCY_PLAN: IdempotencyPlan = { rounds: 5, seconds: 5, warmupSeconds: 2, connections: 16 };

export interface IdempotencyResult {
  keyed: WrkResult[];
  plain: WrkResult[];
  /** keyed ÷ plain requests per second, per round. */
  ratios: number[];
  /** Rows in the keys' table after the runs, and the keyed creates answered 201 (warm-up included). */
  keyRows: number;
  keyedCreates: number;
  connections: number;
  seconds: number;
}

const canonBin = path.join(repoRoot, "bin", "canon.js");

let scripts = 0;
/** A wrk script whose every request creates a product with a new sku, and a new key when `keyed`. */
function createScript(keyed: boolean): string {
  scripts += 1;
  const prefix = `I${process.pid.toString(36).toUpperCase()}${scripts}-`;
  const file = path.join(workRoot, `idempotency-create-${scripts}.lua`);
  const key = keyed ? `, ["Idempotency-Key"] = "${prefix}" .. n` : "";
  writeFileSync(
    file,
    [
      "local n = 0",
      "request = function()",
      "  n = n + 1",
      `  local body = '{"sku":"${prefix}' .. n .. '","name":"Bench","price_cents":1}'`,
      `  return wrk.format("POST", "/v2/products", { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer dev-writer"${key} }, body)`,
      "end",
      "",
    ].join("\n"),
  );
  return file;
}

async function wrkCreates(
  base: string,
  keyed: boolean,
  seconds: number,
  connections: number,
): Promise<WrkResult> {
  const script = createScript(keyed);
  const url = `${base}/v2/products`;
  const { stdout } = await run("wrk", wrkArgs(url, seconds, connections, ["-s", script]));
  rmSync(script, { force: true });
  return wrkResult(stdout, `POST ${url} (${keyed ? "with" : "without"} Idempotency-Key)`);
}

function serve(dir: string, schema: string): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(
    process.execPath,
    [canonBin, "serve", "--port", "0", "--host", "127.0.0.1", "--store", `${POSTGRES_URL}?schema=${schema}`],
    { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (m) resolve({ child, base: m[1]! });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`canon serve exited (${code}):\n${output}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });
}

async function keyRows(schema: string): Promise<number> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const counted = await client.query<{ n: string }>(
      `select count(*) as n from "${schema}"."canon__idempotency_keys" where "state" = 'done' and "status" = 201`,
    );
    return Number(counted.rows[0]!.n);
  } finally {
    await client.end();
  }
}

export async function benchIdempotency(plan: IdempotencyPlan): Promise<IdempotencyResult> {
  await preparePostgres();
  mkdirSync(workRoot, { recursive: true });
  const dir = path.join(workRoot, "idempotency");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(repoRoot, "definitions"), path.join(dir, "definitions"), { recursive: true });
  const api = path.join(dir, "definitions", "api.yaml");
  writeFileSync(api, readFileSync(api, "utf8").replace(/^rate_limit:\n(?: {2}.*\n)+/m, ""));
  await run(process.execPath, [canonBin, "generate"], { cwd: dir });
  const schema = freshSchema("canon_bench_idem");
  let service: { child: ChildProcess; base: string } | undefined;
  try {
    service = await serve(dir, schema);
    const result: IdempotencyResult = {
      keyed: [],
      plain: [],
      ratios: [],
      keyRows: 0,
      keyedCreates: 0,
      connections: plan.connections,
      seconds: plan.seconds,
    };
    result.keyedCreates += (
      await wrkCreates(service.base, true, plan.warmupSeconds, plan.connections)
    ).requests;
    await wrkCreates(service.base, false, plan.warmupSeconds, plan.connections);
    for (let round = 0; round < plan.rounds; round++) {
      // Side by side: two wrk at once against the one service, half the connections each, so
      // that both kinds of request meet the same load at the same moments (the machine is shared).
      const half = Math.max(1, Math.round(plan.connections / 2));
      const [keyed, plain] = await Promise.all([
        wrkCreates(service.base, true, plan.seconds, half),
        wrkCreates(service.base, false, plan.seconds, half),
      ]);
      result.keyed.push(keyed);
      result.plain.push(plain);
      result.keyedCreates += keyed.requests;
      result.ratios.push(keyed.rps / plain.rps);
      log(
        `  round ${round + 1}/${plan.rounds}: with a key ${fmtCount(keyed.rps)} creates/s (p99 ${keyed.p99.toFixed(1)} ms), ` +
          `without ${fmtCount(plain.rps)} creates/s (p99 ${plain.p99.toFixed(1)} ms) → ${(result.ratios.at(-1)! * 100).toFixed(0)} %`,
      );
    }
    result.keyRows = await keyRows(schema);
    return result;
  } finally {
    if (service) await stop(service.child);
    await dropSchemas([schema]);
  }
}

/** The target of issue 26 point 5: an idempotent POST costs at most 15 % more (≥ 87 % of the throughput). */
export function idempotencyChecks(r: IdempotencyResult): Check[] {
  const ratio = median(r.ratios);
  const kept = r.keyRows >= r.keyedCreates;
  return [
    {
      name: "idempotency: creates/s with an Idempotency-Key ÷ without",
      value: `${(ratio * 100).toFixed(0)} %`,
      target: "≥ 87 % (≤ 15 % more time)",
      met: 1 / ratio - 1 <= 0.15,
      margin: "≥ 70 %",
      withinMargin: ratio >= 0.7,
    },
    {
      name: "idempotency: a kept answer for every keyed create answered 201",
      value: `${r.keyRows} rows, ${r.keyedCreates} creates`,
      target: "rows ≥ creates",
      met: kept,
      margin: "rows ≥ creates",
      withinMargin: kept,
    },
  ];
}

export function idempotencyMarkdown(r: IdempotencyResult): string {
  const row = (name: string, runs: WrkResult[]) => [
    name,
    fmtCount(median(runs.map((x) => x.rps))),
    `${median(runs.map((x) => x.p50)).toFixed(1)} ms`,
    `${median(runs.map((x) => x.p99)).toFixed(1)} ms`,
    runs.map((x) => fmtCount(x.rps)).join(", "),
  ];
  const ratio = median(r.ratios);
  return [
    table(
      ["POST /v2/products on PostgreSQL", "creates/s (median)", "p50", "p99", "each round"],
      [
        row("with a new `Idempotency-Key` each (claimed, marked with the write, answer kept)", r.keyed),
        row("without a key", r.plain),
      ],
    ),
    `With a key ÷ without: **${(ratio * 100).toFixed(0)} %** of the write throughput (each round: ${r.ratios.map((x) => (x * 100).toFixed(0)).join(", ")}); ` +
      `a keyed create takes about ${((1 / ratio - 1) * 100).toFixed(0)} % more time. Kept answers after the runs: ${r.keyRows} for ${r.keyedCreates} keyed creates.`,
    `One \`canon serve\` process over the PostgreSQL server (pool of 10), two wrk -t1 -c${Math.max(1, Math.round(r.connections / 2))} -d${r.seconds}s at once (one keyed, one not), medians of ${r.ratios.length} rounds, ` +
      `the two kinds of request side by side within a round against the same service. Nothing pinned: the service, PostgreSQL and wrk share the machine's cores.`,
  ].join("\n\n");
}
