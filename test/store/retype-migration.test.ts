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

test("a relation made a plain array and a relation again: the array's ids are moved into the link table, in place of the links it held before", async () => {
  const tag = (n: number) => `01900000-0000-7000-8000-00000000010${n}`;
  const items = (items: string) => `resource: items\nfields:\n  name: { type: string, max_length: 50 }\n  tag_ids: { type: array, items: ${items}, max_items: 10, default: [] }\n`;
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
