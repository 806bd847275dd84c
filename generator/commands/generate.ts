import { generate } from "../generate.ts";
import { ms, printDiagnostics } from "../cli/output.ts";

export interface OutputOptions {
  definitions: string;
  out: string;
}

/** `canon generate`: writes the output and prints what changed. */
export async function generateCommand(options: OutputOptions): Promise<number> {
  const result = await generate({ definitions: options.definitions, out: options.out, write: true });
  if (printDiagnostics(result.diagnostics) || !result.diff) {
    process.stderr.write(`nothing written: fix the errors above and run canon generate again\n`);
    return 1;
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
  return 0;
}

/** `canon check`: writes nothing; fails when the output folder is not what generate would write. */
export async function checkCommand(options: OutputOptions): Promise<number> {
  const result = await generate({ definitions: options.definitions, out: options.out, write: false });
  if (printDiagnostics(result.diagnostics) || !result.diff) return 1;
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
export async function lintCommand(options: { definitions: string }): Promise<number> {
  const { runFrontEnd } = await import("../pipeline.ts");
  const result = await runFrontEnd(options.definitions);
  const failed = printDiagnostics(result.diagnostics);
  if (!failed) process.stdout.write(`canon lint: no errors in ${options.definitions}\n`);
  return failed ? 1 : 0;
}
