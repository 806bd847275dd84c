// A project whose migrations were released before the tenant column led the indexes of its
// references (SPEC §12.4, issue 25): `canon generate` writes a new pending migration that creates
// each (tenant, reference, id) index and its statistics and gathers them; the (reference, id)
// index stays (the foreign key's checks, cascades and the platform's lists use it), and so does
// the released migration, byte for byte. The database that applied the released one catches up,
// rows kept, on PGlite and PostgreSQL, and ends as a fresh one. And a dev store brought to a
// pending migration taken back loses the statistics it created.
import assert from "node:assert/strict";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { migrate, openDriver, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

/** The (reference, tenant) pairs of the tenancy fixture: an index and statistics each. */
const REFERENCES = [
  ["tickets", "assignee_id"],
  ["comments", "ticket_id"],
] as const;

const migrationFiles = (sql: string) => readdirSync(sql).filter((n) => /^\d{4}_.*\.sql$/.test(n)).sort();

/**
 * The released migration and schema.json as canon wrote them before (main until this change, the
 * very text a project committed then): `(reference, id)` indexes only, no statistics.
 */
function asReleasedBefore(sql: string): void {
  const [initial] = migrationFiles(sql);
  const file = path.join(sql, initial!);
  let text = readFileSync(file, "utf8");
  const snapshot = JSON.parse(readFileSync(path.join(sql, "schema.json"), "utf8"));
  for (const [table, column] of REFERENCES) {
    const kept = `create index if not exists "${table}_${column}_id_idx" on "${table}" using btree ("${column}", "id");\n`;
    assert.ok(text.includes(kept), kept);
    for (const statement of [
      `create index if not exists "${table}_organization_id_${column}_id_idx" on "${table}" using btree ("organization_id", "${column}", "id");\n`,
      `create statistics if not exists "${table}_organization_id_${column}_stat" (dependencies) on "organization_id", "${column}" from "${table}";\n`,
    ]) {
      assert.ok(text.includes(statement), statement);
      text = text.replace(statement, "");
    }
    const entry = snapshot.tables.find((t: { name: string }) => t.name === table);
    entry.indexes = entry.indexes.filter((i: { name: string }) => i.name !== `${table}_organization_id_${column}_id_idx`);
    delete entry.statistics;
  }
  // A blank line follows each statement: the one left where a removed statement was goes too.
  writeFileSync(file, text.replace(/\n\n\n+/g, "\n\n"));
  writeFileSync(path.join(sql, "schema.json"), `${JSON.stringify(snapshot, null, 2)}\n`);
}

/** The indexes and extended statistics of the current schema, as PostgreSQL prints them (without the schema's name). */
async function catalog(db: SqlDriver): Promise<string[]> {
  const indexes = await db.query(`select indexname as n, indexdef as def from pg_indexes where schemaname = current_schema() and tablename <> 'canon_migrations'`);
  const statistics = await db.query(`select stxname as n, pg_get_statisticsobjdef(oid) as def from pg_statistic_ext where stxnamespace = current_schema()::regnamespace`);
  const entries = [...indexes.map((r) => `index ${r.n} ${r.def}`), ...statistics.map((r) => `statistics ${r.n} ${r.def}`)];
  const [{ schema }] = await db.query("select current_schema() as schema");
  return entries.map((e) => e.replaceAll(`${schema}.`, "")).sort();
}

describe("the tenant in a released project's reference indexes", () => {
  let dir: string;
  let sql: string;
  let released: string;
  let pending: string;
  before(() => {
    dir = workspace("tenant-index-migration", "test/fixtures/tenancy");
    sql = path.join(dir, "generated", "sql");
    assert.equal(canon(["generate"], dir).code, 0);
    const release = canon(["release"], dir);
    assert.equal(release.code, 0, release.stderr);
    asReleasedBefore(sql);
    released = readFileSync(path.join(sql, "0001_initial.sql"), "utf8");
  });

  test("generate writes a new pending migration: the (tenant, reference, id) indexes and their statistics, gathered; nothing dropped; the released one stays", () => {
    const run = canon(["generate"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(migrationFiles(sql), ["0001_initial.sql", "0002_pending.sql"]);
    assert.equal(readFileSync(path.join(sql, "0001_initial.sql"), "utf8"), released);
    pending = readFileSync(path.join(sql, "0002_pending.sql"), "utf8");
    const statements = pending.split("\n").filter((l) => l && !l.startsWith("--"));
    // Per table: the new index, then the statistics, gathered. The (reference, id) index stays.
    assert.deepEqual(statements, [
      `create index if not exists "comments_organization_id_ticket_id_id_idx" on "comments" using btree ("organization_id", "ticket_id", "id");`,
      `create statistics if not exists "comments_organization_id_ticket_id_stat" (dependencies) on "organization_id", "ticket_id" from "comments";`,
      `analyze "comments";`,
      `create index if not exists "tickets_organization_id_assignee_id_id_idx" on "tickets" using btree ("organization_id", "assignee_id", "id");`,
      `create statistics if not exists "tickets_organization_id_assignee_id_stat" (dependencies) on "organization_id", "assignee_id" from "tickets";`,
      `analyze "tickets";`,
    ]);
    assert.match(pending, /to be released as 0002_index_comments_organization_id_ticket_id_id_idx_and_more\.sql/);
    const check = canon(["check"], dir);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(canon(["generate"], dir).stdout, /up to date/);
  });

  for (const target of ["pglite", "postgres"] as const) {
    describe(`applied on ${target}`, () => {
      let schema: string | undefined;
      let url: string;
      before(async () => {
        if (target === "pglite") url = "pglite:memory://";
        else {
          await preparePostgres();
          schema = freshSchema("canon_tenant_index_migration");
          url = POSTGRES_URL;
        }
      });
      after(async () => {
        if (schema) await dropSchemas([schema]);
      });

      test("a database of the released migration catches up, rows kept, with the indexes and statistics of a fresh one", async () => {
        assert.ok(pending, "the pending migration was written");
        const files = readMigrations(sql);
        const db = await openDriver(url, schema ? { schema } : {});
        const fresh = await openDriver("pglite:memory://");
        try {
          assert.deepEqual(await migrate(db, files.slice(0, 1)), ["0001_initial"]);
          const before = await catalog(db);
          assert.ok(before.some((e) => e.startsWith("index tickets_assignee_id_id_idx ")), before.join("\n"));
          assert.ok(!before.some((e) => e.startsWith("index tickets_organization_id_assignee_id_id_idx ")), before.join("\n"));
          await db.exec(`insert into "organizations" ("id", "created_at", "updated_at", "name") values ('01900000-0000-7000-8000-000000000001', now(), now(), 'Acme');
            insert into "agents" ("id", "created_at", "updated_at", "organization_id", "name", "email") values ('01900000-0000-7000-8000-000000000002', now(), now(), '01900000-0000-7000-8000-000000000001', 'Ann', 'ann@example.com');
            insert into "tickets" ("id", "created_at", "updated_at", "organization_id", "subject", "assignee_id")
              select gen_random_uuid(), now(), now(), '01900000-0000-7000-8000-000000000001', 's' || n, '01900000-0000-7000-8000-000000000002' from generate_series(1, 50) n;`);

          assert.deepEqual(await migrate(db, files), ["0002_pending"]);
          assert.deepEqual(await migrate(db, files), []);
          const now = await catalog(db);
          await migrate(fresh, files);
          assert.deepEqual(now, await catalog(fresh));
          assert.ok(now.includes("index tickets_organization_id_assignee_id_id_idx CREATE INDEX tickets_organization_id_assignee_id_id_idx ON tickets USING btree (organization_id, assignee_id, id)"), now.join("\n"));
          // (PostgreSQL names the columns of statistics in the table's order: ticket_id is the first column of comments.)
          assert.ok(now.includes("statistics comments_organization_id_ticket_id_stat CREATE STATISTICS comments_organization_id_ticket_id_stat (dependencies) ON ticket_id, organization_id FROM comments"), now.join("\n"));
          // The (reference, id) indexes of the released migration are still there, as in a fresh database.
          assert.ok(now.includes("index tickets_assignee_id_id_idx CREATE INDEX tickets_assignee_id_id_idx ON tickets USING btree (assignee_id, id)"), now.join("\n"));
          assert.ok(now.includes("index comments_ticket_id_id_idx CREATE INDEX comments_ticket_id_id_idx ON comments USING btree (ticket_id, id)"), now.join("\n"));
          assert.equal((await db.query(`select count(*)::int as n from "tickets"`))[0]!.n, 50);
          // The migration analyzed the table: its statistics hold the dependency already.
          const [measured] = await db.query(
            `select d.stxddependencies::text as deps from pg_statistic_ext s join pg_statistic_ext_data d on d.stxoid = s.oid where s.stxname = 'tickets_organization_id_assignee_id_stat'`,
          );
          assert.ok(measured?.deps, "the statistics were gathered");
          // Each file may be applied again.
          for (const file of files) await db.exec(file.sql);
          assert.deepEqual(await catalog(db), now);
        } finally {
          await db.close();
          await fresh.close();
        }
      });
    });
  }
});

test("a dev store brought to a pending migration taken back drops the statistics and index it created", async () => {
  const dir = workspace("tenant-index-pending", "test/fixtures/tenancy");
  const sql = path.join(dir, "generated", "sql");
  const comments = path.join(dir, "definitions", "comments.yaml");
  const original = readFileSync(comments, "utf8");
  assert.equal(canon(["generate"], dir).code, 0);
  assert.equal(canon(["release"], dir).code, 0);
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, readMigrations(sql)), ["0001_initial"]);
    const released = await catalog(db);
    appendFileSync(comments, "  author_id: { type: uuid, references: agents, optional: true }\n");
    assert.equal(canon(["generate"], dir).code, 0);
    const text = readFileSync(path.join(sql, "0002_pending.sql"), "utf8");
    assert.match(text, /create statistics if not exists "comments_organization_id_author_id_stat" \(dependencies\) on "organization_id", "author_id" from "comments";\n\nanalyze "comments";/);
    assert.deepEqual(await migrate(db, readMigrations(sql)), ["0002_pending"]);
    assert.ok((await catalog(db)).some((e) => e.startsWith("statistics comments_organization_id_author_id_stat ")));
    writeFileSync(comments, original);
    assert.equal(canon(["generate", "--allow-breaking"], dir).code, 0);
    assert.deepEqual(migrationFiles(sql), ["0001_initial.sql"]);
    assert.deepEqual(await migrate(db, readMigrations(sql)), []);
    assert.deepEqual(await catalog(db), released);
  } finally {
    await db.close();
  }
});
