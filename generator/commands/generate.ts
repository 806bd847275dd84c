import path from "node:path";
import type { ApiModel } from "../model/types.ts";
import type { GenerateResult } from "../generate.ts";
import { formatDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";
import { MINIMUM_NOTICE_DAYS, todayOf, withSunsetPolicy } from "../diagnostics/sunset.ts";
import { ms, Reporter, type Format } from "../cli/output.ts";
import { driftDiagnostics } from "../write/drift.ts";
import type { FormattedFile } from "../format/format.ts";
import type { GenerateSession } from "../session.ts";
import { canonSources, currentStamp, fingerprint, stampFile, writeStamp } from "../write/stamp.ts";
import { youngGenerationForOneRun } from "../util/young-generation.ts";
import { phaseTimer } from "../util/timings.ts";

export interface OutputOptions {
  definitions: string;
  out: string;
  /** Let breaking changes to published versions through (a version that has never shipped). */
  allowBreaking?: boolean;
  /** A near or past sunset fails the run. */
  failOnSunset?: boolean;
  /** YYYY-MM-DD: the date sunsets are measured against. */
  today?: string;
  /** How diagnostics are printed (default text). */
  format?: Format;
}

async function run(
  options: OutputOptions,
  write: boolean,
  session?: GenerateSession,
  stamped?: Stamped | null,
): Promise<GenerateResult> {
  const { generate } = await import("../generate.ts");
  return generate({
    session,
    definitions: options.definitions,
    out: options.out,
    write,
    today: options.today,
    allowBreaking: options.allowBreaking,
    failOnSunset: options.failOnSunset,
    canon: stamped?.canon,
  });
}

/**
 * A run, except that a migration canon cannot read (generator/emit/sql/replay.ts) is said in one
 * line with its fix instead of failing unexpectedly: null then.
 */
async function migrationsRead(
  runIt: () => Promise<GenerateResult>,
  command: string,
  report: Reporter,
  out: string,
): Promise<GenerateResult | null> {
  try {
    return await runIt();
  } catch (error) {
    const message = (error as Error).message;
    if (!/^sql\/\d{4}_\S+\.sql line \d+: canon cannot read/.test(message)) throw error;
    report.error(`canon ${command}: refused: ${message.replace("<out>", out)}`);
    return null;
  }
}

/**
 * What the compatibility gate decided, said once after the diagnostics: for each kind of refusal
 * (a break, a published version marked draft, one retired or removed before its sunset) what was
 * refused and the way out, not one text for all.
 */
async function reportGate(
  command: string,
  result: GenerateResult,
  options: OutputOptions,
  report: Reporter,
  rerun?: string,
): Promise<void> {
  const gate = result.gate;
  if (!gate) return;
  for (const v of gate.retired) report.info(`canon ${command}: ${v} retired: its sunset date has passed`);
  if (gate.broken.length === 0) return;
  const { versionList } = await import("../compat/messages.ts");
  const of = (...reasons: string[]) => gate.refusals.filter((r) => reasons.includes(r.reason));
  const breaking = [...new Set(of("breaking-change").map((r) => r.version))];
  const drafts = of("draft").map((r) => r.version);
  const early = of("retired-early", "removed-early", "sunset-earlier", "short-notice");
  const lines: string[] = [];
  if (drafts.length > 0) {
    const them = drafts.length > 1 ? "them" : "it";
    lines.push(
      `canon ${command}: refused: ${versionList(drafts)} ${drafts.length > 1 ? "are" : "is"} published and cannot become a draft again (draft: true): remove draft: true from ${them} and make the change in a new version (docs/versioning.md, "Draft versions").` +
        (options.allowBreaking ? ` --allow-breaking does not reopen a published version.` : "") +
        "\n",
    );
  }
  // --allow-breaking lets breaks and early removals through (as warnings), never a draft.
  const through = [...new Set([...breaking, ...early.map((r) => r.version)])].sort();
  if (options.allowBreaking) {
    if (through.length > 0) {
      const versions = versionList(through);
      lines.unshift(
        `\n*** WARNING: --allow-breaking: the changes above BREAK the published ${versions}. Every client of ${versions} that relies on them breaks.\n` +
          `*** Use --allow-breaking only for a version that has never shipped; otherwise add a new version (see docs/versioning.md).\n`,
      );
    }
    report.error(lines.join("") + (through.length > 0 ? "\n" : ""));
    return;
  }
  for (const { version: v, reason, sunset } of early) {
    if (reason === "sunset-earlier" || reason === "short-notice") {
      const why = reason === "sunset-earlier" ? "the date its published document promised its clients" : `${MINIMUM_NOTICE_DAYS} days from today: a deprecation announced now gives its clients at least that`;
      lines.push(
        `canon ${command}: refused: ${v}'s sunset may not come before ${sunset}, ${why}. Set its sunset on or after ${sunset} (docs/versioning.md, "Deprecating and removing a version").\n`,
      );
      continue;
    }
    const done = reason === "retired-early" ? "is retired (retired: true)" : "was removed from api.yaml's versions";
    lines.push(
      sunset
        ? `canon ${command}: refused: ${v} ${done} before its sunset on ${sunset}, the date its published document promised its clients. Serve it until then: ${reason === "retired-early" ? "remove retired: true" : "list it again"}, and retire it on or after ${sunset} (docs/versioning.md, "Deprecating and removing a version").\n`
        : `canon ${command}: refused: ${v} ${done}, but its published document never announced a deprecation or sunset. Deprecate it first, and retire it once its sunset has passed (docs/versioning.md, "Deprecating and removing a version").\n`,
    );
  }
  if (breaking.length > 0) {
    const versions = versionList(breaking);
    const has = breaking.length > 1 ? "have" : "has";
    lines.push(
      `canon ${command}: refused: published versions never break (${versions}). Make the change in a new version, as each fix says (docs/versioning.md).\n` +
        (rerun
          ? `  If ${versions} ${has} never shipped, let the change through: stop this session (Ctrl-C) and run\n    ${rerun}\n`
          : `  A break that no change of the definitions explains comes from canon itself: keep the canon release that published ${versions}, or pass --allow-breaking if ${versions} ${has} never shipped.\n`),
    );
  }
  report.error(lines.join(""));
}

/**
 * The stamp of the last successful run, when the inputs have not changed since: the command
 * answers at once. The stamp keeps warnings as text, so only the text format uses it.
 */
async function upToDate(options: OutputOptions, stamped: Stamped) {
  if ((options.format ?? "text") !== "text") return null;
  return currentStamp(stamped.file, options.out, stamped.print);
}

/** `canon generate`: writes the output and prints what changed. */
export async function generateCommand(options: OutputOptions): Promise<number> {
  youngGenerationForOneRun();
  const report = new Reporter(options.format);
  const { code } = await generateAndReport(options, { report });
  report.finish();
  return code;
}

/**
 * `canon generate`, also giving the model and files it generated (for `serve` and `dev`, which
 * need them: `model` skips the up-to-date answer). `dev` regenerates in one process again and
 * again, so it keeps no stamp (`stamp: false`) and keeps a session instead (session.ts).
 */
export async function generateAndReport(
  options: OutputOptions,
  {
    model: needModel = false,
    stamp: keepStamp = true,
    report = new Reporter(options.format),
    session,
    command = "generate",
    rerun,
  }: {
    model?: boolean;
    stamp?: boolean;
    report?: Reporter;
    session?: GenerateSession;
    /** The command named in what is printed. */
    command?: string;
    /** The exact command line that lets a refused break through (`canon dev` prints it). */
    rerun?: string;
  } = {},
): Promise<{ code: number; model: ApiModel | null; files: FormattedFile[] }> {
  const started = performance.now();
  const phase = phaseTimer();
  const stamped = keepStamp ? await stampOf(options) : null;
  const stamp = needModel || !stamped ? null : await upToDate(options, stamped);
  phase("stamp: is the output up to date");
  if (stamp) {
    process.stderr.write(stamp.warnings);
    report.info(
      `canon generate: up to date, ${Object.keys(stamp.files).length} files unchanged (${ms(performance.now() - started)})`,
    );
    return { code: 0, model: null, files: [] };
  }
  const result = await migrationsRead(
    () => run(options, true, session, stamped),
    "generate",
    report,
    options.out,
  );
  phase("generator loaded and run (the phases above)");
  if (!result) return { code: 1, model: null, files: [] };
  const failed = report.diagnostics(result.diagnostics);
  await reportGate(command, result, options, report, rerun);
  if (failed || !result.diff) {
    report.error(`nothing written: fix the errors above and run canon generate again`);
    return { code: 1, model: null, files: [] };
  }
  const { added, changed, stale, unchanged } = result.diff;
  for (const f of added) report.info(`  added    ${options.out}/${f}`);
  for (const f of changed) report.info(`  changed  ${options.out}/${f}`);
  for (const f of stale) report.info(`  removed  ${options.out}/${f}`);
  const touched = added.length + changed.length + stale.length;
  report.info(
    touched === 0
      ? `canon generate: up to date, ${unchanged} files unchanged (${ms(result.ms)})`
      : `canon generate: ${added.length} added, ${changed.length} changed, ${stale.length} removed, ${unchanged} unchanged (${ms(result.ms)})`,
  );
  if (stamped) {
    await stampSuccess(stamped, result);
    phase("stamp written");
  }
  return { code: 0, model: result.model, files: result.files };
}

/** Where the stamp of an output folder lives, the fingerprint of this run's inputs, and the hash of canon's sources in it. */
interface Stamped {
  file: string;
  print: string;
  canon: string;
}

async function stampOf(options: OutputOptions): Promise<Stamped> {
  const cacheDir = path.join(process.cwd(), "node_modules", ".cache", "canon");
  const canon = await canonSources(cacheDir);
  const print = await fingerprint({
    canon,
    definitions: options.definitions,
    out: options.out,
    options: {
      allowBreaking: options.allowBreaking ?? false,
      failOnSunset: options.failOnSunset ?? false,
      today: todayOf(options.today),
    },
  });
  return { file: stampFile(cacheDir, options.out), print, canon };
}

/**
 * Records a successful run so that the next one with the same inputs can answer at once. The
 * fingerprint is the one taken before the run: an input changed meanwhile makes the next run
 * miss the stamp and run in full.
 */
async function stampSuccess({ file, print }: Stamped, result: GenerateResult): Promise<void> {
  const warnings = result.diagnostics.map((d: Diagnostic) => `${formatDiagnostic(d)}\n`).join("");
  const summary = result.diagnostics.length
    ? `0 errors, ${result.diagnostics.length} warning${result.diagnostics.length === 1 ? "" : "s"}\n`
    : "";
  await writeStamp(file, print, result.files, warnings + summary, result.digests);
}

/** `canon check`: writes nothing; fails when the output folder is not what generate would write. */
export async function checkCommand(options: OutputOptions): Promise<number> {
  youngGenerationForOneRun();
  const report = new Reporter(options.format);
  const code = await checkAndReport(options, report);
  report.finish();
  return code;
}

async function checkAndReport(options: OutputOptions, report: Reporter): Promise<number> {
  const started = performance.now();
  const stamped = await stampOf(options);
  const stamp = await upToDate(options, stamped);
  if (stamp) {
    process.stderr.write(stamp.warnings);
    report.info(
      `canon check: ${Object.keys(stamp.files).length} files match the definitions (${ms(performance.now() - started)})`,
    );
    return 0;
  }
  const result = await migrationsRead(
    () => run(options, false, undefined, stamped),
    "check",
    report,
    options.out,
  );
  if (!result) return 1;
  const diff = result.diff;
  // In the machine formats, every file that does not match is a diagnostic too.
  const drift =
    diff && report.format !== "text" ? await driftDiagnostics(options.out, diff, result.files) : [];
  const failed = report.diagnostics([...result.diagnostics, ...drift]);
  await reportGate("check", result, options, report);
  if (failed || !diff) return 1;
  const problems = [
    ...diff.added.map((f) => `  missing  ${options.out}/${f}`),
    ...diff.changed.map((f) => `  differs  ${options.out}/${f}`),
    ...diff.stale.map((f) => `  stale    ${options.out}/${f}`),
  ];
  if (problems.length > 0) {
    report.error(`canon check: ${options.out} does not match the definitions:\n${problems.join("\n")}`);
    report.error(`fix: run canon generate and commit ${options.out}`);
    return 1;
  }
  report.info(`canon check: ${diff.unchanged} files match the definitions (${ms(result.ms)})`);
  await stampSuccess(stamped, result);
  return 0;
}

/** `canon lint`: diagnostics only. */
export async function lintCommand(options: {
  definitions: string;
  today?: string;
  failOnSunset?: boolean;
  format?: Format;
}): Promise<number> {
  const report = new Reporter(options.format);
  const { runFrontEnd } = await import("../pipeline.ts");
  const result = await runFrontEnd(options.definitions, { today: todayOf(options.today) });
  const failed = report.diagnostics(withSunsetPolicy(result.diagnostics, options.failOnSunset));
  if (!failed) report.info(`canon lint: no errors in ${options.definitions}`);
  report.finish();
  return failed ? 1 : 0;
}
