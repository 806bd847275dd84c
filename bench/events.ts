// What the event table costs a write (issue 13): POST /v2/products answered by `canon serve` over
// the PostgreSQL server, with `events: true` (each create also inserts its event, in the same
// transaction) and with `events: false`, measured with wrk. Both services are the showcase with
// no rate limit, generated into folders of their own under .bench/, each over a fresh schema
// (dropped afterwards). Within a round the two run back to back (alternating which goes first);
// the ratio is taken within a round, and the median of the rounds is reported. Every request
// creates a new product (a unique sku from a wrk script); a response other than 201 fails the run.
//
//   node bench/run.ts --only events
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createEvent } from "../generated/runtime/events.ts";
import { insertEvents } from "../generated/runtime/sql-events.ts";
import { openDriver } from "../generated/runtime/sql-driver.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../test/store/stores.ts";
import { fmtCount, log, median, repoRoot, run, table, workRoot, type Check } from "./lib.ts";
import { wrkArgs, wrkResult, type WrkResult } from "./runtime.ts";

export interface EventsPlan {
  rounds: number;
  /** Seconds per measured wrk run. */
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export const EVENTS_PLAN: EventsPlan = { rounds: 5, seconds: 5, warmupSeconds: 2, connections: 16 };

/** Concurrent transactions of the intake measure (the store's pool holds 10 connections). */
const INTAKE_WORKERS = 10;
const INTAKE_SECONDS = 3;

/** A product as `POST /v2/products` shows it: the data of a typical event. */
const PRODUCT = {
  id: "01a20000-0000-7000-8000-000000000000",
  sku: "BENCH-1",
  name: "Bench",
  price_cents: 1,
  category: "other",
  tags: [],
  created_at: "2026-11-23T00:00:00.000Z",
  updated_at: "2026-11-23T00:00:00.000Z",
};

/**
 * Events per second into the event table, straight through the store's driver: `INTAKE_WORKERS`
 * transactions at once, each inserting `perTransaction` events (1: what a write adds; more: a
 * cascade), for `INTAKE_SECONDS`. The ceiling of the table on this machine, HTTP left out.
 */
async function intake(schema: string, perTransaction: number): Promise<number> {
  // The schema was made by the service's own migrations: open it as is, migrating nothing.
  const driver = await openDriver(POSTGRES_URL, { schema });
  try {
    let events = 0;
    const started = performance.now();
    const until = started + INTAKE_SECONDS * 1000;
    const worker = async () => {
      while (performance.now() < until) {
        const batch = Array.from({ length: perTransaction }, () =>
          createEvent("product.created", "products", PRODUCT),
        );
        await driver.transaction((tx) => insertEvents(tx, batch));
        events += perTransaction;
      }
    };
    await Promise.all(Array.from({ length: INTAKE_WORKERS }, worker));
    return events / ((performance.now() - started) / 1000);
  } finally {
    await driver.close();
  }
}

type Variant = "with events" | "without events";

export interface EventsResult {
  with: WrkResult[];
  without: WrkResult[];
  /** with ÷ without requests per second, per round. */
  ratios: number[];
  /** Creates answered 201 by the "with events" service, every run (warm-up included). */
  acknowledged: number;
  /** Rows in the schema's event table after the runs, per variant: every 201 has its event, and none without events. */
  eventRows: Record<Variant, number>;
  /** What the event table takes in without HTTP: events per second, per round, by events per transaction. */
  intake: Array<{ perTransaction: number; rates: number[] }>;
  connections: number;
  seconds: number;
}

interface Service {
  variant: Variant;
  schema: string;
  child: ChildProcess;
  base: string;
}

const canonBin = path.join(repoRoot, "bin", "canon.js");

/** The showcase's definitions with no rate limit and `events` as given. */
function prepare(variant: Variant): string {
  const dir = path.join(workRoot, `events-${variant === "with events" ? "on" : "off"}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(repoRoot, "definitions"), path.join(dir, "definitions"), { recursive: true });
  const api = path.join(dir, "definitions", "api.yaml");
  const yaml = readFileSync(api, "utf8")
    .replace(/^rate_limit:\n(?: {2}.*\n)+/m, "")
    .replace(/^events: .*$/m, `events: ${variant === "with events"}`);
  writeFileSync(api, yaml);
  return dir;
}

function serve(dir: string, variant: Variant, schema: string): Promise<Service> {
  const store = `${POSTGRES_URL}?schema=${schema}`;
  const child = spawn(
    process.execPath,
    [canonBin, "serve", "--port", "0", "--host", "127.0.0.1", "--store", store],
    {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (m) resolve({ variant, schema, child, base: m[1]! });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => reject(new Error(`canon serve (${variant}) exited (${code}):\n${output}`)));
  });
}

function stop(service: Service): Promise<void> {
  return new Promise((resolve) => {
    if (service.child.exitCode !== null) return resolve();
    service.child.removeAllListeners("exit");
    service.child.once("exit", () => resolve());
    service.child.kill("SIGTERM");
    setTimeout(() => service.child.kill("SIGKILL"), 5000).unref();
  });
}

let scripts = 0;
/** A wrk script whose every request creates a product with a sku no other request of the run uses. */
function createScript(): string {
  scripts += 1;
  const prefix = `B${process.pid.toString(36).toUpperCase()}${scripts}-`;
  const file = path.join(workRoot, `events-create-${scripts}.lua`);
  writeFileSync(
    file,
    [
      "local n = 0",
      "request = function()",
      "  n = n + 1",
      `  local body = '{"sku":"${prefix}' .. n .. '","name":"Bench","price_cents":1}'`,
      '  return wrk.format("POST", "/v2/products", { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer dev-writer" }, body)',
      "end",
      "",
    ].join("\n"),
  );
  return file;
}

async function wrkCreates(service: Service, seconds: number, connections: number): Promise<WrkResult> {
  const script = createScript();
  const url = `${service.base}/v2/products`;
  const { stdout } = await run("wrk", wrkArgs(url, seconds, connections, ["-s", script]));
  rmSync(script, { force: true });
  return wrkResult(stdout, `POST ${url} (${service.variant})`);
}

/** Rows of the event table in a schema (the table whose name holds "event"), 0 when it has none. */
async function eventRows(schema: string): Promise<number> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = $1 and table_name like '%event%'",
      [schema],
    );
    let rows = 0;
    for (const { table_name } of tables.rows) {
      const counted = await client.query<{ n: string }>(
        `select count(*) as n from "${schema}"."${table_name}"`,
      );
      rows += Number(counted.rows[0]!.n);
    }
    return rows;
  } finally {
    await client.end();
  }
}

export async function benchEvents(plan: EventsPlan): Promise<EventsResult> {
  await preparePostgres();
  mkdirSync(workRoot, { recursive: true });
  const services: Service[] = [];
  const schemas: string[] = [];
  try {
    for (const variant of ["with events", "without events"] as const) {
      const dir = prepare(variant);
      await run(process.execPath, [canonBin, "generate"], { cwd: dir });
      const schema = freshSchema("canon_bench_events");
      schemas.push(schema);
      services.push(await serve(dir, variant, schema));
    }
    const [on, off] = services as [Service, Service];
    const result: EventsResult = {
      with: [],
      without: [],
      ratios: [],
      eventRows: { "with events": 0, "without events": 0 },
      acknowledged: 0,
      intake: [1, 100].map((perTransaction) => ({ perTransaction, rates: [] })),
      connections: plan.connections,
      seconds: plan.seconds,
    };
    result.acknowledged += (await wrkCreates(on, plan.warmupSeconds, plan.connections)).requests;
    await wrkCreates(off, plan.warmupSeconds, plan.connections);
    for (let round = 0; round < plan.rounds; round++) {
      const order = round % 2 === 0 ? [on, off] : [off, on];
      const got = new Map<Service, WrkResult>();
      for (const s of order) got.set(s, await wrkCreates(s, plan.seconds, plan.connections));
      result.with.push(got.get(on)!);
      result.acknowledged += got.get(on)!.requests;
      result.without.push(got.get(off)!);
      result.ratios.push(got.get(on)!.rps / got.get(off)!.rps);
      log(
        `  round ${round + 1}/${plan.rounds}: with events ${fmtCount(got.get(on)!.rps)} creates/s (p99 ${got.get(on)!.p99.toFixed(1)} ms), ` +
          `without ${fmtCount(got.get(off)!.rps)} creates/s (p99 ${got.get(off)!.p99.toFixed(1)} ms) → ${(result.ratios.at(-1)! * 100).toFixed(0)} %`,
      );
    }
    for (const s of services) result.eventRows[s.variant] = await eventRows(s.schema);
    await Promise.all(services.splice(0).map(stop));
    for (let round = 0; round < plan.rounds; round++) {
      for (const measure of result.intake)
        measure.rates.push(await intake(on.schema, measure.perTransaction));
      log(
        `  round ${round + 1}/${plan.rounds}: ${result.intake.map((m) => `${fmtCount(m.rates.at(-1)!)} events/s at ${m.perTransaction} a transaction`).join(", ")}`,
      );
    }
    return result;
  } finally {
    await Promise.all(services.map(stop));
    await dropSchemas(schemas);
  }
}

/**
 * Every acknowledged create has its event row, and `events: false` writes none; and what the
 * event costs: with ÷ without events (the event is one more row of the write's own statement,
 * so the target is no cost beyond the noise of one round; the margin is wide, the rounds run
 * unpinned).
 */
export function eventsChecks(r: EventsResult): Check[] {
  const every = r.eventRows["with events"] >= r.acknowledged;
  const none = r.eventRows["without events"] === 0;
  const ratio = median(r.ratios);
  return [
    {
      name: "events: creates/s with events ÷ without",
      value: `${(ratio * 100).toFixed(0)} %`,
      target: "≥ 90 %",
      met: ratio >= 0.9,
      margin: "≥ 70 %",
      withinMargin: ratio >= 0.7,
    },
    {
      name: "events: an event row for every create answered 201",
      value: `${r.eventRows["with events"]} rows, ${r.acknowledged} creates`,
      target: "rows ≥ creates",
      met: every,
      margin: "rows ≥ creates",
      withinMargin: every,
    },
    {
      name: "events: false writes no event row",
      value: String(r.eventRows["without events"]),
      target: "0",
      met: none,
      margin: "0",
      withinMargin: none,
    },
  ];
}

export function eventsMarkdown(r: EventsResult): string {
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
        row("with events (the event row written by the write's own statement)", r.with),
        row("without events (`events: false`)", r.without),
      ],
    ),
    `With events ÷ without: **${(ratio * 100).toFixed(0)} %** of the write throughput (each round: ${r.ratios.map((x) => (x * 100).toFixed(0)).join(", ")}); ` +
      (ratio < 1
        ? `the event costs a write about ${((1 / ratio - 1) * 100).toFixed(0)} % more time. `
        : "no cost of the event shows above the noise. ") +
      `Event rows after the runs: ${r.eventRows["with events"]} with events, ${r.eventRows["without events"]} without.`,
    `One \`canon serve\` process per variant over the PostgreSQL server (pool of 10), wrk -t1 -c${r.connections} -d${r.seconds}s, ` +
      `medians of ${r.ratios.length} rounds, the two variants back to back within a round. Nothing pinned: the service, PostgreSQL and wrk share the machine's cores, ` +
      `so the figures move with whatever else runs; the ratio within a round is the figure to read.`,
    table(
      ["the event table's intake, no HTTP", "events/s (median)", "each round"],
      r.intake.map((m) => [
        `${INTAKE_WORKERS} transactions at once, ${m.perTransaction} event${m.perTransaction === 1 ? "" : "s"} each`,
        fmtCount(median(m.rates)),
        m.rates.map(fmtCount).join(", "),
      ]),
    ),
    `Straight through the store's driver (a pool of 10; \`insertEvents\` in a transaction, as a cascading delete adds them; a create, update or delete of one record writes its event in its own statement instead) into the table the runs above filled, for ${INTAKE_SECONDS} s a round: ` +
      `one event a transaction is what writes can add at most, many a transaction what a cascade adds.`,
  ].join("\n\n");
}
