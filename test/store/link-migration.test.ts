// An array of ids that becomes a relation (SPEC §12.3): the migration that creates its link table
// copies the ids of every record from the jsonb column, in order, then drops the column; applied
// twice it does nothing more. An id that names no record refuses it, naming the record and the id
// (dropping the column would lose the id), until the record is changed. On PGlite and on PostgreSQL.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Module = Record<string, any>;

const ids = {
  tagA: "01890a5d-ac96-774b-bcce-b302099a8001",
  tagB: "01890a5d-ac96-774b-bcce-b302099a8002",
  tagC: "01890a5d-ac96-774b-bcce-b302099a8003",
  topic: "01890a5d-ac96-774b-bcce-b302099a8004",
  first: "01890a5d-ac96-774b-bcce-b302099a8101",
  second: "01890a5d-ac96-774b-bcce-b302099a8102",
  unknown: "01890a5d-ac96-774b-bcce-b302099a8999",
};

describe("an array of ids moved to a link table", () => {
  let dir: string;
  let sql: string;

  before(() => {
    dir = workspace("link-migration", "test/fixtures/relations");
    sql = path.join(dir, "generated", "sql");
    const tickets = path.join(dir, "definitions", "tickets.yaml");
    const current = readFileSync(tickets, "utf8");
    // The old schema: arrays of uuids that reference nothing, kept as jsonb.
    writeFileSync(tickets, current.replace("items: { type: uuid, references: tags }", "items: { type: uuid }").replace(", list_under: true", "").replace("items: { type: uuid, references: topics, on_delete: cascade }", "items: { type: uuid }"));
    let run = canon(["generate"], dir);
    assert.equal(run.code, 0, run.stderr);
    // Released, as a store that already has rows at the old schema would be: the change is a second migration.
    run = canon(["release"], dir);
    assert.equal(run.code, 0, run.stderr);
    writeFileSync(tickets, current);
    // Repeated ids are refused from now on (uniqueItems): a break of the published v1 that this
    // test lets through, as a version that has not shipped would.
    run = canon(["generate", "--allow-breaking"], dir);
    assert.equal(run.code, 0, run.stderr);
  });

  test("the second migration creates both link tables and moves the data", () => {
    const files = readdirSync(sql).filter((n) => n.endsWith(".sql")).sort();
    assert.equal(files.length, 2);
    const text = readFileSync(path.join(sql, files[1]!), "utf8");
    assert.match(text, /create table if not exists "tickets__tag_ids"/);
    assert.match(text, /create table if not exists "tickets__topic_ids"/);
    assert.match(text, /"target_row_id" bigint not null constraint "tickets__topic_ids_target_row_id_fkey" references "topics" \("row_id"\) on delete cascade/);
    assert.match(text, /alter table "tickets" drop column "tag_ids";/);
  });

  for (const target of ["pglite", "postgres"] as const) {
    describe(`on ${target}`, () => {
      let schema: string | undefined;
      after(async () => {
        if (schema) await dropSchemas([schema]);
      });

      test("records migrated at the old schema keep their arrays, in order; applying again changes nothing", async () => {
        const mod = (await import(pathToFileURL(path.join(sql, "index.ts")).href)) as Module;
        const runtime = (await import(pathToFileURL(path.join(dir, "generated", "runtime", "sql-store.ts")).href)) as Module;
        let url = `pglite:${path.join(dir, `pglite-${target}`)}`;
        if (target === "postgres") {
          await preparePostgres();
          schema = freshSchema();
          url = POSTGRES_URL;
        }
        const files = runtime.readMigrations(mod.migrationsFolder) as Array<{ name: string; sql: string }>;
        const driver = await runtime.openDriver(url, schema ? { schema } : {});
        try {
          assert.equal((await runtime.migrate(driver, files.slice(0, 1))).length, 1);
          for (const [id, name] of [[ids.tagA, "a"], [ids.tagB, "b"], [ids.tagC, "c"]])
            await driver.query(`insert into tags (id, created_at, updated_at, name) values ($1, now(), now(), $2)`, [id, name]);
          await driver.query(`insert into topics (id, created_at, updated_at, name) values ($1, now(), now(), 't')`, [ids.topic]);
          // Out of order, a repeat and an id that names nothing (the old schema checked neither).
          await driver.query(
            `insert into tickets (id, created_at, updated_at, subject, tag_ids, topic_ids) values ($1, now(), now(), 'one', $2::jsonb, $3::jsonb)`,
            [ids.first, JSON.stringify([ids.tagC, ids.tagA, ids.unknown, ids.tagB, ids.tagA]), JSON.stringify([ids.topic])],
          );
          await driver.query(
            `insert into tickets (id, created_at, updated_at, subject, tag_ids) values ($1, now(), now(), 'two', '[]'::jsonb)`,
            [ids.second],
          );
          // An id that names no record would be lost with the column: the migration refuses, naming it, and applies nothing.
          await assert.rejects(runtime.migrate(driver, files), (error: Error) => {
            assert.equal(
              error.message,
              `migration ${files[1]!.name} failed, and nothing of it was applied: tickets.tag_ids becomes a relation to tags, and record ${ids.first} names ${ids.unknown}, which is no record of tags: remove that id from the records that hold it (or create the record it names), then start again`,
            );
            return true;
          });
          const kept = await driver.query(`select "tag_ids" from tickets where id = $1`, [ids.first]);
          assert.deepEqual(kept[0]!.tag_ids, [ids.tagC, ids.tagA, ids.unknown, ids.tagB, ids.tagA]);
          assert.deepEqual(await driver.query(`select to_regclass('tickets__tag_ids') is null as gone`), [{ gone: true }]);
          await driver.query(`update tickets set tag_ids = tag_ids - $1::text where id = $2`, [ids.unknown, ids.first]);
          assert.deepEqual(await runtime.migrate(driver, files), [files[1]!.name]);
          for (const file of files) await driver.exec(file.sql);
          const store = await mod.storeOn(driver, url);
          const first = await store.get("tickets", ids.first);
          assert.deepEqual(first.values.tag_ids, [ids.tagC, ids.tagA, ids.tagB], "in order; the repeat left out");
          assert.deepEqual(first.values.topic_ids, [ids.topic]);
          assert.deepEqual((await store.get("tickets", ids.second)).values.tag_ids, []);
          const columns = await driver.query(
            `select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'tickets' and column_name in ('tag_ids', 'topic_ids')`,
          );
          assert.deepEqual(columns, []);
          const under = await store.list("tickets", { where: {}, contains: { field: "tag_ids", id: ids.tagB }, limit: 10 });
          assert.deepEqual(under.records.map((r: Module) => r.id), [ids.first]);
        } finally {
          await driver.close();
        }
      });
    });
  }
});
