// The store contract (runtime/store.ts) on every store: memory, PGlite and a PostgreSQL server,
// through the showcase's generated `openStore`. The SQL stores are also checked for what only
// SQL can get wrong: parameters only, named columns only (never row_id), and atomic writes.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConflictError, BusinessRuleError, ValidationError } from "../../generated/runtime/errors.ts";
import type { Store, StoredRecord, Values } from "../../generated/runtime/store.ts";
import { isoTimestamp } from "../../generated/runtime/sql-codec.ts";
import { migrate, openDriver, SqlStore, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { migrationsFolder, sqlSchema } from "../../generated/sql/index.ts";
import { dropSchemas, freshSchema, makeStores, POSTGRES_URL, preparePostgres } from "./stores.ts";

let n = Math.floor(Math.random() * 100_000);
const next = () => ++n;

function record(values: Values, at = new Date().toISOString()): StoredRecord {
  return { id: newId(), created_at: at, updated_at: at, revision: 1, values };
}

const user = (overrides: Values = {}): Values => {
  const i = next();
  return { email: `u${i}@example.com`, name: `User ${i}`, role: "customer", password: "correct horse battery", ...overrides };
};
const product = (overrides: Values = {}): Values => {
  const i = next();
  return { sku: `SKU-${i}`, name: `Product ${i}`, price_cents: 100, category: "other", tags: [], ...overrides };
};
const order = (userId: string, overrides: Values = {}): Values => {
  const i = next();
  return {
    user_id: userId,
    code: `ORD-${String(i % 1_000_000).padStart(6, "0")}`,
    status: "pending",
    total_cents: 1200,
    currency: "EUR",
    gift_wrap: false,
    amount_due_cents: 500,
    ...overrides,
  };
};
const UNIQUE = { users: { unique: ["email"] }, products: { unique: ["sku"] }, orders: { unique: ["code"] }, none: { unique: [] } };

for (const factory of makeStores()) {
  describe(`store contract: ${factory.name}`, () => {
    let store: Store;
    before(async () => {
      store = await factory.create();
    });
    after(() => factory.cleanup());

    test("insert returns the record as stored; get reads it back exactly", async () => {
      const values = product({
        description: "A 100% cotton bag_of things",
        tags: ["a", "b"],
        dimensions: { width_mm: 10, height_mm: 20 },
        homepage: null,
      });
      const inserted = await store.insert({ collection: "products", record: record(values), constraints: UNIQUE.products });
      assert.deepEqual(inserted.values, values);
      assert.equal(inserted.revision, 1);
      assert.match(inserted.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.deepEqual(await store.get("products", inserted.id), inserted);
      assert.ok(!("row_id" in inserted) && !("row_id" in inserted.values));

      // absent and null stay apart; dates, date-times (with their offset) and integers come back as sent
      const bare = await store.insert({ collection: "products", record: record(product()), constraints: UNIQUE.products });
      assert.ok(!("homepage" in bare.values) && !("description" in bare.values) && !("dimensions" in bare.values));
      const u = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
      const o = await store.insert({ collection: "orders", record: record(order(u.id, { placed_at: "2026-03-04T05:06:07.891+02:00", note: "x" })), constraints: UNIQUE.orders });
      assert.equal(o.values.placed_at, "2026-03-04T05:06:07.891+02:00");
      assert.equal(o.values.total_cents, 1200);
      const invoice = await store.insert({ collection: "invoices", record: record({ order_id: o.id, amount_cents: 5, due_date: "2026-07-01", status: "draft" }), constraints: UNIQUE.none });
      assert.equal(invoice.values.due_date, "2026-07-01");
      assert.equal(await store.get("products", newId()), null);
    });

    test("cursor lists: ascending id, keyset after an id, hasMore exactly when more follow", async () => {
      const category = "games";
      const tag = `walk-${next()}`;
      const ids: string[] = [];
      for (let i = 0; i < 25; i++) ids.push((await store.insert({ collection: "products", record: record(product({ category, name: `${tag} ${i}` })), constraints: UNIQUE.products })).id);
      const seen: string[] = [];
      let afterId: string | undefined;
      for (let page = 0; page < 10; page++) {
        const { records, hasMore } = await store.list("products", {
          where: { category },
          search: { fields: ["name"], text: tag },
          limit: 10,
          ...(afterId ? { after: afterId } : {}),
        });
        seen.push(...records.map((r) => r.id));
        assert.equal(hasMore, seen.length < 25, `page ${page}`);
        if (!hasMore) break;
        afterId = records[records.length - 1]!.id;
      }
      assert.deepEqual(seen, ids);
      assert.deepEqual(seen, [...seen].sort());
      const exact = await store.list("products", { where: {}, search: { fields: ["name"], text: tag }, limit: 25 });
      assert.equal(exact.records.length, 25);
      assert.equal(exact.hasMore, false);
    });

    test("search is a case-insensitive substring; % and _ are plain characters", async () => {
      const word = `Zq${next()}`;
      const a = await store.insert({ collection: "products", record: record(product({ name: `The ${word} 50% off` })), constraints: UNIQUE.products });
      const b = await store.insert({ collection: "products", record: record(product({ name: "other", description: `about ${word.toLowerCase()}_x` })), constraints: UNIQUE.products });
      await store.insert({ collection: "products", record: record(product({ name: `${word}0 off` })), constraints: UNIQUE.products });
      const find = async (text: string) =>
        (await store.list("products", { where: {}, search: { fields: ["name", "description"], text }, limit: 100 })).records.map((r) => r.id);
      assert.deepEqual(await find(`${word.toUpperCase()} 50%`), [a.id]);
      assert.deepEqual(await find(`${word}_x`), [b.id]);
      assert.deepEqual(await find(`${word.toLowerCase()} 5_%`), []);
    });

    test("offset pages: the page and the total of all matches", async () => {
      const role = "admin";
      const before = (await store.page("users", { where: { role }, offset: 0, limit: 1 })).total;
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await store.insert({ collection: "users", record: record(user({ role })), constraints: UNIQUE.users })).id);
      const first = await store.page("users", { where: { role }, offset: before, limit: 5 });
      assert.equal(first.total, before + 7);
      assert.deepEqual(first.records.map((r) => r.id), made.slice(0, 5));
      const beyond = await store.page("users", { where: { role }, offset: before + 100, limit: 5 });
      assert.deepEqual(beyond, { records: [], total: before + 7 });
    });

    test("a unique value taken: ConflictError naming the field, on insert and on update", async () => {
      const a = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
      const b = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
      await assert.rejects(store.insert({ collection: "users", record: record(user({ email: a.values.email })), constraints: UNIQUE.users }), (e: unknown) => {
        assert.ok(e instanceof ConflictError);
        assert.deepEqual(e.details, [{ field: "email", issue: "is already taken" }]);
        return true;
      });
      await assert.rejects(store.update({ collection: "users", id: b.id, values: { ...b.values, email: a.values.email }, expectedRevision: 1, constraints: UNIQUE.users }), ConflictError);
      assert.deepEqual(await store.get("users", b.id), b);
    });

    test("writes are compare-and-set on the revision: a stale one changes nothing", async () => {
      const u = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
      const updated = await store.update({ collection: "users", id: u.id, values: { ...u.values, name: "Renamed" }, expectedRevision: 1, constraints: UNIQUE.users });
      assert.equal(updated!.revision, 2);
      assert.equal(updated!.values.name, "Renamed");
      assert.ok(updated!.updated_at > u.updated_at, "updated_at moves on, within one millisecond too");
      await assert.rejects(store.update({ collection: "users", id: u.id, values: { ...u.values, name: "Stale" }, expectedRevision: 1, constraints: UNIQUE.users }), ConflictError);
      await assert.rejects(store.delete({ collection: "users", id: u.id, expectedRevision: 1 }), ConflictError);
      assert.equal((await store.get("users", u.id))!.values.name, "Renamed");
      assert.equal(await store.update({ collection: "users", id: newId(), values: u.values, expectedRevision: 1, constraints: UNIQUE.users }), null);
      assert.equal(await store.delete({ collection: "users", id: u.id, expectedRevision: 2 }), true);
      assert.equal(await store.delete({ collection: "users", id: u.id, expectedRevision: 2 }), false);
      assert.equal(await store.get("users", u.id), null);
    });

    test("concurrent updates at one revision: exactly one wins", async () => {
      const u = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.update({ collection: "users", id: u.id, values: { ...u.values, name: `Writer ${i}` }, expectedRevision: 1, constraints: UNIQUE.users })),
      );
      const won = results.filter((r) => r.status === "fulfilled");
      assert.equal(won.length, 1);
      for (const r of results) if (r.status === "rejected") assert.ok(r.reason instanceof ConflictError);
      const final = (await store.get("users", u.id))!;
      assert.equal(final.revision, 2);
      assert.equal(final.values.name, (won[0] as PromiseFulfilledResult<StoredRecord>).value.values.name);
    });

    test("ids stay unique and ordered under 50 concurrent inserts", async () => {
      const tag = `burst-${next()}`;
      const made = await Promise.all(
        Array.from({ length: 50 }, () => store.insert({ collection: "products", record: record(product({ name: tag })), constraints: UNIQUE.products })),
      );
      assert.equal(new Set(made.map((r) => r.id)).size, 50);
      const listed = (await store.list("products", { where: {}, search: { fields: ["name"], text: tag }, limit: 100 })).records.map((r) => r.id);
      assert.deepEqual(listed, made.map((r) => r.id).sort());
    });
  });
}

/** What only a SQL store can get wrong, on PGlite and on PostgreSQL. */
const sqlTargets: Array<{ name: string; open(): Promise<{ driver: SqlDriver; done(): Promise<void> }> }> = [
  {
    name: "pglite",
    async open() {
      const driver = await openDriver("pglite:memory://");
      return { driver, done: () => driver.close() };
    },
  },
  {
    name: "postgres",
    async open() {
      await preparePostgres();
      const schema = freshSchema();
      // One connection: pg_prepared_statements shows what this connection prepared.
      const driver = await openDriver(POSTGRES_URL, { schema, poolSize: 1 });
      return {
        driver,
        async done() {
          await driver.close();
          await dropSchemas([schema]);
        },
      };
    },
  },
];

for (const target of sqlTargets) {
  describe(`SQL store: ${target.name}`, () => {
    let driver: SqlDriver;
    let done: () => Promise<void>;
    const statements: Array<{ text: string; name?: string; params: readonly unknown[] }> = [];
    let store: SqlStore;
    before(async () => {
      ({ driver, done } = await target.open());
      assert.ok((await migrate(driver, migrationsFolder)).length > 0);
      // A driver that records every statement the store sends.
      const spy: SqlDriver = {
        kind: driver.kind,
        query: (statement, params = []) => {
          statements.push(typeof statement === "string" ? { text: statement, params } : { ...statement, params });
          return driver.query(statement, params);
        },
        exec: (text) => {
          statements.push({ text, params: [] });
          return driver.exec(text);
        },
        transaction: (fn) => driver.transaction(fn),
        close: async () => {},
      };
      store = new SqlStore(spy, sqlSchema);
    });
    after(() => done());

    test("migrations are recorded; applying them again is a no-op", async () => {
      assert.deepEqual(await migrate(driver, migrationsFolder), []);
      const rows = await driver.query("select name from canon_migrations order by name");
      assert.ok(rows.length >= 1 && rows[0]!.name === "0001_initial");
    });

    test("a changed migration that was applied is refused", async () => {
      const [first] = (await import("../../generated/runtime/sql-store.ts")).readMigrations(migrationsFolder);
      await assert.rejects(migrate(driver, [{ ...first!, sql: `${first!.sql}\n-- edited`, checksum: "changed" }]), /applied with other content/);
    });

    test("values travel as parameters only; columns are named, row_id never read", async () => {
      statements.length = 0;
      const evil = "Robert'); drop table users; --";
      const u = await store.insert({ collection: "users", record: record(user({ name: evil })), constraints: UNIQUE.users });
      await store.get("users", u.id);
      await store.list("users", { where: { role: "customer" }, search: { fields: ["name"], text: evil }, limit: 5, after: u.id });
      await store.page("users", { where: { role: "customer" }, search: { fields: ["name", "email"], text: "x" }, offset: 0, limit: 5 });
      await store.update({ collection: "users", id: u.id, values: { ...u.values, name: `${evil}!` }, expectedRevision: 1, constraints: UNIQUE.users });
      await store.delete({ collection: "users", id: u.id, expectedRevision: 2 });
      assert.ok(statements.length >= 6);
      for (const { text } of statements) {
        assert.ok(!text.includes("Robert") && !text.includes(u.id) && !text.includes("customer"), `a value inside the SQL: ${text}`);
        assert.doesNotMatch(text, /row_id/, `row_id in a statement: ${text}`);
        assert.doesNotMatch(text, /select \*|returning \*/i, `an unnamed column list: ${text}`);
      }
      assert.equal((await driver.query("select count(*)::int as n from users where name = $1", [evil]))[0]!.n, 0);
    });

    test("every statement is named by its text and prepared once per connection; only values vary per request", async () => {
      statements.length = 0;
      const shapes = async (i: number) => {
        const u = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
        await store.get("users", u.id);
        await store.list("users", { where: {}, limit: 20 });
        await store.list("users", { where: { role: "customer" }, search: { fields: ["name"], text: `x${i}` }, limit: 5, after: u.id });
        await store.page("users", { where: { role: "customer" }, search: { fields: ["name", "email"], text: `y${i}` }, offset: 10 * i, limit: 5 });
        await store.update({ collection: "users", id: u.id, values: { ...u.values, name: `renamed ${i}` }, expectedRevision: 1, constraints: UNIQUE.users });
        await store.delete({ collection: "users", id: u.id, expectedRevision: 2 });
      };
      await shapes(1);
      const first = statements.splice(0);
      await shapes(2);
      const second = statements.splice(0);
      assert.equal(first.length, 7);
      assert.deepEqual(second.map((s) => s.name), first.map((s) => s.name), "the same shapes, the same statements");
      for (const s of first) {
        assert.match(s.name ?? "", /^canon_[\w-]{22}$/, `an unnamed statement: ${s.text}`);
      }
      assert.equal(new Set(first.map((s) => s.name)).size, 7, "one name per text");
      // The driver prepared each once on its connection (PGlite has one; this pool has one too).
      const names = new Set((await driver.query("select name from pg_prepared_statements")).map((r) => String(r.name)));
      for (const s of first) assert.ok(names.has(s.name!), `${s.name} is not prepared: ${s.text}`);
    });

    test("the tables have row_id as an identity primary key and id as a unique uuid", async () => {
      const rows = await driver.query(
        `select column_name, data_type, is_identity, is_nullable from information_schema.columns
         where table_schema = current_schema() and table_name = 'orders' and column_name in ('row_id', 'id') order by column_name`,
      );
      assert.deepEqual(
        rows.map((r) => [r.column_name, r.data_type, r.is_identity, r.is_nullable]),
        [
          ["id", "uuid", "NO", "NO"],
          ["row_id", "bigint", "YES", "NO"],
        ],
      );
    });

    test("a reference to nothing: BusinessRuleError naming the field (the foreign key answers, not a lookup)", async () => {
      await assert.rejects(store.insert({ collection: "orders", record: record(order(newId())), constraints: UNIQUE.orders }), (e: unknown) => {
        assert.ok(e instanceof BusinessRuleError);
        assert.deepEqual(e.details, [{ field: "user_id", issue: "must name an existing record of users" }]);
        return true;
      });
      await assert.rejects(
        store.insert({ collection: "orders/cancellations", record: record({ order_id: newId(), reason: "x" }), constraints: UNIQUE.none }),
        BusinessRuleError,
      );
    });

    test("children go with their parent: deleting a user deletes its orders, their invoices and cancellations", async () => {
      const u = await store.insert({ collection: "users", record: record(user()), constraints: UNIQUE.users });
      const o = await store.insert({ collection: "orders", record: record(order(u.id)), constraints: UNIQUE.orders });
      const i = await store.insert({ collection: "invoices", record: record({ order_id: o.id, amount_cents: 1, due_date: "2026-01-31", status: "draft" }), constraints: UNIQUE.none });
      const c = await store.insert({ collection: "orders/cancellations", record: record({ order_id: o.id, reason: "changed my mind" }), constraints: UNIQUE.none });
      assert.equal(await store.delete({ collection: "users", id: u.id, expectedRevision: 1 }), true);
      assert.equal(await store.get("orders", o.id), null);
      assert.equal(await store.get("invoices", i.id), null);
      assert.equal(await store.get("orders/cancellations", c.id), null);
    });

    test("a unique text too long for its index answers ValidationError naming the field, not a 500", async () => {
      const sku = (await import("node:crypto")).randomBytes(6000).toString("base64");
      await assert.rejects(store.insert({ collection: "products", record: record(product({ sku })), constraints: UNIQUE.products }), (error: unknown) => {
        assert.ok(error instanceof ValidationError, String(error));
        assert.deepEqual(error.details?.map((d) => d.field), ["sku"]);
        return true;
      });
    });

    test("the database enforces the limits the validators check (a safety net)", async () => {
      await assert.rejects(driver.query(`insert into users (id, created_at, updated_at, email, name, role, password) values ($1, now(), now(), 'a@b.c', 'n', 'root', 'correct horse battery')`, [newId()]), /users_role_check/);
      await assert.rejects(
        driver.query(`insert into products (id, created_at, updated_at, sku, name, price_cents, tags) values ($1, now(), now(), 'S-1', 'n', -1, '[]')`, [newId()]),
        /products_price_cents_check/,
      );
      await assert.rejects(
        driver.query(`insert into products (id, created_at, updated_at, sku, name, price_cents, tags) values ($1, now(), now(), 'S-2', 'n', 1, '{"a":1}')`, [newId()]),
        /products_tags_check/,
      );
      await assert.rejects(
        driver.query(`insert into products (id, created_at, updated_at, sku, name, price_cents, homepage) values ($1, now(), now(), 'S-3', 'n', 1, '12')`, [newId()]),
        /products_homepage_check/,
      );
    });

    test("a cursor page deep in the list uses the id index (keyset), not a scan of what precedes it", async () => {
      const plan = await driver.query(`explain select "id" from products where "id" > $1 order by "id" limit 21`, [newId()]);
      const text = plan.map((r) => String(Object.values(r)[0])).join("\n");
      assert.match(text, /Index (Only )?Scan using products_id_key/, text);
    });

    test("timestamps read back in UTC with milliseconds, the fraction cut", async () => {
      const u = await store.insert({ collection: "users", record: record(user(), "2026-01-02T03:04:05.600Z"), constraints: UNIQUE.users });
      assert.equal(u.created_at, "2026-01-02T03:04:05.600Z");
      await driver.query(`update users set created_at = '2026-01-02 08:34:05.678912+05:30' where id = $1`, [u.id]);
      const read = await store.get("users", u.id);
      assert.equal(read!.created_at, "2026-01-02T03:04:05.678Z");
    });
  });
}

test("isoTimestamp: PostgreSQL's text of a timestamptz as ISO 8601 with milliseconds, cut as to_char's MS cuts it", () => {
  const cases: Array<[string, string]> = [
    ["2026-01-01 00:08:20+00", "2026-01-01T00:08:20.000Z"],
    ["2026-01-01 00:08:20.1+00", "2026-01-01T00:08:20.100Z"],
    ["2026-01-01 00:08:20.12+00", "2026-01-01T00:08:20.120Z"],
    ["2026-01-01 00:08:20.123+00", "2026-01-01T00:08:20.123Z"],
    ["2026-01-01 00:08:20.123999+00", "2026-01-01T00:08:20.123Z"],
    // Another session time zone is converted; another shape is left as it is.
    ["2026-01-01 05:38:20.123+05:30", "2026-01-01T00:08:20.123Z"],
    ["2026-01-01 00:08:20.5-03", "2026-01-01T03:08:20.500Z"],
    ["10000-01-01 00:00:00+00", "10000-01-01T00:00:00.000Z"],
    ["infinity", "infinity"],
  ];
  for (const [text, iso] of cases) assert.equal(isoTimestamp(text), iso, text);
});

