// A schema you can trust (issue 28.3): the migrations in sql/, replayed from an empty database,
// create exactly the schema sql/schema.json describes. Migrations deleted, edited or reordered
// are each either repaired by `canon generate` (and the repaired migrations then create that
// schema on real PostgreSQL, PGlite) or refused by `canon check` with its fix; never a 500 at
// run time on a new database.
import assert from "node:assert/strict";
import { cpSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { migrationBetween } from "../../generator/emit/sql/diff.ts";
import type { SchemaSnapshot } from "../../generator/emit/sql/snapshot.ts";
import { migrate, openDriver, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, repoRoot, workspace } from "../support/cli.ts";
import { catalog } from "./catalog.ts";

/** The showcase with its committed output: released migrations 0001–0008. */
function showcase(name: string): { dir: string; sql: string } {
  const dir = workspace(name, "definitions");
  cpSync(path.join(repoRoot, "generated"), path.join(dir, "generated"), { recursive: true });
  return { dir, sql: path.join(dir, "generated", "sql") };
}

const migrations = (sql: string) => readdirSync(sql).filter((n) => /^\d{4}_.*\.sql$/.test(n)).sort();

/** Tables, columns, constraints and indexes of the current schema, as PostgreSQL prints them. */
/** The migrations of `sql`, applied to an empty PGlite, create what schema.json describes (as one migration from nothing would). */
async function assertMigrationsCreateSnapshot(sql: string): Promise<void> {
  const snapshot = JSON.parse(readFileSync(path.join(sql, "schema.json"), "utf8")) as SchemaSnapshot;
  const replayed = await openDriver("pglite:memory://");
  const direct = await openDriver("pglite:memory://");
  try {
    await migrate(replayed, readMigrations(sql));
    await direct.exec(migrationBetween(null, snapshot)!.statements.join("\n"));
    const created = await catalog(replayed);
    assert.ok(created.length > 100, created.join("\n"));
    assert.deepEqual(created, await catalog(direct));
  } finally {
    await replayed.close();
    await direct.close();
  }
}

function assertCheckFails(dir: string, pattern: RegExp): void {
  const check = canon(["check"], dir);
  assert.equal(check.code, 1, check.stdout + check.stderr);
  assert.match(check.stderr, pattern);
  assert.doesNotMatch(check.stderr, /unexpected failure/);
}

function assertRepaired(dir: string): void {
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const check = canon(["check"], dir);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  // Byte-deterministic: a second run writes nothing.
  assert.match(canon(["generate"], dir).stdout, /up to date/);
}

describe("migrations that create exactly schema.json", () => {
  test("the committed showcase: its migrations create its schema.json", async () => {
    await assertMigrationsCreateSnapshot(path.join(repoRoot, "generated", "sql"));
  });

  test("squashed by deleting 0002–0007: check refuses, generate consolidates them into the next migration", async () => {
    const { dir, sql } = showcase("trust-squash");
    for (const name of migrations(sql).filter((n) => /^000[2-7]_/.test(n))) rmSync(path.join(sql, name));
    assertCheckFails(dir, /missing  generated\/sql\/\d{4}_[a-z0-9_]+\.sql[\s\S]*fix: run canon generate/);
    assertRepaired(dir);
    const names = migrations(sql);
    // 0001 and 0008 still apply; a later migration that altered a table 0002–0007 created is left out of the repair's base.
    assert.deepEqual(names.slice(0, 2), ["0001_initial.sql", "0008_create_canon_idempotency_keys.sql"]);
    assert.ok(Number(names.at(-1)!.slice(0, 4)) > 8, names.join(", "));
    const repair = readFileSync(path.join(sql, names.at(-1)!), "utf8");
    assert.match(repair, /-- It also repairs the migrations before it[^\n]*\n-- 0002_create_canon_exports\.sql, .* were deleted/);
    assert.match(repair, /alter table "invoices" add column if not exists "number"/);
    assert.deepEqual(JSON.parse(readFileSync(path.join(sql, "schema.json"), "utf8")).migrations, names);
    await assertMigrationsCreateSnapshot(sql);
  });

  test("the last migration deleted: generate writes it again", async () => {
    const { dir, sql } = showcase("trust-tail");
    const name = migrations(sql).at(-1)!;
    const last = readFileSync(path.join(sql, name), "utf8");
    rmSync(path.join(sql, name));
    const pending = `${name.slice(0, 4)}_pending.sql`;
    assertCheckFails(dir, new RegExp(`missing  generated/sql/${pending.replace(/\./g, "\\.")}`));
    assertRepaired(dir);
    // Written again as a pending migration; released, it is the deleted one with a note.
    const release = canon(["release"], dir);
    assert.equal(release.code, 0, release.stderr);
    const restored = readFileSync(path.join(sql, name), "utf8");
    assert.equal(restored.replace(/-- It also repairs[^\n]*\n[^\n]*\n/, ""), last);
    assert.equal(canon(["check"], dir).code, 0);
    await assertMigrationsCreateSnapshot(sql);
  });

  test("a statement deleted from a migration: check refuses, generate adds a migration that makes up for it", async () => {
    const { dir, sql } = showcase("trust-edit");
    const file = path.join(sql, "0006_add_canon_exports_sort.sql");
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/^alter table "canon__exports" add column if not exists "sort".*\n/m, ""));
    assert.notEqual(readFileSync(file, "utf8"), text);
    const next = String(Number(migrations(sql).at(-1)!.slice(0, 4)) + 1).padStart(4, "0");
    assertCheckFails(dir, new RegExp(`missing  generated/sql/${next}_pending\\.sql`));
    assertRepaired(dir);
    assert.match(
      readFileSync(path.join(sql, `${next}_pending.sql`), "utf8"),
      new RegExp(`to be released as ${next}_add_canon_exports_sort\\.sql[\\s\\S]*they did not create the schema sql/schema\\.json described`),
    );
    await assertMigrationsCreateSnapshot(sql);
  });

  test("a comment added to a migration changes nothing", () => {
    const { dir, sql } = showcase("trust-comment");
    writeFileSync(path.join(sql, "0003_create_canon_export_chunks.sql"), `${readFileSync(path.join(sql, "0003_create_canon_export_chunks.sql"), "utf8")}-- ours\n`);
    const check = canon(["check"], dir);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });

  test("two migrations swapped: check refuses, generate consolidates from the first one that cannot apply", async () => {
    const { dir, sql } = showcase("trust-reorder");
    const a = path.join(sql, "0002_create_canon_exports.sql");
    const b = path.join(sql, "0003_create_canon_export_chunks.sql");
    const textA = readFileSync(a, "utf8");
    writeFileSync(a, readFileSync(b, "utf8"));
    writeFileSync(b, textA);
    assertCheckFails(dir, /stale    generated\/sql\/0002_create_canon_exports\.sql/);
    assertRepaired(dir);
    const names = migrations(sql);
    assert.equal(names[0], "0001_initial.sql");
    assert.match(readFileSync(path.join(sql, names[1]!), "utf8"), /0002_create_canon_exports\.sql, .* could not apply after the migrations before \(sql\/0002_create_canon_exports\.sql line \d+: canon__export_chunks references table canon__exports, which no migration before it creates\)/);
    await assertMigrationsCreateSnapshot(sql);
  });

  test("a statement canon cannot read: generate and check refuse in one line with the fix", () => {
    const { dir, sql } = showcase("trust-foreign");
    writeFileSync(path.join(sql, "0004_alter_orders_code_and_index_orders_code_key_and_more.sql"), "create index foo on bar (x);\n", { flag: "a" });
    for (const command of ["check", "generate"]) {
      const run = canon([command], dir);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(
        run.stderr,
        new RegExp(`^canon ${command}: refused: sql/0004_\\S+ line \\d+: canon cannot read \`create index foo on bar \\(x\\);\`: .*git checkout -- generated/sql/0004_`, "m"),
      );
    }
  });

  test("a migration renamed out of order is stale; what it created comes back in a repair", async () => {
    const { dir, sql } = showcase("trust-rename");
    renameSync(path.join(sql, "0005_create_canon_cursor_keys_and_create_canon_events.sql"), path.join(sql, "0010_create_canon_cursor_keys_and_create_canon_events.sql"));
    assertCheckFails(dir, /stale    generated\/sql\/0010_/);
    assertRepaired(dir);
    assert.ok(!migrations(sql).includes("0010_create_canon_cursor_keys_and_create_canon_events.sql"));
    await assertMigrationsCreateSnapshot(sql);
  });
});
