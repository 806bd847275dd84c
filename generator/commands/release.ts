import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Reporter } from "../cli/output.ts";
import { generateAndReport, type OutputOptions } from "./generate.ts";

/**
 * `canon release`: freezes the pending migration (`sql/NNNN_pending.sql`, which `generate` and
 * `dev` write again on every change) under its released name, `NNNN_<what it does>.sql`: from then
 * on it never changes, and the next change of the definitions starts a new pending migration.
 * Generates first, so that what is frozen is what the definitions want now.
 */
export async function releaseCommand(options: OutputOptions): Promise<number> {
  const report = new Reporter(options.format);
  const generated = await generateAndReport(options, { report });
  if (generated.code !== 0) {
    report.finish();
    return generated.code;
  }
  const { PENDING_FILE, releasedMigration } = await import("../emit/sql/index.ts");
  const sql = path.join(options.out, "sql");
  const pending = existsSync(sql) ? readdirSync(sql).filter((n) => PENDING_FILE.test(n)) : [];
  if (pending.length === 0) {
    report.info(`canon release: nothing to release: ${options.out}/sql has no pending migration`);
    report.finish();
    return 0;
  }
  const name = pending[0]!;
  const frozen = releasedMigration(readFileSync(path.join(sql, name), "utf8"));
  if (!frozen) {
    report.error(`canon release: ${options.out}/sql/${name} is not a pending migration canon wrote: run canon generate, then canon release`);
    report.finish();
    return 1;
  }
  const snapshotFile = path.join(sql, "schema.json");
  const snapshot = JSON.parse(readFileSync(snapshotFile, "utf8")) as { migrations?: string[] };
  snapshot.migrations = (snapshot.migrations ?? []).map((n) => (n === name ? frozen.name : n));
  writeFileSync(path.join(sql, name), frozen.text);
  renameSync(path.join(sql, name), path.join(sql, frozen.name));
  writeFileSync(snapshotFile, `${JSON.stringify(snapshot, null, 2)}\n`);
  report.info(`canon release: ${options.out}/sql/${name} is released as ${options.out}/sql/${frozen.name}: it never changes from now on; commit ${options.out}/sql`);
  report.finish();
  return 0;
}
