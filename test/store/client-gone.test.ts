// Work whose client left is stopped (issue 30, point 2), on a PostgreSQL server: a search whose
// client resets its connection while the statement runs is cancelled within about a second
// (pg_stat_activity shows its backend idle again) and the pool's connection serves the next
// requests; a request whose client left while it waited for a pool connection never runs its
// query. A client that closes normally (FIN: an aborted fetch) has left too, 250 ms later; a
// client that half-closes after its request still reads the answer of quick work, and with
// `connections.halfCloseIsGone: false` its slow work runs to its end. The logs name neither the
// backend's process id nor its cancel key.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { ClientGoneError, inClientScope } from "../../generated/runtime/client-scope.ts";
import type { ConnectionOptions } from "../../generated/runtime/connections.ts";
import type { SqlDriver } from "../../generated/runtime/sql-driver.ts";
import { migrate, openDriver, SqlStore } from "../../generated/runtime/sql-store.ts";
import { migrationsFolder, sqlSchema } from "../../generated/sql/index.ts";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import { createProduct, listen, SHOWCASE, type Api } from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const schemas: string[] = [];
const drivers: SqlDriver[] = [];
let monitor: pg.Client;
before(async () => {
  await preparePostgres();
  monitor = new pg.Client({ connectionString: POSTGRES_URL });
  await monitor.connect();
});
after(async () => {
  await monitor?.end();
  await Promise.all(drivers.map((d) => d.close()));
  await dropSchemas(schemas);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A driver whose searches for a text holding `slow` first count themselves in the schema's
 * sequence `ran` and sleep `seconds`, in one statement marked with the schema's name (to find it
 * in pg_stat_activity): a statement of the request, run as its other queries are.
 */
async function slowSearchDriver(schema: string, poolSize: number, seconds: number): Promise<SqlDriver> {
  const driver = await openDriver(POSTGRES_URL, { schema, poolSize, statementTimeoutMs: 60_000 });
  drivers.push(driver);
  await migrate(driver, migrationsFolder);
  await driver.exec("create sequence ran");
  return {
    ...driver,
    close: async () => {},
    async query(statement, params) {
      const text = typeof statement === "string" ? statement : statement.text;
      if (/ ilike /.test(text) && params?.some((p) => String(p).includes("slow"))) {
        await driver.query(`select nextval('ran'), pg_sleep(${seconds}) /* ${schema} */`);
      }
      return driver.query(statement, params);
    },
  };
}

async function start(poolSize: number, seconds: number, connections?: ConnectionOptions): Promise<{ api: Api; schema: string; driver: SqlDriver; logs: string[] }> {
  const schema = freshSchema();
  schemas.push(schema);
  const driver = await slowSearchDriver(schema, poolSize, seconds);
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const store = new SqlStore(driver, sqlSchema);
  const api = await listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store, connections, logger: { level: "info", stream } }), SHOWCASE);
  return { api, schema, driver, logs };
}

/** A GET sent on a raw connection, left unanswered: the caller resets it. */
function rawGet(api: Api, path: string, token: string): Promise<Socket> {
  const { port } = new URL(api.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      resolve(socket);
    });
    socket.on("error", reject);
  });
}

/** A request sent on a raw connection that then closes its sending side (FIN); resolves with all the service wrote back. */
function halfClosed(api: Api, path: string, token: string): Promise<string> {
  const { port } = new URL(api.base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), "127.0.0.1", () =>
      socket.end(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`),
    );
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString("latin1"));
    });
  });
}

/** Waits until the schema's slow statement runs. */
async function started(schema: string): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await sleeping(schema)) === 0) {
    assert.ok(Date.now() < until, "the search's statement started");
    await sleep(20);
  }
}

/** Milliseconds until the schema's slow statement no longer runs, at most `limitMs`. */
async function stopsWithin(schema: string, from: number, limitMs: number): Promise<number> {
  while ((await sleeping(schema)) > 0) {
    assert.ok(performance.now() - from < limitMs, `the statement is cancelled within ${limitMs} ms`);
    await sleep(20);
  }
  return performance.now() - from;
}

async function sleeping(schema: string): Promise<number> {
  const { rows } = await monitor.query("select count(*)::int as n from pg_stat_activity where state = 'active' and query like $1 and pid <> pg_backend_pid()", [`%pg_sleep%${schema}%`]);
  return rows[0].n as number;
}

async function ran(driver: SqlDriver): Promise<number> {
  const [row] = await driver.query("select case when is_called then last_value else 0 end as n from ran");
  return Number(row!.n);
}

describe("work whose client left is stopped (PostgreSQL)", () => {
  test("a running search whose client resets is cancelled within a second; the pool serves the next requests", async () => {
    const { api, schema, driver, logs } = await start(2, 30);
    try {
      const product = await createProduct(api, "v2", { name: "Slow lamp" });
      const socket = await rawGet(api, "/v2/products?q=slow", "dev-writer");
      const until = Date.now() + 10_000;
      while ((await sleeping(schema)) === 0) {
        assert.ok(Date.now() < until, "the search's statement started");
        await sleep(20);
      }
      socket.resetAndDestroy();
      const left = performance.now();
      while ((await sleeping(schema)) > 0) {
        assert.ok(performance.now() - left < 1500, "the statement is cancelled within 1.5 s");
        await sleep(20);
      }
      const took = performance.now() - left;
      console.log(`the backend stopped ${took.toFixed(0)} ms after the client's reset`);
      // Both connections of the pool answer, many times over.
      for (let i = 0; i < 10; i++) {
        const results = await Promise.all(
          ["/v2/products?q=lamp", `/v2/products/${product.id}`, "/v2/products?q=lamp"].map((path) =>
            fetch(api.base + path, { headers: { authorization: "Bearer dev-reader" } }).then(async (res) => (await res.arrayBuffer(), res.status)),
          ),
        );
        assert.deepEqual(results, [200, 200, 200]);
      }
      assert.equal(await ran(driver), 1);
      const text = logs.join("");
      assert.match(text, /client gone: its work was stopped/);
      assert.doesNotMatch(text, /unexpected failure/);
      assert.doesNotMatch(text, /secretKey|processID|secret_key|process_id/i);
    } finally {
      await api.close();
    }
  });

  test("a request whose client left while it waited for a pool connection never runs its query", async () => {
    const { api, schema, driver } = await start(1, 2);
    try {
      // The pool's one connection: a slow search of a client that stays.
      const staying = fetch(`${api.base}/v2/products?q=slow`, { headers: { authorization: "Bearer dev-reader" } });
      const until = Date.now() + 10_000;
      while ((await sleeping(schema)) === 0) {
        assert.ok(Date.now() < until, "the first search started");
        await sleep(20);
      }
      // A second slow search waits for the connection; its client leaves.
      const socket = await rawGet(api, "/v2/products?q=slow", "dev-writer");
      await sleep(200);
      socket.resetAndDestroy();
      const res = await staying;
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      await sleep(300);
      assert.equal(await ran(driver), 1, "the abandoned search never ran its statements");
      const after = await fetch(`${api.base}/v2/products?q=lamp`, { headers: { authorization: "Bearer dev-reader" } });
      assert.equal(after.status, 200);
      await after.arrayBuffer();
    } finally {
      await api.close();
    }
  });

  test("a transaction whose client leaves between two statements runs no more of them and rolls back", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const driver = await openDriver(POSTGRES_URL, { schema, poolSize: 1 });
    drivers.push(driver);
    await driver.exec("create table t (n int)");
    // A request's scope with a connection of the test's making: it "closes" when told.
    const socket = Object.assign(new EventEmitter(), { destroyed: false });
    const response = { writableFinished: false };
    const outcome = await new Promise<unknown>((resolve) =>
      inClientScope(() => {
        driver
          .transaction(async (tx) => {
            await tx.query("insert into t values (1)");
            socket.destroyed = true;
            socket.emit("close");
            await tx.query("insert into t values (2)");
          })
          .then(resolve, resolve);
      })({ socket } as unknown as IncomingMessage, response as unknown as ServerResponse),
    );
    assert.ok(outcome instanceof ClientGoneError, String(outcome));
    assert.deepEqual(await driver.query("select count(*)::int as n from t"), [{ n: 0 }]);
    // The pool's one connection is healthy.
    assert.deepEqual(await driver.query("select 1 as one"), [{ one: 1 }]);
  });

  test("a search whose fetch is aborted (the client closes with FIN) is cancelled within a second; the pool serves the next requests", async () => {
    const { api, schema, driver, logs } = await start(2, 30);
    try {
      const product = await createProduct(api, "v2", { name: "Slow lamp" });
      const controller = new AbortController();
      const search = fetch(`${api.base}/v2/products?q=slow`, { headers: { authorization: "Bearer dev-reader" }, signal: controller.signal });
      search.catch(() => {});
      await started(schema);
      await sleep(200);
      controller.abort();
      const left = performance.now();
      await assert.rejects(search, { name: "AbortError" });
      const took = await stopsWithin(schema, left, 1500);
      console.log(`the backend stopped ${took.toFixed(0)} ms after the client's abort (FIN)`);
      for (let i = 0; i < 10; i++) {
        const results = await Promise.all(
          ["/v2/products?q=lamp", `/v2/products/${product.id}`, "/v2/products?q=lamp"].map((path) =>
            fetch(api.base + path, { headers: { authorization: "Bearer dev-reader" } }).then(async (res) => (await res.arrayBuffer(), res.status)),
          ),
        );
        assert.deepEqual(results, [200, 200, 200]);
      }
      assert.equal(await ran(driver), 1);
      const text = logs.join("");
      assert.equal(text.match(/client gone: its work was stopped/g)?.length, 1, text);
      assert.match(text, /"level":30[^\n]*client gone: its work was stopped/);
      assert.doesNotMatch(text, /unexpected failure/);
      assert.doesNotMatch(text, /secretKey|processID|secret_key|process_id/i);
    } finally {
      await api.close();
    }
  });

  test("a client that half-closes after its request reads the answer of quick work, and its slow work stops", async () => {
    const { api, schema } = await start(2, 30);
    try {
      const product = await createProduct(api, "v2", { name: "Slow lamp" });
      for (let i = 0; i < 5; i++) {
        const quick = await halfClosed(api, `/v2/products/${product.id}`, "dev-reader");
        assert.match(quick, /^HTTP\/1\.1 200 /, quick.slice(0, 300));
        assert.ok(quick.includes(product.id));
        const list = await halfClosed(api, "/v2/products?q=lamp", "dev-reader");
        assert.match(list, /^HTTP\/1\.1 200 /, list.slice(0, 300));
      }
      // The slow search's statement stops once the grace after the FIN has passed; the client,
      // still reading, gets the envelope of work that was stopped.
      const slow = halfClosed(api, "/v2/products?q=slow", "dev-reader");
      await started(schema);
      const from = performance.now();
      await stopsWithin(schema, from, 1500);
      const text = await slow;
      assert.match(text, /^HTTP\/1\.1 500 /, text.slice(0, 300));
      assert.match(text, /"code":"INTERNAL_ERROR"/);
    } finally {
      await api.close();
    }
  });

  test("with connections.halfCloseIsGone false, a half-closed client's work runs to its end and is answered", async () => {
    const { api, schema } = await start(2, 1.5, { halfCloseIsGone: false });
    try {
      await createProduct(api, "v2", { name: "Slow lamp" });
      const slow = halfClosed(api, "/v2/products?q=slow", "dev-reader");
      await started(schema);
      await sleep(700);
      assert.equal(await sleeping(schema), 1, "the statement still runs 700 ms after the client's FIN");
      const text = await slow;
      assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 300));
    } finally {
      await api.close();
    }
  });

  test("a search whose fetch is aborted while it waits for a pool connection never runs its query", async () => {
    const { api, schema, driver, logs } = await start(1, 2);
    try {
      const staying = fetch(`${api.base}/v2/products?q=slow`, { headers: { authorization: "Bearer dev-reader" } });
      await started(schema);
      const controller = new AbortController();
      const leaving = fetch(`${api.base}/v2/products?q=slow`, { headers: { authorization: "Bearer dev-writer" }, signal: controller.signal });
      leaving.catch(() => {});
      await sleep(200);
      controller.abort();
      await assert.rejects(leaving, { name: "AbortError" });
      const res = await staying;
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      await sleep(300);
      assert.equal(await ran(driver), 1, "the abandoned search never ran its statements");
      assert.match(logs.join(""), /client gone: its work was stopped/);
      const after = await fetch(`${api.base}/v2/products?q=lamp`, { headers: { authorization: "Bearer dev-reader" } });
      assert.equal(after.status, 200);
      await after.arrayBuffer();
    } finally {
      await api.close();
    }
  });
});
