// A database connection error is never the client's fault (issue 30): the store reaches
// PostgreSQL through a TCP proxy of this test, which forwards to the shared server and then
// cuts connections (a reset mid-request) or refuses them (an outage). Requests then answer 500
// INTERNAL_ERROR with `Retry-After`, never 400, and each failure is logged with its request id;
// the proxy forwarding again, the service answers again. The shared PostgreSQL is never stopped.
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
const schema = freshSchema("canon_outage");
const lines: Array<Record<string, any>> = [];

before(async () => {
  await preparePostgres();
  proxy = await startDbProxy();
  const store = await openStore(proxy.url(schema));
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  app = await buildApp({ authenticate: devAuthenticate, store, rateLimit: false, logger: { level: "info", stream } });
  await app.ready();
});

after(async () => {
  proxy.mode = "forward";
  await app.close();
  await proxy.close();
  await dropSchemas([schema]);
});

const listUsers = () =>
  app.inject({ method: "GET", url: "/v2/users", headers: { authorization: "Bearer dev-writer" } });
const createUser = () =>
  app.inject({
    method: "POST",
    url: "/v2/users",
    headers: { authorization: "Bearer dev-writer", "content-type": "application/json" },
    payload: { email: `u${Date.now()}${Math.random()}@example.com`, name: "Someone", password: "correct horse battery" },
  });

function assertUnreachable(reply: Awaited<ReturnType<typeof listUsers>>): void {
  assert.equal(reply.statusCode, 500, reply.body);
  assert.deepEqual(JSON.parse(reply.body), { error: { code: "INTERNAL_ERROR", message: "An unexpected error occurred." } });
  assert.equal(reply.headers["retry-after"], "5");
  const logged = lines.find((l) => l.request_id === reply.headers["x-request-id"] && l.level === 50);
  assert.ok(logged, "the failure is logged with the request id");
  assert.ok(logged.err, "with the error");
}

test("through the proxy the service works", async () => {
  assert.equal((await createUser()).statusCode, 201);
  assert.equal((await listUsers()).statusCode, 200);
});

test("a connection reset by the database mid-request is a 500 with Retry-After, not a 400", async () => {
  proxy.mode = "reset";
  for (const send of [listUsers, createUser]) {
    const reply = await send();
    assertUnreachable(reply);
  }
  assert.ok(!lines.some((l) => l.status === 400), "no request answered 400");
});

test("during an outage (connections refused) answers are the 500 envelope with Retry-After; /vN/ready is 503", async () => {
  proxy.mode = "refuse";
  for (const send of [listUsers, createUser]) assertUnreachable(await send());
  const ready = await app.inject({ method: "GET", url: "/v2/ready" });
  assert.equal(ready.statusCode, 503);
  assert.equal((await app.inject({ method: "GET", url: "/v2/health" })).statusCode, 200);
});

test("the database back, the service answers again", async () => {
  proxy.mode = "forward";
  const deadline = Date.now() + 5000;
  let status = 0;
  while (status !== 200 && Date.now() < deadline) status = (await listUsers()).statusCode;
  assert.equal(status, 200);
  assert.equal((await createUser()).statusCode, 201);
  assert.equal((await app.inject({ method: "GET", url: "/v2/ready" })).statusCode, 200);
});
