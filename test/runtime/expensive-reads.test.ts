// Which requests count as expensive reads (runtime/expensive-reads.ts), and the limit over HTTP
// on the memory store: a principal's reads beyond perPrincipal at once answer 429 with
// Retry-After, another principal's are not held back, and a slot comes back when its answer is sent.
import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { isExpensiveRead } from "../../generated/runtime/expensive-reads.ts";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import { MemoryStore } from "../../generated/runtime/memory-store.ts";

test("expensive reads: q, sort and operator filters on a GET, and POST …/exports; nothing else", () => {
  for (const url of ["/v2/products?q=lamp", "/v2/products?limit=5&sort=-price_cents", "/v2/products?price_cents[gte]=5", "/v2/products?price_cents%5Bgte%5D=5", "/v2/orders?status%5bin%5d=a,b"])
    assert.equal(isExpensiveRead("GET", url), true, url);
  assert.equal(isExpensiveRead("POST", "/v2/exports"), true);
  // A HEAD runs the GET's handler, the query included.
  assert.equal(isExpensiveRead("HEAD", "/v2/products?q=lamp"), true);
  assert.equal(isExpensiveRead("HEAD", "/v2/products?limit=5"), false);
  for (const url of ["/v2/products", "/v2/products?limit=5", "/v2/products?category=other", "/v2/products/0190?x=[", "/v2/products?quantity=1", "/v2/products?qq=1"])
    assert.equal(isExpensiveRead("GET", url), false, url);
  assert.equal(isExpensiveRead("POST", "/v2/products?q=lamp"), false);
  assert.equal(isExpensiveRead("DELETE", "/v2/products/1?sort=name"), false);
});

test("over HTTP: beyond perPrincipal at once, 429 with Retry-After; another principal is not held back; slots come back", async () => {
  const store = new MemoryStore();
  // Every search takes 200 ms.
  const list = store.list.bind(store);
  store.list = async (collection, query) => {
    if (query.search) await new Promise((resolve) => setTimeout(resolve, 200));
    return list(collection, query);
  };
  const app = await buildApp({ authenticate: devAuthenticate, rateLimit: false, store, expensiveReads: { perPrincipal: 2 } });
  try {
    const search = (who: string) => app.inject({ method: "GET", url: "/v2/products?q=lamp", headers: { authorization: `Bearer ${who}` } });
    const answers = await Promise.all([search("dev-writer"), search("dev-writer"), search("dev-writer"), search("dev-reader")]);
    assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 429, 200]);
    assert.equal(answers[2]!.headers["retry-after"], "1");
    assert.equal(answers[2]!.json().error.code, "RATE_LIMITED");
    const again = await Promise.all([search("dev-writer"), search("dev-writer")]);
    assert.deepEqual(again.map((a) => a.statusCode), [200, 200]);
  } finally {
    await app.close();
  }
});

test("a client that leaves keeps its slot until its handler is done; a request whose connection was reset before its handler is not handled", async () => {
  const store = new MemoryStore();
  let searches = 0;
  const list = store.list.bind(store);
  store.list = async (collection, query) => {
    if (query.search) {
      searches += 1;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return list(collection, query);
  };
  const authenticate = (request: Parameters<typeof devAuthenticate>[0]) =>
    request.headers.authorization === "Bearer slow"
      ? new Promise<{ id: string; scopes: string[] }>((resolve) => setTimeout(() => resolve({ id: "slow", scopes: ["read", "write"] }), 200))
      : devAuthenticate(request);
  const app = await buildApp({ authenticate, rateLimit: false, store, expensiveReads: { perPrincipal: 1 } });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const leave = (auth: string) => {
    const controller = new AbortController();
    fetch(`${base}/v2/products?q=lamp`, { headers: { authorization: auth }, signal: controller.signal }).catch(() => {});
    return new Promise((resolve) => setTimeout(() => resolve(controller.abort()), 50));
  };
  const search = async () => (await fetch(`${base}/v2/products?q=lamp`, { headers: { authorization: "Bearer dev-writer" } })).status;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    await leave("Bearer dev-writer");
    await sleep(50);
    assert.equal(searches, 1);
    assert.equal(await search(), 429, "the search of the client that left still runs: its slot is taken");
    await sleep(300);
    assert.equal(await search(), 200, "once it has ended, the slot is free");
    // A connection reset during authentication (a FIN alone is a half-close, answered by design).
    const before = searches;
    const socket = net.connect((app.server.address() as { port: number }).port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write("GET /v2/products?q=lamp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer slow\r\n\r\n");
    await sleep(50);
    socket.resetAndDestroy();
    await sleep(400);
    assert.equal(searches, before, "the request whose client left during authentication ran no search");
  } finally {
    await app.close();
  }
});
