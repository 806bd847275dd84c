// A field's type changed on a database that holds rows, where PostgreSQL's cast would change a value:
// a number, a decimal of a larger scale, an integer or a string made a `decimal` of fewer digits (the
// cast rounds `1.2345` to `1.23`, `1e-7` to `0.00`, and fails on `abc` or on too many integer digits
// without naming the column), a number made an integer (`2.5` became `3`). The migration refuses,
// naming the table, the field, a record and its value, and applies nothing; once the records are
// changed it applies and every value is kept exactly. On PGlite and on PostgreSQL.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { migrate, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, workspace } from "../support/cli.ts";
import { assertSameAsFresh } from "./catalog.ts";
import { dropSchemas, emptyDriver } from "./stores.ts";

const API = "title: Exact API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: { draft: true }\n";
const BEFORE = [
  "resource: items",
  "fields:",
  "  ratio: { type: number }",
  "  price: { type: decimal, precision: 12, scale: 4 }",
  "  qty: { type: integer }",
  "  code: { type: string, max_length: 20 }",
  "  amount: { type: number }",
  "",
].join("\n");
const AFTER = [
  "resource: items",
  "fields:",
  "  ratio: { type: decimal, precision: 10, scale: 2 }",
  "  price: { type: decimal, precision: 10, scale: 2 }",
  "  qty: { type: decimal, precision: 10, scale: 2 }",
  "  code: { type: decimal, precision: 10, scale: 2 }",
  "  amount: { type: integer }",
  "",
].join("\n");

const good = "01900000-0000-7000-8000-000000000001";
const bad = "01900000-0000-7000-8000-000000000002";

function project(name: string): { dir: string; sql: string } {
  const dir = workspace(name);
  mkdirSync(path.join(dir, "definitions"));
  const write = (file: string, text: string) => writeFileSync(path.join(dir, "definitions", file), text);
  write("api.yaml", API);
  write("items.yaml", BEFORE);
  for (const command of ["generate", "release"]) {
    const run = canon([command], dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  }
  return { dir, sql: path.join(dir, "generated", "sql"), write } as never;
}

const columnTypes = (db: SqlDriver) =>
  db.query(
    `select column_name as c, data_type as t from information_schema.columns where table_schema = current_schema() and table_name = 'items' and column_name in ('ratio', 'price', 'qty', 'code', 'amount') order by column_name`,
  );

for (const target of ["pglite", "postgres"] as const) {
  describe(`a type change that would change values, on ${target}`, () => {
    const schemas: string[] = [];
    after(() => dropSchemas(schemas));

    test("is refused naming the table, the field, the record and its value; nothing is applied; once the records change every value is kept exactly", async () => {
      const { dir, sql } = project(`exact-retype-${target}`);
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "ratio", "price", "qty", "code", "amount") values
          ('${good}', now(), now(), 0.5, 1.5, 5, '12.5', 3),
          ('${bad}', now(), now(), 1e-7, 1.2345, 123456789012, 'abc', 2.5)`);
        writeFileSync(path.join(dir, "definitions", "items.yaml"), AFTER);
        for (const command of [["generate", "--allow-breaking"], ["release"]]) {
          const run = canon(command, dir);
          assert.equal(run.code, 0, run.stdout + run.stderr);
        }
        const types = await columnTypes(db);
        // Each field in turn: the record holding a value the new type would change is named, until it is changed.
        const refusals: Array<[RegExp, string]> = [
          [/items\.ratio cannot become numeric\(10, 2\): record 01900000-0000-7000-8000-000000000002 holds 0\.0000001, which numeric\(10, 2\) cannot keep exactly/, `"ratio" = 0.25`],
          [/items\.price cannot become numeric\(10, 2\): record 01900000-0000-7000-8000-000000000002 holds 1\.2345, /, `"price" = 1.2300`],
          [/items\.qty cannot become numeric\(10, 2\): record 01900000-0000-7000-8000-000000000002 holds 123456789012, .*8 before it/, `"qty" = 12345678`],
          [/items\.code cannot become numeric\(10, 2\): record 01900000-0000-7000-8000-000000000002 holds abc, /, `"code" = ' 7 '`],
          [/items\.amount cannot become bigint: record 01900000-0000-7000-8000-000000000002 holds 2\.5, which is not an integer/, `"amount" = 2`],
        ];
        for (const [message, fix] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0002_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            assert.match(error.message, /change the records that hold such values \(or give the field a type that keeps them\), then start again/);
            return true;
          });
          assert.deepEqual(await columnTypes(db), types, "nothing of the migration was applied");
          await db.exec(`update "items" set ${fix} where "id" = '${bad}'`);
        }
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        assert.deepEqual(
          await db.query(`select "ratio"::text as ratio, "price"::text as price, "qty"::text as qty, "code"::text as code, "amount"::text as amount from "items" order by "id"`),
          [
            { ratio: "0.50", price: "1.50", qty: "5.00", code: "12.50", amount: "3" },
            { ratio: "0.25", price: "1.23", qty: "12345678.00", code: "7.00", amount: "2" },
          ],
        );
        // Applied again (a migration may be), the refusals pass: every value now fits.
        for (const file of readMigrations(sql)) await db.exec(file.sql);
      } finally {
        await db.close();
      }
    });
  });
}
