// The generated clients (generated/vN/client.ts, SPEC §9) against the showcase served over HTTP
// on loopback: every operation of both versions, child lists and actions, cursor and offset
// walks, typed errors, retries, request ids, conditional writes and deprecation notices.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";
import { repoRoot, workspace } from "../support/cli.ts";
import { suiteFixture } from "../support/fixture.ts";
import * as v1 from "../../generated/v1/client.ts";
import * as v2 from "../../generated/v2/client.ts";
import { orderCode, recordingFetch, startShowcase, UNKNOWN_ID, unique, UUID_V7 } from "./helpers.ts";

const userBody = () => ({ email: `client${unique()}@example.com`, name: `Client ${unique()}`, password: "correct horse battery" });
const productBody = () => ({ sku: `SKU-${unique()}`, name: `Lamp ${unique()}`, price_cents: 999 });

describe("the generated client, every operation of both versions", () => {
  const service = suiteFixture(() => startShowcase());

  test("v2: users, their orders, cancellations, invoices, products and events", async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer" });
    const user = await api.users.create(userBody());
    assert.match(user.id, UUID_V7);
    assert.equal((await api.users.get(user.id)).email, user.email);
    assert.equal((await api.users.update(user.id, { name: "Renamed" })).name, "Renamed");

    const order = await api.orders.create({ user_id: user.id, code: orderCode(), total_cents: 1200, currency: "EUR", amount_due_cents: 1200, gift_wrap: true });
    assert.equal(order.gift_wrap, true);
    assert.equal((await api.orders.get(order.id)).code, order.code);
    assert.equal((await api.orders.update(order.id, { note: "ring twice" })).note, "ring twice");
    const mine = await api.users.orders.list(user.id, { limit: 5 });
    assert.deepEqual(mine.data.map((o) => o.id), [order.id]);
    assert.deepEqual(mine.pagination, { next_cursor: null, has_more: false });

    const cancellation = await api.orders.cancellations.create(order.id, { reason: "changed my mind" });
    assert.equal(cancellation.order_id, order.id);
    assert.equal(cancellation.reason, "changed my mind");

    const invoice = await api.invoices.create({ order_id: order.id, amount_cents: 1200, due_date: "2026-07-01" });
    assert.equal((await api.invoices.get(invoice.id)).amount_cents, 1200);
    assert.equal((await api.invoices.update(invoice.id, { status: "issued" })).status, "issued");
    assert.deepEqual((await api.orders.invoices.list(order.id)).data.map((i) => i.id), [invoice.id]);
    assert.ok((await api.invoices.list({ status: "issued" })).data.some((i) => i.id === invoice.id));
    // A list filter's values are sent joined by commas: a value holding one is refused before
    // any request (the service would read two values), a plain equality may hold one.
    assert.ok((await api.orders.list({ currency: { in: ["EUR", "USD"] } })).data.some((o) => o.id === order.id));
    await assert.rejects(async () => api.orders.list({ currency: { in: ["EU,R"] } }), v2.ValidationError);

    const product = await api.products.create({ ...productBody(), tags: ["desk"] });
    assert.equal((await api.products.get(product.id)).sku, product.sku);
    assert.equal((await api.products.update(product.id, { price_cents: 1500 })).price_cents, 1500);
    const replaced = await api.products.replace(product.id, { sku: product.sku, name: "Replaced", price_cents: 10 });
    assert.deepEqual([replaced.name, replaced.tags, replaced.category], ["Replaced", [], "other"]);
    assert.ok((await api.products.list({ q: "replaced" })).data.some((p) => p.id === product.id));

    assert.equal(await api.orders.delete(order.id), undefined);
    await assert.rejects(api.orders.get(order.id), v2.NotFoundError);
    assert.equal(await api.products.delete(product.id), undefined);
    assert.equal(await api.users.delete(user.id), undefined);
    await assert.rejects(api.users.get(user.id), v2.NotFoundError);

    const events = await api.events.list({ limit: 100 });
    const created = events.data.find((e) => e.type === "order.cancellation.created" && e.data.id === cancellation.id);
    assert.ok(created, "the cancellation's event is listed");
    assert.equal((await api.events.get(created.id)).type, "order.cancellation.created");
  });

  test("a q shorter than the version's minimum and a sort naming a field twice throw the service's 400 without sending", async () => {
    const recorder = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch: recorder.fetch });
    const user = await api.users.create(userBody());
    const sent = recorder.sent.length;
    // Each call, and the query the service would get for it.
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => api.orders.list({ sort: ["placed_at", "-placed_at"] }), "/v2/orders?sort=placed_at,-placed_at"],
      [() => api.orders.list({ sort: ["status", "-placed_at", "status"] }), "/v2/orders?sort=status,-placed_at,status"],
      [() => api.products.list({ q: " ab " }), `/v2/products?q=${encodeURIComponent(" ab ")}`],
      [() => api.products.list({ q: "x".repeat(201) }), `/v2/products?q=${"x".repeat(201)}`],
      [() => api.users.list({ q: "ab", limit: 5 }), "/v2/users?q=ab&limit=5"],
      [() => api.users.orders.list(user.id, { q: "", sort: ["total_cents", "total_cents"] }), `/v2/users/${user.id}/orders?q=&sort=total_cents,total_cents`],
      // Past the types (a JavaScript caller): more than 3 keys.
      [() => api.orders.list({ sort: ["status", "placed_at", "total_cents", "created_at"] as never }), "/v2/orders?sort=status,placed_at,total_cents,created_at"],
    ];
    for (const [call, url] of cases) {
      const error = await call().then(() => assert.fail(`${url} was taken`), (e: unknown) => e);
      assert.ok(error instanceof v2.ValidationError, url);
      const answer = await fetch(service.base + url, { headers: { authorization: "Bearer dev-writer" } });
      assert.equal(answer.status, 400, url);
      const { error: served } = (await answer.json()) as { error: { code: string; message: string; details: unknown[] } };
      assert.deepEqual({ status: error.status, code: error.code, message: error.message, details: error.details }, { status: 400, ...served }, url);
      assert.match(error.requestId, UUID_V7);
    }
    // Iterated, the first page is refused the same way.
    await assert.rejects(async () => {
      for await (const _ of api.orders.list({ sort: ["status", "-status"] })) void _;
    }, v2.ValidationError);
    assert.equal(recorder.sent.length, sent, "nothing was sent");
    // At the minimum (spaces around it not counted) and with distinct fields, the request is sent.
    assert.deepEqual((await api.users.orders.list(user.id, { q: " abc ", sort: ["status", "-placed_at", "total_cents"] })).data, []);
    assert.deepEqual((await api.products.list({ q: "\u{1F600}".repeat(3) })).data, []);
    assert.equal(recorder.sent.length, sent + 2);
  });

  test("an [in] filter of no value, or of more than 100, throws the service's 400 without sending", async () => {
    const recorder = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch: recorder.fetch });
    const user = await api.users.create(userBody());
    const sent = recorder.sent.length;
    const issueOf = (e: unknown) => (e instanceof v2.ValidationError ? e.details : e);
    // An empty list has no query form (`status[in]=` would be the one value ""): the service's own
    // answer to one is that of an export's filter, the same list in a body.
    const exported = await fetch(`${service.base}/v2/exports`, {
      method: "POST",
      headers: { authorization: "Bearer dev-writer", "content-type": "application/json" },
      body: JSON.stringify({ resource: "orders", filters: { "status[in]": [] } }),
    });
    assert.equal(exported.status, 400);
    const { error: served } = (await exported.json()) as { error: { details: Array<{ field: string; issue: string }> } };
    assert.deepEqual(served.details, [{ field: "filters.status[in]", issue: "must have at least 1 item" }]);
    for (const call of [() => api.orders.list({ status: { in: [] } }), () => api.users.orders.list(user.id, { total_cents: { in: [], gte: 1 }, status: "paid" })]) {
      const error = await call().then(() => assert.fail("an empty [in] was taken"), (e: unknown) => e);
      assert.ok(error instanceof v2.ValidationError);
      assert.equal(error.status, 400);
      assert.equal(error.code, "VALIDATION_ERROR");
      assert.equal(error.details.length, 1);
      assert.equal(error.details[0]!.issue, served.details[0]!.issue);
      assert.match(error.details[0]!.field, /^(status|total_cents)\[in\]$/);
    }
    // More than 100: as the service answers the same query.
    const many = Array.from({ length: 101 }, (_, i) => i);
    const error = await api.orders.list({ total_cents: { in: many } }).then(() => assert.fail("101 values were taken"), (e: unknown) => e);
    const answer = await fetch(`${service.base}/v2/orders?total_cents%5Bin%5D=${many.join(",")}`, { headers: { authorization: "Bearer dev-writer" } });
    assert.equal(answer.status, 400);
    const { error: refused } = (await answer.json()) as { error: { details: unknown[] } };
    assert.deepEqual(issueOf(error), refused.details);
    assert.equal(recorder.sent.length, sent, "nothing was sent");
    // One value, or 100, is sent.
    assert.deepEqual((await api.users.orders.list(user.id, { status: { in: ["paid"] }, total_cents: { in: many.slice(0, 100) } })).data, []);
    assert.equal(recorder.sent.length, sent + 1);
  });

  test("a list value holding a comma throws a ValidationError naming the parameter as sent, without sending", async () => {
    const recorder = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch: recorder.fetch });
    const user = await api.users.create(userBody());
    const order = await api.orders.create({ user_id: user.id, code: orderCode(), total_cents: 1200, currency: "EUR", amount_due_cents: 1200 });
    // The service splits a list at every comma, a percent-encoded one too: `EUR%2CUSD` is two
    // values, so a value holding a comma cannot be asked for, and sent it would ask for others.
    const split = await fetch(`${service.base}/v2/orders?currency%5Bin%5D=EUR%2CUSD&total_cents=1200`, { headers: { authorization: "Bearer dev-writer" } });
    assert.equal(split.status, 200);
    assert.ok(((await split.json()) as { data: Array<{ id: string }> }).data.some((o) => o.id === order.id));
    const sent = recorder.sent.length;
    const issue = "each value must not contain a comma: the values are sent comma-separated";
    const cases: Array<[() => Promise<unknown>, Array<{ field: string; issue: string }>]> = [
      [() => api.orders.list({ currency: { in: ["EUR,USD"] } }), [{ field: "currency[in]", issue }]],
      [() => api.users.orders.list(user.id, { status: { in: ["paid", "pending,shipped" as "paid"] }, currency: "EUR" }), [{ field: "status[in]", issue }]],
      // Past the types (a JavaScript caller): a sort key holding a comma, a list of equals.
      [() => api.orders.list({ sort: ["status,-placed_at"] as never }), [{ field: "sort", issue }]],
      [() => api.orders.list({ currency: ["EUR", "U,SD"] as never }), [{ field: "currency", issue }]],
    ];
    for (const [call, details] of cases) {
      const error = await call().then(() => assert.fail("a value holding a comma was taken"), (e: unknown) => e);
      assert.ok(error instanceof v2.ValidationError, String(error));
      assert.deepEqual({ status: error.status, code: error.code, message: error.message, details: error.details }, { status: 400, code: "VALIDATION_ERROR", message: "The request is not valid.", details });
      assert.match(error.requestId, UUID_V7);
    }
    // Iterated, the first page is refused the same way.
    await assert.rejects(async () => {
      for await (const _ of api.orders.list({ currency: { in: ["EUR,USD"] } })) void _;
    }, v2.ValidationError);
    assert.equal(recorder.sent.length, sent, "nothing was sent");
    // A plain equality holding a comma is one value, and is sent (the service answers it).
    await assert.rejects(async () => api.orders.list({ currency: "EU,R" }), (e: unknown) => e instanceof v2.ValidationError && e.details[0]!.issue === "must match ^[A-Z]{3}$");
    assert.equal(recorder.sent.length, sent + 1);
  });

  test("replace's doc comment says what a PUT does with a field left out, as its OpenAPI description does", () => {
    const source = readFileSync(path.join(repoRoot, "generated", "v2", "client.ts"), "utf8");
    const comment = /\/\*\* (PUT \/v2\/products\/\{id\}[^*]*)\*\/\n\s*replace\(/.exec(source)?.[1];
    assert.equal(
      comment,
      "PUT /v2/products/{id}: replaces the record, as `create` sends it: a field left out takes its default (a transition may refuse it: 422), read-only fields keep theirs; `ifMatch` makes it conditional. ",
    );
  });

  test("v2 exports: create a job, wait for it, download its file; list the jobs", async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer" });
    const user = await api.users.create(userBody());
    const codes = [orderCode(), orderCode()];
    for (const code of codes) await api.orders.create({ user_id: user.id, code, total_cents: 7, currency: "JPY", amount_due_cents: 7 });
    await assert.rejects(api.exports.download({}), /no file to download yet/);
    for (const format of ["ndjson", "csv"] as const) {
      let job = await api.exports.create({ resource: "orders", format, filters: { currency: "JPY" } });
      assert.deepEqual([job.status, job.format, job.resource], ["pending", format, "orders"]);
      for (let i = 0; job.status !== "succeeded" && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 50));
        job = await api.exports.get(job.id);
      }
      assert.equal(job.status, "succeeded", JSON.stringify(job));
      assert.equal(job.record_count, 2);
      const file = await api.exports.download(job);
      const lines = file.trimEnd().split("\n");
      if (format === "ndjson") assert.deepEqual(lines.map((l) => JSON.parse(l).code), codes);
      else assert.deepEqual([lines.length, lines[0]!.split(",")[0]], [3, "id"]);
    }
    const jobs: string[] = [];
    for await (const job of api.exports.list({ limit: 1 })) jobs.push(job.format);
    assert.deepEqual(jobs, ["ndjson", "csv"]);
  });

  test("an export whose q is shorter than the version's minimum, or longer than 200 characters, throws the service's 400 without sending", async () => {
    const recorder = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch: recorder.fetch });
    const bodies = [
      { resource: "orders", q: " ab " },
      { resource: "orders", format: "csv", q: "", filters: { currency: "JPY" } },
      { resource: "orders", q: "x".repeat(201) },
    ] as const;
    for (const body of bodies) {
      const error = await api.exports.create(body).then(() => assert.fail(`${JSON.stringify(body)} was taken`), (e: unknown) => e);
      assert.ok(error instanceof v2.ValidationError, JSON.stringify(body));
      const answer = await fetch(`${service.base}/v2/exports`, { method: "POST", headers: { authorization: "Bearer dev-writer", "content-type": "application/json" }, body: JSON.stringify(body) });
      assert.equal(answer.status, 400, JSON.stringify(body));
      const { error: served } = (await answer.json()) as { error: { code: string; message: string; details: unknown[] } };
      assert.deepEqual({ status: error.status, code: error.code, message: error.message, details: error.details }, { status: 400, ...served }, JSON.stringify(body));
      assert.match(error.requestId, UUID_V7);
    }
    assert.equal(recorder.sent.length, 0, "nothing was sent");
    // At the minimum (spaces around it not counted), the job is created.
    const job = await api.exports.create({ resource: "orders", q: " abc " });
    assert.equal(job.status, "pending");
    assert.equal(recorder.sent.length, 1);
  });

  test("v1: its own shapes (due_cents, legacy_ref) on every operation", async () => {
    const notices: v1.DeprecationNotice[] = [];
    const api = v1.createClient({ baseUrl: service.base, token: "dev-writer", onDeprecation: (n) => notices.push(n) });
    const user = await api.users.create(userBody());
    assert.equal((await api.users.get(user.id)).id, user.id);
    assert.equal((await api.users.update(user.id, { role: "admin" })).role, "admin");
    const order = await api.orders.create({ user_id: user.id, code: orderCode(), total_cents: 500, currency: "EUR", due_cents: 500, legacy_ref: "L-1" });
    assert.deepEqual([order.due_cents, order.legacy_ref], [500, "L-1"]);
    assert.ok(!("gift_wrap" in order));
    assert.equal((await api.orders.get(order.id)).due_cents, 500);
    assert.equal((await api.orders.update(order.id, { due_cents: 400 })).due_cents, 400);
    assert.deepEqual((await api.users.orders.list(user.id)).data.map((o) => o.id), [order.id]);
    assert.equal((await api.orders.cancellations.create(order.id, { reason: "v1" })).order_id, order.id);
    const invoice = await api.invoices.create({ order_id: order.id, amount_cents: 1, due_date: "2026-08-01" });
    assert.equal((await api.invoices.update(invoice.id, { amount_cents: 2 })).amount_cents, 2);
    assert.equal((await api.invoices.get(invoice.id)).amount_cents, 2);
    assert.ok((await api.orders.invoices.list(order.id)).data.some((i) => i.id === invoice.id));
    assert.ok((await api.invoices.list()).data.length > 0);
    assert.ok((await api.orders.list({ currency: "EUR" })).data.some((o) => o.id === order.id));
    const product = await api.products.create(productBody());
    assert.equal((await api.products.get(product.id)).id, product.id);
    assert.equal((await api.products.update(product.id, { name: "v1 lamp" })).name, "v1 lamp");
    assert.equal((await api.products.replace(product.id, { sku: product.sku, name: "v1", price_cents: 1 })).name, "v1");
    assert.ok((await api.products.list({ category: "other" })).data.length > 0);
    await api.products.delete(product.id);
    await api.orders.delete(order.id);
    await api.users.delete(user.id);
    assert.ok((await api.users.list()).pagination.total >= 0);
    assert.ok((await api.events.list()).data.length > 0);

    // Every v1 answer carried Deprecation: each reached the callback, with the sunset and successor.
    assert.ok(notices.length >= 20, `${notices.length} notices`);
    for (const notice of notices) {
      assert.equal(notice.version, "v1");
      assert.equal(notice.sunset?.toISOString(), "2027-06-30T00:00:00.000Z");
      assert.match(notice.successor ?? "", /^https:\/\/api\.example\.com\/v2\/(users|orders|invoices|products|events)$/);
    }
    assert.ok(notices.some((n) => n.method === "POST" && n.path === "/v1/orders" && n.successor === "https://api.example.com/v2/orders"));
  });

  test("without onDeprecation: one console warning per version per process", () => {
    const dir = workspace("client-deprecation");
    const script = path.join(dir, "warn.ts");
    const generated = path.join(repoRoot, "generated");
    writeFileSync(
      script,
      [
        `import { buildApp, devAuthenticate } from ${JSON.stringify(path.join(generated, "index.ts"))};`,
        `import * as v1 from ${JSON.stringify(path.join(generated, "v1", "client.ts"))};`,
        `import * as v2 from ${JSON.stringify(path.join(generated, "v2", "client.ts"))};`,
        `const app = await buildApp({ authenticate: devAuthenticate, rateLimit: false });`,
        `const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });`,
        `for (const api of [v1.createClient({ baseUrl, token: "dev-reader" }), v1.createClient({ baseUrl, token: "dev-reader" })]) {`,
        `  await api.orders.list();`,
        `  await api.users.list();`,
        `}`,
        `await v2.createClient({ baseUrl, token: "dev-reader" }).orders.list();`,
        `await app.close();`,
      ].join("\n"),
    );
    const run = spawnSync(process.execPath, [script], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    const warnings = run.stderr.split("\n").filter((line) => line.includes("deprecated"));
    assert.deepEqual(warnings, ["The API's v1 is deprecated and goes away on 2027-06-30; its successor: https://api.example.com/v2/orders."]);
  });

  test("v2 answers carry no Deprecation: the callback is never called", async () => {
    let calls = 0;
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", onDeprecation: () => calls++ });
    await api.products.list();
    await api.users.list();
    assert.equal(calls, 0);
  });
});

describe("lists: one page when awaited, every record when iterated", () => {
  const service = suiteFixture(() => startShowcase());
  let userId: string;
  before(async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer" });
    // 250 users (offset mode), 250 products (cursor mode), 250 orders of one user (a child list).
    // Ten at a time: the walks need the records, not their order.
    for (let i = 0; i < 250; i += 10) {
      await Promise.all(Array.from({ length: 10 }, () => Promise.all([api.users.create(userBody()), api.products.create(productBody())])));
    }
    userId = (await api.users.list({ per_page: 1 })).data[0]!.id;
    for (let i = 0; i < 250; i++) {
      await api.orders.create({ user_id: userId, code: orderCode(), total_cents: i, currency: "EUR", amount_due_cents: i });
    }
  });

  test("await gives the first page as the service answers it, in one request", async () => {
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", fetch });
    const cursorPage = await api.products.list({ limit: 7 });
    assert.equal(cursorPage.data.length, 7);
    assert.equal(cursorPage.pagination.has_more, true);
    assert.equal(typeof cursorPage.pagination.next_cursor, "string");
    const offsetPage = await api.users.list({ per_page: 30, page: 2 });
    assert.deepEqual(offsetPage.pagination, { page: 2, per_page: 30, total: 250, total_pages: 9 });
    assert.equal(offsetPage.data.length, 30);
    assert.equal(sent.length, 2);
    assert.ok(sent[0]!.url.endsWith("/v2/products?limit=7"), sent[0]!.url);
    assert.ok(sent[1]!.url.endsWith("/v2/users?per_page=30&page=2"), sent[1]!.url);
  });

  test("cursor walk: every record once, following next_cursor, one request per page", async () => {
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", fetch });
    const ids: string[] = [];
    for await (const product of api.products.list({ limit: 100 })) ids.push(product.id);
    assert.equal(ids.length, 250);
    assert.equal(new Set(ids).size, 250);
    assert.deepEqual(ids, [...ids].sort());
    assert.equal(sent.length, 3, sent.map((s) => s.url).join("\n"));
    assert.ok(!sent[0]!.url.includes("cursor="));
    assert.ok(sent.slice(1).every((s) => s.url.includes("limit=100&cursor=")));
    // The default page size: 20 records a page, 13 requests.
    sent.length = 0;
    let n = 0;
    for await (const _ of api.products.list()) n++;
    assert.deepEqual([n, sent.length], [250, 13]);
  });

  test("offset walk: every record once, following page, one request per page", async () => {
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", fetch });
    const ids: string[] = [];
    for await (const user of api.users.list({ per_page: 100 })) ids.push(user.id);
    assert.equal(ids.length, 250);
    assert.equal(new Set(ids).size, 250);
    assert.deepEqual(sent.map((s) => new URL(s.url).search), ["?per_page=100", "?per_page=100&page=2", "?per_page=100&page=3"]);
    // From a later page on: the pages after it.
    sent.length = 0;
    const rest: string[] = [];
    for await (const user of api.users.list({ per_page: 100, page: 2 })) rest.push(user.id);
    assert.deepEqual(rest, ids.slice(100));
    assert.equal(sent.length, 2);
  });

  test("pages() yields whole pages; a search on an offset list walks by cursor", async () => {
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", fetch });
    const sizes: number[] = [];
    for await (const page of api.users.list({ per_page: 100 }).pages()) sizes.push(page.data.length);
    assert.deepEqual(sizes, [100, 100, 50]);
    const cursorSizes: number[] = [];
    for await (const page of api.products.list({ limit: 100 }).pages()) {
      cursorSizes.push(page.data.length);
      assert.equal(page.pagination.next_cursor === null, !page.pagination.has_more);
    }
    assert.deepEqual(cursorSizes, [100, 100, 50]);
    // `q` on users: cursor mode.
    const search = await api.users.list({ q: "example.com", limit: 100 });
    assert.equal(search.pagination.has_more, true);
    let found = 0;
    sent.length = 0;
    for await (const _ of api.users.list({ q: "example.com", limit: 100 })) found++;
    assert.equal(found, 250);
    assert.equal(sent.length, 3);
  });

  test("a child list walks too: the 250 orders of one user", async () => {
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", fetch });
    const totals: number[] = [];
    for await (const order of api.users.orders.list(userId, { limit: 100, currency: "EUR" })) totals.push(order.total_cents);
    assert.equal(totals.length, 250);
    assert.deepEqual(totals, [...totals.keys()]);
    assert.equal(sent.length, 3);
    assert.ok(sent.every((s) => new URL(s.url).pathname === `/v2/users/${userId}/orders`));
  });

  test("filters are sent as query parameters", async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader" });
    const page = await api.users.list({ role: "admin" });
    assert.deepEqual(page.pagination.total, 0);
    assert.equal((await api.products.list({ category: "books" })).data.length, 0);
  });
});

describe("errors: every failure is an ApiError of its status", () => {
  const service = suiteFixture(() => startShowcase());
  let api: v2.Client;
  before(async () => {
    api = v2.createClient({ baseUrl: service.base, token: "dev-writer" });
  });

  /** The error `promise` rejects with, checked to be `Class` with `status` and `code`. */
  async function failure<E extends v2.ApiError>(promise: PromiseLike<unknown>, Class: new (...args: never[]) => E, status: number, code: string): Promise<E> {
    try {
      await promise;
    } catch (error) {
      assert.ok(error instanceof Class, `expected ${Class.name}, got ${String(error)}`);
      assert.ok(error instanceof v2.ApiError);
      assert.equal(error.name, Class.name);
      assert.deepEqual([error.status, error.code], [status, code]);
      assert.match(error.requestId, UUID_V7);
      assert.equal(error.headers.get("x-request-id"), error.requestId);
      assert.ok(error.message.length > 0);
      return error;
    }
    assert.fail(`expected ${Class.name}`);
  }

  test("400 ValidationError with every detail", async () => {
    const error = await failure(api.orders.create({ user_id: "x", code: "bad", total_cents: -1, currency: "EUR", amount_due_cents: 1 }), v2.ValidationError, 400, "VALIDATION_ERROR");
    assert.deepEqual(error.details.map((d) => d.field).sort(), ["code", "total_cents", "user_id"]);
    assert.ok(error.details.some((d) => d.field === "user_id" && d.issue === "must be a valid UUID"));
    const limit = await failure(api.products.list({ limit: 101 }), v2.ValidationError, 400, "VALIDATION_ERROR");
    assert.deepEqual(limit.details.map((d) => d.field), ["limit"]);
    await failure(api.orders.get("not-a-uuid"), v2.ValidationError, 400, "VALIDATION_ERROR");
  });

  test("401 UnauthenticatedError, 403 ForbiddenError", async () => {
    const stranger = v2.createClient({ baseUrl: service.base, token: "nobody" });
    const error = await failure(stranger.products.list(), v2.UnauthenticatedError, 401, "UNAUTHENTICATED");
    assert.match(error.headers.get("www-authenticate") ?? "", /^Bearer/);
    await failure(v2.createClient({ baseUrl: service.base }).users.list(), v2.UnauthenticatedError, 401, "UNAUTHENTICATED");
    const reader = v2.createClient({ baseUrl: service.base, token: "dev-reader" });
    await failure(reader.products.create(productBody()), v2.ForbiddenError, 403, "FORBIDDEN");
  });

  test("404 NotFoundError, also for the parent of a child list and the target of an action", async () => {
    await failure(api.orders.get(UNKNOWN_ID), v2.NotFoundError, 404, "NOT_FOUND");
    await failure(api.users.orders.list(UNKNOWN_ID), v2.NotFoundError, 404, "NOT_FOUND");
    await failure(api.orders.cancellations.create(UNKNOWN_ID, { reason: "x" }), v2.NotFoundError, 404, "NOT_FOUND");
  });

  test("409 ConflictError for a duplicate, 422 BusinessRuleError for a missing reference", async () => {
    const user = await api.users.create(userBody());
    const code = orderCode();
    await api.orders.create({ user_id: user.id, code, total_cents: 1, currency: "EUR", amount_due_cents: 1 });
    await failure(api.orders.create({ user_id: user.id, code, total_cents: 1, currency: "EUR", amount_due_cents: 1 }), v2.ConflictError, 409, "CONFLICT");
    await failure(api.orders.create({ user_id: UNKNOWN_ID, code: orderCode(), total_cents: 1, currency: "EUR", amount_due_cents: 1 }), v2.BusinessRuleError, 422, "BUSINESS_RULE_VIOLATION");
  });

  test("a body that is not the envelope still gives a clear ApiError", async () => {
    const html = (status: number) => async () => new Response("<html><body>Bad gateway</body></html>", { status, statusText: "Bad Gateway", headers: { "content-type": "text/html" } });
    const proxied = v2.createClient({ baseUrl: service.base, fetch: html(502) });
    const error = await proxied.products.get(UNKNOWN_ID).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof v2.ApiError && error.constructor === v2.ApiError, String(error));
    assert.deepEqual([error.status, error.code, error.details], [502, "HTTP_502", []]);
    assert.match(error.message, /^GET \/v2\/products\/[0-9a-f-]+ answered 502 Bad Gateway: <html><body>Bad gateway/);
    // The proxy's answer carried no request id: the error has the one the client sent.
    assert.match(error.requestId, UUID_V7);
    const failing = v2.createClient({ baseUrl: service.base, fetch: html(500) });
    const internal = await failing.products.list().then(() => null, (e: unknown) => e);
    assert.ok(internal instanceof v2.InternalError, "a 500 without the envelope is still an InternalError");
    assert.equal(internal.code, "HTTP_500");
    const notJson = v2.createClient({ baseUrl: service.base, fetch: async () => new Response("ok", { status: 200 }) });
    await assert.rejects(notJson.products.list(), (e: unknown) => e instanceof v2.ApiError && e.code === "HTTP_200" && /not JSON/.test(e.message));
  });

  test("a failed connection: a GET is retried, a POST too (with its key), a PATCH or DELETE is not; then NetworkError", async () => {
    let attempts = 0;
    const down = async (): Promise<Response> => {
      attempts++;
      throw new TypeError("fetch failed");
    };
    const offline = v2.createClient({ baseUrl: service.base, fetch: down, maxRetries: 2 });
    await assert.rejects(offline.products.list(), (e: unknown) => e instanceof v2.NetworkError && e.status === 0 && e.code === "NETWORK_ERROR" && e.cause instanceof TypeError);
    assert.equal(attempts, 3);
    attempts = 0;
    await assert.rejects(offline.products.create(productBody()), v2.NetworkError);
    assert.equal(attempts, 3, "a POST is retried with its Idempotency-Key");
    attempts = 0;
    await assert.rejects(offline.products.delete(UNKNOWN_ID), v2.NetworkError);
    assert.equal(attempts, 1, "a DELETE is sent once");
    // A connection that fails once, then works: the GET succeeds.
    let first = true;
    const flaky = v2.createClient({
      baseUrl: service.base,
      token: "dev-reader",
      fetch: (input, init) => {
        if (first) {
          first = false;
          return Promise.reject(new TypeError("socket hang up"));
        }
        return fetch(input, init);
      },
    });
    assert.ok(Array.isArray((await flaky.products.list()).data));
  });
});

describe("Idempotency-Key: every POST carries one; a POST whose connection failed is sent again with it", () => {
  const service = suiteFixture(() => startShowcase());

  test("the answer is lost after the service created the record: the retry gets it replayed, one record", async () => {
    const keys: string[] = [];
    let attempts = 0;
    const api = v2.createClient({
      baseUrl: service.base,
      token: "dev-writer",
      fetch: async (input, init) => {
        attempts++;
        keys.push(new Headers(init.headers).get("idempotency-key") ?? "");
        const response = await fetch(input, init);
        // The first answer never arrives: the connection fails after the service ran the request.
        if (attempts === 1) {
          await response.body?.cancel();
          throw new TypeError("socket hang up");
        }
        return response;
      },
    });
    const body = productBody();
    const made = await api.products.create(body).withResponse();
    assert.equal(attempts, 2);
    assert.match(keys[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(keys[1], keys[0], "the retry sends the same key");
    assert.equal(made.status, 201);
    assert.equal(made.headers.get("idempotent-replayed"), "true");
    const reader = v2.createClient({ baseUrl: service.base, token: "dev-reader" });
    const same: string[] = [];
    for await (const product of reader.products.list()) if (product.sku === body.sku) same.push(product.id);
    assert.deepEqual(same, [made.data.id]);
  });

  test("a fresh key on every POST; the caller's own key when given, and its repeat is replayed", async () => {
    const { fetch: recording, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch: recording });
    await api.products.create(productBody());
    await api.products.create(productBody());
    const generated = sent.map((r) => r.headers.get("idempotency-key"));
    assert.ok(generated[0] && generated[1] && generated[0] !== generated[1], JSON.stringify(generated));
    await api.products.list();
    assert.equal(sent.at(-1)!.headers.get("idempotency-key"), null, "a GET carries no key");
    const key = `order-${unique()}`;
    const body = productBody();
    const first = await api.products.create(body, { idempotencyKey: key }).withResponse();
    const again = await api.products.create(body, { idempotencyKey: key }).withResponse();
    assert.equal(sent.at(-1)!.headers.get("idempotency-key"), key);
    assert.deepEqual(again.data, first.data);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    await assert.rejects(api.products.create(productBody(), { idempotencyKey: key }), (e: unknown) => e instanceof v2.ApiError && e.status === 422);
  });

  test("a key the service would refuse throws its 400 naming Idempotency-Key, without sending", async () => {
    let calls = 0;
    const counting = (input: string, init: RequestInit) => {
      calls += 1;
      return fetch(input, init);
    };
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch: counting });
    // Before: a control character or a character past Latin-1 made fetch throw before sending, so the
    // call was retried twice and ended as a NetworkError (status 0); the others were sent for the 400.
    for (const key of ["a\x7fb", "tab\there", "caf\u00e9", "\u20ac", "", "k".repeat(256)]) {
      const error = await api.products.create(productBody(), { idempotencyKey: key }).then(() => null, (e: unknown) => e);
      assert.ok(error instanceof v2.ValidationError, `${JSON.stringify(key)}: ${String(error)}`);
      assert.deepEqual([error.status, error.code, error.message], [400, "VALIDATION_ERROR", "The Idempotency-Key header is not valid."]);
      assert.deepEqual(error.details, [{ field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" }]);
    }
    assert.equal(calls, 0, "nothing sent");
    // The service answers the same for a key it is sent.
    const sent = await fetch(`${service.base}/v2/products`, {
      method: "POST",
      headers: { authorization: "Bearer dev-writer", "content-type": "application/json", "idempotency-key": "k".repeat(256) },
      body: JSON.stringify(productBody()),
    });
    assert.equal(sent.status, 400);
    assert.deepEqual(((await sent.json()) as any).error.details, [{ field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" }]);
    assert.ok(await api.products.create(productBody(), { idempotencyKey: "k".repeat(255) }));
  });
});

describe("429: retried after Retry-After, at most maxRetries times", () => {
  const service = suiteFixture(() => startShowcase({ rateLimit: { max: 2, windowMs: 2000 } }));

  test("with no retries, RateLimitedError with retryAfterSeconds", async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", maxRetries: 0 });
    await api.products.list();
    await api.products.list();
    const error = await api.products.list().then(() => null, (e: unknown) => e);
    assert.ok(error instanceof v2.RateLimitedError, String(error));
    assert.deepEqual([error.status, error.code], [429, "RATE_LIMITED"]);
    assert.ok(error.retryAfterSeconds === 1 || error.retryAfterSeconds === 2, String(error.retryAfterSeconds));
    assert.equal(error.headers.get("retry-after"), String(error.retryAfterSeconds));
  });

  test("by default the call waits Retry-After and succeeds; writes are retried too", async () => {
    await new Promise((r) => setTimeout(r, 2100));
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch });
    await api.products.list();
    await api.products.list();
    const started = performance.now();
    const product = await api.products.create(productBody());
    const waited = performance.now() - started;
    assert.match(product.id, UUID_V7);
    assert.equal(sent.length, 4);
    assert.ok(waited >= 200, `waited ${waited} ms for the window to end`);
    // The retry is the same request: the same X-Request-Id.
    assert.equal(sent[2]!.headers.get("x-request-id"), sent[3]!.headers.get("x-request-id"));
  });

  test("a Retry-After longer than maxRetryDelayMs is thrown at once", async () => {
    await new Promise((r) => setTimeout(r, 2100));
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader", fetch, maxRetryDelayMs: 10 });
    await api.products.list();
    await api.products.list();
    await assert.rejects(api.products.list(), v2.RateLimitedError);
    assert.equal(sent.length, 3);
  });

  test("retries stop after maxRetries", async () => {
    let calls = 0;
    const always429 = async () => {
      calls++;
      return new Response(JSON.stringify({ error: { code: "RATE_LIMITED", message: "Too many requests." } }), { status: 429, headers: { "retry-after": "0" } });
    };
    const api = v2.createClient({ baseUrl: service.base, fetch: always429, maxRetries: 3 });
    await assert.rejects(api.products.list(), v2.RateLimitedError);
    assert.equal(calls, 4);
  });
});

describe("request ids, ETags and conditional writes", () => {
  const service = suiteFixture(() => startShowcase());

  test("every call sends a new UUID v7 X-Request-Id, or the caller's, and shows the answer's", async () => {
    const { fetch, sent } = recordingFetch();
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer", fetch });
    const created = await api.products.create(productBody()).withResponse();
    const read = await api.products.get(created.data.id).withResponse();
    const page = await api.products.list().withResponse();
    const ids = sent.map((s) => s.headers.get("x-request-id"));
    assert.equal(ids.length, 3);
    for (const id of ids) assert.match(id ?? "", UUID_V7);
    assert.equal(new Set(ids).size, 3);
    assert.deepEqual([created.requestId, read.requestId, page.requestId], ids);
    assert.deepEqual([created.status, read.status, page.status], [201, 200, 200]);
    assert.equal(created.headers.get("location"), `/v2/products/${created.data.id}`);
    const mine = "01a1a1a1-0000-7000-8000-000000000001";
    assert.equal((await api.products.get(created.data.id, { requestId: mine }).withResponse()).requestId, mine);
    assert.equal(sent.at(-1)!.headers.get("x-request-id"), mine);
    assert.equal(sent.at(-1)!.headers.get("authorization"), "Bearer dev-writer");
  });

  test("update and delete with ifMatch: the current ETag passes, a stale one is a ConflictError", async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer" });
    const product = await api.products.create(productBody());
    const { etag } = await api.products.get(product.id).withResponse();
    assert.ok(etag);
    const updated = await api.products.update(product.id, { name: "First" }, { ifMatch: etag }).withResponse();
    assert.notEqual(updated.etag, etag);
    const stale = await api.products.update(product.id, { name: "Second" }, { ifMatch: etag }).then(() => null, (e: unknown) => e);
    assert.ok(stale instanceof v2.ConflictError, String(stale));
    assert.equal(stale.status, 409);
    assert.equal((await api.products.get(product.id)).name, "First", "nothing changed");
    await assert.rejects(api.products.replace(product.id, { sku: product.sku, name: "x", price_cents: 1 }, { ifMatch: etag }), v2.ConflictError);
    await assert.rejects(api.products.delete(product.id, { ifMatch: etag }), v2.ConflictError);
    await api.products.delete(product.id, { ifMatch: updated.etag! });
    await assert.rejects(api.products.get(product.id), v2.NotFoundError);
  });

  test("a token function is asked before every request; headers are sent", async () => {
    const { fetch, sent } = recordingFetch();
    let asked = 0;
    const api = v2.createClient({
      baseUrl: `${service.base}/`,
      fetch,
      token: async () => (++asked, "dev-reader"),
      headers: { "x-client": "tests" },
    });
    await api.products.list();
    await api.products.list({}, { headers: { "x-call": "one" } });
    assert.equal(asked, 2);
    assert.equal(sent[1]!.headers.get("x-client"), "tests");
    assert.equal(sent[1]!.headers.get("x-call"), "one");
    assert.ok(sent[0]!.url.startsWith(`${service.base}/v2/products`), "no double slash");
  });

  test("an aborted call rejects with the abort reason and is not retried", async () => {
    const api = v2.createClient({ baseUrl: service.base, token: "dev-reader" });
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await assert.rejects(api.products.list({}, { signal: controller.signal }), (e: unknown) => !(e instanceof v2.ApiError));
  });
});
