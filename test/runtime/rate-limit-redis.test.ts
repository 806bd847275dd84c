// Redis down is not the service down (issue 30): two apps share a rate limit through a
// redis-server this test starts on a port of its own; killed mid-test, both keep answering
// within a short time, each counting alone, with one warning per outage; restarted, the count
// is shared again. The shared Redis of the machine is never touched.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { after, before, test } from "node:test";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { createApp } from "../../runtime/app.ts";
import { REDIS_CLIENT_OPTIONS } from "../../runtime/rate-limit.ts";

const PORT = 6390 + (process.pid % 50);
const LIMIT = 5;

let server: ChildProcess | null = null;
const clients: Redis[] = [];
const apps: FastifyInstance[] = [];
const lines: Array<{ level: number; msg: string; reason?: string }> = [];

async function startRedis(): Promise<void> {
  server = spawn("redis-server", ["--port", String(PORT), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  server.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 5000;
  while (!output.includes("Ready to accept connections")) {
    if (Date.now() > deadline) throw new Error(`redis-server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stopRedis(): Promise<void> {
  if (!server) return;
  const exited = once(server, "exit");
  server.kill("SIGKILL");
  await exited;
  server = null;
}

async function makeApp(): Promise<FastifyInstance> {
  const redis = new Redis(`redis://127.0.0.1:${PORT}`, { ...REDIS_CLIENT_OPTIONS, keyPrefix: "t:" });
  redis.on("error", () => {});
  clients.push(redis);
  await once(redis, "ready");
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      callback();
    },
  });
  const app = await createApp({
    baseUrl: "http://localhost",
    authenticate: (request) => {
      const user = request.headers["x-user"];
      return typeof user === "string" ? { id: user, scopes: ["read"] } : null;
    },
    rateLimit: { max: LIMIT, windowMs: 60_000, redis },
    bodyLimit: 1024,
    logger: { level: "info", stream },
    requestLogLevel: "silent",
    versions: [
      {
        name: "v1",
        deprecation: null,
        docs: () => {},
        routes: (scope) => {
          scope.get("/v1/ping", async () => ({ ok: true }));
        },
      },
    ],
  });
  apps.push(app);
  return app;
}

const get = (app: FastifyInstance, user: string) =>
  app.inject({ method: "GET", url: "/v1/ping", headers: { "x-user": user } });

let a: FastifyInstance;
let b: FastifyInstance;

before(async () => {
  await startRedis();
  a = await makeApp();
  b = await makeApp();
});

after(async () => {
  await Promise.all(apps.map((app) => app.close()));
  for (const client of clients) client.disconnect();
  await stopRedis();
});

const warnings = () => lines.filter((l) => l.level === 40 && /Redis unavailable/.test(l.msg));

async function sharedLimitHolds(user: string): Promise<void> {
  for (let i = 0; i < LIMIT; i++) {
    const reply = await get(i % 2 ? b : a, user);
    assert.equal(reply.statusCode, 200, `request ${i + 1} of ${user}`);
  }
  // The sixth, on either instance, is over the one shared limit.
  const over = await get(b, user);
  assert.equal(over.statusCode, 429);
  assert.ok(Number(over.headers["retry-after"]) > 0);
}

test("with Redis up, two instances share one limit", async () => {
  await sharedLimitHolds("first");
  assert.equal(warnings().length, 0);
});

test("Redis killed: requests keep getting 200 quickly, counted per instance, one warning", async () => {
  await stopRedis();
  for (let i = 0; i < LIMIT; i++) {
    const started = Date.now();
    const reply = await get(a, "outage");
    assert.equal(reply.statusCode, 200, `request ${i + 1}: ${reply.body}`);
    assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms`);
  }
  // Each instance counts alone: b has seen none of a's requests.
  for (let i = 0; i < LIMIT; i++) assert.equal((await get(b, "outage")).statusCode, 200);
  assert.equal((await get(a, "outage")).statusCode, 429, "a's own count still limits");
  // One warning per instance for the whole outage, not one per request.
  assert.equal(warnings().length, 2, JSON.stringify(warnings()));
});

test("Redis restarted: the shared count is used again, by itself", async () => {
  await startRedis();
  const deadline = Date.now() + 5000;
  while (clients.some((c) => c.status !== "ready")) {
    assert.ok(Date.now() < deadline, "the clients reconnect");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await sharedLimitHolds("after");
  assert.equal(lines.filter((l) => /Redis answers again/.test(l.msg)).length, 2);
  assert.equal(warnings().length, 2, "no new warning");
});

test("Redis stalled (connected, silent): requests are not each held by it, commands do not pile up; resumed, shared again", async () => {
  // SIGSTOP: the connections stay open and every command goes unanswered (a Redis swapping, a
  // network partition without resets). Before: each request waited the 250 ms for its own count,
  // and each count stayed queued in the client until Redis answered (30 requests, 30 commands).
  const before = warnings().length;
  server!.kill("SIGSTOP");
  try {
    let slow = 0;
    const started = Date.now();
    for (let i = 0; i < 30; i++) {
      const t = Date.now();
      assert.equal((await get(a, `stalled${i}`)).statusCode, 200);
      if (Date.now() - t >= 200) slow += 1;
    }
    const queued = (clients[0] as unknown as { commandQueue: { length: number } }).commandQueue.length;
    // One count at a time asks the silent Redis (ioredis gives it up after 500 ms).
    const asks = Math.ceil((Date.now() - started) / REDIS_CLIENT_OPTIONS.commandTimeout) + 2;
    assert.ok(slow <= asks, `${slow} of 30 requests waited for Redis (at most ${asks} expected)`);
    assert.ok(queued <= 3, `${queued} commands wait in the client`);
    assert.equal(warnings().length, before + 1, "one warning for the stall");
  } finally {
    server!.kill("SIGCONT");
  }
  // Back: the first count Redis answers ends the outage.
  const deadline = Date.now() + 10_000;
  while (!lines.slice(-5).some((l) => /Redis answers again/.test(l.msg))) {
    assert.ok(Date.now() < deadline, "the outage ends");
    await get(a, "probe");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (let i = 0; i < 3; i++) await get(b, "probe");
  await sharedLimitHolds("resumed");
});
