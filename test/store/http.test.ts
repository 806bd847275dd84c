// The key scenarios of SPEC §5 over real HTTP on every store (memory, PGlite, PostgreSQL),
// every response checked against the version's OpenAPI document by the HTTP suite's helpers.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore } from "../../generated/sql/index.ts";
import {
  call,
  createOrder,
  createProduct,
  createUser,
  expectError,
  expectStatus,
  orderBody,
  startApp,
  UNKNOWN_ID,
  walk,
  type Api,
} from "../http/helpers.ts";
import { workspace } from "../support/cli.ts";
import { makeStores } from "./stores.ts";

for (const factory of makeStores()) {
  describe(`HTTP over the ${factory.name} store`, () => {
    let api: Api;
    before(async () => {
      api = await startApp({ store: await factory.create() });
    });
    after(async () => {
      await api.close();
      await factory.cleanup();
    });

    test("create 201 + Location, read, PATCH, If-Match, DELETE 204 then 404", async () => {
      const user = await createUser(api);
      const created = await expectStatus(api, "POST", "/v2/orders", 201, { body: orderBody("v2", user.id, { note: "first", placed_at: "2026-01-02T03:04:05+01:00" }) });
      const order = created.body;
      assert.equal(created.headers.get("location"), `/v2/orders/${order.id}`);
      assert.equal(order.placed_at, "2026-01-02T03:04:05+01:00");
      const etag = created.headers.get("etag")!;
      assert.deepEqual((await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200)).body, order);
      const patched = await expectStatus(api, "PATCH", `/v2/orders/${order.id}`, 200, { body: { note: "second" }, headers: { "if-match": etag } });
      assert.equal(patched.body.note, "second");
      assert.ok(patched.body.updated_at > order.updated_at);
      await expectError(api, "PATCH", `/v2/orders/${order.id}`, 409, "CONFLICT", { body: { note: "stale" }, headers: { "if-match": etag } });
      await expectError(api, "DELETE", `/v2/orders/${order.id}`, 409, "CONFLICT", { headers: { "if-match": etag } });
      assert.equal((await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200)).body.note, "second");
      await expectStatus(api, "DELETE", `/v2/orders/${order.id}`, 204, { headers: { "if-match": patched.headers.get("etag")! } });
      await expectError(api, "GET", `/v2/orders/${order.id}`, 404, "NOT_FOUND");
    });

    test("v1 and v2 share the records: a renamed field under its old name, a removed one kept", async () => {
      const user = await createUser(api, "v1");
      const v1 = (await expectStatus(api, "POST", "/v1/orders", 201, { body: orderBody("v1", user.id, { legacy_ref: "L-1", due_cents: 700 }) })).body;
      const v2 = (await expectStatus(api, "GET", `/v2/orders/${v1.id}`, 200)).body;
      assert.equal(v2.amount_due_cents, 700);
      assert.equal(v2.gift_wrap, false);
      assert.ok(!("legacy_ref" in v2));
      assert.equal((await expectStatus(api, "GET", `/v1/orders/${v1.id}`, 200)).body.legacy_ref, "L-1");
    });

    test("a duplicate unique value: 409 CONFLICT naming the field", async () => {
      const user = await createUser(api);
      const first = await createOrder(api, user.id);
      const error = await expectError(api, "POST", "/v2/orders", 409, "CONFLICT", { body: orderBody("v2", user.id, { code: first.code }) });
      assert.deepEqual(error.details, [{ field: "code", issue: "is already taken" }]);
      const other = await createOrder(api, user.id);
      await expectError(api, "PATCH", `/v2/orders/${other.id}`, 409, "CONFLICT", { body: { code: first.code } });
    });

    test("a reference to no record: 422 BUSINESS_RULE_VIOLATION", async () => {
      const error = await expectError(api, "POST", "/v2/orders", 422, "BUSINESS_RULE_VIOLATION", { body: orderBody("v2", UNKNOWN_ID) });
      assert.deepEqual(error.details?.map((d: { field: string }) => d.field), ["user_id"]);
      await expectError(api, "POST", "/v2/invoices", 422, "BUSINESS_RULE_VIOLATION", {
        body: { order_id: UNKNOWN_ID, amount_cents: 1, due_date: "2026-07-01" },
      });
    });

    test("concurrent PATCHes with one If-Match: exactly one 200, the others 409", async () => {
      const product = await createProduct(api);
      const etag = (await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).headers.get("etag")!;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => call(api, "PATCH", `/v2/products/${product.id}`, { body: { name: `Name ${i}` }, headers: { "if-match": etag } })),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
    });

    test("cursor walk: every record once, ascending; records created during the walk come at its end", async () => {
      const marker = `Walker${Date.now()}`;
      const made: string[] = [];
      for (let i = 0; i < 12; i++) made.push((await createProduct(api, "v2", { name: `${marker} ${i}`, category: "books" })).id);
      const late: string[] = [];
      const seen = await walk(api, `/v2/products?limit=5&category=books&q=${marker.toLowerCase()}`, async (_page, index) => {
        if (index === 0) for (let i = 0; i < 3; i++) late.push((await createProduct(api, "v2", { name: `${marker} late ${i}`, category: "books" })).id);
      });
      assert.deepEqual(
        seen.map((r) => r.id),
        [...made, ...late],
      );
      const first = (await expectStatus(api, "GET", `/v2/products?limit=5&category=books&q=${marker}`, 200)).body;
      const cursor = first.pagination.next_cursor as string;
      // One character of the middle changed (the last ones may carry bits a decoder drops, and
      // may already be what they would be changed to).
      const middle = Math.floor(cursor.length / 2);
      const tampered = `${cursor.slice(0, middle)}${cursor[middle] === "A" ? "B" : "A"}${cursor.slice(middle + 1)}`;
      await expectError(api, "GET", `/v2/products?limit=5&category=books&q=${marker}&cursor=${encodeURIComponent(tampered)}`, 400, "VALIDATION_ERROR");
      await expectError(api, "GET", `/v2/products?limit=5&category=games&q=${marker}&cursor=${encodeURIComponent(cursor)}`, 400, "VALIDATION_ERROR");
    });

    test("offset list of users: page, per_page, total, total_pages", async () => {
      const name = `Offset${Date.now()}`;
      for (let i = 0; i < 7; i++) await createUser(api, "v2", { name: `${name} ${i}`, role: "admin" });
      // (?q= lists by cursor; only this test makes admins)
      const page = (await expectStatus(api, "GET", `/v2/users?role=admin&per_page=3&page=3`, 200)).body;
      assert.deepEqual(page.pagination, { page: 3, per_page: 3, total: 7, total_pages: 3 });
      assert.equal(page.data.length, 1);
      assert.equal(page.data[0].name, `${name} 6`);
      const beyond = (await expectStatus(api, "GET", `/v2/users?role=admin&per_page=3&page=9`, 200)).body;
      assert.deepEqual(beyond, { data: [], pagination: { page: 9, per_page: 3, total: 7, total_pages: 3 } });
    });

    test("filters and a parent's child list", async () => {
      const user = await createUser(api);
      const other = await createUser(api);
      const mine = [await createOrder(api, user.id, "v2", { currency: "USD" }), await createOrder(api, user.id, "v2", { currency: "EUR" })];
      await createOrder(api, other.id, "v2", { currency: "USD" });
      const list = (await expectStatus(api, "GET", `/v2/users/${user.id}/orders`, 200)).body;
      assert.deepEqual(
        list.data.map((o: { id: string }) => o.id),
        mine.map((o) => o.id),
      );
      const usd = (await expectStatus(api, "GET", `/v2/users/${user.id}/orders?currency=USD&status=pending`, 200)).body;
      assert.deepEqual(
        usd.data.map((o: { id: string }) => o.id),
        [mine[0]!.id],
      );
      await expectError(api, "GET", `/v2/users/${UNKNOWN_ID}/orders`, 404, "NOT_FOUND");
    });

    test("an action: 201 with its own record; 404 on an unknown target", async () => {
      const user = await createUser(api);
      const order = await createOrder(api, user.id);
      const cancellation = (await expectStatus(api, "POST", `/v2/orders/${order.id}/cancellations`, 201, { body: { reason: "changed my mind" } })).body;
      assert.equal(cancellation.order_id, order.id);
      await expectError(api, "POST", `/v2/orders/${UNKNOWN_ID}/cancellations`, 404, "NOT_FOUND", { body: { reason: "x" } });
    });
  });
}

describe("the PGlite store keeps its data in its folder across restarts", () => {
  test("a record written before a restart is read after it", async () => {
    const dir = path.join(workspace("pglite-restart"), "data");
    let api = await startApp({ store: await openStore(`pglite:${dir}`) });
    const product = await createProduct(api);
    await api.close();
    api = await startApp({ store: await openStore(`pglite:${dir}`) });
    try {
      assert.deepEqual((await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).body, product);
    } finally {
      await api.close();
    }
  });
});
