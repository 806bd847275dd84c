// A map's item type and `max_items` changed on a database that holds maps: the migration verifies
// every stored map against the new limits (SPEC §12.6), refusing, naming the table, the field, the
// record and its value, a map that breaks them, and applies nothing (was: no migration was written,
// and strings under `items: integer`, 2 keys under `max_items: 1`, were served and written back).
// The map's check keeps them from then on. The same for an array's item type and max_items, and a
// string's max_length. On PGlite and on PostgreSQL.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { migrate, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, workspace } from "../support/cli.ts";
import { assertSameAsFresh } from "./catalog.ts";
import { dropSchemas, emptyDriver } from "./stores.ts";

const API = "title: Map API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: { draft: true }\n";
const BEFORE = "resource: items\nfields:\n  labels: { type: map, items: { type: string, max_length: 10 }, max_items: 5 }\n";
const AFTER = "resource: items\nfields:\n  labels: { type: map, items: { type: integer, minimum: 0 }, max_items: 1 }\n";

const good = "01900000-0000-7000-8000-000000000001";
const bad = "01900000-0000-7000-8000-000000000002";

const insert = (db: SqlDriver, id: string, labels: string) =>
  db.exec(`insert into "items" ("id", "created_at", "updated_at", "labels") values ('${id}', now(), now(), '${labels}')`);

for (const target of ["pglite", "postgres"] as const) {
  describe(`a map's item type and max_items tightened, on ${target}`, () => {
    const schemas: string[] = [];
    after(() => dropSchemas(schemas));

    test("every stored map is verified: one that breaks the new limits is refused naming the record and its value; nothing applies until it changes", async () => {
      const dir = workspace(`map-limits-${target}`);
      mkdirSync(path.join(dir, "definitions"));
      writeFileSync(path.join(dir, "definitions", "api.yaml"), API);
      writeFileSync(path.join(dir, "definitions", "items.yaml"), BEFORE);
      for (const command of ["generate", "release"]) {
        const run = canon([command], dir);
        assert.equal(run.code, 0, run.stdout + run.stderr);
      }
      const sql = path.join(dir, "generated", "sql");
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        // The check keeps the item type and its length from the start.
        await assert.rejects(insert(db, bad, '{"a": "01234567890"}'), /items_labels_check/);
        await assert.rejects(insert(db, bad, '{"a": 1}'), /items_labels_check/);
        await insert(db, good, '{"a": "0123456789"}');
        await insert(db, bad, '{"a": "x", "b": "yy"}');
        await db.exec(`update "items" set "labels" = '{"a": "0"}' where "id" = '${good}'`);
        writeFileSync(path.join(dir, "definitions", "items.yaml"), AFTER);
        for (const command of [["generate", "--allow-breaking"], ["release"]]) {
          const run = canon(command, dir);
          assert.equal(run.code, 0, run.stdout + run.stderr);
        }
        assert.equal(readMigrations(sql).length, 2, "the change writes a migration");
        // A value can change only to what both the old and the new limits take (here: no key), or
        // the record be deleted: the old check holds until the migration applies.
        const refusals: Array<[RegExp, string]> = [
          [/items\.labels cannot take its new limits: record 01900000-0000-7000-8000-000000000001 holds \{"a": "0"\}/, `update "items" set "labels" = '{}' where "id" = '${good}'`],
          [/items\.labels cannot take its new limits: record 01900000-0000-7000-8000-000000000002 holds \{"a": "x", "b": "yy"\}/, `update "items" set "labels" = '{}' where "id" = '${bad}'`],
        ];
        for (const [message, fix] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0002_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            assert.match(error.message, /change the records that hold such values \(or loosen the limits\), then start again/);
            return true;
          });
          await db.exec(fix);
        }
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        assert.deepEqual(await db.query(`select "labels"::text as labels from "items" order by "id"`), [{ labels: "{}" }, { labels: "{}" }]);
        await assert.rejects(insert(db, "01900000-0000-7000-8000-000000000003", '{"a": "x"}'), /items_labels_check/);
        await assert.rejects(insert(db, "01900000-0000-7000-8000-000000000003", '{"a": 1, "b": 2}'), /items_labels_check/);
        await assert.rejects(insert(db, "01900000-0000-7000-8000-000000000003", '{"a": 1.5}'), /items_labels_check/);
        await assert.rejects(insert(db, "01900000-0000-7000-8000-000000000003", '{"a": -1}'), /items_labels_check/);
        await insert(db, "01900000-0000-7000-8000-000000000003", '{"a": 7}');
        // Applied again (a migration may be), the refusal passes.
        for (const file of readMigrations(sql)) await db.exec(file.sql);
      } finally {
        await db.close();
      }
    });

    test("an array's item type and max_items, and a string's max_length, tightened: the record that breaks them is named", async () => {
      const dir = workspace(`array-limits-${target}`);
      mkdirSync(path.join(dir, "definitions"));
      writeFileSync(path.join(dir, "definitions", "api.yaml"), API);
      writeFileSync(path.join(dir, "definitions", "items.yaml"), "resource: items\nfields:\n  tags: { type: array, items: { type: string }, max_items: 5 }\n  code: { type: string, max_length: 20 }\n");
      for (const command of ["generate", "release"]) {
        const run = canon([command], dir);
        assert.equal(run.code, 0, run.stdout + run.stderr);
      }
      const sql = path.join(dir, "generated", "sql");
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "tags", "code") values ('${good}', now(), now(), '[]', 'abc'), ('${bad}', now(), now(), '["x", "y"]', 'abcdef')`);
        writeFileSync(path.join(dir, "definitions", "items.yaml"), "resource: items\nfields:\n  tags: { type: array, items: { type: integer }, max_items: 1 }\n  code: { type: string, max_length: 3 }\n");
        for (const command of [["generate", "--allow-breaking"], ["release"]]) {
          const run = canon(command, dir);
          assert.equal(run.code, 0, run.stdout + run.stderr);
        }
        const refusals: Array<[RegExp, string]> = [
          [/items\.tags cannot take its new limits: record 01900000-0000-7000-8000-000000000002 holds \["x", "y"\]/, `"tags" = '[]'`],
          [/items\.code cannot take its new limits: record 01900000-0000-7000-8000-000000000002 holds abcdef/, `"code" = 'abc'`],
        ];
        for (const [message, fix] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0002_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            return true;
          });
          await db.exec(`update "items" set ${fix} where "id" = '${bad}'`);
        }
        await migrate(db, readMigrations(sql));
        await assert.rejects(db.exec(`update "items" set "tags" = '["x"]' where "id" = '${bad}'`), /items_tags_check/);
        await db.exec(`update "items" set "tags" = '[1]' where "id" = '${bad}'`);
      } finally {
        await db.close();
      }
    });
  });
}
