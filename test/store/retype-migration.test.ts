// Migrations over a database that holds rows, for edits that change what a column is: a field's
// type changed under its check, default and indexes; a field made both optional and nullable
// (its value wrapped in JSON); a relation made a plain array and then a relation again. Each
// migration applies to the populated store, keeps the values, leaves the catalog of a database
// migrated fresh from the same files, and generate writes it again byte for byte.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { migrate, openDriver, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, workspace } from "../support/cli.ts";
import { assertSameAsFresh } from "./catalog.ts";

const API = "title: Sweep API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: { draft: true }\n";

/** A workspace with `files` as its definitions, generated and released. */
function released(name: string, files: Record<string, string>): { dir: string; sql: string; write: (file: string, text: string) => void } {
  const dir = workspace(name);
  mkdirSync(path.join(dir, "definitions"));
  const write = (file: string, text: string) => writeFileSync(path.join(dir, "definitions", file), text);
  write("api.yaml", API);
  for (const [file, text] of Object.entries(files)) write(file, text);
  for (const command of ["generate", "release"]) {
    const run = canon([command], dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  }
  return { dir, sql: path.join(dir, "generated", "sql"), write };
}

/** generate (and release), the store migrated, compared with a fresh one; a second generate writes the same migration. */
async function step(dir: string, sql: string, db: SqlDriver, release = true): Promise<string> {
  const run = canon(["generate", "--allow-breaking"], dir);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const pending = readMigrations(sql).at(-1)!;
  assert.match(pending.name, /_pending$/);
  assert.equal(canon(["generate", "--allow-breaking"], dir).code, 0);
  assert.equal(readMigrations(sql).at(-1)!.sql, pending.sql, "a second generate wrote another migration");
  if (release) assert.equal(canon(["release"], dir).code, 0);
  await migrate(db, readMigrations(sql));
  await assertSameAsFresh(db, sql);
  return pending.sql;
}

const row = (n: number) => `'01900000-0000-7000-8000-00000000000${n}', now(), now()`;

test("a field's type changed under its check, default and indexes (a string with max_length, unique, searched and sorted, made an integer): the migration applies and converts the values", async () => {
  const { dir, sql, write } = released("retype-check", {
    "items.yaml": "resource: items\nsearch: [code]\nsort: [code]\nfields:\n  name: { type: string, max_length: 50 }\n  code: { type: string, max_length: 10, unique: true, default: \"0\" }\n",
  });
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, readMigrations(sql));
    await db.exec(`insert into "items" ("id", "created_at", "updated_at", "name", "code") values (${row(1)}, 'a', '12'), (${row(2)}, 'b', ' 7')`);
    write("items.yaml", "resource: items\nsort: [code]\nfields:\n  name: { type: string, max_length: 50 }\n  code: { type: integer, minimum: 0, unique: true, default: 0 }\n");
    // Before: `alter column "code" type bigint` came first, and PostgreSQL failed on the check it carries (`char_length(bigint)`).
    const text = await step(dir, sql, db);
    assert.ok(text.indexOf(`drop constraint if exists "items_code_check"`) < text.indexOf(`alter column "code" type bigint`), text);
    assert.deepEqual(await db.query(`select "name", "code"::int as code from "items" order by "name"`), [{ name: "a", code: 12 }, { name: "b", code: 7 }]);
  } finally {
    await db.close();
  }
});

test("fields made both optional and nullable: their values are wrapped in JSON of their type (a string, a number, a decimal as a string)", async () => {
  const { dir, sql, write } = released("retype-wrap", {
    "items.yaml": "resource: items\nfields:\n  name: { type: string, max_length: 50 }\n  qty: { type: integer, minimum: 0 }\n  price: { type: decimal, precision: 8, scale: 2 }\n",
  });
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, readMigrations(sql));
    await db.exec(`insert into "items" ("id", "created_at", "updated_at", "name", "qty", "price") values (${row(1)}, 'hello', 3, 12.5)`);
    write(
      "items.yaml",
      "resource: items\nfields:\n  name: { type: string, max_length: 50, optional: true, nullable: true }\n  qty: { type: integer, minimum: 0, optional: true, nullable: true }\n  price: { type: decimal, precision: 8, scale: 2, optional: true, nullable: true }\n",
    );
    // Before: `using "name"::jsonb` (hello is no JSON; a bigint has no cast to jsonb).
    await step(dir, sql, db);
    assert.deepEqual(await db.query(`select "name"::text as name, "qty"::text as qty, "price"::text as price from "items"`), [{ name: '"hello"', qty: "3", price: '"12.50"' }]);
  } finally {
    await db.close();
  }
});

/** The id of tag `n`, and items whose `tag_ids` hold items of the type `items` (the two tests below). */
const tag = (n: number) => `01900000-0000-7000-8000-00000000010${n}`;
const items = (items: string) => `resource: items\nfields:\n  name: { type: string, max_length: 50 }\n  tag_ids: { type: array, items: ${items}, max_items: 10, default: [] }\n`;

test("a relation made a plain array and a relation again: the array's ids are moved into the link table, in place of the links it held before", async () => {
  const { dir, sql, write } = released("retype-link", {
    "tags.yaml": "resource: tags\nfields:\n  label: { type: string, max_length: 50 }\n",
    "items.yaml": items("{ type: uuid, references: tags }"),
  });
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, readMigrations(sql));
    await db.exec(`insert into "tags" ("id", "created_at", "updated_at", "label") values ('${tag(1)}', now(), now(), 't1'), ('${tag(2)}', now(), now(), 't2');
      insert into "items" ("id", "created_at", "updated_at", "name") values (${row(1)}, 'a');
      insert into "items__tag_ids" select i."row_id", 1, t."row_id" from "items" i, "tags" t where t."label" = 't1'`);
    write("items.yaml", items("{ type: uuid }"));
    await step(dir, sql, db);
    await db.exec(`update "items" set "tag_ids" = '["${tag(2)}"]'`);
    write("items.yaml", items("{ type: uuid, references: tags }"));
    // Before: the migration only lifted the column's not null; the record read t1 again, and t2 was lost.
    await step(dir, sql, db);
    assert.deepEqual(await db.query(`select t."label" from "items__tag_ids" l join "tags" t on t."row_id" = l."target_row_id" order by l."position"`), [{ label: "t2" }]);
  } finally {
    await db.close();
  }
});

test("a relation made a plain array keeps each record's ids, in order, in the array's column (the link table keeps none)", async () => {
  const { dir, sql, write } = released("unlink", {
    "tags.yaml": "resource: tags\nfields:\n  label: { type: string, max_length: 50 }\n",
    "items.yaml": items("{ type: uuid, references: tags }"),
  });
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, readMigrations(sql));
    await db.exec(`insert into "tags" ("id", "created_at", "updated_at", "label") values ('${tag(1)}', now(), now(), 't1'), ('${tag(2)}', now(), now(), 't2');
      insert into "items" ("id", "created_at", "updated_at", "name") values (${row(1)}, 'a'), (${row(2)}, 'b');
      insert into "items__tag_ids" select i."row_id", 3 - t."row_id", t."row_id" from "items" i, "tags" t where i."name" = 'a'`);
    write("items.yaml", items("{ type: uuid }"));
    // Before: the column was added with its default, [], and every record lost its ids.
    await step(dir, sql, db);
    assert.deepEqual(await db.query(`select "name", "tag_ids" from "items" order by "name"`), [{ name: "a", tag_ids: [tag(2), tag(1)] }, { name: "b", tag_ids: [] }]);
    assert.deepEqual(await db.query(`select count(*)::int as n from "items__tag_ids"`), [{ n: 0 }]);
    // Applied again, the file changes nothing.
    for (const file of readMigrations(sql)) await db.exec(file.sql);
    assert.deepEqual(await db.query(`select "tag_ids" from "items" where "name" = 'a'`), [{ tag_ids: [tag(2), tag(1)] }]);
  } finally {
    await db.close();
  }
});

test("a date made a datetime keeps its day, at midnight UTC; a datetime made a date refuses a time of day, naming the record", async () => {
  const items = (type: string) => `resource: items\nfields:\n  day: { type: ${type} }\n`;
  const { dir, sql, write } = released("retype-date", { "items.yaml": items("date") });
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, readMigrations(sql));
    await db.exec(`insert into "items" ("id", "created_at", "updated_at", "day") values (${row(1)}, '2026-03-01')`);
    write("items.yaml", items("datetime"));
    // Before: `using "day"::text` kept 2026-03-01, which the datetime's check refuses: the migration failed.
    await step(dir, sql, db);
    assert.deepEqual(await db.query(`select "day" from "items"`), [{ day: "2026-03-01T00:00:00Z" }]);
    await db.exec(`insert into "items" ("id", "created_at", "updated_at", "day") values (${row(2)}, '2026-04-02T10:30:00+02:00')`);
    write("items.yaml", items("date"));
    const run = canon(["generate", "--allow-breaking"], dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    // Before: the cast kept 2026-04-02 and dropped the time of day without a word.
    await assert.rejects(migrate(db, readMigrations(sql)), (error: Error) => {
      assert.match(error.message, /^migration 0003_pending failed, and nothing of it was applied: items\.day cannot become date: record 01900000-0000-7000-8000-000000000002 holds 2026-04-02T10:30:00\+02:00, which is not a date \(a datetime becomes one only at midnight UTC\); change the records/);
      return true;
    });
    await db.exec(`update "items" set "day" = '2026-04-02T00:00:00Z' where "id" = '01900000-0000-7000-8000-000000000002'`);
    await step(dir, sql, db);
    assert.deepEqual(await db.query(`select "day"::text as day from "items" order by "id"`), [{ day: "2026-03-01" }, { day: "2026-04-02" }]);
  } finally {
    await db.close();
  }
});
