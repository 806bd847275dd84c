// The benchmark suite.
//
//   npm run bench              full mode (several minutes; run by hand, figures go to docs/benchmarks.md)
//   npm run bench:quick        quick mode (about two minutes, for CI): fails when a figure falls
//                              clearly short of its target, beyond what noise alone does
//   node bench/run.ts [--quick] [--only generation,runtime,postgres,tenancy,dev,events,idempotency,hooks,micro,client] [--json <file>] [--app <generated dir>]
//
// Prints progress to stderr and a markdown report to stdout; exits 1 when a check fails (in
// quick mode: falls outside its margin; in full mode: misses its target, with --strict).
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  benchGeneration,
  FULL_PLAN,
  generationChecks,
  generationMarkdown,
  QUICK_PLAN,
  type GenerationResult,
} from "./generation.ts";
import { benchClient, CLIENT_PLAN, clientMarkdown, type ClientResult } from "./client.ts";
import { benchDev, DEV_PLAN, devChecks, devMarkdown, type DevResult } from "./dev.ts";
import { benchEvents, EVENTS_PLAN, eventsChecks, eventsMarkdown, type EventsResult } from "./events.ts";
import {
  benchIdempotency,
  IDEMPOTENCY_PLAN,
  idempotencyChecks,
  idempotencyMarkdown,
  type IdempotencyResult,
} from "./idempotency.ts";
import { benchHooks, HOOKS_PLAN, hooksChecks, hooksMarkdown, type HooksResult } from "./hooks.ts";
import { log, table, type Check } from "./lib.ts";
import { benchMicro, microMarkdown, type MicroResult } from "./micro.ts";
import {
  benchPostgres,
  FULL_POSTGRES,
  postgresChecks,
  postgresMarkdown,
  QUICK_POSTGRES,
} from "./postgres.ts";
import { benchTenancy, tenancyChecks, tenancyMarkdown } from "./tenancy.ts";
import {
  benchRuntime,
  FULL_RUNTIME,
  QUICK_RUNTIME,
  runtimeAvailable,
  runtimeChecks,
  runtimeMarkdown,
  type RuntimeResult,
} from "./runtime.ts";

export interface Options {
  quick: boolean;
  only: Set<string>;
  json: string | null;
  app: string | undefined;
  strict: boolean;
}

export function parseArgs(argv: string[]): Options {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = value("--only");
  const quick = argv.includes("--quick");
  return {
    quick,
    // Quick mode checks targets; the micro-benchmarks, the event cost (about a minute) and the
    // client's overhead have none, so they run in full mode (or with --only micro,events,client),
    // as does the dev loop (its start over PGlite alone takes longer than quick mode allows;
    // --only dev runs it).
    only: new Set(
      only
        ? only.split(",")
        : quick
          ? ["generation", "runtime", "postgres", "tenancy"]
          : [
              "generation",
              "runtime",
              "postgres",
              "tenancy",
              "dev",
              "events",
              "idempotency",
              "hooks",
              "micro",
              "client",
            ],
    ),
    json: value("--json") ?? null,
    app: value("--app"),
    strict: argv.includes("--strict"),
  };
}

export interface Report {
  mode: "quick" | "full";
  machine: string;
  generation?: GenerationResult;
  runtime?: RuntimeResult;
  postgres?: RuntimeResult;
  tenancy?: RuntimeResult;
  dev?: DevResult;
  events?: EventsResult;
  idempotency?: IdempotencyResult;
  hooks?: HooksResult;
  micro?: MicroResult[];
  client?: ClientResult;
  checks: Check[];
  markdown: string;
  seconds: number;
}

export async function runBenchmarks(options: Options): Promise<Report> {
  const started = performance.now();
  const cpus = os.cpus();
  const machine = `${cpus.length} × ${cpus[0]?.model.trim() ?? "?"}, ${Math.round(os.totalmem() / 1024 ** 3)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
  const report: Report = {
    mode: options.quick ? "quick" : "full",
    machine,
    checks: [],
    markdown: "",
    seconds: 0,
  };
  const sections: string[] = [`Machine: ${machine}. Mode: ${report.mode}.`];

  /**
   * One benchmark, when `--only` names it (quick mode names some): its result, whose checks join
   * the report's and whose markdown is a section under `heading`. One that needs wrk and finds
   * none says so in its section instead.
   */
  async function bench<T>(
    name: string,
    heading: string,
    run: {
      measure: () => Promise<T>;
      markdown: (result: T) => string;
      checks?: (result: T) => Check[];
      needsWrk?: boolean;
    },
  ): Promise<T | undefined> {
    if (!options.only.has(name)) return undefined;
    const missing = run.needsWrk ? runtimeAvailable() : null;
    if (missing) {
      log(`${name}: skipped, ${missing}`);
      sections.push(heading, `Skipped: ${missing}.`);
      return undefined;
    }
    log(name);
    const result = await run.measure();
    report.checks.push(...(run.checks?.(result) ?? []));
    sections.push(heading, run.markdown(result));
    return result;
  }
  const app = options.app ? { app: options.app } : {};

  report.generation = await bench("generation", "### Generation", {
    measure: () => benchGeneration(options.quick ? QUICK_PLAN : FULL_PLAN),
    markdown: generationMarkdown,
    checks: generationChecks,
  });
  report.runtime = await bench("runtime", "### Run time", {
    measure: () => benchRuntime({ ...(options.quick ? QUICK_RUNTIME : FULL_RUNTIME), ...app }),
    markdown: runtimeMarkdown,
    checks: runtimeChecks,
    needsWrk: true,
  });
  report.postgres = await bench("postgres", "### Run time on PostgreSQL", {
    measure: () => benchPostgres({ ...(options.quick ? QUICK_POSTGRES : FULL_POSTGRES), ...app }),
    markdown: postgresMarkdown,
    checks: postgresChecks,
    needsWrk: true,
  });
  report.tenancy = await bench("tenancy", "### Tenant-scoped reads on PostgreSQL", {
    measure: () => benchTenancy(options.quick ? QUICK_POSTGRES : FULL_POSTGRES),
    markdown: tenancyMarkdown,
    checks: tenancyChecks,
    needsWrk: true,
  });
  report.dev = await bench("dev", "### canon dev: from a save to the new route", {
    measure: () => benchDev(DEV_PLAN),
    markdown: devMarkdown,
    checks: devChecks,
  });
  report.events = await bench("events", "### What events cost a write", {
    measure: () => benchEvents(EVENTS_PLAN),
    markdown: eventsMarkdown,
    checks: eventsChecks,
    needsWrk: true,
  });
  report.idempotency = await bench("idempotency", "### What an Idempotency-Key costs a POST", {
    measure: () => benchIdempotency(IDEMPOTENCY_PLAN),
    markdown: idempotencyMarkdown,
    checks: idempotencyChecks,
    needsWrk: true,
  });
  report.hooks = await bench("hooks", "### What a hook costs a write", {
    measure: () => benchHooks(HOOKS_PLAN),
    markdown: hooksMarkdown,
    checks: hooksChecks,
  });
  report.micro = await bench("micro", "### Micro", {
    measure: () => benchMicro(options.quick),
    markdown: microMarkdown,
  });
  report.client = await bench("client", "### The generated client beside a bare fetch", {
    measure: () => benchClient(CLIENT_PLAN),
    markdown: clientMarkdown,
  });
  if (report.checks.length) {
    sections.push(
      "### Targets",
      table(
        ["check", "measured", "target", "met", "quick-mode margin", "within margin"],
        report.checks.map((c) => [
          c.name,
          c.value,
          c.target,
          c.met ? "yes" : "**no**",
          c.margin,
          c.withinMargin ? "yes" : "**no**",
        ]),
      ),
    );
  }
  report.seconds = (performance.now() - started) / 1000;
  sections.push(`Total benchmark time: ${report.seconds.toFixed(0)} s.`);
  report.markdown = sections.join("\n\n") + "\n";
  return report;
}

/** Quick mode fails on a check outside its margin; full mode with --strict on any missed target. */
export function failures(report: Report, strict: boolean): Check[] {
  return report.checks.filter((c) => (report.mode === "quick" ? !c.withinMargin : strict && !c.met));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const options = parseArgs(process.argv.slice(2));
  const report = await runBenchmarks(options);
  process.stdout.write(report.markdown);
  if (options.json) {
    mkdirSync(path.dirname(path.resolve(options.json)), { recursive: true });
    writeFileSync(options.json, JSON.stringify(report, null, 2));
  }
  const failed = failures(report, options.strict);
  if (failed.length) {
    process.stderr.write(
      `\nbench: ${failed.length} check(s) failed:\n${failed.map((c) => `  ${c.name}: ${c.value} (target ${c.target}, margin ${c.margin})`).join("\n")}\n`,
    );
    process.exitCode = 1;
  }
}
