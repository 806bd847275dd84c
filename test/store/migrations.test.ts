// Migrations are written once and never change: a field and a resource added to the showcase
// give a new migration beside the old one, byte for byte unchanged; and every migration can be
// applied twice, on PGlite and on PostgreSQL, old data and all.
import assert from "node:assert/strict";
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Module = Record<string, any>;

const REVIEWS = `resource: reviews
description: What buyers say about a product.
parent: products
search: [body]
filters: [rating]
fields:
  product_id: { type: uuid, references: products }
  rating: { type: integer, minimum: 1, maximum: 5 }
  body: { type: string, max_length: 2000, optional: true }
`;

describe("SQL migrations", () => {
  let dir: string;
  let sql: string;
  let firstFiles: Record<string, string>;

  before(() => {
    dir = workspace("migrations", "definitions");
    sql = path.join(dir, "generated", "sql");
    const run = canon(["generate"], dir);
    assert.equal(run.code, 0, run.stderr);
    // The first migration is pending until released (docs/store.md).
    assert.deepEqual(readdirSync(sql).filter((n) => n.endsWith(".sql")), ["0001_pending.sql"]);
    const release = canon(["release"], dir);
    assert.equal(release.code, 0, release.stderr);
    firstFiles = Object.fromEntries(readdirSync(sql).filter((n) => n.endsWith(".sql")).map((n) => [n, readFileSync(path.join(sql, n), "utf8")]));
  });

  test("a fresh output has one migration, 0001_initial, and a schema snapshot", () => {
    assert.deepEqual(Object.keys(firstFiles), ["0001_initial.sql"]);
    const initial = firstFiles["0001_initial.sql"]!;
    for (const table of ["users", "products", "orders", "invoices", "orders__cancellations"]) {
      assert.match(initial, new RegExp(`create table if not exists "${table}" \\(\\n  "row_id" bigint generated always as identity primary key,\\n  "id" uuid not null`));
    }
    // Unique strings compare by their normalized key (runtime/unique.ts): a unique index on an expression.
    assert.match(initial, /create unique index if not exists "orders_code_key" on "orders" using btree \(\(normalize\(btrim\("code"/);
    assert.match(initial, /"user_id" uuid not null constraint "orders_user_id_fkey" references "users" \("id"\)/);
    assert.match(initial, /check \("status" in \('pending', 'paid', 'shipped', 'cancelled'\)\)/);
    assert.match(initial, /create index if not exists "orders_status_id_idx" on "orders" using btree \("status", "id"\)/);
    assert.match(initial, /using gin \("name" gin_trgm_ops\)/);
    // The five collections, the export jobs (orders sets export) and the chunks of their files,
    // the cursor keys, the events (events: true), the idempotency keys (SPEC §12.7), the link
    // table of orders.product_ids (many-to-many, SPEC §12.3), and v3's payments and shipments of orders.
    assert.equal(JSON.parse(readFileSync(path.join(sql, "schema.json"), "utf8")).tables.length, 13);
    assert.match(initial, /create table if not exists "orders__product_ids" \(\n  "row_id" bigint not null constraint "orders__product_ids_row_id_fkey" references "orders" \("row_id"\) on delete cascade/);
    assert.match(initial, /create table if not exists "canon__exports"/);
    assert.match(initial, /create table if not exists "canon__export_chunks" \([^;]*"job_id" uuid not null constraint "canon__export_chunks_job_id_fkey" references "canon__exports" \("id"\) on delete cascade/);
    assert.match(initial, /create table if not exists "canon__cursor_keys"/);
    assert.match(initial, /create table if not exists "canon__events" \(\n  "row_id" bigint generated always as identity primary key,\n  "id" uuid not null/);
  });

  test("adding a field and a resource adds a migration; existing ones stay byte-identical", () => {
    appendFileSync(
      path.join(dir, "definitions", "products.yaml"),
      "  weight_g: { type: integer, minimum: 0, optional: true }\n  featured: { type: boolean, default: false }\n",
    );
    writeFileSync(path.join(dir, "definitions", "reviews.yaml"), REVIEWS);
    const run = canon(["generate"], dir);
    assert.equal(run.code, 0, run.stderr);
    const names = readdirSync(sql).filter((n) => n.endsWith(".sql")).sort();
    assert.equal(names.length, 2, names.join(", "));
    assert.equal(names[0], "0001_initial.sql");
    assert.match(names[1]!, /^0002_[a-z0-9_]+\.sql$/);
    assert.equal(readFileSync(path.join(sql, "0001_initial.sql"), "utf8"), firstFiles["0001_initial.sql"]);
    const second = readFileSync(path.join(sql, names[1]!), "utf8");
    assert.match(second, /create table if not exists "reviews"/);
    assert.match(second, /constraint "reviews_product_id_fkey" references "products" \("id"\)/);
    assert.match(second, /alter table "products" add column if not exists "weight_g" bigint/);
    assert.match(second, /alter table "products" add column if not exists "featured" boolean not null default false/);
    assert.doesNotMatch(second, /create table if not exists "users"/);

    // Nothing changed since: nothing is written, and check agrees.
    const again = canon(["generate"], dir);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /up to date/);
    const check = canon(["check"], dir);
    assert.equal(check.code, 0, check.stdout + check.stderr);
  });

  test("a migration edited by hand stays as it is (generate never rewrites one), and check still passes", () => {
    const file = path.join(sql, "0001_initial.sql");
    const original = readFileSync(file, "utf8");
    writeFileSync(file, `${original}-- a note of our own\n`);
    try {
      const run = canon(["generate"], dir);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(readFileSync(file, "utf8"), `${original}-- a note of our own\n`);
      assert.equal(canon(["check"], dir).code, 0);
    } finally {
      writeFileSync(file, original);
    }
  });

  for (const target of ["pglite", "postgres"] as const) {
    describe(`applied on ${target}`, () => {
      let mod: Module;
      let runtime: Module;
      let url: string;
      let schema: string | undefined;
      before(async () => {
        mod = (await import(pathToFileURL(path.join(sql, "index.ts")).href)) as Module;
        runtime = (await import(pathToFileURL(path.join(dir, "generated", "runtime", "sql-store.ts")).href)) as Module;
        if (target === "pglite") url = `pglite:${path.join(dir, "pglite-data")}`;
        else {
          await preparePostgres();
          schema = freshSchema();
          url = POSTGRES_URL;
        }
      });
      after(async () => {
        if (schema) await dropSchemas([schema]);
      });

      test("an old database catches up; applying again is a no-op; each file is idempotent on its own", async () => {
        const files = runtime.readMigrations(mod.migrationsFolder) as Array<{ name: string; sql: string }>;
        assert.equal(files.length, 2);
        const driver = await runtime.openDriver(url, schema ? { schema } : {});
        try {
          // The database as the first release left it, with a product in it.
          assert.deepEqual(await runtime.migrate(driver, files.slice(0, 1)), ["0001_initial"]);
          await driver.query(
            `insert into products (id, created_at, updated_at, sku, name, price_cents) values ('01890a5d-ac96-774b-bcce-b302099a8057', now(), now(), 'OLD-1', 'Old', 5)`,
          );
          assert.deepEqual(await runtime.migrate(driver, files), [files[1]!.name]);
          assert.deepEqual(await runtime.migrate(driver, files), []);
          for (const file of files) {
            await driver.exec(file.sql);
            await driver.exec(file.sql);
          }
          const rows = await driver.query("select featured, weight_g from products where sku = 'OLD-1'");
          assert.deepEqual(rows, [{ featured: false, weight_g: null }]);
          assert.equal((await driver.query("select count(*)::int as n from canon_migrations"))[0].n, 2);
        } finally {
          await driver.close();
        }
      });

      test("a migration that fails on the stored rows names itself and the rows, and leaves nothing of it", async () => {
        const files = runtime.readMigrations(mod.migrationsFolder) as Array<{ name: string; sql: string; checksum: string }>;
        const driver = await runtime.openDriver(url, schema ? { schema } : {});
        try {
          await driver.query(
            `insert into products (id, created_at, updated_at, sku, name, price_cents) values ('01890a5d-ac96-774b-bcce-b302099a8059', now(), now(), 'DUP-1', 'Twin', 5), ('01890a5d-ac96-774b-bcce-b302099a805a', now(), now(), 'DUP-2', 'Twin', 6)`,
          );
          const unique = { name: "0003_unique_names", sql: "alter table products add column nickname text;\n\ncreate unique index products_name_unique on products (name);\n", checksum: "x" };
          await assert.rejects(runtime.migrate(driver, [...files, unique]), (error: Error) => {
            assert.match(error.message, /^migration 0003_unique_names failed, and nothing of it was applied: could not create unique index "products_name_unique" \(Key \(name\)=\(Twin\) is duplicated\): remove or change the records that repeat it, then start again$/);
            return true;
          });
          assert.deepEqual(await driver.query("select name from canon_migrations where name = '0003_unique_names'"), []);
          assert.deepEqual(await driver.query("select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'products' and column_name = 'nickname'"), []);
          // A key of canon's normalized text (unique lists, unique strings): named by its columns, on one line, not by the expression.
          await driver.query("update products set sku = ' dup-1 ' where sku = 'DUP-2'");
          const spaces = String.raw`U&'\0009\000a\000d\0020\00a0'`;
          const together = {
            name: "0003_unique_together",
            sql: `create unique index "products_name__sku_unique" on "products" using btree ((normalize(btrim("name", ${spaces}), NFC)), (translate(normalize(btrim("sku", ${spaces}), NFC), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')));\n`,
            checksum: "x",
          };
          await assert.rejects(runtime.migrate(driver, [...files, together]), (error: Error) => {
            assert.equal(
              error.message,
              `migration 0003_unique_together failed, and nothing of it was applied: could not create unique index "products_name__sku_unique" (Key (name, sku)=(Twin, dup-1) is duplicated): remove or change the records that repeat it, then start again`,
            );
            return true;
          });
          // A field made required over records that lack it, a check over records that break it: what to do.
          const required = { name: "0003_required", sql: "alter table products alter column weight_g set not null;\n", checksum: "x" };
          await assert.rejects(runtime.migrate(driver, [...files, required]), (error: Error) => {
            assert.match(error.message, /^migration 0003_required failed, and nothing of it was applied: column "weight_g" of relation "products" contains null values: give the records that lack a value one \(or give the field a default\), then start again$/);
            return true;
          });
          const checked = { name: "0003_checked", sql: `alter table products add constraint "products_price_cents_above_check" check (price_cents > 5);\n`, checksum: "x" };
          await assert.rejects(runtime.migrate(driver, [...files, checked]), (error: Error) => {
            assert.match(error.message, /^migration 0003_checked failed, and nothing of it was applied: check constraint "products_price_cents_above_check" of relation "products" is violated by some row.*: change the records that break it, then start again$/);
            return true;
          });
          await driver.query("delete from products where sku like '%DUP-%' or sku like '%dup-%'");
        } finally {
          await driver.close();
        }
      });

      test("the store of the new output works over the migrated database", async () => {
        const store = await mod.openStore(url, schema ? { schema } : {});
        try {
          const old = await store.get("products", "01890a5d-ac96-774b-bcce-b302099a8057");
          assert.equal(old.values.featured, false);
          assert.ok(!("weight_g" in old.values));
          const now = new Date().toISOString();
          const review = await store.insert({ collection: "reviews", record: { id: "01890a5d-ac96-774b-bcce-b302099a8058", created_at: now, updated_at: now, revision: 1, values: { product_id: old.id, rating: 5, body: "Great" } }, constraints: { unique: [] } });
          assert.deepEqual(review.values, { product_id: old.id, rating: 5, body: "Great" });
          const found = await store.list("reviews", { where: { product_id: old.id, rating: 5 }, search: { fields: ["body"], text: "GREAT" }, limit: 5 });
          assert.deepEqual(found.records.map((r: { id: string }) => r.id), [review.id]);
        } finally {
          await store.close();
        }
      });
    });
  }

  test("on PostgreSQL pg_trgm goes to public whatever the service's schema, and one left in a schema is moved there", async () => {
    // A database of its own: the shared test database keeps pg_trgm in public (preparePostgres).
    const pg = (await import("pg")).default;
    const database = `canon_ext_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    await admin.query(`create database "${database}"`);
    const url = Object.assign(new URL(POSTGRES_URL), { pathname: `/${database}` }).href;
    const mod = (await import(pathToFileURL(path.join(sql, "index.ts")).href)) as Module;
    const runtime = (await import(pathToFileURL(path.join(dir, "generated", "runtime", "sql-store.ts")).href)) as Module;
    const files = runtime.readMigrations(mod.migrationsFolder);
    const placed = async (driver: Module) => (await driver.query("select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'"))[0]?.schema;
    try {
      for (const schema of ["first", "second"]) {
        const driver = await runtime.openDriver(url, { schema });
        try {
          // Each schema's migrations apply (the second's trigram indexes find gin_trgm_ops).
          assert.deepEqual(await runtime.migrate(driver, files), files.map((f: { name: string }) => f.name));
          assert.equal(await placed(driver), "public");
        } finally {
          await driver.close();
        }
      }
      // Where an earlier canon left it: in the first service's schema, which the third does not search.
      const driver = await runtime.openDriver(url, { schema: "third" });
      try {
        await driver.exec("alter extension pg_trgm set schema first");
        assert.deepEqual(await runtime.migrate(driver, files), files.map((f: { name: string }) => f.name));
        assert.equal(await placed(driver), "public");
      } finally {
        await driver.close();
      }
      // The first schema's trigram search still works, its index now on public's operator class.
      const first = await runtime.openDriver(url, { schema: "first" });
      try {
        assert.deepEqual(await first.query("select count(*)::int as n from products where name % 'anything'"), [{ n: 0 }]);
      } finally {
        await first.close();
      }
    } finally {
      await admin.query(`drop database if exists "${database}" with (force)`);
      await admin.end();
    }
  });
});
