import type { ApiModel } from "../model/types.ts";
import { generate, todayOf, withSunsetPolicy, type GenerateResult } from "../generate.ts";
import { ms, printDiagnostics } from "../cli/output.ts";
import { versionList } from "../compat/messages.ts";

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

function run(options: OutputOptions, write: boolean): Promise<GenerateResult> {
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
function reportGate(command: string, result: GenerateResult, options: OutputOptions): void {
  const gate = result.gate;
  if (!gate) return;
  for (const v of gate.retired) process.stdout.write(`canon ${command}: ${v} retired: its sunset date has passed\n`);
  if (gate.broken.length === 0) return;
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
export async function generateAndReport(options: OutputOptions): Promise<{ code: number; model: ApiModel | null }> {
  const result = await run(options, true);
  const failed = printDiagnostics(result.diagnostics);
  reportGate("generate", result, options);
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
  return { code: 0, model: result.model };
}

/** `canon check`: writes nothing; fails when the output folder is not what generate would write. */
export async function checkCommand(options: OutputOptions): Promise<number> {
  const result = await run(options, false);
  const failed = printDiagnostics(result.diagnostics);
  reportGate("check", result, options);
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
