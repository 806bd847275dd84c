// A decimal's scale changed where it is kept in JSON: the values of a map or an array of decimals,
// and a decimal that may be absent and null (SPEC §12.6: always `scale` fraction digits). Widening
// is lossless: the migration rewrites each stored value to its canonical text at the new scale
// ("1.20" → "1.200"); narrowing converts what it keeps exactly ("1.200" → "1.2") and refuses,
// naming the table, the field, the record and the value, one that would lose digits, applying
// nothing (was: a map or an array refused "1.20" under its new check, and a nullable decimal's
// change wrote no migration, rows keeping "1.20" where the new scale says 3 digits). And a decimal
// item's `minimum` and `maximum` are in the SQL check, compared exactly (past a float's 15
// digits), and tightening them refuses a record that breaks them first (was: only the validators
// held them). On PGlite and on PostgreSQL.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { migrate, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon } from "../support/cli.ts";
import { assertSameAsFresh } from "./catalog.ts";
import { changeItems, itemChecks, itemsProject } from "./items-project.ts";
import { dropSchemas, emptyDriver } from "./stores.ts";

const API = "title: Scale API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: { draft: true }\n";

const ids = ["01900000-0000-7000-8000-000000000001", "01900000-0000-7000-8000-000000000002", "01900000-0000-7000-8000-000000000003", "01900000-0000-7000-8000-000000000004"];

function fields(scale: number, precision: number): string {
  const d = `type: decimal, precision: ${precision}, scale: ${scale}`;
  return [
    "resource: items",
    "fields:",
    `  prices: { type: map, items: { ${d} }, optional: true }`,
    `  amounts: { type: array, items: { ${d}, nullable: true }, optional: true }`,
    `  rate: { ${d}, optional: true, nullable: true }`,
    "",
  ].join("\n");
}

const project = (name: string, definition: string) => itemsProject(name, API, definition);

const rows = (db: SqlDriver) =>
  db.query(`select "prices"::text as prices, "amounts"::text as amounts, "rate"::text as rate from "items" order by "id"`);

const checks = itemChecks;

for (const target of ["pglite", "postgres"] as const) {
  describe(`a decimal's scale changed inside JSON, on ${target}`, () => {
    const schemas: string[] = [];
    after(() => dropSchemas(schemas));

    test("widened: every stored value is rewritten at the new scale; narrowed: kept exactly, or refused naming the record and the value", async () => {
      const { dir, sql } = project(`decimal-scale-${target}`, fields(2, 6));
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "prices", "amounts", "rate") values
          ('${ids[0]}', now(), now(), '{"a": "1.20", "b": "-3.05"}', '["1.20", null, "0.00"]', '"1.20"'),
          ('${ids[1]}', now(), now(), '{}', '[]', '"-3.05"'),
          ('${ids[2]}', now(), now(), null, null, 'null'),
          ('${ids[3]}', now(), now(), null, null, null)`);

        changeItems(dir, fields(3, 7));
        assert.equal(readMigrations(sql).length, 2, "widening the scale writes a migration");
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        const widened = [
          { prices: '{"a": "1.200", "b": "-3.050"}', amounts: '["1.200", null, "0.000"]', rate: '"1.200"' },
          { prices: "{}", amounts: "[]", rate: '"-3.050"' },
          { prices: null, amounts: null, rate: "null" },
          { prices: null, amounts: null, rate: null },
        ];
        assert.deepEqual(await rows(db), widened);
        // Applied again (a migration may be), it changes nothing.
        for (const file of readMigrations(sql)) await db.exec(file.sql);
        assert.deepEqual(await rows(db), widened);
        // The new scale holds from now on: a value of the old one is refused.
        for (const [column, value] of [["prices", '{"a": "1.20"}'], ["amounts", '["1.20"]'], ["rate", '"1.20"']])
          await assert.rejects(db.exec(`update "items" set "${column}" = '${value}' where "id" = '${ids[1]}'`), new RegExp(`items_${column}_check`));

        changeItems(dir, fields(1, 5));
        const before = await checks(db);
        const refusals: Array<[RegExp, string]> = [
          [/items\.prices cannot become a map of numeric\(5, 1\): record 01900000-0000-7000-8000-000000000001 holds -3\.050 under key b, which numeric\(5, 1\) cannot keep exactly \(it keeps 1 digits after the point and 4 before it\)/, `"prices" = '{"a": "1.200", "b": "-3.000"}'`],
          [/items\.amounts cannot become an array of numeric\(5, 1\): record 01900000-0000-7000-8000-000000000001 holds 1\.205 at index 0, which numeric\(5, 1\) cannot keep exactly/, `"amounts" = '["1.200", null, "0.000"]'`],
          [/items\.rate cannot become numeric\(5, 1\): record 01900000-0000-7000-8000-000000000002 holds -3\.050, which numeric\(5, 1\) cannot keep exactly/, `"rate" = '"-3.000"'`],
        ];
        await db.exec(`update "items" set "amounts" = '["1.205", null, "0.000"]' where "id" = '${ids[0]}'`);
        for (const [message, fix] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0003_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            assert.match(error.message, /change the records that hold such values \(or give the field a type that keeps them\), then start again/);
            assert.doesNotMatch(error.message, /\n/, "one line");
            return true;
          });
          assert.deepEqual(await checks(db), before, "nothing of the migration was applied");
          await db.exec(`update "items" set ${fix} where "id" = '${message.source.includes("000000000002") ? ids[1] : ids[0]}'`);
        }
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        const narrowed = [
          { prices: '{"a": "1.2", "b": "-3.0"}', amounts: '["1.2", null, "0.0"]', rate: '"1.2"' },
          { prices: "{}", amounts: "[]", rate: '"-3.0"' },
          { prices: null, amounts: null, rate: "null" },
          { prices: null, amounts: null, rate: null },
        ];
        assert.deepEqual(await rows(db), narrowed);
        for (const file of readMigrations(sql)) await db.exec(file.sql);
        assert.deepEqual(await rows(db), narrowed);
      } finally {
        await db.close();
      }
    });

    test("a nullable decimal's check written before it held its precision and scale: the next generate holds them, converting a stored value to its canonical form", async () => {
      const { dir, sql } = project(`decimal-upgrade-${target}`, "resource: items\nfields:\n  rate: { type: decimal, precision: 6, scale: 2, minimum: \"0\", optional: true, nullable: true }\n");
      // As an earlier canon wrote it: a decimal of any digits.
      for (const file of ["0001_initial.sql", "schema.json"]) {
        const text = readFileSync(path.join(sql, file), "utf8");
        const older = text.replace(/'\^-\?\[0-9\]\{1,4\}(\\+)\.\[0-9\]\{2\}\$'/, (_m, slash: string) => `'^-?[0-9]+(${slash}.[0-9]+)?$'`);
        assert.notEqual(older, text, file);
        writeFileSync(path.join(sql, file), older);
      }
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "rate") values
          ('${ids[0]}', now(), now(), '"1.2"'), ('${ids[1]}', now(), now(), '"3.50"'), ('${ids[2]}', now(), now(), '"0.125"'), ('${ids[3]}', now(), now(), 'null')`);
        const run = canon(["generate"], dir);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.equal(readMigrations(sql).length, 2, "the check is written again, with the field's precision and scale");
        await assert.rejects(migrate(db, readMigrations(sql)), /items\.rate cannot become numeric\(6, 2\): record 01900000-0000-7000-8000-000000000003 holds 0\.125, /);
        await db.exec(`update "items" set "rate" = '"0.12"' where "id" = '${ids[2]}'`);
        await migrate(db, readMigrations(sql));
        assert.deepEqual(
          (await db.query(`select "rate"::text as rate from "items" order by "id"`)).map((r) => r.rate),
          ['"1.20"', '"3.50"', '"0.12"', "null"],
        );
        await assert.rejects(db.exec(`update "items" set "rate" = '"1.2"' where "id" = '${ids[0]}'`), /items_rate_check/);
        for (const file of readMigrations(sql)) await db.exec(file.sql);
      } finally {
        await db.close();
      }
    });

    test("a decimal item's minimum and maximum are in the check, compared exactly; tightened, the record that breaks them is named first", async () => {
      const bounded = (minimum: string, maximum: string) =>
        [
          "resource: items",
          "fields:",
          `  prices: { type: map, items: { type: decimal, precision: 20, scale: 2, minimum: "${minimum}", maximum: "${maximum}" }, optional: true }`,
          `  amounts: { type: array, items: { type: decimal, precision: 20, scale: 2, minimum: "${minimum}", maximum: "${maximum}" }, optional: true }`,
          "",
        ].join("\n");
      const { dir, sql } = project(`decimal-item-bounds-${target}`, bounded("-5", "123456789012345678"));
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        const set = (column: string, value: string, id = ids[0]) =>
          db.exec(`insert into "items" ("id", "created_at", "updated_at", "${column}") values ('${id}', now(), now(), '${value}') on conflict ("id") do update set "${column}" = excluded."${column}"`);
        // Past the bounds by one unit of the last digit, where a float sees no difference.
        for (const value of ["123456789012345678.01", "-5.01", "999999999999999999.99", "-10.00", "-100000000000000000.00"]) {
          await assert.rejects(set("prices", `{"a": "1.00", "b": "${value}"}`), /items_prices_check/, value);
          await assert.rejects(set("amounts", `["1.00", "${value}"]`), /items_amounts_check/, value);
        }
        for (const value of ["123456789012345678.00", "123456789012345677.99", "-5.00", "-4.99", "0.00", "9.99", "10.00", "99999999999999999.99"]) {
          await set("prices", `{"b": "${value}"}`);
          await set("amounts", `["${value}"]`);
        }
        await set("prices", '{"a": "1.00", "b": "100.01"}', ids[1]);
        await set("amounts", '["0.50"]', ids[1]);
        await set("prices", '{"a": "0.00"}', ids[2]);
        await set("amounts", '["-0.01", "100.00"]', ids[2]);

        changeItems(dir, bounded("0", "100"));
        const refusals: Array<[RegExp, string, string]> = [
          [/items\.prices cannot take its new limits: record 01900000-0000-7000-8000-000000000001 holds \{"b": "99999999999999999\.99"\}/, ids[0], `"prices" = '{}', "amounts" = '[]'`],
          [/items\.prices cannot take its new limits: record 01900000-0000-7000-8000-000000000002 holds \{"a": "1\.00", "b": "100\.01"\}/, ids[1], `"prices" = '{"b": "100.00"}'`],
          [/items\.amounts cannot take its new limits: record 01900000-0000-7000-8000-000000000003 holds \["-0\.01", "100\.00"\]/, ids[2], `"amounts" = '["0.00", "100.00"]'`],
        ];
        for (const [message, id, fix] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0002_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            return true;
          });
          await db.exec(`update "items" set ${fix} where "id" = '${id}'`);
        }
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        await assert.rejects(set("prices", '{"a": "100.01"}'), /items_prices_check/);
        await assert.rejects(set("amounts", '["-0.01"]'), /items_amounts_check/);
        await set("prices", '{"a": "100.00", "b": "0.00"}');
      } finally {
        await db.close();
      }
    });
  });
}
