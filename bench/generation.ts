// Generation benchmarks: `canon generate` (cold, no-op, one changed resource), `canon check`,
// cost as N grows, peak RSS, and TypeSpec (`tsp compile` to the two OpenAPI documents) on the
// equivalent definitions, run side by side (alternating, in the same loop).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  fmtBytes,
  fmtMs,
  fmtRatio,
  log,
  max,
  median,
  repoRoot,
  table,
  timeNode,
  workRoot,
  type Check,
  type ProcessRun,
} from "./lib.ts";
import { resourceYaml, syntheticResources, writeSynthetic } from "./synthetic.ts";
import { writeTypeSpec } from "./typespec.ts";

const canonBin = path.join(repoRoot, "bin", "canon.js");
const tspBin = path.join(repoRoot, "node_modules", "@typespec", "compiler", "cmd", "tsp.js");

export interface GenerationPlan {
  /** Sizes whose cold generation is measured. */
  sizes: number[];
  /** Sizes at which TypeSpec runs beside canon. */
  typespecSizes: number[];
  /** The size of the no-op, one-change and check runs. */
  incrementalSize: number;
  /** Runs per measurement, by size (cold runs), and of the incremental runs. */
  coldRuns: (n: number) => number;
  incrementalRuns: number;
}

export const FULL_PLAN: GenerationPlan = {
  sizes: [10, 100, 1000],
  typespecSizes: [10, 100],
  incrementalSize: 100,
  coldRuns: (n) => (n >= 1000 ? 3 : 5),
  incrementalRuns: 7,
};

export const QUICK_PLAN: GenerationPlan = {
  sizes: [100, 1000],
  typespecSizes: [100],
  incrementalSize: 100,
  coldRuns: (n) => (n >= 1000 ? 1 : 3),
  incrementalRuns: 3,
};

interface SizeResult {
  n: number;
  files: number;
  /** Files each cold canon run sent through prettier (the rest canon laid out itself). */
  prettier: number[];
  canon: ProcessRun[];
  typespec: ProcessRun[];
  /** canon ÷ tsp of each side-by-side pair. */
  pairRatios: number[];
}

export interface GenerationResult {
  sizes: SizeResult[];
  noop: ProcessRun[];
  change: ProcessRun[];
  check: ProcessRun[];
  /** In-process times canon printed itself for the no-op runs. */
  noopReported: number[];
}

function workspace(n: number): string {
  return path.join(workRoot, `gen-${n}`);
}

function canon(command: "generate" | "check", cwd: string, env?: NodeJS.ProcessEnv): Promise<ProcessRun> {
  return timeNode([canonBin, command, "--definitions", "definitions", "--out", "out"], { cwd, rss: true, env });
}

/** Cold: no output folder, no format cache and no V8 code cache, as on a fresh CI machine. */
function coldCanon(cwd: string): Promise<ProcessRun> {
  rmSync(path.join(cwd, "out"), { recursive: true, force: true });
  rmSync(path.join(cwd, "node_modules"), { recursive: true, force: true });
  return canon("generate", cwd, { NODE_DISABLE_COMPILE_CACHE: "1", CANON_TIMINGS: "1" });
}

/** Files a run sent through prettier, from the format line CANON_TIMINGS prints (NaN without one). */
function prettierFiles(stderr: string): number {
  const m = /through prettier: (\d+) formatted, (\d+) cached/.exec(stderr);
  return m ? Number(m[1]) + Number(m[2]) : NaN;
}

function coldTypeSpec(cwd: string): Promise<ProcessRun> {
  const dir = path.join(cwd, "tsp");
  rmSync(path.join(dir, "out"), { recursive: true, force: true });
  return timeNode([tspBin, "compile", ".", "--output-dir", "out"], { cwd: dir, rss: true });
}

function expectOk(what: string, r: ProcessRun, pattern?: RegExp): void {
  if (r.code !== 0 || (pattern && !pattern.test(r.stdout))) {
    throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  }
}

function reportedMs(stdout: string): number {
  const m = /\((\d+(?:\.\d+)?) (ms|s)\)/.exec(stdout);
  return m ? Number(m[1]) * (m[2] === "s" ? 1000 : 1) : NaN;
}

export async function benchGeneration(plan: GenerationPlan): Promise<GenerationResult> {
  const result: GenerationResult = { sizes: [], noop: [], change: [], check: [], noopReported: [] };
  for (const n of plan.sizes) {
    const cwd = workspace(n);
    mkdirSync(cwd, { recursive: true });
    writeSynthetic(path.join(cwd, "definitions"), n);
    const withTsp = plan.typespecSizes.includes(n);
    if (withTsp) writeTypeSpec(path.join(cwd, "tsp"), n);
    const size: SizeResult = { n, files: 0, prettier: [], canon: [], typespec: [], pairRatios: [] };
    const runs = plan.coldRuns(n);
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first, so that neither always runs on a machine warmed (or
      // loaded) by the other.
      const order = withTsp && i % 2 === 1 ? ["tsp", "canon"] : ["canon", "tsp"];
      let c: ProcessRun | null = null;
      let t: ProcessRun | null = null;
      for (const which of order) {
        if (which === "canon") {
          c = await coldCanon(cwd);
          expectOk(`canon generate (N=${n})`, c, / added/);
          size.canon.push(c);
          size.files = Number(/(\d+) added/.exec(c.stdout)?.[1] ?? 0);
          size.prettier.push(prettierFiles(c.stderr));
        } else if (withTsp) {
          t = await coldTypeSpec(cwd);
          expectOk(`tsp compile (N=${n})`, t);
          size.typespec.push(t);
        }
      }
      if (c && t) size.pairRatios.push(c.ms / t.ms);
      log(
        `  N=${n} cold ${i + 1}/${runs}: canon ${fmtMs(c!.ms)} (${fmtBytes(c!.maxRss)})` +
          (t ? `, tsp ${fmtMs(t.ms)} (${fmtBytes(t.maxRss)}), canon/tsp ${fmtRatio(c!.ms / t.ms)}` : ""),
      );
    }
    result.sizes.push(size);
    if (n === plan.incrementalSize) await incremental(cwd, n, plan.incrementalRuns, result);
  }
  return result;
}

/** No-op re-runs, one changed resource, and check, on the output the last cold run left. */
async function incremental(cwd: string, n: number, runs: number, result: GenerationResult): Promise<void> {
  // A cold run just wrote the output and the format cache. A run that is not a no-op means
  // canon's own sources (templates, runtime) changed meanwhile: generate again, and retry.
  const settled = async (
    command: "generate" | "check",
    pattern: RegExp,
    what: string,
  ): Promise<ProcessRun> => {
    for (let attempt = 0; ; attempt++) {
      const r = await canon(command, cwd);
      if (r.code === 0 && pattern.test(r.stdout)) return r;
      if (attempt === 2) expectOk(what, r, pattern);
      log(
        `  ${what}: the output changed under the benchmark (canon's sources were edited?); generating again`,
      );
      expectOk("canon generate (settle)", await canon("generate", cwd));
    }
  };
  for (let i = 0; i < runs; i++) {
    const r = await settled("generate", /up to date/, "canon generate (no-op)");
    result.noop.push(r);
    result.noopReported.push(reportedMs(r.stdout));
  }
  log(`  N=${n} no-op: ${walls(result.noop)}`);
  for (let i = 0; i < runs; i++) result.check.push(await settled("check", /match/, "canon check"));
  log(`  N=${n} check: ${walls(result.check)}`);
  // One changed resource: a child with a parent (every fifth) and new text in its description,
  // a different text each time, so that each run formats and writes that resource's files.
  const resource = syntheticResources(n)[4]!;
  const file = path.join(cwd, "definitions", `${resource.name}.yaml`);
  for (let i = 0; i < runs; i++) {
    writeFileSync(file, resourceYaml(resource, i + 1));
    const r = await canon("generate", cwd);
    expectOk("canon generate (one change)", r, / changed/);
    result.change.push(r);
  }
  writeFileSync(file, resourceYaml(resource));
  expectOk("canon generate (restore)", await canon("generate", cwd));
  log(`  N=${n} one changed resource: ${walls(result.change)}`);
}

function walls(runs: ProcessRun[]): string {
  return runs.map((r) => fmtMs(r.ms)).join(", ");
}

/**
 * The incremental runs' targets, as ratios to the cold generate N=100 of the same run, wall time
 * (CPU time). Measured: on the machine of docs/benchmarks.md (AMD EPYC) no-op 0.16× (0.11×),
 * check 0.17× (0.11×), one changed resource 0.90× (0.80×); on the Xeon CI machine of session 6
 * no-op 0.10× (0.08×), check 0.10× (0.08×), one change 1.05× (0.67×). Each margin is at least
 * 1.5× above both (so a neighbour or a slower machine does not cross it: both sides slow down)
 * and below three times both, so the same step made 3× slower is caught on either machine
 * (test/bench-quick.test.ts holds both machines' figures to that).
 */
export const INCREMENTAL_LIMITS: ReadonlyArray<{
  name: string;
  runs: "noop" | "change" | "check";
  target: number;
  /** Quick mode fails past this wall-time ratio… */
  margin: number;
  /** …when the CPU-time ratio is past this one too. */
  cpuMargin: number;
}> = [
  { name: "no-op generate", runs: "noop", target: 0.25, margin: 0.28, cpuMargin: 0.2 },
  { name: "one changed resource", runs: "change", target: 1, margin: 1.6, cpuMargin: 1.6 },
  { name: "check", runs: "check", target: 0.25, margin: 0.28, cpuMargin: 0.2 },
];

/** Targets of the issue, with the margins quick mode allows for noise: ratios only (issue 23). */
export function generationChecks(r: GenerationResult): Check[] {
  const checks: Check[] = [];
  const at = (n: number) => r.sizes.find((s) => s.n === n);
  const s100 = at(100);
  if (s100 && s100.pairRatios.length > 0) {
    const ratio = median(s100.pairRatios);
    checks.push({
      name: "cold generate N=100 ÷ tsp compile N=100",
      value: fmtRatio(ratio),
      target: "< 1.00×",
      met: ratio < 1,
      // 0.27× on the machine of docs/benchmarks.md, 0.40× on the CI machine of session 6: the
      // margin, well above both, still catches canon's cold run made 3× slower on either (0.81×,
      // 1.2×), which the target alone would not.
      margin: "≤ 0.75×",
      withinMargin: ratio <= 0.75,
    });
  }
  if (s100 && s100.prettier.length > 0) {
    // canon lays out its own files (format/layout.ts); prettier only takes what it cannot vouch
    // for: none of the synthetic API's files at N=100 or N=1000 since session 21 (8 and 66 before:
    // hooks.ts's renamed imports, the SQL index's `/**` comments, routes whose action or PATCH
    // path made a line too long). The margin catches an emitter that starts falling back (the
    // clients, the routes) before it shows up as time and as prettier's worker threads' memory.
    const sent = max(s100.prettier);
    checks.push({
      name: "files sent to prettier, cold generate N=100",
      value: `${sent} of ${s100.files}`,
      target: "0",
      met: sent === 0,
      margin: "≤ 4",
      withinMargin: sent <= 4,
    });
  }
  const s1000 = at(1000);
  if (s100 && s1000) {
    const ratio = median(s1000.canon.map((x) => x.ms)) / median(s100.canon.map((x) => x.ms));
    checks.push({
      name: "cold generate N=1000 ÷ N=100",
      value: fmtRatio(ratio),
      target: "≤ 10×",
      met: ratio <= 10,
      margin: "≤ 12×",
      withinMargin: ratio <= 12,
    });
    const rss = max(s1000.canon.map((x) => x.maxRss));
    checks.push({
      name: "peak RSS, cold generate N=1000",
      value: fmtBytes(rss),
      target: "< 1 GiB",
      met: rss < 1024 ** 3,
      // Session 3's typed clients and the 640 routes files then sent to prettier's worker threads
      // raised the peak to 1.0–1.36 GiB; with the routes laid out by canon again (2 files to
      // prettier, no workers) it was 0.81 GiB in session 4 on a loaded machine. In session 21, 66
      // files (two workers) had brought it back to 1.17–1.23 GiB; with none, 0.84 GiB.
      margin: "< 1.25 GiB",
      withinMargin: rss < 1.25 * 1024 ** 3,
    });
  }
  // The incremental runs, judged against the cold generate of the same size in the same run
  // (issue 23): a machine twice as slow, or a second job on the same cores, moves both sides;
  // their absolute times are printed (generationMarkdown), never judged. The cold run uses more
  // than one core (prettier's and the emit thread's work beside the main thread), so a neighbour
  // stretches its wall time more than an incremental run's: that lowers these ratios. A check
  // fails only when both the wall-time and the CPU-time ratio are past the margin.
  if (s100 && s100.canon.length > 0) {
    const coldWall = median(s100.canon.map((x) => x.ms));
    const coldCpu = median(s100.canon.map((x) => x.cpuMs));
    for (const c of INCREMENTAL_LIMITS) {
      const runs = r[c.runs];
      if (runs.length === 0) continue;
      const wall = median(runs.map((x) => x.ms)) / coldWall;
      const cpu = median(runs.map((x) => x.cpuMs)) / coldCpu;
      checks.push({
        name: `${c.name} N=100 ÷ cold generate N=100 (CPU-time ratio)`,
        value: `${fmtRatio(wall)} (${fmtRatio(cpu)})`,
        target: `≤ ${fmtRatio(c.target)}`,
        met: wall <= c.target,
        margin: `≤ ${fmtRatio(c.margin)} (CPU ≤ ${fmtRatio(c.cpuMargin)})`,
        withinMargin: wall <= c.margin || cpu <= c.cpuMargin,
      });
    }
  }
  return checks;
}

export function generationMarkdown(r: GenerationResult): string {
  const rows = r.sizes.map((s) => {
    const c = median(s.canon.map((x) => x.ms));
    const t = s.typespec.length ? median(s.typespec.map((x) => x.ms)) : NaN;
    return [
      String(s.n),
      String(s.files),
      `${fmtMs(c)} (${walls(s.canon)})`,
      fmtMs(median(s.canon.map((x) => x.cpuMs))),
      fmtBytes(max(s.canon.map((x) => x.maxRss))),
      s.typespec.length ? `${fmtMs(t)} (${walls(s.typespec)})` : "–",
      s.typespec.length ? fmtMs(median(s.typespec.map((x) => x.cpuMs))) : "–",
      s.typespec.length ? fmtBytes(max(s.typespec.map((x) => x.maxRss))) : "–",
      s.pairRatios.length ? fmtRatio(median(s.pairRatios)) : "–",
    ];
  });
  const parts = [
    table(
      [
        "N",
        "files",
        "canon generate, cold: wall (median; every run)",
        "canon CPU",
        "canon peak RSS",
        "tsp compile: wall (median; every run)",
        "tsp CPU",
        "tsp peak RSS",
        "canon ÷ tsp wall (median of pairs)",
      ],
      rows,
    ),
  ];
  const inc: string[][] = [];
  const line = (name: string, runs: ProcessRun[], reported?: number[]) => {
    if (!runs.length) return;
    inc.push([
      name,
      fmtMs(median(runs.map((x) => x.ms))),
      fmtMs(median(runs.map((x) => x.cpuMs))),
      reported ? fmtMs(median(reported)) : "–",
      walls(runs),
    ]);
  };
  line("no-op `canon generate`", r.noop, r.noopReported);
  line("one changed resource", r.change);
  line("`canon check`", r.check);
  if (inc.length)
    parts.push(
      table(["N = 100", "wall (median)", "CPU (median)", "canon's own timer", "wall, every run"], inc),
    );
  return parts.join("\n\n");
}
