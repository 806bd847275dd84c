// Search and statement time on PostgreSQL: `?q=` is served by the trigram index (checked with
// EXPLAIN on the statement the store sends), and a statement that runs past `statementTimeoutMs`
// is cancelled by the server: its request answers the 500 envelope and the failure is logged.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, describe, test } from "node:test";
import pg from "pg";
import type { SqlDriver } from "../../generated/runtime/sql-driver.ts";
import { openDriver, migrate, SqlStore } from "../../generated/runtime/sql-store.ts";
import { createEvent } from "../../generated/runtime/events.ts";
import { insertEvents } from "../../generated/runtime/sql-events.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { migrationsFolder, openStore, sqlSchema } from "../../generated/sql/index.ts";
import { createProduct, expectError, startApp } from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets: Array<{ name: string; open(): Promise<SqlDriver> }> = [
  { name: "pglite", open: () => openDriver("pglite:memory://") },
  {
    name: "postgres",
    async open() {
      await preparePostgres();
      const schema = freshSchema();
      schemas.push(schema);
      // One connection: the planner setting below holds for the statement explained.
      return openDriver(POSTGRES_URL, { schema, poolSize: 1 });
    },
  },
];

for (const target of targets) {
  test(`${target.name}: ?q= is matched through the trigram indexes of the search fields`, async () => {
    const driver = await target.open();
    try {
      await migrate(driver, migrationsFolder);
      const sent: string[] = [];
      const store = new SqlStore(
        {
          ...driver,
          query: (statement, params) => {
            sent.push(typeof statement === "string" ? statement : statement.text);
            return driver.query(statement, params);
          },
        },
        sqlSchema,
      );
      const at = new Date().toISOString();
      for (let i = 0; i < 50; i++) {
        const values = { sku: `SKU-${i}`, name: `Lamp ${i}`, description: `A lamp, number ${i}`, price_cents: 1, category: "other", tags: [] };
        await store.insert({ collection: "products", record: { id: newId(), created_at: at, updated_at: at, revision: 1, values }, constraints: { unique: ["sku"] } });
      }
      const found = await store.list("products", { where: {}, search: { fields: ["name", "description"], text: "amp 4" }, limit: 20 });
      assert.deepEqual(found.records.map((r) => r.values.name).sort(), ["Lamp 4", "Lamp 40", "Lamp 41", "Lamp 42", "Lamp 43", "Lamp 44", "Lamp 45", "Lamp 46", "Lamp 47", "Lamp 48", "Lamp 49"]);
      const text = sent.at(-1)!;
      // With 50 rows, scanning the table (or the id index, in id order) is cheaper; without
      // those, the plan shows what serves q.
      await driver.exec("set enable_seqscan = off; set enable_indexscan = off");
      const plan = (await driver.query(`explain ${text}`, ["%amp 4%", 21])).map((r) => String(r["QUERY PLAN"])).join("\n");
      await driver.exec("reset enable_seqscan; reset enable_indexscan");
      assert.match(plan, /products_name_trgm_idx/, plan);
      assert.match(plan, /products_description_trgm_idx/, plan);
    } finally {
      await driver.close();
    }
  });
}

describe("statement_timeout on PostgreSQL", () => {
  test("a statement past the timeout is cancelled: 500 envelope, the failure logged with PostgreSQL's reason", async () => {
    await preparePostgres();
    const schema = freshSchema();
    schemas.push(schema);
    const store = await openStore(POSTGRES_URL, { schema, statementTimeoutMs: 300 });
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const api = await startApp({ store, logger: { level: "error", stream } });
    const locker = new pg.Client({ connectionString: POSTGRES_URL });
    await locker.connect();
    try {
      const product = await createProduct(api, "v2");
      // Another session holds the table: the store's read waits on the lock until its timeout.
      await locker.query("begin");
      await locker.query(`lock table "${schema}"."products" in access exclusive mode`);
      const started = performance.now();
      await expectError(api, "GET", `/v2/products/${product.id}`, 500, "INTERNAL_ERROR");
      const waited = performance.now() - started;
      assert.ok(waited >= 250 && waited < 5000, `answered after ${waited} ms`);
      const logged = lines.join("");
      assert.match(logged, /unexpected failure/);
      assert.match(logged, /statement timeout/);
    } finally {
      await locker.query("rollback").catch(() => {});
      await locker.end();
      await api.close();
    }
  });

  test("a transaction left idle past the timeout is ended by the server, and the events feed goes on", async () => {
    await preparePostgres();
    const schema = freshSchema();
    schemas.push(schema);
    const stuck = await openDriver(POSTGRES_URL, { schema, statementTimeoutMs: 300 });
    const store = await openStore(POSTGRES_URL, { schema });
    try {
      // A write's transaction whose client stops talking after keeping its event (as if its
      // machine were gone): the server ends it, and its event is never kept.
      const idle = stuck.transaction(async (tx) => {
        await insertEvents(tx, [createEvent("product.stuck", "products", { id: "stuck" })]);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await tx.query("select 1");
      });
      await assert.rejects(idle, /idle-in-transaction|terminat|Connection terminated/i);
      const scope = { collections: ["products"], principal: "p" };
      assert.deepEqual((await store.listEvents(scope, undefined, 10)).events, []);
    } finally {
      await store.close();
      await stuck.close().catch(() => {});
    }
  });

  test("the timeout must be a whole number of milliseconds", async () => {
    await assert.rejects(openDriver(POSTGRES_URL, { statementTimeoutMs: -1 }), /statementTimeoutMs/);
    await assert.rejects(openDriver(POSTGRES_URL, { statementTimeoutMs: 1.5 }), /statementTimeoutMs/);
  });
});
