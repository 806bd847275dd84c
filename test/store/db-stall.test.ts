// The database's connections cut or silent while requests run on real sockets (issue: canon
// serve under a misbehaving PostgreSQL). The store reaches PostgreSQL through a TCP proxy of this
// test, which forwards, resets every open connection at once, or swallows every byte both ways
// (a network that stopped answering: `statement_timeout` is the server's and cannot bound it).
// Before the fix: a reset of a connection checked out by a request's query was an unhandled
// 'error' event of `pg`'s client (the process ended), and a silent connection held its request
// and its pool connection forever (after the network came back, every request waited for the
// pool and answered 500, and /vN/ready 503, until a restart).
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import { openStore } from "../../generated/sql/index.ts";
import { startDbProxy, type DbProxy } from "./db-proxy.ts";
import { dropSchemas, freshSchema, preparePostgres } from "./stores.ts";

let proxy: DbProxy;
let app: FastifyInstance;
let base: string;
const schema = freshSchema("canon_stall");
const lines: Array<Record<string, any>> = [];
const STATEMENT_TIMEOUT_MS = 1000;

before(async () => {
  await preparePostgres();
  proxy = await startDbProxy();
  const store = await openStore(proxy.url(schema), { statementTimeoutMs: STATEMENT_TIMEOUT_MS, connectionTimeoutMs: 1000 });
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  app = await buildApp({ authenticate: devAuthenticate, store, rateLimit: false, logger: { level: "info", stream } });
  base = await app.listen({ port: 0, host: "127.0.0.1" });
});

after(async () => {
  proxy.mode = "forward";
  await app.close();
  await proxy.close();
  await dropSchemas([schema]);
});

const get = (path: string) =>
  fetch(base + path, { headers: { authorization: "Bearer dev-writer" }, signal: AbortSignal.timeout(30_000) });

/** `n` concurrent list requests over real sockets, each in its client scope. */
async function burst(n: number) {
  return Promise.all(Array.from({ length: n }, async () => {
    const started = Date.now();
    const reply = await get("/v2/users");
    return { status: reply.status, retryAfter: reply.headers.get("retry-after"), body: await reply.json(), ms: Date.now() - started };
  }));
}

test("connections reset while requests run on them: 500s with Retry-After, the process lives on", async () => {
  let uncaught: unknown;
  const onUncaught = (error: unknown) => {
    uncaught = error;
  };
  process.on("uncaughtException", onUncaught);
  try {
    for (let round = 0; round < 5; round++) {
      const replies = burst(12);
      await new Promise((resolve) => setTimeout(resolve, 2));
      proxy.resetAll();
      for (const reply of await replies) {
        assert.ok(reply.status === 200 || reply.status === 500, JSON.stringify(reply));
        if (reply.status === 500) assert.equal(reply.retryAfter, "5");
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(uncaught, undefined, `no uncaught error: ${uncaught}`);
  } finally {
    process.off("uncaughtException", onUncaught);
  }
  assert.equal((await get("/v2/users")).status, 200);
});

test("a database that stops answering: every request answers within statement_timeout + 2 s, then the service recovers", async () => {
  // Fill the pool with open connections, then go silent while requests run on them.
  await burst(10);
  proxy.mode = "silent";
  const replies = await burst(12);
  for (const reply of replies) {
    assert.equal(reply.status, 500, JSON.stringify(reply));
    assert.equal(reply.retryAfter, "5");
    assert.deepEqual(reply.body, { error: { code: "INTERNAL_ERROR", message: "An unexpected error occurred." } });
    assert.ok(reply.ms < STATEMENT_TIMEOUT_MS + 2000 + 1500, `answered after ${reply.ms} ms`);
  }
  assert.ok(
    lines.some((l) => l.level === 50 && /did not answer within 3000 ms/.test(l.err?.message ?? "")),
    "the silence is logged",
  );
  const ready = await get("/v2/ready");
  assert.equal(ready.status, 503);
  proxy.mode = "forward";
  // The silent connections were destroyed: the pool serves again without a restart.
  const after = await burst(12);
  assert.deepEqual(after.map((r) => r.status), Array(12).fill(200));
  assert.equal((await get("/v2/ready")).status, 200);
});
