// Several instances: two `canon serve` processes on different ports over one PostgreSQL share
// their records (a write on one is read on the other, If-Match and unique values hold across
// them, a cursor of one continues on the other) and one rate limit counted in Redis.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { canon, workspace } from "../support/cli.ts";
import { serve, stop, type Instance } from "./serve.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const LIMIT = 40;
const AUTH = { authorization: "Bearer dev-writer" };

async function send(base: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(base + url, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe("two instances over one PostgreSQL and one Redis", () => {
  let a: Instance;
  let b: Instance;
  let schema: string;
  /** Requests sent so far with credentials: each one counts against the shared limit. */
  let sent = 0;
  const counted = (base: string, method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
    sent += 1;
    return send(base, method, url, body, headers);
  };

  before(async () => {
    const dir = workspace("instances", "definitions");
    const api = path.join(dir, "definitions", "api.yaml");
    writeFileSync(api, readFileSync(api, "utf8").replace(/requests: \d+/, `requests: ${LIMIT}`));
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stderr);
    await preparePostgres();
    schema = freshSchema("canon_instances");
    const env = { CANON_CURSOR_SECRET: randomBytes(16).toString("hex"), CANON_REDIS_PREFIX: `canon-test-${schema}:` };
    const store = `${POSTGRES_URL}?schema=${schema}`;
    // Both start at once: both migrate, one waits for the other's lock.
    const args = ["--store", store, "--redis", "redis://127.0.0.1:6379"];
    const started = await Promise.allSettled([serve(dir, args, env), serve(dir, args, env)]);
    const failed = started.find((s) => s.status === "rejected");
    if (failed) {
      // Stop the one that did start, so that a failed start fails the test instead of hanging it.
      await Promise.all(started.flatMap((s) => (s.status === "fulfilled" ? [stop(s.value)] : [])));
      throw (failed as PromiseRejectedResult).reason;
    }
    [a, b] = started.map((s) => (s as PromiseFulfilledResult<Instance>).value) as [Instance, Instance];
  });

  after(async () => {
    const codes = await Promise.all([a, b].filter(Boolean).map(stop));
    await dropSchemas([schema]);
    assert.deepEqual(codes, [0, 0], "both close cleanly on SIGTERM");
    assert.match(a.output(), /canon serve: closed/);
  });

  test("they run on different ports", () => {
    assert.notEqual(a.base, b.base);
  });

  test("a record written through one is read, listed and updated through the other", async () => {
    const created = await counted(a.base, "POST", "/v2/products", { sku: "SHARED-1", name: "Shared", price_cents: 5 });
    assert.equal(created.status, 201);
    const read = await counted(b.base, "GET", `/v2/products/${created.body.id}`);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, created.body);
    assert.equal(read.headers.get("etag"), created.headers.get("etag"));
    const listed = await counted(b.base, "GET", "/v2/products?q=shared");
    assert.deepEqual(
      listed.body.data.map((p: { id: string }) => p.id),
      [created.body.id],
    );
    const patched = await counted(b.base, "PATCH", `/v2/products/${created.body.id}`, { name: "Changed on B" }, { "if-match": created.headers.get("etag")! });
    assert.equal(patched.status, 200);
    const stale = await counted(a.base, "PATCH", `/v2/products/${created.body.id}`, { name: "Stale on A" }, { "if-match": created.headers.get("etag")! });
    assert.equal(stale.status, 409);
    assert.equal((await counted(a.base, "GET", `/v2/products/${created.body.id}`)).body.name, "Changed on B");
  });

  test("one unique value taken at once on both: one 201, one 409", async () => {
    const body = { sku: "RACE-1", name: "Race", price_cents: 1 };
    const answers = await Promise.all([counted(a.base, "POST", "/v2/products", body), counted(b.base, "POST", "/v2/products", body)]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409]);
  });

  test("a cursor from one continues on the other", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await counted(i % 2 ? a.base : b.base, "POST", "/v2/products", { sku: `WALK-${i}`, name: `Walk ${i}`, price_cents: 1, category: "tools" })).body.id);
    const first = await counted(a.base, "GET", "/v2/products?category=tools&limit=3");
    const second = await counted(b.base, "GET", `/v2/products?category=tools&limit=3&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
    assert.equal(second.status, 200);
    assert.deepEqual([...first.body.data, ...second.body.data].map((p: { id: string }) => p.id), ids);
    assert.equal(second.body.pagination.has_more, false);
  });

  test(`one rate limit for both, counted in Redis: request ${LIMIT + 1} is refused, whichever instance gets it`, async () => {
    const perInstance = { [a.base]: 0, [b.base]: 0 };
    let refused: { status: number; headers: Headers } | null = null;
    while (sent < LIMIT + 5 && !refused) {
      const base = sent % 2 ? a.base : b.base;
      const answer = await counted(base, "GET", "/v2/products?limit=1");
      if (answer.status === 429) refused = answer;
      else {
        assert.equal(answer.status, 200);
        perInstance[base]! += 1;
      }
    }
    assert.ok(refused, "no request was refused");
    assert.equal(sent, LIMIT + 1, `the first refusal came at request ${sent}`);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    assert.ok(perInstance[a.base]! < LIMIT && perInstance[b.base]! < LIMIT, "neither instance alone reached the limit");
    // The other instance refuses too now.
    assert.equal((await send(sent % 2 ? a.base : b.base, "GET", "/v2/products?limit=1")).status, 429);
  });
});
