// A project of one resource, `items`, in a workspace: generated and released, then changed (in
// its draft version) and released again, as the migration tests of decimals kept in JSON use it.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, workspace } from "../support/cli.ts";

/** A project with `api` and `items.yaml` holding `definition`, generated and released: its folder and its migrations' folder. */
export function itemsProject(name: string, api: string, definition: string): { dir: string; sql: string } {
  const dir = workspace(name);
  mkdirSync(path.join(dir, "definitions"));
  writeFileSync(path.join(dir, "definitions", "api.yaml"), api);
  writeFileSync(path.join(dir, "definitions", "items.yaml"), definition);
  for (const command of ["generate", "release"]) {
    const run = canon([command], dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  }
  return { dir, sql: path.join(dir, "generated", "sql") };
}

/** `items.yaml` given `definition`, generated (in the draft version) and released. */
export function changeItems(dir: string, definition: string): void {
  writeFileSync(path.join(dir, "definitions", "items.yaml"), definition);
  for (const command of [["generate", "--allow-breaking"], ["release"]]) {
    const run = canon(command, dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  }
}

/** The check constraints of the table `items`, by name. */
export const itemChecks = (db: SqlDriver) =>
  db.query(`select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = 'items'::regclass and contype = 'c' order by conname`);
