// A field that may be absent and null is kept wrapped in JSON (`jsonb`), so a type change between
// number, integer and decimal changes only its check there, not its column type: its values must
// change their JSON form. A number made a decimal becomes a JSON string in canonical form (`scale`
// fraction digits), a decimal made a number a JSON number; a value the new type would not keep
// exactly refuses the migration, naming the table, the field, the record and its value, and nothing
// applies (was: every populated table failed the new check, "violated by some row"). On PGlite and
// on PostgreSQL.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { migrate, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, workspace } from "../support/cli.ts";
import { assertSameAsFresh } from "./catalog.ts";
import { dropSchemas, emptyDriver } from "./stores.ts";

const API = "title: Rewrap API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: { draft: true }\n";
const BEFORE = [
  "resource: items",
  "fields:",
  "  weight: { type: number, optional: true, nullable: true }",
  "  price: { type: decimal, precision: 10, scale: 2, optional: true, nullable: true }",
  "  level: { type: number, optional: true, nullable: true }",
  "",
].join("\n");
const AFTER = [
  "resource: items",
  "fields:",
  "  weight: { type: decimal, precision: 10, scale: 4, optional: true, nullable: true }",
  "  price: { type: number, optional: true, nullable: true }",
  "  level: { type: integer, optional: true, nullable: true }",
  "",
].join("\n");

const ids = ["01900000-0000-7000-8000-000000000001", "01900000-0000-7000-8000-000000000002", "01900000-0000-7000-8000-000000000003", "01900000-0000-7000-8000-000000000004"];

function project(name: string): { dir: string; sql: string } {
  const dir = workspace(name);
  mkdirSync(path.join(dir, "definitions"));
  writeFileSync(path.join(dir, "definitions", "api.yaml"), API);
  writeFileSync(path.join(dir, "definitions", "items.yaml"), BEFORE);
  for (const command of ["generate", "release"]) {
    const run = canon([command], dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  }
  return { dir, sql: path.join(dir, "generated", "sql") };
}

const checks = (db: SqlDriver) =>
  db.query(`select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = 'items'::regclass and contype = 'c' order by conname`);

for (const target of ["pglite", "postgres"] as const) {
  describe(`a wrapped number made a decimal (and back), on ${target}`, () => {
    const schemas: string[] = [];
    after(() => dropSchemas(schemas));

    test("values that fit change their JSON form; one that does not is refused naming the record; nothing applies until it is changed", async () => {
      const { dir, sql } = project(`rewrap-${target}`);
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "weight", "price", "level") values
          ('${ids[0]}', now(), now(), '1.2345', '"12.50"', '3'),
          ('${ids[1]}', now(), now(), '0.5', '"-0.10"', '2.0'),
          ('${ids[2]}', now(), now(), 'null', 'null', 'null'),
          ('${ids[3]}', now(), now(), null, null, null)`);
        writeFileSync(path.join(dir, "definitions", "items.yaml"), AFTER);
        for (const command of [["generate", "--allow-breaking"], ["release"]]) {
          const run = canon(command, dir);
          assert.equal(run.code, 0, run.stdout + run.stderr);
        }
        const before = await checks(db);
        await db.exec(`update "items" set "weight" = '1.23456', "level" = '2.5' where "id" = '${ids[1]}'`);
        const refusals: Array<[RegExp, string]> = [
          [/items\.weight cannot become numeric\(10, 4\): record 01900000-0000-7000-8000-000000000002 holds 1\.23456, which numeric\(10, 4\) cannot keep exactly/, `"weight" = '0.5'`],
          [/items\.level cannot become bigint: record 01900000-0000-7000-8000-000000000002 holds 2\.5, which is not an integer/, `"level" = '2'`],
        ];
        for (const [message, fix] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0002_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            return true;
          });
          assert.deepEqual(await checks(db), before, "nothing of the migration was applied");
          await db.exec(`update "items" set ${fix} where "id" = '${ids[1]}'`);
        }
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        const rows = async () =>
          db.query(`select "weight"::text as weight, "price"::text as price, "level"::text as level from "items" order by "id"`);
        const expected = [
          { weight: '"1.2345"', price: "12.50", level: "3" },
          { weight: '"0.5000"', price: "-0.10", level: "2" },
          { weight: "null", price: "null", level: "null" },
          { weight: null, price: null, level: null },
        ];
        assert.deepEqual(await rows(), expected);
        // Applied again (a migration may be), it changes nothing.
        for (const file of readMigrations(sql)) await db.exec(file.sql);
        assert.deepEqual(await rows(), expected);
      } finally {
        await db.close();
      }
    });
  });
}
