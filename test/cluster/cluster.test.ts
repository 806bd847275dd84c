// SPEC §10, issue 13: three `canon serve` processes over one PostgreSQL (a schema of the test's
// own) and one Redis, behind Debian's HAProxy sending each request to the next instance, behave
// as one service. No setting beyond `--store` and `--redis`; each instance has a temp folder of
// its own, as if on a machine of its own. Fails (never skips) when HAProxy is missing: `.ci/run`
// installs it.
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { assertIdOrder, call, expect, feed, walk, type Answer } from "./client.ts";
import { HAPROXY, serverStats, startBalancer, stopBalancer, waitUntil, type Balancer } from "./haproxy.ts";
import { killInstance, startInstances, stopInstance, type Named } from "./instances.ts";

type Obj = Record<string, any>;

const REDIS = process.env.CANON_TEST_REDIS ?? "redis://127.0.0.1:6379";
const NAMES = ["a", "b", "c"];
/** Generous: the machine may be busy with other tests. */
const STEP = { timeout: 300_000 };

describe("three instances behind HAProxy over one PostgreSQL and one Redis", { timeout: 1_500_000 }, () => {
  let dir = "";
  let schema = "";
  let store = "";
  let nodes: Named[] = [];
  let lb: Balancer | undefined;
  /** Every write the test made that was acknowledged: the event it must have. */
  const writes: Array<{ type: string; id: string }> = [];
  /** What the cursor walk saw before the restart, and its first cursor. */
  let walked: { cursor: string; rest: string[] } | undefined;
  /** The feed before the restart, and a cursor into it. */
  let feedBefore: Obj[] = [];
  let feedCursor: { cursor: string; rest: string[] } | undefined;

  const start = async () => {
    nodes = await startInstances(dir, NAMES, store, REDIS, `canon-test-${schema}:`);
    lb = await startBalancer(dir, nodes.map((n) => ({ name: n.name, port: n.port })));
  };
  const stopAll = async () => {
    if (lb) await stopBalancer(lb);
    lb = undefined;
    return Promise.all(nodes.splice(0).map(stopInstance));
  };
  const through = () => lb!.base;
  const create = async (collection: string, type: string, body: Obj, base = through()): Promise<Answer> => {
    const answer = await expect(201, base, "POST", `/v2/${collection}`, body);
    writes.push({ type, id: answer.body!.id as string });
    return answer;
  };

  before(async () => {
    assert.ok(existsSync(HAPROXY), `${HAPROXY} is missing: the cluster test needs Debian's haproxy (apt-get install haproxy; .ci/run installs it)`);
    dir = workspace("cluster", "definitions");
    // The test sends far more than the showcase's 600 requests a minute; the shared limit itself is test/store/instances.test.ts's.
    const api = path.join(dir, "definitions", "api.yaml");
    writeFileSync(api, readFileSync(api, "utf8").replace(/requests: \d+/, "requests: 1000000"));
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stderr);
    await preparePostgres();
    schema = freshSchema("canon_cluster");
    store = `${POSTGRES_URL}?schema=${schema}`;
    await start();
  });

  after(async () => {
    try {
      await stopAll();
    } finally {
      if (schema) await dropSchemas([schema]);
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  test("HAProxy sends each request to the next instance, in turn", STEP, async () => {
    const before = await serverStats(lb!);
    const served: string[] = [];
    for (let i = 0; i < 12; i++) served.push((await expect(200, through(), "GET", "/v2/products?limit=1")).servedBy!);
    for (const name of NAMES) assert.equal(served.filter((s) => s === name).length, 4, `served by: ${served.join(" ")}`);
    for (let i = 1; i < served.length; i++) assert.notEqual(served[i], served[i - 1], `served by: ${served.join(" ")}`);
    const after = await serverStats(lb!);
    for (const name of NAMES) {
      const requests = (stats: typeof before) => stats.find((s) => s.name === name)!.requests;
      assert.equal(requests(after) - requests(before), 4, `HAProxy's count of requests to ${name}`);
    }
  });

  test("a cursor walk whose pages come from different instances sees every record once, in order", STEP, async () => {
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const body = { sku: `WALK-${String(i).padStart(3, "0")}`, name: `Walk ${i}`, price_cents: i, category: "books" };
      ids.push((await create("products", "product.created", body)).body!.id as string);
    }
    ids.sort();
    const pages = await walk(through(), "/v2/products?category=books&limit=4");
    assert.equal(pages.length, 6);
    const seen = pages.flatMap((p) => p.data.map((r) => r.id as string));
    assert.deepEqual(seen, ids);
    assertIdOrder(seen, "the walk");
    const servers = pages.map((p) => p.servedBy);
    assert.equal(new Set(servers).size, 3, `pages served by ${servers.join(" ")}`);
    for (let i = 1; i < servers.length; i++) assert.notEqual(servers[i], servers[i - 1], `pages served by ${servers.join(" ")}`);
    walked = { cursor: pages[0]!.next!, rest: seen.slice(4) };
  });

  test("an ETag read on one instance is honoured on another, and a stale one answers 409 on a third", STEP, async () => {
    const created = await create("products", "product.created", { sku: "ETAG-1", name: "ETag", price_cents: 1 });
    const id = created.body!.id as string;
    const read = await expect(200, through(), "GET", `/v2/products/${id}`);
    const etag = read.headers.get("etag")!;
    assert.ok(etag);
    const updated = await expect(200, through(), "PATCH", `/v2/products/${id}`, { name: "Changed" }, { "if-match": etag });
    writes.push({ type: "product.updated", id });
    assert.notEqual(updated.headers.get("etag"), etag);
    const stale = await call(through(), "PATCH", `/v2/products/${id}`, { name: "Stale" }, { "if-match": etag });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body!.error.code, "CONFLICT");
    assert.equal(new Set([read.servedBy, updated.servedBy, stale.servedBy]).size, 3, "read, update and stale update on three instances");
    assert.equal((await expect(200, through(), "GET", `/v2/products/${id}`)).body!.name, "Changed");
  });

  test("an export made on one instance is downloaded from the other two", STEP, async () => {
    const user = await create("users", "user.created", { email: "cluster@example.com", name: "Cluster", password: "correct horse battery" });
    const orders: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = { user_id: user.body!.id, code: `ORD-${String(900000 + i)}`, total_cents: 100 + i, currency: "EUR", amount_due_cents: 100 + i };
      orders.push((await create("orders", "order.created", body)).body!.id as string);
    }
    const [maker, ...others] = nodes;
    const job = await create("exports", "export.created", { resource: "orders" }, maker!.base);
    let done: Obj = job.body!;
    await waitUntil(
      async () => {
        done = (await expect(200, through(), "GET", `/v2/exports/${job.body!.id}`)).body!;
        return done.status === "succeeded" || done.status === "failed";
      },
      180_000,
      () => `export still ${done.status}: ${JSON.stringify(done)}`,
    );
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    assert.equal(done.record_count, 5);
    const files: string[] = [];
    for (const other of others) {
      const response = await fetch(other.base + (done.download_url as string), { headers: { authorization: "Bearer dev-writer" } });
      const text = await response.text();
      assert.equal(response.status, 200, `the link on ${other.name}: ${response.status} ${text.slice(0, 300)}`);
      files.push(text);
    }
    assert.equal(files[0], files[1]);
    const lines = files[0]!.split("\n").filter((line) => line !== "");
    assert.deepEqual(lines.map((line) => (JSON.parse(line) as Obj).id), orders.sort());
  });

  test("the events feed is the same from every instance and holds every write", STEP, async () => {
    const feeds = await Promise.all(nodes.map((n) => feed(n.base)));
    for (const [i, f] of feeds.entries()) assert.deepEqual(f, feeds[0], `${nodes[i]!.name}'s feed differs from ${nodes[0]!.name}'s`);
    assert.deepEqual(await feed(through()), feeds[0], "the feed walked through the balancer");
    const events = feeds[0]!;
    assertIdOrder(events.map((e) => e.id as string), "the feed");
    const missing = writes.filter((w) => !events.some((e) => e.type === w.type && e.data.id === w.id));
    assert.deepEqual(missing, [], "writes without their event");
  });

  /** A keyed POST made on the instance the burst will kill, replayed after it from another. */
  let keyedOnVictim: { key: string; body: Obj; answer: Answer } | undefined;

  test("one keyed POST sent to two instances at once makes exactly one record (SPEC §12.7)", STEP, async () => {
    for (let round = 0; round < 5; round++) {
      const key = `cluster-${schema}-${round}`;
      const body = { sku: `IDEM-${round}`, name: `Idem ${round}`, price_cents: round, category: "tools" };
      const answers = await Promise.all(nodes.slice(0, 2).map((n) => call(n.base, "POST", "/v2/products", body, { "idempotency-key": key })));
      const made = answers.filter((a) => a.status === 201);
      assert.ok(made.length >= 1 && answers.every((a) => a.status === 201 || a.status === 409), answers.map((a) => `${a.status} ${a.text.slice(0, 200)}`).join("\n"));
      // Two 201s: the second is the first's answer, replayed.
      if (made.length === 2) assert.deepEqual(made[1]!.body, made[0]!.body);
      for (const a of answers.filter((x) => x.status === 409)) assert.equal(a.body!.error.details[0].field, "Idempotency-Key");
      const kept = (await walk(through(), `/v2/products?category=tools&limit=100`)).flatMap((p) => p.data.filter((r) => r.sku === body.sku));
      assert.equal(kept.length, 1, `round ${round}: ${kept.length} records`);
      writes.push({ type: "product.created", id: kept[0]!.id as string });
    }
    const key = `cluster-${schema}-victim`;
    const body = { sku: "IDEM-VICTIM", name: "Idem victim", price_cents: 7, category: "tools" };
    const answer = await expect(201, nodes[2]!.base, "POST", "/v2/products", body, { "idempotency-key": key });
    writes.push({ type: "product.created", id: answer.body!.id as string });
    keyedOnVictim = { key, body, answer };
  });

  test("an instance SIGKILLed during a burst of writes loses no acknowledged write and no event", STEP, async () => {
    const TOTAL = 180;
    const WORKERS = 6;
    const victim = nodes[2]!;
    let sent = 0;
    let done = 0;
    let killedAt = -1;
    const results: Array<{ status: number; id?: string; servedBy: string | null; afterKill: boolean }> = [];
    const worker = async () => {
      while (sent < TOTAL) {
        const n = sent++;
        const afterKill = killedAt >= 0;
        const body = { sku: `BURST-${String(n).padStart(4, "0")}`, name: `Burst ${n}`, price_cents: n, category: "games" };
        try {
          const answer = await call(through(), "POST", "/v2/products", body);
          results.push({ status: answer.status, id: answer.body?.id as string | undefined, servedBy: answer.servedBy, afterKill });
        } catch {
          // No answer: HAProxy closes a kept-alive client connection without one when the server
          // died after it had the request (RFC 9112 §9.3.1 lets the client decide to retry).
          results.push({ status: 0, servedBy: null, afterKill });
        }
        done += 1;
      }
    };
    const killer = async () => {
      await waitUntil(async () => done >= TOTAL / 3, 240_000, () => `the burst stalled at ${done}`);
      killedAt = done;
      await killInstance(victim);
    };
    await Promise.all([...Array.from({ length: WORKERS }, worker), killer()]);

    const statuses = results.map((r) => r.status);
    const acknowledged = results.filter((r) => r.status === 201);
    assert.ok(killedAt > 0, "the instance was killed during the burst");
    const failed = results.filter((r) => r.status !== 201);
    // What the victim had in hand when it died fails (no answer, or HAProxy's 502); everything else is retried elsewhere.
    assert.ok(
      failed.length <= WORKERS && failed.every((r) => [0, 502, 503, 504].includes(r.status)),
      `statuses: ${statuses.join(" ")}\nHAProxy:\n${lb!.output().split("\n").slice(-40).join("\n")}`,
    );
    assert.ok(acknowledged.some((r) => r.servedBy === victim.name && !r.afterKill), "the victim acknowledged writes before it died");
    assert.ok(acknowledged.filter((r) => r.afterKill).length >= TOTAL / 3, `the burst went on after the kill: ${statuses.join(" ")}`);
    for (const r of acknowledged) writes.push({ type: "product.created", id: r.id! });

    // Every acknowledged write is kept, and every kept record has its event (none without).
    const live = nodes.filter((n) => n !== victim);
    const feeds = await Promise.all(live.map((n) => feed(n.base)));
    const firstPage = await expect(200, live[0]!.base, "GET", "/v2/events?limit=10");
    feedBefore = feeds[0]!;
    feedCursor = { cursor: firstPage.body!.pagination.next_cursor as string, rest: feedBefore.slice(10).map((e) => e.id as string) };
    const kept = (await walk(through(), "/v2/products?category=games&limit=100")).flatMap((p) => p.data.map((r) => r.id as string));
    const lost = acknowledged.filter((r) => !kept.includes(r.id!));
    assert.deepEqual(lost, [], "acknowledged writes that are gone");
    assert.deepEqual(feeds[1], feeds[0], "the surviving instances serve one feed");
    const created = new Set(feeds[0]!.filter((e) => e.type === "product.created").map((e) => e.data.id as string));
    assert.deepEqual(kept.filter((id) => !created.has(id)), [], "records without their event");
    const missing = writes.filter((w) => !feeds[0]!.some((e) => e.type === w.type && e.data.id === w.id));
    assert.deepEqual(missing, [], "acknowledged writes without their event");
  });

  test("a keyed POST answered by the killed instance is replayed by the others", STEP, async () => {
    assert.ok(keyedOnVictim, "the keyed POST ran");
    const { key, body, answer } = keyedOnVictim;
    for (const node of nodes.slice(0, 2)) {
      const again = await expect(201, node.base, "POST", "/v2/products", body, { "idempotency-key": key });
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(again.body, answer.body);
      for (const name of ["location", "etag"]) assert.equal(again.headers.get(name), answer.headers.get(name));
    }
    const kept = (await walk(through(), `/v2/products?category=tools&limit=100`)).flatMap((p) => p.data.filter((r) => r.sku === body.sku));
    assert.equal(kept.length, 1);
  });

  test("after all three restart, earlier cursors and the whole feed still work", STEP, async () => {
    assert.ok(walked, "the cursor walk ran");
    assert.ok(feedCursor, "the burst ran");
    const codes = await stopAll();
    // The killed instance's code is null (it died by a signal); the others closed cleanly.
    assert.deepEqual(codes.slice(0, 2), [0, 0]);
    await start();
    const rest = (await walk(through(), "/v2/products?category=books&limit=4", walked.cursor)).flatMap((p) => p.data.map((r) => r.id as string));
    assert.deepEqual(rest, walked.rest, "the walk's first cursor, made before the restart, continues where it did");
    const feeds = await Promise.all(nodes.map((n) => feed(n.base)));
    for (const f of feeds) assert.deepEqual(f, feedBefore, "the feed after the restart is the feed before it");
    const continued = (await walk(through(), "/v2/events?limit=100", feedCursor.cursor)).flatMap((p) => p.data.map((e) => e.id as string));
    assert.deepEqual(continued, feedCursor.rest, "a feed cursor made before the restart continues where it did");
  });
});
