// One table held up by another session (a long `lock table`, a migration, a slow batch job)
// while a PostgreSQL service serves: the statements waiting on it fill the store's pool. Before
// the fix, `/vN/ready` asked `select 1` through that pool, waited for a connection past its 2 s
// and answered 503: every instance behind a balancer failed its check at once (measured: three
// instances behind HAProxy all DOWN within 5 s of a 15 s lock on `products`, HAProxy's own bare
// 503 for every route, `users` too), one slow table taking the whole API down. And a statement
// cancelled by `statement_timeout` answered 500 without `Retry-After`, unlike a pool wait that
// timed out a moment before it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import { openStore } from "../../generated/sql/index.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const schema = freshSchema("canon_slowtable");
const apps: FastifyInstance[] = [];
let locker: pg.Client;

async function serve(options: { poolSize: number; statementTimeoutMs: number; connectionTimeoutMs: number }) {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("schema", schema);
  const store = await openStore(url.toString(), options);
  const app = await buildApp({ authenticate: devAuthenticate, store, rateLimit: false, expensiveReads: false, logger: false });
  apps.push(app);
  return app.listen({ port: 0, host: "127.0.0.1" });
}

before(async () => {
  await preparePostgres();
  locker = new pg.Client({ connectionString: POSTGRES_URL });
  await locker.connect();
});

after(async () => {
  await locker.query("rollback").catch(() => {});
  await locker.end();
  for (const app of apps) await app.close();
  await dropSchemas([schema]);
});

const get = (base: string, path: string) =>
  fetch(base + path, { headers: { authorization: "Bearer dev-writer" }, signal: AbortSignal.timeout(60_000) });

/** Holds `products` of the test's schema until `release`. */
async function lockProducts(): Promise<() => Promise<void>> {
  await locker.query("begin");
  await locker.query(`lock table "${schema}".products in access exclusive mode`);
  return async () => {
    await locker.query("commit");
  };
}

/** Waits until `n` statements of the schema's sessions wait on a lock. */
async function waiting(n: number): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    const { rows } = await locker.query(
      `select count(distinct pid)::int as n from pg_locks where relation = '"${schema}".products'::regclass and not granted`,
    );
    if (rows[0].n >= n) return;
    if (Date.now() > until) {
      const all = await locker.query("select wait_event_type, wait_event, state, left(query, 80) as q from pg_stat_activity where pid <> pg_backend_pid()");
      throw new Error(`${rows[0].n} statements wait on the lock, not ${n}: ${JSON.stringify(all.rows)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a table locked by another session", () => {
  test("with every pool connection waiting on it, /vN/ready still answers 200: the database answers", async () => {
    const base = await serve({ poolSize: 2, statementTimeoutMs: 20_000, connectionTimeoutMs: 20_000 });
    assert.equal((await get(base, "/v2/ready")).status, 200);
    const release = await lockProducts();
    let pending: Array<Promise<Response>> = [];
    try {
      // Two hold the pool's two connections on the lock; two more wait for a connection.
      pending = Array.from({ length: 4 }, () => get(base, "/v2/products"));
      await waiting(2);
      const started = Date.now();
      const ready = await get(base, "/v2/ready");
      assert.equal(ready.status, 200, await ready.text());
      assert.ok(Date.now() - started < 2000, `ready answered after ${Date.now() - started} ms`);
      assert.equal((await get(base, "/v2/health")).status, 200);
    } finally {
      await release();
    }
    for (const reply of await Promise.all(pending)) assert.equal(reply.status, 200);
  });

  test("a statement cancelled by statement_timeout answers 500 with Retry-After", async () => {
    const base = await serve({ poolSize: 2, statementTimeoutMs: 500, connectionTimeoutMs: 20_000 });
    const release = await lockProducts();
    try {
      for (const path of ["/v2/products", "/v2/products?q=something"]) {
        const reply = await get(base, path);
        assert.equal(reply.status, 500);
        assert.equal(reply.headers.get("retry-after"), "5");
        assert.deepEqual(await reply.json(), { error: { code: "INTERNAL_ERROR", message: "An unexpected error occurred." } });
      }
    } finally {
      await release();
    }
    assert.equal((await get(base, "/v2/products")).status, 200);
  });
});
