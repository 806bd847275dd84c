// SPEC §12.7 on PostgreSQL: a POST with an Idempotency-Key whose write committed but whose
// connection was cut before the answer came back (a network reset right after COMMIT). Found by
// a sweep with a TCP proxy between `canon serve` and PostgreSQL: the request answered 409 "its
// answer was not kept … send a new key", which would create a second record. It keeps its own
// failure (a 5xx: the client retries), and the retry with the same key replays the one record.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SqlDriver, SqlQueryable } from "../../generated/runtime/sql-driver.ts";
import { migrate, openDriver, SqlStore } from "../../generated/runtime/sql-store.ts";
import { migrationsFolder, sqlSchema } from "../../generated/sql/index.ts";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import { listen, SHOWCASE, type Api } from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const schemas: string[] = [];
let driver: SqlDriver;
before(async () => {
  await preparePostgres();
  const schema = freshSchema();
  schemas.push(schema);
  driver = await openDriver(POSTGRES_URL, { schema });
  await migrate(driver, migrationsFolder);
});
after(async () => {
  await driver?.close();
  await dropSchemas(schemas);
});

interface Cut {
  /** The next write that claims an idempotency key fails after it committed, as a cut connection would. */
  armed: boolean;
  /** Then, the next read of the key fails too (the pool's other connections were cut as well). */
  readToo: boolean;
}

/** `db`, with the cuts `cut` arms. */
function cutAfterCommit(db: SqlDriver, cut: Cut): SqlDriver {
  let reads = 0;
  const lost = () => {
    cut.armed = false;
    if (cut.readToo) reads = 1;
    return new Error("Connection terminated unexpectedly");
  };
  const text = (statement: unknown) => (typeof statement === "string" ? statement : (statement as { text: string }).text);
  const claims = (statement: unknown) => /canon__idempotency_keys/.test(text(statement));
  // The write's claim (`written`), not the claim made before the handler (`running`).
  const writes = (statement: unknown) => claims(statement) && /'written'/.test(text(statement));
  return {
    ...db,
    close: async () => {},
    async query(statement, params) {
      if (reads > 0 && claims(statement) && /^\s*select/i.test(text(statement))) {
        reads--;
        throw new Error("Connection terminated unexpectedly");
      }
      const rows = await db.query(statement, params);
      if (cut.armed && writes(statement) && /^\s*(with|insert)/i.test(text(statement))) throw lost();
      return rows;
    },
    async transaction(fn) {
      let claimed = false;
      const result = await db.transaction((tx) =>
        fn({
          ...tx,
          query(statement, params) {
            if (writes(statement)) claimed = true;
            return tx.query(statement, params);
          },
        } as SqlQueryable),
      );
      if (cut.armed && claimed) throw lost();
      return result;
    },
  };
}

for (const readToo of [false, true]) {
  test(`a keyed create whose connection is cut after its commit${readToo ? ", and the next read of its key too" : ""}: ${readToo ? "a 5xx, not a 409" : "its own record, 201"}; the retry replays the one record`, async () => {
    const cut: Cut = { armed: false, readToo };
    const store = new SqlStore(cutAfterCommit(driver, cut), sqlSchema);
    const api: Api = await listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store }), SHOWCASE);
    try {
      const n = readToo ? 2 : 1;
      const headers = { authorization: "Bearer dev-writer", "content-type": "application/json", "idempotency-key": `lost-answer-${n}` };
      const body = JSON.stringify({ sku: `LOST-ANSWER-${n}`, name: `Cut after commit ${n}`, price_cents: 500 });
      cut.armed = true;
      const first = await fetch(`${api.base}/v2/products`, { method: "POST", headers, body });
      const firstBody = (await first.json()) as { id?: string; error?: { code: string } };
      assert.equal(cut.armed, false, "the cut happened");
      if (readToo) {
        // Before, the key's own written row was taken for another request's: 409 "send a new key", a second record if followed.
        assert.ok(first.status >= 500, `answered ${first.status} ${JSON.stringify(firstBody)}`);
        assert.equal(firstBody.error?.code, "INTERNAL_ERROR");
      } else assert.equal(first.status, 201, JSON.stringify(firstBody));
      const again = await fetch(`${api.base}/v2/products`, { method: "POST", headers, body });
      assert.equal(again.status, 201);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      const created = (await again.json()) as { id: string; sku: string };
      assert.equal(created.sku, `LOST-ANSWER-${n}`);
      if (!readToo) assert.equal(created.id, firstBody.id);
      const page = (await (await fetch(`${api.base}/v2/products?q=${encodeURIComponent(`Cut after commit ${n}`)}&limit=100`, { headers })).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(page.data.map((p) => p.id), [created.id], "one record");
    } finally {
      await api.close();
    }
  });
}
