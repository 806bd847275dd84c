// SPEC §12.7 "Idempotency keys" over real HTTP, on the showcase and the store CANON_TEST_STORE
// names (memory, pglite or postgres): a repeat gets the kept answer and writes nothing, another
// body or path answers 422, a malformed key 400, a repeat while the first runs 409, an error is
// not kept, keys are per principal, and on SQL the keys survive a restart and are shared by
// two apps over one schema, and a repeat that comes before the first's answer is kept (on SQL it
// is kept just after it is sent) waits for it. Every response is checked against the version's OpenAPI document.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";

import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { buildApp, devAuthenticate, scopeAuthorize } from "../../generated/index.ts";
import type { AccessRequest, Authenticate } from "../../generated/runtime/index.ts";
import { openStore } from "../../generated/sql/index.ts";
import { suiteFixture } from "../support/fixture.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import {
  call,
  createOrder,
  createUser,
  detailFields,
  expectError,
  expectStatus,
  listen,
  productBody,
  SHOWCASE,
  startApp,
  walk,
  type Api,
  type Res,
} from "./helpers.ts";

type Obj = Record<string, any>;

const STORE = process.env.CANON_TEST_STORE ?? "memory";

/**
 * Waits in `authorize` for the first create whose proposed product is named `slow …`, until
 * released (on a SQL store a repeat runs up to its write, so it is asked again: it passes).
 */
let releaseSlow: (() => void) | null = null;
const slowed = new Set<string>();
async function slowAuthorize(access: AccessRequest): Promise<boolean> {
  const name = (access.proposed as Obj | undefined)?.name;
  if (typeof name === "string" && name.startsWith("slow ") && !slowed.has(name)) {
    slowed.add(name);
    await new Promise<void>((resolve) => (releaseSlow = resolve));
  }
  return scopeAuthorize(access);
}

/** dev-writer, dev-reader, and `other-writer`: a second principal that may write. */
const authenticate: Authenticate = (request) => {
  if (request.headers.authorization === "Bearer other-writer") return { id: "other-writer", scopes: ["read", "write"] };
  return devAuthenticate(request);
};

const api = suiteFixture(() => startApp({ authorize: slowAuthorize, authenticate }));

let keys = 0;
function newKey(): string {
  keys += 1;
  return `key-${process.pid}-${Date.now()}-${keys}`;
}

function keyed(key: string, body?: unknown, auth?: string): { body?: unknown; headers: Record<string, string>; auth?: string } {
  return { ...(body === undefined ? {} : { body }), headers: { "idempotency-key": key }, ...(auth ? { auth } : {}) };
}

/** The events of `/v2/events` about the record `id`. */
async function eventsOf(target: Api, id: string): Promise<Obj[]> {
  const events = await walk(target, "/v2/events?limit=100");
  return events.filter((e) => e.data?.id === id);
}

function sameAnswer(first: Res, again: Res): void {
  assert.equal(again.status, first.status);
  assert.deepEqual(again.body, first.body);
  assert.equal(again.text, first.text);
  for (const name of ["location", "etag"]) assert.equal(again.headers.get(name), first.headers.get(name), name);
  assert.equal(first.headers.get("idempotent-replayed"), null);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
}

describe(`Idempotency-Key (${STORE})`, () => {
  test("a repeated create gets the kept answer: same status, body, Location and ETag, no second record or event", async () => {
    const key = newKey();
    const body = productBody();
    const first = await expectStatus(api, "POST", "/v2/products", 201, keyed(key, body));
    // The same body with its keys in another order is the same request.
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await expectStatus(api, "POST", "/v2/products", 201, keyed(key, reordered));
    sameAnswer(first, again);
    const third = await expectStatus(api, "POST", "/v2/products", 201, keyed(key, body));
    sameAnswer(first, third);
    const all = await walk(api, "/v2/products?limit=100");
    assert.equal(all.filter((p) => p.sku === body.sku).length, 1);
    assert.equal((await eventsOf(api, first.body.id)).length, 1);
  });

  test("an action (orders' cancellations) is replayed too", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const key = newKey();
    const url = `/v2/orders/${order.id}/cancellations`;
    const first = await call(api, "POST", url, keyed(key, { reason: "changed my mind" }));
    assert.ok(first.status === 201 || first.status === 204, first.text);
    const again = await call(api, "POST", url, keyed(key, { reason: "changed my mind" }));
    sameAnswer(first, again);
  });

  // Found by the acceptance run of SPEC §12 (a helpdesk on `canon serve`, PGlite): the repeat of a
  // keyed export asked the key's state on the store's one connection while the export cap's
  // transaction held it, and the service stopped answering.
  test("an export (POST /v2/exports) is replayed too, and the service keeps answering", { timeout: 30_000 }, async () => {
    const key = newKey();
    const body = { resource: "orders", filters: { currency: "EUR" } };
    const first = await expectStatus(api, "POST", "/v2/exports", 201, keyed(key, body));
    const again = await expectStatus(api, "POST", "/v2/exports", 201, keyed(key, body));
    sameAnswer(first, again);
    await expectError(api, "POST", "/v2/exports", 422, "BUSINESS_RULE_VIOLATION", keyed(key, { resource: "orders" }));
    await expectStatus(api, "GET", `/v2/exports/${first.body.id}`, 200);
  });

  test("the same key with another body or path answers 422 naming Idempotency-Key", async () => {
    const key = newKey();
    const body = productBody();
    await expectStatus(api, "POST", "/v2/products", 201, keyed(key, body));
    const otherBody = await expectError(api, "POST", "/v2/products", 422, "BUSINESS_RULE_VIOLATION", keyed(key, { ...body, price_cents: 1 }));
    assert.deepEqual(detailFields(otherBody), ["Idempotency-Key"]);
    const otherPath = await expectError(api, "POST", "/v1/products", 422, "BUSINESS_RULE_VIOLATION", keyed(key, body));
    assert.deepEqual(detailFields(otherPath), ["Idempotency-Key"]);
  });

  test("malformed keys answer 400 naming Idempotency-Key and create nothing", async () => {
    const body = productBody();
    for (const key of ["", "x".repeat(256)]) {
      const error = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", keyed(key, body));
      assert.deepEqual(detailFields(error), ["Idempotency-Key"], JSON.stringify(key));
    }
    await expectStatus(api, "POST", "/v2/products", 201, keyed("x".repeat(255), productBody()));
    // Non-ASCII (UTF-8 bytes) and a control character (a tab, which HTTP parsers let through), on a raw socket.
    for (const raw of [Buffer.from("café", "utf8"), Buffer.from("a\tb", "latin1")]) {
      const answer = await rawPost(api, "/v2/products", raw, JSON.stringify(body));
      assert.equal(answer.status, 400, answer.text);
      assert.deepEqual(JSON.parse(answer.text).error.details.map((d: Obj) => d.field), ["Idempotency-Key"]);
    }
    const all = await walk(api, "/v2/products?limit=100");
    assert.equal(all.filter((p) => p.sku === body.sku).length, 0);
  });

  test("an error answer is not kept: the key can be used again once the request is fixed", async () => {
    const key = newKey();
    const body = productBody();
    await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", keyed(key, { ...body, price_cents: "nope" }));
    // Another body under the key that failed is not a mismatch: nothing was kept.
    await expectStatus(api, "POST", "/v2/products", 201, keyed(key, body));
    // A refused request (403) is not kept either.
    const key2 = newKey();
    await expectError(api, "POST", "/v2/products", 403, "FORBIDDEN", keyed(key2, productBody(), "dev-reader"));
    const retried = await expectStatus(api, "POST", "/v2/products", 201, keyed(key2, productBody(), "dev-reader".replace("reader", "writer")));
    assert.equal(retried.headers.get("idempotent-replayed"), null);
  });

  test("keys are per principal: the same key of another principal runs", async () => {
    const key = newKey();
    const mine = await expectStatus(api, "POST", "/v2/products", 201, keyed(key, productBody()));
    const theirs = await expectStatus(api, "POST", "/v2/products", 201, keyed(key, productBody(), "other-writer"));
    assert.notEqual(theirs.body.id, mine.body.id);
    assert.equal(theirs.headers.get("idempotent-replayed"), null);
  });

  test("a repeat while the first is still running answers 409; after it, the kept answer", async () => {
    const key = newKey();
    const body = productBody({ name: `slow ${keys}` });
    const first = call(api, "POST", "/v2/products", keyed(key, body));
    for (let i = 0; releaseSlow === null; i++) {
      assert.ok(i < 500, "the first request never reached authorize");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const conflict = await expectError(api, "POST", "/v2/products", 409, "CONFLICT", keyed(key, body));
    assert.deepEqual(detailFields(conflict), ["Idempotency-Key"]);
    const release = releaseSlow as () => void;
    releaseSlow = null;
    release();
    const done = await first;
    assert.equal(done.status, 201, done.text);
    const again = await expectStatus(api, "POST", "/v2/products", 201, keyed(key, body));
    sameAnswer(done, again);
    const all = await walk(api, "/v2/products?limit=100");
    assert.equal(all.filter((p) => p.sku === body.sku).length, 1);
  });

  test("many keyed creates at once (their answers kept together on SQL): each repeat gets its own answer", async () => {
    const requests = Array.from({ length: 40 }, () => ({ key: newKey(), body: productBody() }));
    const firsts = await Promise.all(requests.map(({ key, body }) => expectStatus(api, "POST", "/v2/products", 201, keyed(key, body))));
    const agains = await Promise.all(requests.map(({ key, body }) => expectStatus(api, "POST", "/v2/products", 201, keyed(key, body))));
    firsts.forEach((first, i) => {
      sameAnswer(first, agains[i]!);
      assert.equal(first.body.sku, requests[i]!.body.sku);
    });
  });

  test("a POST without a key runs every time", async () => {
    const body = productBody();
    await expectStatus(api, "POST", "/v2/products", 201, { body });
    await expectError(api, "POST", "/v2/products", 409, "CONFLICT", { body });
  });
});

describe(`Idempotency-Key across apps and restarts (${STORE})`, { skip: STORE === "memory" && "the memory store lives in one process" }, () => {
  test("after a restart over the same store, and from a second app over it, the repeat is replayed", async () => {
    let folder = "";
    const schemas: string[] = [];
    let target: string;
    let options: Obj = {};
    if (STORE === "postgres") {
      await preparePostgres();
      const schema = freshSchema("canon_idem");
      schemas.push(schema);
      target = POSTGRES_URL;
      options = { schema };
    } else {
      folder = mkdtempSync(path.join(tmpdir(), "canon-idem-"));
      target = `pglite:${folder}`;
    }
    const start = async () => {
      const store = await openStore(target, options);
      const app = await listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store }), SHOWCASE);
      return { ...app, close: async () => { await app.close(); } };
    };
    try {
      const key = newKey();
      const body = productBody();
      let one = await start();
      const first = await expectStatus(one, "POST", "/v2/products", 201, keyed(key, body));
      await one.close();
      one = await start();
      try {
        sameAnswer(first, await expectStatus(one, "POST", "/v2/products", 201, keyed(key, body)));
        await expectError(one, "POST", "/v2/products", 422, "BUSINESS_RULE_VIOLATION", keyed(key, productBody()));
        if (STORE === "postgres") {
          // Two apps over one schema share the keys.
          const two = await start();
          try {
            sameAnswer(first, await expectStatus(two, "POST", "/v2/products", 201, keyed(key, body)));
            const key2 = newKey();
            const body2 = productBody();
            const made = await expectStatus(two, "POST", "/v2/products", 201, keyed(key2, body2));
            sameAnswer(made, await expectStatus(one, "POST", "/v2/products", 201, keyed(key2, body2)));
            // Sent to both at once: one record.
            const key3 = newKey();
            const body3 = productBody();
            const answers = await Promise.all([one, two].map((a) => call(a, "POST", "/v2/products", keyed(key3, body3))));
            assert.ok(answers.some((a) => a.status === 201), answers.map((a) => a.text).join("\n"));
            for (const a of answers) assert.ok(a.status === 201 || a.status === 409, a.text);
          } finally {
            await two.close();
          }
        }
        const all = await walk(one, "/v2/products?limit=100");
        assert.equal(all.filter((p) => p.sku === body.sku).length, 1);
        assert.equal((await eventsOf(one, first.body.id)).length, 1);
      } finally {
        await one.close();
      }
    } finally {
      await dropSchemas(schemas);
      if (folder) rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe(`Idempotency-Key while the first is still running, across two apps over one PostgreSQL schema (${STORE})`, { skip: STORE !== "postgres" && "two apps share one store on a PostgreSQL server only" }, () => {
  test("the repeat sent to the other app answers 409 CONFLICT naming Idempotency-Key; after the first, the kept answer; one record, one event", async () => {
    await preparePostgres();
    const schema = freshSchema("canon_idem_running");
    const start = async (authorize?: typeof slowAuthorize) => {
      const store = await openStore(POSTGRES_URL, { schema });
      return listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store, ...(authorize ? { authorize } : {}) }), SHOWCASE);
    };
    const one = await start(slowAuthorize);
    const two = await start();
    try {
      const key = newKey();
      const body = productBody({ name: `slow across ${key}` });
      const first = call(one, "POST", "/v2/products", keyed(key, body));
      for (let i = 0; releaseSlow === null; i++) {
        assert.ok(i < 500, "the first request never reached authorize");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // Released whatever the repeat answers: a failed check must not leave the first waiting.
      const release = releaseSlow as () => void;
      releaseSlow = null;
      let repeat: Res;
      try {
        repeat = await call(two, "POST", "/v2/products", keyed(key, body));
      } finally {
        release();
      }
      const done = await first;
      assert.equal(repeat.status, 409, `the repeat on the other app: ${repeat.status} ${repeat.text}; the first: ${done.status}`);
      assert.equal(repeat.body.error.code, "CONFLICT");
      assert.deepEqual(detailFields(repeat.body.error), ["Idempotency-Key"]);
      assert.equal(done.status, 201, done.text);
      sameAnswer(done, await expectStatus(two, "POST", "/v2/products", 201, keyed(key, body)));
      const all = await walk(two, "/v2/products?limit=100");
      assert.equal(all.filter((p) => p.sku === body.sku).length, 1);
      assert.equal((await eventsOf(two, done.body.id)).length, 1);
    } finally {
      await one.close();
      await two.close();
      await dropSchemas([schema]);
    }
  });
});

/** A POST on a raw socket with the `Idempotency-Key` header's value as these bytes. */
function rawPost(target: Api, url: string, key: Buffer, body: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(target.base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let data = "";
    socket.on("data", (chunk) => (data += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1]);
      resolve({ status, text: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
    socket.write(
      Buffer.concat([
        Buffer.from(
          `POST ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer dev-writer\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nIdempotency-Key: `,
          "latin1",
        ),
        key,
        Buffer.from(`\r\n\r\n${body}`, "latin1"),
      ]),
    );
  });
}



describe(`Idempotency-Key: the answer kept after it is sent (${STORE})`, { skip: STORE === "memory" && "SQL stores only" }, () => {
  test("a repeat that comes before the first's answer is kept waits for it and gets it replayed; another body 422; one record", async () => {
    const schemas: string[] = [];
    let target = "pglite:memory://";
    let options: Obj = {};
    if (STORE === "postgres") {
      await preparePostgres();
      const schema = freshSchema("canon_idem_late");
      schemas.push(schema);
      target = POSTGRES_URL;
      options = { schema };
    }
    const store = (await openStore(target, options)) as any;
    // Every answer is kept 300 ms late: the first's answer is sent long before.
    const keep = store.idempotency.keep.bind(store.idempotency);
    let kept = 0;
    store.idempotency.keep = async (...args: unknown[]) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await keep(...args);
      kept += 1;
    };
    const app = await listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store }), SHOWCASE);
    try {
      const key = newKey();
      const body = productBody();
      const first = await expectStatus(app, "POST", "/v2/products", 201, keyed(key, body));
      assert.equal(kept, 0, "the answer was sent before it was kept");
      const [again, other] = await Promise.all([
        call(app, "POST", "/v2/products", keyed(key, body)),
        call(app, "POST", "/v2/products", keyed(key, productBody())),
      ]);
      sameAnswer(first, again);
      assert.equal(other.status, 422, other.text);
      assert.deepEqual(detailFields(other.body.error), ["Idempotency-Key"]);
      const all = await walk(app, "/v2/products?limit=100");
      assert.equal(all.filter((p) => p.sku === body.sku).length, 1);
      assert.equal((await eventsOf(app, first.body.id)).length, 1);
    } finally {
      await app.close();
      await store.close();
      await dropSchemas(schemas);
    }
  });
});

describe(`A write marks its idempotency claim in its own transaction (${STORE})`, { skip: STORE === "memory" && "SQL stores only" }, () => {
  test("a write whose claim was taken over is rolled back: no record, no event", async () => {
    const schemas: string[] = [];
    let target = "pglite:memory://";
    let options: Obj = {};
    if (STORE === "postgres") {
      await preparePostgres();
      const schema = freshSchema("canon_idem_fence");
      schemas.push(schema);
      target = POSTGRES_URL;
      options = { schema };
    }
    const store = (await openStore(target, options)) as any;
    try {
      const claim = await store.idempotency.claim("p", "k", "f");
      assert.equal(claim.outcome, "run");
      const now = new Date().toISOString();
      const record = (id: string) => ({ id, created_at: now, updated_at: now, revision: 1, values: { sku: `SKU-${id}`, name: "x", price_cents: 1 } });
      const publish = (r: Obj, collection: string) => ({ event: { id: r.id, type: "product.created", occurred_at: now, data: { id: r.id } }, collection, owner: null });
      const { runWithClaim, newId } = await import("../../generated/runtime/index.ts");
      // A token that is not the claim's (another request took the key over): 409, nothing kept.
      const lost = newId();
      await assert.rejects(
        runWithClaim({ principal: "p", key: "k", token: "00000000-0000-4000-8000-000000000000" }, () => store.insert({ collection: "products", record: record(lost), constraints: { unique: [] }, publish })),
        (error: Obj) => error.status === 409,
      );
      assert.equal(await store.get("products", lost), null);
      // The claim's own token: written, and the key is no longer free.
      const kept = newId();
      await runWithClaim({ principal: "p", key: "k", token: claim.token }, () => store.insert({ collection: "products", record: record(kept), constraints: { unique: [] }, publish }));
      assert.ok(await store.get("products", kept));
      const rows = await store.driver.query(`select "state" from "canon__idempotency_keys" where "principal" = 'p' and "key" = 'k'`);
      assert.equal(rows[0].state, "written");
      // Writes that end with a create (a create through a hook that wrote, an action) name it too;
      // a repeat after the lease, its first answer never kept, gets that record alone, nothing written.
      const firstOfAll = newId();
      const claimOf = (token: string) => ({ principal: "p", key: "all", token, fingerprint: "f", replayed: false as boolean | undefined });
      const [made] = await runWithClaim(claimOf(newId()), () => store.writeAll([{ insert: { collection: "products", record: record(firstOfAll), constraints: { unique: [] }, publish } }]));
      assert.equal(made.id, firstOfAll);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const repeat = claimOf(newId());
      const second = newId();
      const adopted = await runWithClaim(repeat, () => store.writeAll([{ insert: { collection: "products", record: record(second), constraints: { unique: [] }, publish } }]));
      assert.deepEqual(adopted.map((r: Obj) => r.id), [firstOfAll]);
      assert.equal(repeat.replayed, true);
      assert.equal(await store.get("products", second), null);
      // Over HTTP the handler's write marks the request's claim: with the answer never kept (as
      // when an instance stops between its commit and keeping the answer), the row says written.
      const keep = store.idempotency.keep.bind(store.idempotency);
      store.idempotency.keep = async () => {};
      const app = await listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store }), SHOWCASE);
      try {
        const body = productBody();
        const first = await expectStatus(app, "POST", "/v2/products", 201, keyed("http-key", body));
        const [row] = await store.driver.query(`select "state", "collection", "record" from "canon__idempotency_keys" where "key" = 'http-key'`);
        assert.deepEqual({ ...row }, { state: "written", collection: "products", record: first.body.id });
        // Its answer never kept (its instance died), the repeat rebuilds it from the record once
        // the row's lease (2 s) is over: a replay, kept now; no second record, no second event.
        store.idempotency.keep = keep;
        const again = await expectStatus(app, "POST", "/v2/products", 201, keyed("http-key", body));
        assert.equal(again.headers.get("idempotent-replayed"), "true");
        sameAnswer(first, again);
        await store.idempotency.settled();
        const [done] = await store.driver.query(`select "state" from "canon__idempotency_keys" where "key" = 'http-key'`);
        assert.equal(done.state, "done");
        const [count] = await store.driver.query(`select count(*)::int as "n" from "products" where "sku" = $1`, [body.sku]);
        assert.equal(count.n, 1);
        assert.equal((await eventsOf(app, first.body.id)).length, 1);

        // An action: v2's cancellations (as published: the record through the store's insert) and
        // v3's, which cancel the order (its repeat is refused by `requires: pending` before its
        // write: the acting service answers with the first's record all the same).
        for (const version of ["v2", "v3"]) {
          const user = await createUser(app);
          const order = await createOrder(app, user.id);
          const url = `/${version}/orders/${order.id}/cancellations`;
          const key = `action-${version}`;
          store.idempotency.keep = async () => {};
          const acted = await expectStatus(app, "POST", url, 201, keyed(key, { reason: "changed my mind" }));
          const [marked] = await store.driver.query(`select "collection", "record" from "canon__idempotency_keys" where "key" = $1`, [key]);
          assert.deepEqual({ ...marked }, { collection: "orders/cancellations", record: acted.body.id });
          store.idempotency.keep = keep;
          const repeated = await call(app, "POST", url, keyed(key, { reason: "changed my mind" }));
          assert.equal(repeated.status, 201, `${version}: ${repeated.text}`);
          sameAnswer(acted, repeated);
          const [n] = await store.driver.query(`select count(*)::int as "n" from "orders__cancellations" where "order_id" = $1`, [order.id]);
          assert.equal(n.n, 1, version);
        }
      } finally {
        await app.close();
      }
    } finally {
      await store.close();
      await dropSchemas(schemas);
    }
  });
});
