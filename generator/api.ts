/**
 * canon's programmatic API: what `canon generate`, `canon check` and `canon lint` do, with the
 * results as data instead of printed lines. `import { generate, check, lint } from "canon-codegen"`.
 *
 * Every function resolves `definitions` and `out` against `cwd` (default: the working
 * directory) and names files relative to it. Nothing is printed; nothing throws for a problem
 * in the definitions or the output folder: `ok` is false and `diagnostics` says why.
 */
import path from "node:path";
import { toRecord, type DiagnosticRecord } from "./diagnostics/diagnostic.ts";
import { todayOf, withSunsetPolicy } from "./diagnostics/sunset.ts";
import { defaultCacheFile, generate as runPipeline } from "./generate.ts";
import { runFrontEnd } from "./pipeline.ts";
import { driftDiagnostics } from "./write/drift.ts";

export type { DiagnosticRecord as Diagnostic } from "./diagnostics/diagnostic.ts";

export interface LintOptions {
  /** The folder of api.yaml and the resource files (default `definitions`). */
  definitions?: string;
  /** The folder paths are resolved against and files are named relative to (default: `process.cwd()`). */
  cwd?: string;
  /** YYYY-MM-DD: the date sunsets are measured against (default: today, UTC). */
  today?: string;
  /** A near or past sunset is an error instead of a warning. */
  failOnSunset?: boolean;
}

export interface GenerateOptions extends LintOptions {
  /** The output folder (default `generated`). */
  out?: string;
  /** Let breaking changes to published versions through, as warnings (only for a version that never shipped). */
  allowBreaking?: boolean;
}

export interface LintResult {
  /** No error among the diagnostics. */
  ok: boolean;
  /** Every problem, sorted by file, line and column: `{ file, line, column, severity, rule, message, fix }`. */
  diagnostics: DiagnosticRecord[];
}

export interface GenerateResult extends LintResult {
  /** Output files (relative to `out`) written new, rewritten and removed; empty when `ok` is false. */
  added: string[];
  changed: string[];
  removed: string[];
  unchanged: number;
  ms: number;
}

export interface CheckResult extends LintResult {
  /** Output files (relative to `out`) that generate would write, that differ, and that it would remove. */
  missing: string[];
  differs: string[];
  stale: string[];
  ms: number;
}

function resolved(options: GenerateOptions) {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  return {
    cwd,
    definitions: path.resolve(cwd, options.definitions ?? "definitions"),
    out: path.resolve(cwd, options.out ?? "generated"),
    today: options.today,
    allowBreaking: options.allowBreaking,
    failOnSunset: options.failOnSunset,
    cacheFile: defaultCacheFile(cwd),
  };
}

/** Diagnostics of the definitions only, like `canon lint`. */
export async function lint(options: LintOptions = {}): Promise<LintResult> {
  const { cwd, definitions } = resolved(options);
  const front = await runFrontEnd(definitions, { today: todayOf(options.today), cwd });
  const diagnostics = withSunsetPolicy(front.diagnostics, options.failOnSunset).map(toRecord);
  return { ok: !diagnostics.some((d) => d.severity === "error"), diagnostics };
}

/** Writes the output, like `canon generate`; nothing is written when `ok` is false. */
export async function generate(options: GenerateOptions = {}): Promise<GenerateResult> {
  const result = await runPipeline({ ...resolved(options), write: true });
  const diagnostics = result.diagnostics.map(toRecord);
  const diff = result.diff ?? { added: [], changed: [], stale: [], unchanged: 0 };
  return {
    ok: result.diff !== null && !diagnostics.some((d) => d.severity === "error"),
    diagnostics,
    added: diff.added,
    changed: diff.changed,
    removed: diff.stale,
    unchanged: diff.unchanged,
    ms: result.ms,
  };
}

/**
 * Compares the output folder with what generate would write, like `canon check`; writes
 * nothing. Every file that does not match is also an `output-drift` diagnostic.
 */
export async function check(options: GenerateOptions = {}): Promise<CheckResult> {
  const settings = resolved(options);
  const result = await runPipeline({ ...settings, write: false });
  const drift = result.diff ? await driftDiagnostics(settings.out, result.diff, result.files, settings.cwd) : [];
  const diagnostics = [...result.diagnostics, ...drift].map(toRecord);
  return {
    ok: result.diff !== null && !diagnostics.some((d) => d.severity === "error"),
    diagnostics,
    missing: result.diff?.added ?? [],
    differs: result.diff?.changed ?? [],
    stale: result.diff?.stale ?? [],
    ms: result.ms,
  };
}
