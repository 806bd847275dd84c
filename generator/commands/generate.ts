import path from "node:path";
import type { ApiModel } from "../model/types.ts";
import type { GenerateResult } from "../generate.ts";
import { formatDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { todayOf, withSunsetPolicy } from "../diagnostics/sunset.ts";
import { ms, printDiagnostics } from "../cli/output.ts";
import { currentStamp, fingerprint, stampFile, writeStamp } from "../write/stamp.ts";

export interface OutputOptions {
  definitions: string;
  out: string;
  /** Let breaking changes to published versions through (a version that has never shipped). */
  allowBreaking?: boolean;
  /** A near or past sunset fails the run. */
  failOnSunset?: boolean;
  /** YYYY-MM-DD: the date sunsets are measured against. */
  today?: string;
}

async function run(options: OutputOptions, write: boolean): Promise<GenerateResult> {
  const { generate } = await import("../generate.ts");
  return generate({
    definitions: options.definitions,
    out: options.out,
    write,
    today: options.today,
    allowBreaking: options.allowBreaking,
    failOnSunset: options.failOnSunset,
  });
}

/** What the compatibility gate decided, said once after the diagnostics. */
async function reportGate(command: string, result: GenerateResult, options: OutputOptions): Promise<void> {
  const gate = result.gate;
  if (!gate) return;
  for (const v of gate.retired) process.stdout.write(`canon ${command}: ${v} retired: its sunset date has passed\n`);
  if (gate.broken.length === 0) return;
  const { versionList } = await import("../compat/messages.ts");
  const versions = versionList(gate.broken);
  const has = gate.broken.length > 1 ? "have" : "has";
  if (options.allowBreaking) {
    process.stderr.write(
      `\n*** WARNING: --allow-breaking: the changes above BREAK the published ${versions}. Every client of ${versions} that relies on them breaks.\n` +
        `*** Use --allow-breaking only for a version that has never shipped; otherwise add a new version (see docs/versioning.md).\n\n`,
    );
    return;
  }
  process.stderr.write(
    `canon ${command}: refused: published versions never break (${versions}). Make the change in a new version, as each fix says (docs/versioning.md).\n` +
      `  A break that no change of the definitions explains comes from canon itself: keep the canon release that published ${versions}, or pass --allow-breaking if ${versions} ${has} never shipped.\n`,
  );
}

/** `canon generate`: writes the output and prints what changed. */
export async function generateCommand(options: OutputOptions): Promise<number> {
  return (await generateAndReport(options)).code;
}

/** `canon generate`, also giving the model it generated from (for `serve`). */
export async function generateAndReport(options: OutputOptions, needModel = false): Promise<{ code: number; model: ApiModel | null }> {
  const started = performance.now();
  const stamped = await stampOf(options);
  const stamp = await currentStamp(stamped.file, options.out, stamped.print);
  if (stamp && !needModel) {
    process.stderr.write(stamp.warnings);
    process.stdout.write(`canon generate: up to date, ${Object.keys(stamp.files).length} files unchanged (${ms(performance.now() - started)})\n`);
    return { code: 0, model: null };
  }
  const result = await run(options, true);
  const failed = printDiagnostics(result.diagnostics);
  await reportGate("generate", result, options);
  if (failed || !result.diff) {
    process.stderr.write(`nothing written: fix the errors above and run canon generate again\n`);
    return { code: 1, model: null };
  }
  const { added, changed, stale, unchanged } = result.diff;
  for (const f of added) process.stdout.write(`  added    ${options.out}/${f}\n`);
  for (const f of changed) process.stdout.write(`  changed  ${options.out}/${f}\n`);
  for (const f of stale) process.stdout.write(`  removed  ${options.out}/${f}\n`);
  const touched = added.length + changed.length + stale.length;
  process.stdout.write(
    touched === 0
      ? `canon generate: up to date, ${unchanged} files unchanged (${ms(result.ms)})\n`
      : `canon generate: ${added.length} added, ${changed.length} changed, ${stale.length} removed, ${unchanged} unchanged (${ms(result.ms)})\n`,
  );
  await stampSuccess(stamped, result);
  return { code: 0, model: result.model };
}

/** Where the stamp of an output folder lives, and the fingerprint of this run's inputs. */
async function stampOf(options: OutputOptions): Promise<{ file: string; print: string }> {
  const cacheDir = path.join(process.cwd(), "node_modules", ".cache", "canon");
  const print = await fingerprint({
    definitions: options.definitions,
    out: options.out,
    options: { allowBreaking: options.allowBreaking ?? false, failOnSunset: options.failOnSunset ?? false, today: todayOf(options.today) },
  });
  return { file: stampFile(cacheDir, options.out), print };
}

/**
 * Records a successful run so that the next one with the same inputs can answer at once. The
 * fingerprint is the one taken before the run: an input changed meanwhile makes the next run
 * miss the stamp and run in full.
 */
async function stampSuccess({ file, print }: { file: string; print: string }, result: GenerateResult): Promise<void> {
  const warnings = result.diagnostics.map((d: Diagnostic) => `${formatDiagnostic(d)}\n`).join("");
  const summary = result.diagnostics.length ? `0 errors, ${result.diagnostics.length} warning${result.diagnostics.length === 1 ? "" : "s"}\n` : "";
  await writeStamp(file, print, result.files, warnings + summary);
}

/** `canon check`: writes nothing; fails when the output folder is not what generate would write. */
export async function checkCommand(options: OutputOptions): Promise<number> {
  const started = performance.now();
  const stamped = await stampOf(options);
  const stamp = await currentStamp(stamped.file, options.out, stamped.print);
  if (stamp) {
    process.stderr.write(stamp.warnings);
    process.stdout.write(`canon check: ${Object.keys(stamp.files).length} files match the definitions (${ms(performance.now() - started)})\n`);
    return 0;
  }
  const result = await run(options, false);
  const failed = printDiagnostics(result.diagnostics);
  await reportGate("check", result, options);
  if (failed || !result.diff) return 1;
  const { added, changed, stale, unchanged } = result.diff;
  const problems = [
    ...added.map((f) => `  missing  ${options.out}/${f}`),
    ...changed.map((f) => `  differs  ${options.out}/${f}`),
    ...stale.map((f) => `  stale    ${options.out}/${f}`),
  ];
  if (problems.length > 0) {
    process.stderr.write(`canon check: ${options.out} does not match the definitions:\n${problems.join("\n")}\n`);
    process.stderr.write(`fix: run canon generate and commit ${options.out}\n`);
    return 1;
  }
  process.stdout.write(`canon check: ${unchanged} files match the definitions (${ms(result.ms)})\n`);
  await stampSuccess(stamped, result);
  return 0;
}

/** `canon lint`: diagnostics only. */
export async function lintCommand(options: { definitions: string; today?: string; failOnSunset?: boolean }): Promise<number> {
  const { runFrontEnd } = await import("../pipeline.ts");
  const result = await runFrontEnd(options.definitions, { today: todayOf(options.today) });
  const failed = printDiagnostics(withSunsetPolicy(result.diagnostics, options.failOnSunset));
  if (!failed) process.stdout.write(`canon lint: no errors in ${options.definitions}\n`);
  return failed ? 1 : 0;
}
