// SPEC §5 over real HTTP: create, read, update, replace, delete, actions, ETags and
// If-Match, and the ids the service assigns.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import {
  call,
  createInvoice,
  createOrder,
  createProduct,
  createUser,
  expectError,
  expectStatus,
  orderBody,
  productBody,
  startApp,
  UNKNOWN_ID,
  UUID_V7,
} from "./helpers.ts";

const api = suiteFixture(() => startApp());

describe("create, read, update, delete", () => {
  for (const version of ["v1", "v2"]) {
    test(`${version} orders: 201 + Location + ETag, read 200, PATCH 200, DELETE 204 then 404`, async () => {
      const user = await createUser(api, version);
      const created = await expectStatus(api, "POST", `/${version}/orders`, 201, { body: orderBody(version, user.id, { note: "first" }) });
      const order = created.body;
      assert.match(order.id, UUID_V7);
      assert.equal(created.headers.get("location"), `/${version}/orders/${order.id}`);
      const etag = created.headers.get("etag");
      assert.ok(etag, "create answers an ETag");
      assert.equal(order.status, "pending");
      assert.equal(order.note, "first");
      assert.equal(order.created_at, order.updated_at);

      const read = await expectStatus(api, "GET", `/${version}/orders/${order.id}`, 200);
      assert.deepEqual(read.body, order);
      assert.equal(read.headers.get("etag"), etag);

      const patched = await expectStatus(api, "PATCH", `/${version}/orders/${order.id}`, 200, { body: { note: "second", total_cents: 1500 } });
      assert.equal(patched.body.note, "second");
      assert.equal(patched.body.total_cents, 1500);
      assert.equal(patched.body.code, order.code, "PATCH leaves other fields");
      assert.equal(patched.body.created_at, order.created_at);
      assert.ok(patched.body.updated_at > order.updated_at, "updated_at moves on");
      const newEtag = patched.headers.get("etag");
      assert.ok(newEtag && newEtag !== etag, "the ETag changes with a write");
      assert.deepEqual((await expectStatus(api, "GET", `/${version}/orders/${order.id}`, 200)).body, patched.body);

      const deleted = await expectStatus(api, "DELETE", `/${version}/orders/${order.id}`, 204);
      assert.equal(deleted.text, "");
      await expectError(api, "GET", `/${version}/orders/${order.id}`, 404, "NOT_FOUND");
      await expectError(api, "DELETE", `/${version}/orders/${order.id}`, 404, "NOT_FOUND");
      await expectError(api, "PATCH", `/${version}/orders/${order.id}`, 404, "NOT_FOUND", { body: { note: "x" } });
    });
  }

  test("users: create, read, PATCH, DELETE; the password is accepted and never shown", async () => {
    const created = await expectStatus(api, "POST", "/v2/users", 201, {
      body: { email: "ada@example.com", name: "Ada", password: "a very secret one" },
    });
    const user = created.body;
    assert.equal(created.headers.get("location"), `/v2/users/${user.id}`);
    assert.equal(user.role, "customer", "the default applies");
    assert.ok(!("password" in user));
    assert.doesNotMatch(created.text, /a very secret one/);
    const patched = await expectStatus(api, "PATCH", `/v2/users/${user.id}`, 200, { body: { role: "admin", password: "another secret!" } });
    assert.equal(patched.body.role, "admin");
    assert.doesNotMatch(patched.text, /secret/);
    await expectStatus(api, "DELETE", `/v2/users/${user.id}`, 204);
    await expectError(api, "GET", `/v2/users/${user.id}`, 404, "NOT_FOUND");
  });

  test("products: PUT replaces the record (optional fields left out are gone), PATCH changes some", async () => {
    const created = await expectStatus(api, "POST", "/v2/products", 201, {
      body: productBody({ description: "A fine thing", tags: ["a", "b"], dimensions: { width_mm: 10, height_mm: 20 }, homepage: "https://example.com/p" }),
    });
    const product = created.body;
    assert.equal(created.headers.get("location"), `/v2/products/${product.id}`);
    assert.equal(product.category, "other");
    assert.deepEqual(product.dimensions, { width_mm: 10, height_mm: 20 });

    const replacement = { sku: product.sku, name: "Renamed", price_cents: 5 };
    const replaced = await expectStatus(api, "PUT", `/v2/products/${product.id}`, 200, { body: replacement });
    assert.equal(replaced.body.id, product.id);
    assert.equal(replaced.body.name, "Renamed");
    assert.equal(replaced.body.price_cents, 5);
    assert.equal(replaced.body.category, "other");
    assert.deepEqual(replaced.body.tags, []);
    assert.ok(!("description" in replaced.body), "PUT drops what it does not send");
    assert.ok(!("dimensions" in replaced.body));
    assert.ok(replaced.headers.get("etag"));
    assert.notEqual(replaced.headers.get("etag"), created.headers.get("etag"));
    assert.deepEqual((await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).body, replaced.body);

    const patched = await expectStatus(api, "PATCH", `/v2/products/${product.id}`, 200, { body: { homepage: null, tags: ["x"] } });
    assert.equal(patched.body.homepage, null);
    assert.deepEqual(patched.body.tags, ["x"]);
    assert.equal(patched.body.name, "Renamed");

    await expectStatus(api, "DELETE", `/v2/products/${product.id}`, 204);
    await expectError(api, "GET", `/v2/products/${product.id}`, 404, "NOT_FOUND");
    await expectError(api, "PUT", `/v2/products/${product.id}`, 404, "NOT_FOUND", { body: replacement });
  });

  test("invoices: create, read, PATCH; no DELETE and no PUT operation (404)", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const invoice = await createInvoice(api, order.id);
    assert.equal(invoice.status, "draft");
    assert.equal(invoice.order_id, order.id);
    const patched = await expectStatus(api, "PATCH", `/v2/invoices/${invoice.id}`, 200, { body: { status: "issued" } });
    assert.equal(patched.body.status, "issued");
    await expectError(api, "DELETE", `/v2/invoices/${invoice.id}`, 404, "NOT_FOUND");
    await expectError(api, "PUT", `/v2/invoices/${invoice.id}`, 404, "NOT_FOUND", { body: { amount_cents: 1 } });
    await expectStatus(api, "GET", `/v2/invoices/${invoice.id}`, 200);
  });

  test("action: POST /v2/orders/{id}/cancellations answers 201 with its own record", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const res = await expectStatus(api, "POST", `/v2/orders/${order.id}/cancellations`, 201, { body: { reason: "changed my mind" } });
    assert.match(res.body.id, UUID_V7);
    assert.notEqual(res.body.id, order.id);
    assert.equal(res.body.order_id, order.id);
    assert.equal(res.body.reason, "changed my mind");
    assert.ok(typeof res.body.created_at === "string");
    await expectError(api, "POST", `/v2/orders/${UNKNOWN_ID}/cancellations`, 404, "NOT_FOUND", { body: { reason: "x" } });
    const bad = await expectError(api, "POST", `/v2/orders/${order.id}/cancellations`, 400, "VALIDATION_ERROR", { body: { reason: "" } });
    assert.deepEqual(bad.details.map((d: { field: string }) => d.field), ["reason"]);
  });
});

describe("ETag and If-Match", () => {
  test("PATCH, PUT and DELETE with a stale If-Match answer 409 CONFLICT and change nothing", async () => {
    const product = await createProduct(api);
    const first = await expectStatus(api, "GET", `/v2/products/${product.id}`, 200);
    const stale = first.headers.get("etag")!;
    await expectStatus(api, "PATCH", `/v2/products/${product.id}`, 200, { body: { name: "Changed once" } });
    const now = await expectStatus(api, "GET", `/v2/products/${product.id}`, 200);

    await expectError(api, "PATCH", `/v2/products/${product.id}`, 409, "CONFLICT", { body: { name: "Lost update" }, headers: { "if-match": stale } });
    await expectError(api, "PUT", `/v2/products/${product.id}`, 409, "CONFLICT", {
      body: { sku: product.sku, name: "Lost replace", price_cents: 1 },
      headers: { "if-match": stale },
    });
    await expectError(api, "DELETE", `/v2/products/${product.id}`, 409, "CONFLICT", { headers: { "if-match": stale } });
    await expectError(api, "PATCH", `/v2/products/${product.id}`, 409, "CONFLICT", { body: { name: "Garbage" }, headers: { "if-match": '"nope"' } });

    const after = await expectStatus(api, "GET", `/v2/products/${product.id}`, 200);
    assert.deepEqual(after.body, now.body, "nothing changed");
    assert.equal(after.headers.get("etag"), now.headers.get("etag"));
  });

  test("a matching If-Match (or *) lets PATCH, PUT and DELETE through", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const etag = (await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200)).headers.get("etag")!;
    const patched = await expectStatus(api, "PATCH", `/v2/orders/${order.id}`, 200, { body: { note: "ok" }, headers: { "if-match": etag } });
    const etag2 = patched.headers.get("etag")!;
    await expectError(api, "DELETE", `/v2/orders/${order.id}`, 409, "CONFLICT", { headers: { "if-match": etag } });
    await expectStatus(api, "DELETE", `/v2/orders/${order.id}`, 204, { headers: { "if-match": etag2 } });

    const product = await createProduct(api);
    const petag = (await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).headers.get("etag")!;
    await expectStatus(api, "PUT", `/v2/products/${product.id}`, 200, { body: { sku: product.sku, name: "P", price_cents: 2 }, headers: { "if-match": petag } });
    await expectStatus(api, "PATCH", `/v2/products/${product.id}`, 200, { body: { name: "Q" }, headers: { "if-match": "*" } });
  });

  test("concurrent writes with the same If-Match: exactly one wins, the others answer 409", async () => {
    const product = await createProduct(api);
    const etag = (await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).headers.get("etag")!;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call(api, "PATCH", `/v2/products/${product.id}`, { body: { price_cents: i }, headers: { "if-match": etag } })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array(9).fill(409)]);
    const winner = results.find((r) => r.status === 200)!;
    assert.deepEqual((await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).body, winner.body);
  });

  test("If-Match compares strongly: the current ETag marked weak (W/) answers 409 and changes nothing", async () => {
    const product = await createProduct(api);
    const etag = (await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).headers.get("etag")!;
    for (const weak of [`W/${etag}`, `"nope", W/${etag}`]) {
      await expectError(api, "PATCH", `/v2/products/${product.id}`, 409, "CONFLICT", { body: { name: "Weak" }, headers: { "if-match": weak } });
      await expectError(api, "DELETE", `/v2/products/${product.id}`, 409, "CONFLICT", { headers: { "if-match": weak } });
    }
    assert.equal((await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).headers.get("etag"), etag);
    await expectStatus(api, "PATCH", `/v2/products/${product.id}`, 200, { body: { name: "Strong" }, headers: { "if-match": `W/"x", ${etag}` } });
  });

  test("a record's ETag is the same in v1 and v2", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const v1 = await expectStatus(api, "GET", `/v1/orders/${order.id}`, 200);
    const v2 = await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200);
    assert.equal(v1.headers.get("etag"), v2.headers.get("etag"));
    await expectStatus(api, "PATCH", `/v1/orders/${order.id}`, 200, { body: { legacy_ref: "L-1" }, headers: { "if-match": v2.headers.get("etag")! } });
  });
});

describe("identifiers", () => {
  test("new ids are lowercase UUID v7 and successive creates sort in creation order", async () => {
    const user = await createUser(api);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await createOrder(api, user.id)).id);
    for (const id of ids) {
      assert.match(id, UUID_V7);
      assert.equal(id, id.toLowerCase());
    }
    assert.deepEqual([...ids].sort(), ids, "ids sort in creation order");
    assert.equal(new Set(ids).size, ids.length);
  });

  test("50 concurrent creates: distinct v7 ids whose order is the order of creation", async () => {
    const user = await createUser(api);
    const created = await Promise.all(Array.from({ length: 50 }, () => createOrder(api, user.id)));
    const ids = created.map((o) => o.id as string);
    assert.equal(new Set(ids).size, 50);
    for (const id of ids) assert.match(id, UUID_V7);
    const byId = [...created].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (let i = 1; i < byId.length; i++) {
      assert.ok(byId[i - 1].created_at <= byId[i].created_at, "sorting by id sorts by creation time");
    }
    // The child list is in id order and holds exactly these.
    const listed = (await expectStatus(api, "GET", `/v2/users/${user.id}/orders?limit=100`, 200)).body;
    assert.deepEqual(
      listed.data.map((o: { id: string }) => o.id),
      byId.map((o) => o.id),
    );
  });

  test("an uppercase id in the path names the same record", async () => {
    const user = await createUser(api);
    const res = await expectStatus(api, "GET", `/v2/users/${user.id.toUpperCase()}`, 200);
    assert.equal(res.body.id, user.id);
  });

  test("no response carries row_id, password or an integer id (checked on every response by the helper)", async () => {
    const res = await call(api, "GET", "/v2/users?per_page=100");
    assert.equal(res.status, 200);
    assert.ok(res.body.data.length > 0);
    assert.doesNotMatch(res.text, /row_id|password|revision/);
  });
});
