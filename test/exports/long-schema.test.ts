// A store schema may be any SQL identifier of up to 63 characters; pg-boss, which queues the
// export jobs on a PostgreSQL server in a schema beside the store's, takes names of at most 50
// bytes. With `<schema>_pgboss` as its name, an app on a schema of more than 43 characters did not
// start (pg-boss's "Name cannot exceed 50 bytes" from the export service). Now such a schema's
// queue is in a schema of 50 characters named from a hash of the whole name: the app starts, an
// export succeeds, and two long schemas with one beginning keep their queues apart.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { openStore } from "../../generated/sql/index.ts";
import { pgBossSchema } from "../../generated/runtime/exports-service.ts";
import { createOrder, createUser, expectStatus, startApp, type Api } from "../http/helpers.ts";
import { dropSchemas, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { exportsFolder, ndjson, principals, settled, download } from "./helpers.ts";

const stamp = `${process.pid}_${Date.now().toString(36)}`;
/** Two schemas of 63 characters, alike in their first 50. */
const long = (tail: string) => `canon_test_long_schema_${stamp}_`.padEnd(60, "x") + tail;
const schemas = [long("aaa"), long("bbb")];
after(() => dropSchemas(schemas));

test("pg-boss's schema is at most 50 bytes, the same for one store schema, different for two", () => {
  assert.equal(pgBossSchema("public"), "public_pgboss");
  assert.equal(pgBossSchema("a".repeat(43)), `${"a".repeat(43)}_pgboss`);
  for (const schema of [...schemas, "b".repeat(44)]) {
    assert.equal(schema.length <= 63, true);
    const name = pgBossSchema(schema);
    assert.equal(name.length, 50, name);
    assert.match(name, /^[a-z_][a-z0-9_]*_pgboss$/);
    assert.equal(pgBossSchema(schema), name);
  }
  assert.notEqual(pgBossSchema(schemas[0]!), pgBossSchema(schemas[1]!));
});

test(
  "an app on a PostgreSQL schema of 63 characters starts and its exports succeed",
  { timeout: 120_000 },
  async () => {
    await preparePostgres();
    const apis: Api[] = [];
    const stores: Array<{ close(): Promise<void> }> = [];
    const folder = exportsFolder();
    try {
      for (const schema of schemas) {
        assert.equal(schema.length, 63);
        const store = await openStore(POSTGRES_URL, { schema });
        stores.push(store);
        apis.push(
          await startApp({
            store,
            authenticate: principals,
            exports: { directory: folder.directory, pgBoss: { pollingIntervalSeconds: 0.5 } },
          }),
        );
      }
      for (const api of apis) {
        const order = await createOrder(api, (await createUser(api)).id);
        const created = await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" } });
        const job = created.body as { id: string };
        const done = await settled(api, "v2", job.id);
        assert.equal(done.status, "succeeded", JSON.stringify(done));
        const file = await download(api, done.download_url);
        assert.deepEqual(
          ndjson(file.text).map((record) => record.id),
          [order.id],
        );
      }
    } finally {
      for (const api of apis) await api.close();
      for (const store of stores) await store.close();
      folder.remove();
    }
  },
);
