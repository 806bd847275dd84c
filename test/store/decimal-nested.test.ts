// A decimal deeper in a JSON column than a map's values or an array's items: a field of an object,
// of an array's objects or of a map's objects, the values of a map's maps (SPEC §12.6). Its
// precision, scale and bounds are in the column's SQL check, as a map's decimal values are (was:
// the check held only the shape of the outer value, so any text passed); a change of its scale
// writes a migration that rewrites every stored value at its path to the canonical text of the
// new scale ("1.20" → "1.200"), keeps what narrowing keeps exactly ("1.200" → "1.2") and refuses,
// naming the table, the path, the record, the value and where it is, one that would lose digits,
// applying nothing (was: no migration, rows keeping "1.20" where the scale says 3 digits). On
// PGlite and on PostgreSQL.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { migrate, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon } from "../support/cli.ts";
import { assertSameAsFresh } from "./catalog.ts";
import { changeItems, itemChecks, itemsProject } from "./items-project.ts";
import { dropSchemas, emptyDriver } from "./stores.ts";

const API = "title: Nested API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: { draft: true }\n";

const ids = ["01900000-0000-7000-8000-000000000001", "01900000-0000-7000-8000-000000000002", "01900000-0000-7000-8000-000000000003"];

function fields(scale: number, precision: number): string {
  const d = `type: decimal, precision: ${precision}, scale: ${scale}`;
  return [
    "resource: items",
    "fields:",
    `  box: { type: object, optional: true, fields: { price: { ${d}, minimum: "0" }, tax: { ${d}, optional: true, nullable: true }, note: { type: string, optional: true } } }`,
    `  lines: { type: array, optional: true, items: { type: object, fields: { unit: { ${d}, maximum: "100" } } } }`,
    `  costs: { type: map, optional: true, items: { type: object, fields: { cost: { ${d} } } } }`,
    `  grid: { type: map, optional: true, items: { type: map, items: { ${d} } } }`,
    "",
  ].join("\n");
}

const project = (name: string, definition: string) => itemsProject(name, API, definition);

const rows = (db: SqlDriver) =>
  db.query(`select "box"::text as box, "lines"::text as lines, "costs"::text as costs, "grid"::text as grid from "items" order by "id"`);

const checks = itemChecks;

for (const target of ["pglite", "postgres"] as const) {
  describe(`a decimal deeper in a JSON column, on ${target}`, () => {
    const schemas: string[] = [];
    after(() => dropSchemas(schemas));

    test("its precision, scale and bounds are in the check; a scale widened rewrites every stored value, narrowed keeps it exactly or refuses naming where it is", async () => {
      const { dir, sql } = project(`decimal-nested-${target}`, fields(2, 6));
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "box", "lines", "costs", "grid") values
          ('${ids[0]}', now(), now(), '{"price": "1.20", "tax": null, "note": "n"}', '[{"unit": "1.20"}, {"unit": "-3.05"}]', '{"a": {"cost": "1.20"}, "b": {"cost": "0.00"}}', '{"x": {"y": "1.20", "z": "-0.50"}, "w": {}}'),
          ('${ids[1]}', now(), now(), '{"price": "0.00", "tax": "9.99"}', '[]', '{}', '{}'),
          ('${ids[2]}', now(), now(), null, null, null, null)`);
        // Each value of another scale, more digits, out of bounds or not a string is refused by the column's check.
        const refused: Array<[string, string]> = [
          ["box", '{"price": "1.2"}'],
          ["box", '{"price": "-1.00"}'],
          ["box", '{"price": 1.2}'],
          ["box", '{"price": "1.20", "tax": "12345.00"}'],
          ["box", '{"price": null}'],
          ["lines", '[{"unit": "1.20"}, {"unit": "100.01"}]'],
          ["lines", '[{"unit": "1.200"}]'],
          ["costs", '{"a": {"cost": "1"}}'],
          ["grid", '{"x": {"y": "1.20", "z": "abc"}}'],
        ];
        for (const [column, value] of refused)
          await assert.rejects(db.exec(`update "items" set "${column}" = '${value}' where "id" = '${ids[1]}'`), new RegExp(`items_${column}_check`), `${column} ${value}`);
        // Left out where optional, null where nullable, and at the bounds: taken.
        for (const [column, value] of [["box", '{"price": "9999.99"}'], ["box", '{"price": "0.00", "tax": null}'], ["lines", '[{"unit": "100.00"}, {"unit": "-9999.99"}]'], ["costs", '{"k": {"cost": "-0.01"}}'], ["grid", '{"x": {}}']])
          await db.exec(`update "items" set "${column}" = '${value}' where "id" = '${ids[1]}'`);
        await db.exec(`update "items" set "box" = '{"price": "0.00", "tax": "9.99"}', "lines" = '[]', "costs" = '{}', "grid" = '{}' where "id" = '${ids[1]}'`);

        changeItems(dir, fields(3, 7));
        assert.equal(readMigrations(sql).length, 2, "widening the scale writes a migration");
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        const widened = [
          {
            box: '{"tax": null, "note": "n", "price": "1.200"}',
            lines: '[{"unit": "1.200"}, {"unit": "-3.050"}]',
            costs: '{"a": {"cost": "1.200"}, "b": {"cost": "0.000"}}',
            grid: '{"w": {}, "x": {"y": "1.200", "z": "-0.500"}}',
          },
          { box: '{"tax": "9.990", "price": "0.000"}', lines: "[]", costs: "{}", grid: "{}" },
          { box: null, lines: null, costs: null, grid: null },
        ];
        assert.deepEqual(await rows(db), widened);
        // Applied again (a migration may be), it changes nothing.
        for (const file of readMigrations(sql)) await db.exec(file.sql);
        assert.deepEqual(await rows(db), widened);
        // The new scale holds from now on: a value of the old one is refused.
        for (const [column, value] of [["box", '{"price": "1.20"}'], ["lines", '[{"unit": "1.20"}]'], ["costs", '{"a": {"cost": "1.20"}}'], ["grid", '{"x": {"y": "1.20"}}']])
          await assert.rejects(db.exec(`update "items" set "${column}" = '${value}' where "id" = '${ids[1]}'`), new RegExp(`items_${column}_check`), `${column} ${value}`);

        changeItems(dir, fields(1, 5));
        const before = await checks(db);
        const refusals: Array<[RegExp, string, string]> = [
          [/items\.box\.price cannot become numeric\(5, 1\): record 01900000-0000-7000-8000-000000000002 holds 0\.005 at box\.price, which numeric\(5, 1\) cannot keep exactly \(it keeps 1 digits after the point and 4 before it\)/, `"box" = '{"price": "0.000", "tax": "9.990"}'`, ids[1]!],
          [/items\.box\.tax cannot become numeric\(5, 1\): record 01900000-0000-7000-8000-000000000002 holds 9\.990 at box\.tax, which numeric\(5, 1\) cannot keep exactly/, `"box" = '{"price": "0.000", "tax": "9.900"}'`, ids[1]!],
          [/items\.lines\[\]\.unit cannot become numeric\(5, 1\): record 01900000-0000-7000-8000-000000000001 holds -3\.050 at lines\.1\.unit, /, `"lines" = '[{"unit": "1.200"}, {"unit": "-3.000"}]'`, ids[0]!],
          [/items\.costs\{\}\.cost cannot become numeric\(5, 1\): record 01900000-0000-7000-8000-000000000001 holds 1\.234 at costs\.a\.cost, /, `"costs" = '{"a": {"cost": "1.200"}, "b": {"cost": "0.000"}}'`, ids[0]!],
          [/items\.grid\{\}\{\} cannot become numeric\(5, 1\): record 01900000-0000-7000-8000-000000000001 holds -0\.550 at grid\.x\.z, /, `"grid" = '{"x": {"y": "1.200", "z": "-0.400"}, "w": {}}'`, ids[0]!],
        ];
        await db.exec(`update "items" set "box" = '{"price": "0.005", "tax": "9.990"}' where "id" = '${ids[1]}'`);
        await db.exec(`update "items" set "costs" = '{"a": {"cost": "1.234"}, "b": {"cost": "0.000"}}', "grid" = '{"x": {"y": "1.200", "z": "-0.550"}, "w": {}}' where "id" = '${ids[0]}'`);
        for (const [message, fix, id] of refusals) {
          await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
            assert.match(error.message, /^migration 0003_\w+ failed, and nothing of it was applied: /);
            assert.match(error.message, message);
            assert.match(error.message, /change the records that hold such values \(or give the field a type that keeps them\), then start again/);
            assert.doesNotMatch(error.message, /\n/, "one line");
            return true;
          }, message.source);
          assert.deepEqual(await checks(db), before, "nothing of the migration was applied");
          await db.exec(`update "items" set ${fix} where "id" = '${id}'`);
        }
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        const narrowed = [
          {
            box: '{"tax": null, "note": "n", "price": "1.2"}',
            lines: '[{"unit": "1.2"}, {"unit": "-3.0"}]',
            costs: '{"a": {"cost": "1.2"}, "b": {"cost": "0.0"}}',
            grid: '{"w": {}, "x": {"y": "1.2", "z": "-0.4"}}',
          },
          { box: '{"tax": "9.9", "price": "0.0"}', lines: "[]", costs: "{}", grid: "{}" },
          { box: null, lines: null, costs: null, grid: null },
        ];
        assert.deepEqual(await rows(db), narrowed);
        for (const file of readMigrations(sql)) await db.exec(file.sql);
        assert.deepEqual(await rows(db), narrowed);
      } finally {
        await db.close();
      }
    });

    test("released by a canon whose check held no nested decimal: the next generate adds it, converting a stored value to its canonical form", async () => {
      const { dir, sql } = project(`decimal-nested-upgrade-${target}`, fields(2, 6));
      // As an earlier canon wrote them: the checks of the outer shapes only.
      for (const file of ["0001_initial.sql", "schema.json"]) {
        const text = readFileSync(path.join(sql, file), "utf8");
        const older = text
          .replace(/ and not jsonb_path_exists\(\\?"(box|lines|costs|grid)\\?", 'strict \$ \? \(@\.type\(\)[^']*'\)/g, "")
          .replace(/then not jsonb_path_exists\(\\?"box\\?", 'strict \$ \? \(@\.type\(\)[^']*'\) else/, "then true else");
        assert.equal((text.match(/strict \$ \? \(@\.type\(\)/g) ?? []).length, 5, file);
        assert.doesNotMatch(older, /strict \$ \? \(@\.type\(\)/, file);
        writeFileSync(path.join(sql, file), older);
      }
      const db = await emptyDriver(target, schemas);
      try {
        await migrate(db, readMigrations(sql));
        await db.exec(`insert into "items" ("id", "created_at", "updated_at", "box", "lines", "costs", "grid") values
          ('${ids[0]}', now(), now(), '{"price": "1.2"}', '[{"unit": 3}]', '{"a": {"cost": "1.25"}}', '{"x": {"y": "-0"}}'),
          ('${ids[1]}', now(), now(), '{"price": "0.125"}', null, null, null)`);
        const run = canon(["generate"], dir);
        assert.equal(run.code, 0, run.stdout + run.stderr);
        assert.equal(readMigrations(sql).length, 2, "the checks are written again, with the nested decimals");
        await assert.rejects(migrate(db, readMigrations(sql)), /items\.box\.price cannot become numeric\(6, 2\): record 01900000-0000-7000-8000-000000000002 holds 0\.125 at box\.price, /);
        await db.exec(`update "items" set "box" = '{"price": "0.12"}' where "id" = '${ids[1]}'`);
        await migrate(db, readMigrations(sql));
        if (target === "pglite") await assertSameAsFresh(db, sql);
        assert.deepEqual(await rows(db), [
          { box: '{"price": "1.20"}', lines: '[{"unit": "3.00"}]', costs: '{"a": {"cost": "1.25"}}', grid: '{"x": {"y": "0.00"}}' },
          { box: '{"price": "0.12"}', lines: null, costs: null, grid: null },
        ]);
      } finally {
        await db.close();
      }
    });
  });
}
