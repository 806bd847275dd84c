// A dev store and the pending migration (issue 28.2, the runtime side): a database that applied
// an earlier text of sql/NNNN_pending.sql is brought to the new text, rows kept, where nothing is
// lost by it; otherwise migrate() refuses in one line naming the command that resets the store.
// canon release then freezes the pending migration and the store takes it under its new name;
// a released migration keeps its strictness.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { migrate, openDriver, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { canon, repoRoot, workspace } from "../support/cli.ts";
import { assertSameAsFresh, catalog } from "./catalog.ts";

test("a dev store follows the pending migration's texts, keeps its rows, refuses in one line what would lose values, and takes the release", async () => {
  const dir = workspace("pending-store", "definitions");
  cpSync(path.join(repoRoot, "generated"), path.join(dir, "generated"), { recursive: true });
  const sql = path.join(dir, "generated", "sql");
  const products = path.join(dir, "definitions", "products.yaml");
  const db = await openDriver("pglite:memory://");
  const target = { target: "pglite:.canon-data" };
  try {
    const released = await migrate(db, readMigrations(sql), target);
    assert.ok(released.length >= 10 && !released.some((n) => n.endsWith("_pending")), released.join(", "));
    assert.deepEqual(await migrate(db, readMigrations(sql), target), []);
    await db.exec(`insert into "products" ("id", "created_at", "updated_at", "sku", "name", "price_cents")
      values ('01900000-0000-7000-8000-000000000001', now(), now(), 'SKU-1', 'Lamp', 1200)`);

    // Save 1 adds a field: the pending migration is applied.
    appendFileSync(products, "  weight_g: { type: integer, minimum: 0, optional: true }\n");
    assert.equal(canon(["generate"], dir).code, 0);
    assert.deepEqual(await migrate(db, readMigrations(sql), target), ["0016_pending"]);
    await db.exec(`update "products" set "weight_g" = 5`);

    // Save 2 adds another field: the pending migration's text changes; the store is brought to it, rows kept.
    appendFileSync(products, "  featured: { type: boolean, default: false }\n");
    assert.equal(canon(["generate"], dir).code, 0);
    assert.match(readFileSync(path.join(sql, "0016_pending.sql"), "utf8"), /"featured"/);
    assert.deepEqual(await migrate(db, readMigrations(sql), target), ["0016_pending"]);
    assert.deepEqual(await db.query(`select "sku", "weight_g"::int as w, "featured" from "products"`), [{ sku: "SKU-1", w: 5, featured: false }]);
    await assertSameAsFresh(db, sql);
    assert.deepEqual(await migrate(db, readMigrations(sql), target), []);

    // Save 3 takes weight_g back while a row holds a value in it: refused in one line naming the reset, nothing changed.
    writeFileSync(products, readFileSync(products, "utf8").replace(/  weight_g: .*\n/, ""));
    assert.equal(canon(["generate", "--allow-breaking"], dir).code, 0);
    const refused = await migrate(db, readMigrations(sql), target).then(() => null, (e: Error) => e.message);
    assert.ok(refused, "the migration was not refused");
    assert.doesNotMatch(refused, /\n/);
    assert.match(refused, /^the store applied an earlier text of migration 0016_pending and cannot be brought to sql\/0016_pending\.sql: "products"\."weight_g" holds values the new text does not keep; reset the dev store \(rm -rf \.canon-data\) and start again$/);
    assert.deepEqual(await db.query(`select "weight_g"::int as w from "products"`), [{ w: 5 }]);

    // Once no row holds a value in it, the column goes and the store matches the new text.
    await db.exec(`update "products" set "weight_g" = null`);
    assert.deepEqual(await migrate(db, readMigrations(sql), target), ["0016_pending"]);
    await assertSameAsFresh(db, sql);
    assert.equal((await db.query(`select count(*)::int as n from "products"`))[0]!.n, 1);

    // canon release freezes it; the store records it under its released name, applying nothing new.
    const release = canon(["release"], dir);
    assert.equal(release.code, 0, release.stderr);
    assert.deepEqual(await migrate(db, readMigrations(sql), target), ["0016_add_products_featured"]);
    const names = (await db.query("select name from canon_migrations order by name")).map((r) => String(r.name));
    assert.equal(names.at(-1), "0016_add_products_featured");
    assert.ok(!names.some((n) => n.endsWith("_pending")));
    await assertSameAsFresh(db, sql);

    // A released migration edited after it was applied is refused, as always.
    const frozen = path.join(sql, "0016_add_products_featured.sql");
    writeFileSync(frozen, `${readFileSync(frozen, "utf8")}\ncreate index if not exists "x" on "products" ("sku");\n`);
    await assert.rejects(migrate(db, readMigrations(sql), target), /migration 0016_add_products_featured was applied with other content: applied migrations never change/);
  } finally {
    await db.close();
  }
});

test("a pending migration taken back leaves no column behind when it held nothing", async () => {
  const dir = workspace("pending-back", "definitions");
  cpSync(path.join(repoRoot, "generated"), path.join(dir, "generated"), { recursive: true });
  const sql = path.join(dir, "generated", "sql");
  const products = path.join(dir, "definitions", "products.yaml");
  const original = readFileSync(products, "utf8");
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, readMigrations(sql));
    appendFileSync(products, "  color: { type: string, optional: true }\n");
    assert.equal(canon(["generate"], dir).code, 0);
    assert.deepEqual(await migrate(db, readMigrations(sql)), ["0016_pending"]);
    writeFileSync(products, original);
    assert.equal(canon(["generate", "--allow-breaking"], dir).code, 0);
    assert.deepEqual(await migrate(db, readMigrations(sql)), []);
    assert.deepEqual((await db.query("select name from canon_migrations where name like '%pending'")), []);
    await assertSameAsFresh(db, sql);
  } finally {
    await db.close();
  }
});

test("a table the pending migration creates gains a column in its new text: the column is added, the rows stay", async () => {
  const file = (sql: string) => ({ name: "0001_pending", sql, checksum: createHash("sha256").update(sql).digest("hex") });
  const table = (...columns: string[]) =>
    `-- Pending migration 0001\n\ncreate table if not exists "users" (\n${["  \"row_id\" bigint generated always as identity primary key", ...columns].join(",\n")}\n);\n`;
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, [file(table('  "name" text not null'))]), ["0001_pending"]);
    await db.exec(`insert into "users" ("name") values ('Ann')`);
    assert.deepEqual(await migrate(db, [file(table('  "name" text not null', '  "age" bigint'))]), ["0001_pending"]);
    assert.deepEqual(await db.query(`select "name", "age" from "users"`), [{ name: "Ann", age: null }]);
    // A required column without a default cannot be added to rows: one line, the reset command.
    await assert.rejects(
      migrate(db, [file(table('  "name" text not null', '  "age" bigint', '  "email" text not null'))], { target: "pglite:./data" }),
      // What to change first, the reset (which loses every row) last (found by a sweep of the dev loop: a tenant field added).
      (e: Error) =>
        !e.message.includes("\n") &&
        /failed \(.*\): give those records a value first \(add the field optional, or with a default; a tenant field without tenant: true, give every record its tenant, then add tenant: true\) or delete them, then save again; or reset the dev store \(rm -rf \.\/data\) and start again$/.test(e.message),
    );
    assert.deepEqual(await db.query(`select "name" from "users"`), [{ name: "Ann" }]);
  } finally {
    await db.close();
  }
});

test("a column the new text adds to a table both texts create may reference a table only the new text creates", async () => {
  const file = (...statements: string[]) => {
    const sql = `-- Pending migration 0001\n\n${statements.join("\n\n")}\n`;
    return { name: "0001_pending", sql, checksum: createHash("sha256").update(sql).digest("hex") };
  };
  const movements = (...columns: string[]) =>
    `create table if not exists "stock_movements" (\n${['  "row_id" bigint generated always as identity primary key', '  "id" uuid not null unique', ...columns].join(",\n")}\n);`;
  const units = `create table if not exists "units" (\n  "row_id" bigint generated always as identity primary key,\n  "id" uuid not null unique\n);`;
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, [file(movements('  "quantity" bigint not null'))]), ["0001_pending"]);
    await db.exec(
      `insert into "stock_movements" ("id", "quantity") values ('01900000-0000-7000-8000-000000000001', 3)`,
    );
    // A new resource and a reference to it on the existing one, in one save.
    const next = file(
      units,
      movements('  "quantity" bigint not null', '  "unit_id" uuid references "units" ("id")'),
    );
    assert.deepEqual(await migrate(db, [next]), ["0001_pending"]);
    assert.deepEqual(await db.query(`select "quantity"::int as q, "unit_id" from "stock_movements"`), [
      { q: 3, unit_id: null },
    ]);
    const fresh = await openDriver("pglite:memory://");
    try {
      await migrate(fresh, [next]);
      assert.deepEqual(await catalog(db), await catalog(fresh));
    } finally {
      await fresh.close();
    }
  } finally {
    await db.close();
  }
});

test("brought to a new text, a store applies the statements the earlier text did not hold, and all of them again when a column went", async () => {
  const file = (...statements: string[]) => {
    const sql = `-- Pending migration 0001\n\n${statements.join("\n\n")}\n`;
    return { name: "0001_pending", sql, checksum: createHash("sha256").update(sql).digest("hex") };
  };
  const users = (name: string) => `create table if not exists "users" (\n  "row_id" bigint generated always as identity primary key,\n  ${name}\n);`;
  const usersIndex = `create index if not exists "users_name" on "users" ("name");`;
  const teams = `create table if not exists "teams" (\n  "row_id" bigint generated always as identity primary key\n);`;
  const sameAsFresh = async (db: SqlDriver, migration: ReturnType<typeof file>) => {
    const fresh = await openDriver("pglite:memory://");
    try {
      await migrate(fresh, [migration]);
      assert.deepEqual(await catalog(db), await catalog(fresh));
    } finally {
      await fresh.close();
    }
  };
  const db = await openDriver("pglite:memory://");
  try {
    await migrate(db, [file(users('"name" text'), usersIndex)]);
    // A table more: its statement alone is applied (the index dropped by hand stays dropped).
    await db.exec(`drop index "users_name"`);
    const more = file(users('"name" text'), usersIndex, teams);
    assert.deepEqual(await migrate(db, [more]), ["0001_pending"]);
    assert.deepEqual(await db.query(`select to_regclass('users_name') is null as gone, to_regclass('teams') is not null as made`), [{ gone: true, made: true }]);
    await db.exec(usersIndex);
    await sameAsFresh(db, more);
    // The column "name" changes: it is dropped (it holds nothing) and added, which takes its
    // index along; the whole new text is applied again, so the index is there.
    const changed = file(users('"name" varchar(20)'), usersIndex, teams);
    assert.deepEqual(await migrate(db, [changed]), ["0001_pending"]);
    await sameAsFresh(db, changed);
  } finally {
    await db.close();
  }
});

/** The showcase's definitions and output in a workspace of their own, its released migrations applied to a PGlite database. */
async function releasedShowcase(name: string): Promise<{ dir: string; sql: string; db: SqlDriver }> {
  const dir = workspace(name, "definitions");
  cpSync(path.join(repoRoot, "generated"), path.join(dir, "generated"), { recursive: true });
  const sql = path.join(dir, "generated", "sql");
  const db = await openDriver("pglite:memory://");
  await migrate(db, readMigrations(sql));
  return { dir, sql, db };
}

/** Adds a draft v4 to the workspace's api.yaml: where a rename of the published versions' fields goes. */
function withDraftV4(dir: string): void {
  const api = path.join(dir, "definitions", "api.yaml");
  writeFileSync(api, readFileSync(api, "utf8").replace(/^( {2}v3: .*)$/m, "$1\n  v4: { draft: true }"));
}

test("fields renamed after their migration was released keep their values (a default too, a decimal widened too); the old columns keep nulls; every generate writes the same migration", async () => {
  const { dir, sql, db } = await releasedShowcase("renamed-store");
  try {
    await db.exec(`insert into "products" ("id", "created_at", "updated_at", "sku", "name", "price_cents", "description", "category", "price")
      values ('01900000-0000-7000-8000-000000000001', now(), now(), 'SKU-1', 'Lamp', 1200, 'A lamp', 'tools', 12.5)`);
    // `description` becomes `summary`, `category` (an enum with a default) `kind`, `price` (a decimal, widened) `amount` in a new version.
    withDraftV4(dir);
    const products = path.join(dir, "definitions", "products.yaml");
    const text = readFileSync(products, "utf8");
    const renamed = text
      .replace(/^ {2}description: \{ /m, "  summary: { renamed: { in: v4, from: description }, ")
      .replace(/^ {2}category: \{ /m, "  kind: { renamed: { in: v4, from: category }, ")
      .replace(/^ {2}price: \{ type: decimal, precision: 12,/m, "  amount: { renamed: { in: v4, from: price }, type: decimal, precision: 14,")
      .replace("search: [name, description]", "search: [name, summary]")
      .replace(/\bcategory\b(?=[,\]])/g, "kind")
      .replace(/\bprice\b(?=[,\]])/g, "amount");
    assert.notEqual(renamed, text);
    writeFileSync(products, renamed);
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stdout + generated.stderr);
    const pending = readMigrations(sql).at(-1)!;
    for (const [from, to] of [["description", "summary"], ["category", "kind"], ["price", "amount"]]) {
      assert.ok(pending.sql.includes(`update "products" set "${to}" = "${from}", "${from}" = null where "${from}" is not null;`), `${from} → ${to}:\n${pending.sql}`);
    }
    // Written again from the released migrations, without the records or caches of the first run: the same text.
    rmSync(path.join(dir, "node_modules"), { recursive: true, force: true });
    assert.equal(canon(["generate"], dir).code, 0);
    assert.equal(readMigrations(sql).at(-1)!.sql, pending.sql);
    assert.equal(canon(["check"], dir).code, 0);
    await migrate(db, readMigrations(sql));
    assert.deepEqual(await db.query(`select "summary", "kind", "amount"::text as "amount", "description", "category", "price" from "products"`), [
      { summary: "A lamp", kind: "tools", amount: "12.50", description: null, category: null, price: null },
    ]);
    await assertSameAsFresh(db, sql);
  } finally {
    await db.close();
  }
});

test("a decimal column the new text widens keeps its values, in a table it creates and in a column it adds; narrowed, it is refused while it holds values", async () => {
  const file = (name: string, sql: string) => ({ name, sql, checksum: createHash("sha256").update(sql).digest("hex") });
  const table = (type: string) =>
    `-- Pending migration 0001\n\ncreate table if not exists "entries" (\n  "row_id" bigint generated always as identity primary key,\n  "hours" ${type} not null\n);\n`;
  const released = file("0001_initial", `create table if not exists "rates" (\n  "row_id" bigint generated always as identity primary key\n);\n`);
  const column = (type: string) => file("0002_pending", `-- Pending migration 0002\n\nalter table "rates" add column if not exists "amount" ${type};\n`);
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, [file("0001_pending", table("numeric(5, 2)"))]), ["0001_pending"]);
    await db.exec(`insert into "entries" ("hours") values (999.99)`);
    assert.deepEqual(await migrate(db, [file("0001_pending", table("numeric(6, 3)"))]), ["0001_pending"]);
    assert.deepEqual(await db.query(`select "hours"::text as h from "entries"`), [{ h: "999.990" }]);
    await assert.rejects(migrate(db, [file("0001_pending", table("numeric(5, 2)"))], { target: "pglite:./data" }), /"entries"\."hours" holds values the new text does not keep/);
    assert.deepEqual(await db.query(`select "hours"::text as h from "entries"`), [{ h: "999.990" }]);
  } finally {
    await db.close();
  }
  const other = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(other, [released, column("numeric(5, 2)")]), ["0001_initial", "0002_pending"]);
    await other.exec(`insert into "rates" ("amount") values (12.5)`);
    assert.deepEqual(await migrate(other, [released, column("numeric(8, 2)")]), ["0002_pending"]);
    assert.deepEqual(await other.query(`select "amount"::text as a from "rates"`), [{ a: "12.50" }]);
    assert.deepEqual(
      await other.query(`select numeric_precision as p from information_schema.columns where table_name = 'rates' and column_name = 'amount'`),
      [{ p: 8 }],
    );
  } finally {
    await other.close();
  }
});

test("an array of ids renamed after its link table was released keeps its links; the old table keeps none", async () => {
  const { dir, sql, db } = await releasedShowcase("renamed-links");
  try {
    await db.exec(`insert into "users" ("id", "created_at", "updated_at", "email", "name", "password") values ('01900000-0000-7000-8000-0000000000a1', now(), now(), 'ann@example.com', 'Ann', 'correct horse battery');
      insert into "products" ("id", "created_at", "updated_at", "sku", "name", "price_cents") values ('01900000-0000-7000-8000-0000000000b1', now(), now(), 'SKU-1', 'Lamp', 1200), ('01900000-0000-7000-8000-0000000000b2', now(), now(), 'SKU-2', 'Desk', 9900);
      insert into "orders" ("id", "created_at", "updated_at", "user_id", "code", "total_cents", "currency", "amount_due_cents") values ('01900000-0000-7000-8000-0000000000c1', now(), now(), '01900000-0000-7000-8000-0000000000a1', 'A-1', 100, 'EUR', 100);
      insert into "orders__product_ids" ("row_id", "position", "target_row_id") select "o"."row_id", "p"."n", "p"."row_id" from "orders" "o", (select "row_id", row_number() over (order by "sku") as "n" from "products") "p";`);
    withDraftV4(dir);
    const orders = path.join(dir, "definitions", "orders.yaml");
    const text = readFileSync(orders, "utf8");
    assert.match(text, /^ {2}product_ids: \{ /m);
    writeFileSync(orders, text.replace(/^ {2}product_ids: \{ /m, "  item_ids: { renamed: { in: v4, from: product_ids }, "));
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stdout + generated.stderr);
    assert.match(readMigrations(sql).at(-1)!.sql, /insert into "orders__item_ids" \("row_id", "position", "target_row_id"\) select "row_id", "position", "target_row_id" from "orders__product_ids" on conflict do nothing;\n {4}delete from "orders__product_ids";/);
    await migrate(db, readMigrations(sql));
    assert.deepEqual(await db.query(`select "position", "target_row_id" > 0 as "linked" from "orders__item_ids" order by "position"`), [{ position: 1, linked: true }, { position: 2, linked: true }]);
    assert.deepEqual(await db.query(`select count(*)::integer as "n" from "orders__product_ids"`), [{ n: 0 }]);
    await assertSameAsFresh(db, sql);
  } finally {
    await db.close();
  }
});

test("a column whose check the new text changes (an enum's values, a length, a decimal's bound) keeps its values; a check its rows break is refused", async () => {
  const file = (sql: string) => ({ name: "0001_pending", sql, checksum: createHash("sha256").update(sql).digest("hex") });
  const table = (values: string, bound: string, type = "numeric(6, 1)") =>
    `-- Pending migration 0001\n\ncreate table if not exists "things" (\n  "row_id" bigint generated always as identity primary key,\n  "kind" text not null constraint "things_kind_check" check ("kind" in (${values})),\n  "price" ${type} not null constraint "things_price_check" check ("price" >= ${bound})\n);\n`;
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, [file(table("'a', 'b'", "0.0"))]), ["0001_pending"]);
    await db.exec(`insert into "things" ("kind", "price") values ('b', 3.5)`);
    assert.deepEqual(await migrate(db, [file(table("'a', 'b', 'c'", "0.00", "numeric(7, 2)"))]), ["0001_pending"]);
    assert.deepEqual(await db.query(`select "kind", "price"::text as "price" from "things"`), [{ kind: "b", price: "3.50" }]);
    await db.exec(`insert into "things" ("kind", "price") values ('c', 1)`);
    await assert.rejects(migrate(db, [file(table("'a', 'b'", "0.00", "numeric(7, 2)"))], { target: "pglite:./data" }), /things_kind_check/);
    assert.deepEqual(await db.query(`select count(*)::integer as "n" from "things"`), [{ n: 2 }]);
  } finally {
    await db.close();
  }
});

test("a released migration that fails where the store applied its pending text names the migration and the repeated key", async () => {
  const file = (name: string, sql: string) => ({ name, sql, checksum: createHash("sha256").update(sql).digest("hex") });
  const table = `create table if not exists "codes" (\n  "row_id" bigint generated always as identity primary key,\n  "code" text not null\n);\n`;
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, [file("0001_pending", `-- Pending migration 0001\n\n${table}`)]), ["0001_pending"]);
    await db.exec(`insert into "codes" ("code") values ('A'), ('A')`);
    const released = file("0001_initial", `-- Migration 0001\n\n${table}\ncreate unique index if not exists "codes_code_key" on "codes" ("code");\n`);
    await assert.rejects(migrate(db, [released]), (e: Error) => /^migration 0001_initial failed, and nothing of it was applied: .*codes_code_key.*\(Key \(code\)=\(A\) is duplicated\): remove or change the records that repeat it/.test(e.message));
    assert.deepEqual(await db.query(`select count(*)::integer as "n" from "codes"`), [{ n: 2 }]);
  } finally {
    await db.close();
  }
});

test("a field that left the definitions after its migration was released, named again: its column is altered to the new type (values kept where they convert), never added over", async () => {
  const { dir, sql, db } = await releasedShowcase("field-back");
  try {
    withDraftV4(dir);
    const products = path.join(dir, "definitions", "products.yaml");
    const text = readFileSync(products, "utf8");
    const withFoo = (type: string) => text.replace(/^( {2}homepage: )/m, `  foo: { type: ${type}, optional: true, added: v4 }\n$1`);
    writeFileSync(products, withFoo("string"));
    assert.equal(canon(["generate"], dir).code, 0);
    assert.equal(canon(["release"], dir).code, 0);
    await migrate(db, readMigrations(sql));
    await db.exec(`insert into "products" ("id", "created_at", "updated_at", "sku", "name", "price_cents", "category", "foo")
      values ('01900000-0000-7000-8000-000000000001', now(), now(), 'SKU-1', 'Lamp', 1200, 'tools', '12')`);
    const released = readMigrations(sql).length;
    // Gone: its column stays with its data, and no migration is written for it.
    writeFileSync(products, text);
    const gone = canon(["generate"], dir);
    assert.equal(gone.code, 0, gone.stdout + gone.stderr);
    assert.equal(readMigrations(sql).length, released);
    // Back with its type: nothing to do, the value is there again.
    writeFileSync(products, withFoo("string"));
    assert.equal(canon(["generate"], dir).code, 0);
    assert.equal(readMigrations(sql).length, released);
    // Back as an integer: the column is altered (before, `add column if not exists` left it text and generate failed).
    writeFileSync(products, withFoo("integer"));
    const back = canon(["generate"], dir);
    assert.equal(back.code, 0, back.stdout + back.stderr);
    const pending = readMigrations(sql).at(-1)!;
    assert.match(pending.sql, /alter table "products" alter column "foo" type bigint using "foo"::bigint;/);
    assert.doesNotMatch(pending.sql, /add column/);
    assert.equal(canon(["check"], dir).code, 0);
    await migrate(db, readMigrations(sql));
    assert.deepEqual(await db.query(`select "foo" from "products"`), [{ foo: 12 }]);
    await assertSameAsFresh(db, sql);
  } finally {
    await db.close();
  }
});

// Found by a sweep of migrations: a rename pointed at another field after its migration was
// released copied the old column (all nulls since the first move) and left the values in the
// column the first rename had moved them to.
test("a rename pointed at another field after its migration was released moves the values on from where the first rename put them", async () => {
  const { dir, sql, db } = await releasedShowcase("rename-repointed");
  try {
    await db.exec(`insert into "products" ("id", "created_at", "updated_at", "sku", "name", "price_cents", "description", "category")
      values ('01900000-0000-7000-8000-000000000001', now(), now(), 'SKU-1', 'Lamp', 1200, 'A lamp', 'tools')`);
    withDraftV4(dir);
    const products = path.join(dir, "definitions", "products.yaml");
    const text = readFileSync(products, "utf8");
    const renamedTo = (name: string) =>
      text.replace(/^ {2}description: \{ /m, `  ${name}: { renamed: { in: v4, from: description }, `).replace("search: [name, description]", `search: [name, ${name}]`);
    writeFileSync(products, renamedTo("summary"));
    assert.equal(canon(["generate"], dir).code, 0);
    assert.equal(canon(["release"], dir).code, 0);
    await migrate(db, readMigrations(sql));
    assert.deepEqual(await db.query(`select "summary", "description" from "products"`), [{ summary: "A lamp", description: null }]);
    writeFileSync(products, renamedTo("abstract"));
    const again = canon(["generate"], dir);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    const pending = readMigrations(sql).at(-1)!;
    assert.ok(pending.sql.includes(`update "products" set "abstract" = "summary", "summary" = null where "summary" is not null;`), pending.sql);
    assert.equal(canon(["check"], dir).code, 0);
    await migrate(db, readMigrations(sql));
    assert.deepEqual(await db.query(`select "abstract", "summary", "description" from "products"`), [{ abstract: "A lamp", summary: null, description: null }]);
    await assertSameAsFresh(db, sql);
  } finally {
    await db.close();
  }
});

// Found by a sweep of `canon dev`: an array of ids made a relation (`items: { type: uuid,
// references: tags }`) while its pending migration was applied was refused with "reset the dev
// store" (its column held values), where a released migration moves them to the link table.
test("a jsonb array of ids the pending migration's new text makes a relation moves its ids to the link table (an id that names no record is refused naming the record), and back when it is made plain again", async () => {
  const file = (sql: string) => ({ name: "0001_pending", sql, checksum: createHash("sha256").update(sql).digest("hex") });
  const tags = `create table if not exists "tags" (\n  "row_id" bigint generated always as identity primary key,\n  "id" uuid not null constraint "tags_id_key" unique\n);`;
  const tickets = (...columns: string[]) =>
    `create table if not exists "tickets" (\n${['  "row_id" bigint generated always as identity primary key', '  "id" uuid not null constraint "tickets_id_key" unique', ...columns].join(",\n")}\n);`;
  const plain = `-- Pending migration 0001\n\n${tags}\n\n${tickets(`  "tag_ids" jsonb not null default '[]'::jsonb`)}\n`;
  const relation = `-- Pending migration 0001\n\n${tags}\n\n${tickets()}\n\ncreate table if not exists "tickets__tag_ids" (\n  "row_id" bigint not null constraint "tickets__tag_ids_row_id_fkey" references "tickets" ("row_id") on delete cascade,\n  "position" integer not null,\n  "target_row_id" bigint not null constraint "tickets__tag_ids_target_row_id_fkey" references "tags" ("row_id") on delete no action\n);\n\ncreate unique index if not exists "tickets__tag_ids_target_row_id_key" on "tickets__tag_ids" using btree ("row_id", "target_row_id");\n`;
  const [a, b, ghost] = ["01900000-0000-7000-8000-00000000000a", "01900000-0000-7000-8000-00000000000b", "01900000-0000-7000-8000-0000000000ff"];
  const t1 = "01900000-0000-7000-8000-000000000001";
  const db = await openDriver("pglite:memory://");
  try {
    assert.deepEqual(await migrate(db, [file(plain)]), ["0001_pending"]);
    await db.exec(`insert into "tags" ("id") values ('${a}'), ('${b}')`);
    await db.exec(`insert into "tickets" ("id", "tag_ids") values ('${t1}', '["${b}", "${ghost}"]')`);
    // An id that names no tag: refused, naming the record, the id and the fix (not a reset); nothing changed.
    await assert.rejects(migrate(db, [file(relation)], { target: "pglite:./data" }), (e: Error) => {
      assert.doesNotMatch(e.message, /\n|reset/);
      assert.match(e.message, new RegExp(`tickets\\.tag_ids becomes a relation to tags, and record ${t1} names ${ghost}, which is no record of tags: remove that id from the records that hold it \\(or create the record it names\\), then save or start again$`));
      return true;
    });
    assert.deepEqual(await db.query(`select "tag_ids" from "tickets"`), [{ tag_ids: [b, ghost] }]);
    // Once every id names a tag: the ids move to the link table in their order, the column goes.
    await db.exec(`update "tickets" set "tag_ids" = '["${b}", "${a}", "${b}"]'`);
    assert.deepEqual(await migrate(db, [file(relation)]), ["0001_pending"]);
    assert.deepEqual(
      await db.query(`select "t"."id"::text as "id" from "tickets__tag_ids" "l" join "tags" "t" on "t"."row_id" = "l"."target_row_id" order by "l"."position"`),
      [{ id: b }, { id: a }],
    );
    assert.deepEqual(await db.query(`select count(*)::int as n from information_schema.columns where table_name = 'tickets' and column_name = 'tag_ids'`), [{ n: 0 }]);
    // Made a plain array again: the ids come back into the column in their order, the link table goes.
    assert.deepEqual(await migrate(db, [file(plain)], { target: "pglite:./data" }), ["0001_pending"]);
    assert.deepEqual(await db.query(`select "tag_ids" from "tickets"`), [{ tag_ids: [b, a] }]);
    assert.deepEqual(await db.query(`select to_regclass('"tickets__tag_ids"') is null as gone`), [{ gone: true }]);
  } finally {
    await db.close();
  }
});
