// Runs the whole test suite with Node's own runner, after `tsc`: every test file once (the
// HTTP suite against the in-memory store; the few that compare timings after the rest, one at a
// time), then the HTTP suite of SPEC §5 again against PGlite
// and against the PostgreSQL server (scripts/services.sh starts it; nothing is skipped when it
// is down: those runs fail), and last, alone on the machine, the quick benchmark (issue 6: it
// fails when a ratio falls clearly short of its target; CANON_SKIP_BENCH=1 leaves it out).
// It ends with a summary: each suite, whether it ran, passed or was skipped (and why), how many
// tests passed, every test that was skipped with the reason it gave, and every test that failed
// with the first lines of its error (a failure's detail is otherwise far up a long log).
// Arguments name test files to run instead of all of them, e.g. `npm test -- test/lint.test.ts`.
import { spawnSync } from "node:child_process";
import { globSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RunSummary } from "./summary-reporter.ts";

// The project's own tools (tsc) first on the PATH, as `npm test` puts them, also when this file is run by hand.
const bin = path.join(import.meta.dirname, "..", "node_modules", ".bin");
const PATH = `${bin}${path.delimiter}${process.env.PATH ?? ""}`;

function run(command: string, args: string[], env: Record<string, string> = {}): number {
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, PATH, ...env } });
  return result.status ?? 1;
}

interface Suite {
  name: string;
  /** "passed", "failed", or "skipped: <why>". */
  outcome: string;
  seconds: number;
  summary?: RunSummary;
}
const suites: Suite[] = [];
const scratch = mkdtempSync(path.join(os.tmpdir(), "canon-test-"));
const reporter = path.join(import.meta.dirname, "summary-reporter.ts");

// Test files that judge timings against each other (a p99 beside load against the p99 alone):
// they run after the others, one at a time, since a second test file on a 2-core machine moves
// one side of the ratio and not the other (CI once saw the starvation ratio past 3 that way;
// alone it is 0.7-1.2).
const TIMED = ["test/store/starvation.test.ts"];

/** Runs one suite, timed; with `tests`, through Node's runner with the summary reporter beside the spec one. */
function suite(name: string, body: (summaryFile: string) => number): boolean {
  const started = performance.now();
  const summaryFile = path.join(scratch, `${suites.length}.json`);
  const code = body(summaryFile);
  let summary: RunSummary | undefined;
  try {
    summary = JSON.parse(readFileSync(summaryFile, "utf8")) as RunSummary;
  } catch {
    summary = undefined;
  }
  const s: Suite = {
    name,
    outcome: code === 0 ? "passed" : "failed",
    seconds: (performance.now() - started) / 1000,
  };
  if (summary) s.summary = summary;
  suites.push(s);
  return code === 0;
}

function skipped(name: string, why: string): void {
  suites.push({ name, outcome: `skipped: ${why}`, seconds: 0 });
}

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith("-"));
const flags = args.filter((a) => a.startsWith("-"));
const nodeTest =
  (targets: string[], env: Record<string, string> = {}, concurrency = 2) =>
  (summaryFile: string) =>
    run(
      process.execPath,
      [
        "--test",
        `--test-concurrency=${concurrency}`,
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        `--test-reporter=${reporter}`,
        // Its own output is nothing; a file, since fsync of /dev/null fails (EINVAL) when the run ends.
        `--test-reporter-destination=${summaryFile}.out`,
        ...flags,
        ...targets,
      ],
      { ...env, CANON_TEST_SUMMARY: summaryFile },
    );

function printSummary(): void {
  const lines = ["", "== summary"];
  for (const s of suites) {
    const counts = s.summary
      ? `: ${s.summary.passed} passed, ${s.summary.failed} failed, ${s.summary.skipped.length} skipped` +
        (s.summary.todo.length ? `, ${s.summary.todo.length} todo` : "")
      : "";
    const time = s.seconds > 0 ? ` (${s.seconds.toFixed(0)} s)` : "";
    lines.push(`  ${s.name}: ${s.outcome}${counts}${time}`);
    for (const k of s.summary?.skipped ?? []) {
      lines.push(
        `      skipped ${JSON.stringify(k.name)} (${path.relative(process.cwd(), k.file) || "?"}): ${k.reason}`,
      );
    }
    for (const k of s.summary?.todo ?? []) {
      lines.push(
        `      todo (a known bug, not a failure) ${JSON.stringify(k.name)} (${path.relative(process.cwd(), k.file) || "?"}): ${k.reason}`,
      );
    }
    for (const f of s.summary?.failures ?? []) {
      lines.push(`      FAILED ${JSON.stringify(f.name)} (${path.relative(process.cwd(), f.file) || "?"}):`);
      for (const line of f.error.split("\n")) lines.push(`        ${line}`);
    }
  }
  console.log(lines.join("\n"));
}

function main(): number {
  if (!suite("type check (tsc -p tsconfig.json)", () => run("tsc", ["-p", "tsconfig.json"]))) {
    printSummary();
    return 1;
  }
  if (files.length > 0) {
    const ok = suite(`the files named (${files.join(", ")})`, nodeTest(files));
    printSummary();
    return ok ? 0 : 1;
  }

  const failures: string[] = [];
  const untimed = globSync("test/**/*.test.ts")
    .map((f) => f.split(path.sep).join("/"))
    .filter((f) => !TIMED.includes(f))
    .sort();
  if (!suite("every test file, HTTP suite on the memory store", nodeTest(untimed))) {
    failures.push("all tests (memory store)");
  }
  if (!suite("the timed test files, one at a time", nodeTest(TIMED, {}, 1))) {
    failures.push("timed tests");
  }
  for (const store of ["pglite", "postgres"]) {
    console.log(
      `\n== the HTTP suite of SPEC §5 and the acceptance run of SPEC §12 against the ${store} store`,
    );
    const files = ["test/http/*.test.ts", "test/acceptance/*.test.ts"];
    if (!suite(`the HTTP suite on the ${store} store`, nodeTest(files, { CANON_TEST_STORE: store }))) {
      failures.push(`HTTP suite on ${store}`);
    }
  }
  const bench = "the quick benchmark (npm run bench:quick): ratios only";
  if (process.env.CANON_SKIP_BENCH) skipped(bench, "CANON_SKIP_BENCH is set");
  else if (failures.length > 0) skipped(bench, "a suite above failed (timings beside a failure say nothing)");
  else {
    console.log("\n== the quick benchmark (npm run bench:quick), alone on the machine");
    if (!suite(bench, () => run(process.execPath, ["bench/run.ts", "--quick"])))
      failures.push("quick benchmark");
  }
  printSummary();
  if (failures.length > 0) {
    console.error(`\nfailed: ${failures.join("; ")}`);
    return 1;
  }
  console.log(
    `\nall test runs passed: every test file, the HTTP suite on memory, pglite and postgres${process.env.CANON_SKIP_BENCH ? "" : ", and the quick benchmark"}`,
  );
  return 0;
}

const code = main();
rmSync(scratch, { recursive: true, force: true });
process.exit(code);
