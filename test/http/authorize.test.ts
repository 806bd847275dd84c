// authorize sees what a write proposes, and hideForbidden hides what a principal may not read
// (issue 14, point 3).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryStore, scopeAuthorize } from "../../generated/index.ts";
import type { AccessRequest } from "../../generated/runtime/index.ts";
import { createOrder, createProduct, createUser, expectError, expectStatus, orderBody, productBody, startApp, UNKNOWN_ID } from "./helpers.ts";

type Obj = Record<string, any>;

describe("authorize receives the proposed values", () => {
  test("on create, update, replace and action: the values as stored after the change", async () => {
    const seen: AccessRequest[] = [];
    const api = await startApp({
      store: new MemoryStore(),
      authorize: (access) => {
        seen.push(access);
        return scopeAuthorize(access);
      },
    });
    try {
      const user = await createUser(api);
      const proposedOf = (action: string, collection: string) =>
        seen.filter((a) => a.action === action && a.collection === collection && a.proposed).map((a) => a.proposed as Obj);

      const order = await createOrder(api, user.id as string);
      const [created] = proposedOf("create", "orders");
      assert.equal(created!.user_id, user.id);
      assert.equal(created!.status, "pending", "with the defaults the store keeps");
      assert.equal(created!.amount_due_cents, order.amount_due_cents);

      await expectStatus(api, "PATCH", `/v2/orders/${order.id}`, 200, { body: { note: "ring twice" } });
      const [updated] = proposedOf("update", "orders");
      assert.equal(updated!.note, "ring twice");
      assert.equal(updated!.code, order.code, "the whole record after the change");
      const asked = seen.filter((a) => a.action === "update" && a.collection === "orders");
      assert.deepEqual(asked.map((a) => [a.record?.id, a.proposed !== undefined]), [[order.id, false], [order.id, true]], "asked first without, then with the change");

      const product = await createProduct(api);
      await expectStatus(api, "PUT", `/v2/products/${product.id}`, 200, { body: { sku: product.sku, name: "Replaced", price_cents: 5 } });
      const [replaced] = proposedOf("replace", "products");
      assert.equal(replaced!.name, "Replaced");
      assert.equal(replaced!.price_cents, 5);

      await expectStatus(api, "POST", `/v2/orders/${order.id}/cancellations`, 201, { body: { reason: "changed my mind" } });
      const [action] = proposedOf("action", "orders/cancellations");
      assert.deepEqual(action, { order_id: order.id, reason: "changed my mind" });
    } finally {
      await api.close();
    }
  });

  test("a policy can refuse handing an order to another user, and allow other changes", async () => {
    const api = await startApp({
      store: new MemoryStore(),
      authorize: (access) => {
        const { action, collection, record, proposed } = access;
        if (collection === "orders" && record && proposed && (action === "update" || action === "replace")) {
          if ((proposed as Obj).user_id !== (record.values as Obj).user_id) return false;
        }
        return scopeAuthorize(access);
      },
    });
    try {
      const ann = await createUser(api);
      const bob = await createUser(api);
      const order = await createOrder(api, ann.id as string);
      await expectError(api, "PATCH", `/v2/orders/${order.id}`, 403, "FORBIDDEN", { body: { user_id: bob.id } });
      await expectError(api, "PATCH", `/v1/orders/${order.id}`, 403, "FORBIDDEN", { body: { user_id: bob.id, note: "mine now" } });
      const after = await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200);
      assert.equal(after.body.user_id, ann.id, "not reassigned");
      assert.equal(after.body.note, order.note, "nothing else changed either");
      await expectStatus(api, "PATCH", `/v2/orders/${order.id}`, 200, { body: { note: "allowed", user_id: ann.id } });
    } finally {
      await api.close();
    }
  });
});

describe("hideForbidden", () => {
  // dev-reader may read every product but the secret one; dev-writer everything.
  const policy = (secret: () => string) => (access: AccessRequest) =>
    !(access.principal.id === "dev-reader" && access.record?.id === secret()) && scopeAuthorize(access);

  test("a record the principal may not read answers 404 exactly as an unknown id does; one it may read but not change, 403", async () => {
    let secret = "";
    const api = await startApp({ store: new MemoryStore(), hideForbidden: true, authorize: policy(() => secret) });
    try {
      secret = (await createProduct(api)).id as string;
      const open = await createProduct(api);
      const reader = { auth: "dev-reader" };
      const hidden = await expectError(api, "GET", `/v2/products/${secret}`, 404, "NOT_FOUND", reader);
      const unknown = await expectError(api, "GET", `/v2/products/${UNKNOWN_ID}`, 404, "NOT_FOUND", reader);
      assert.deepEqual(hidden, unknown);
      assert.deepEqual(await expectError(api, "PATCH", `/v2/products/${secret}`, 404, "NOT_FOUND", { ...reader, body: { name: "x" } }), unknown);
      assert.deepEqual(await expectError(api, "DELETE", `/v2/products/${secret}`, 404, "NOT_FOUND", reader), unknown);
      await expectError(api, "PATCH", `/v2/products/${open.id}`, 403, "FORBIDDEN", { ...reader, body: { name: "x" } });
      await expectStatus(api, "GET", `/v2/products/${open.id}`, 200, reader);
      await expectStatus(api, "GET", `/v2/products/${secret}`, 200);
      await expectError(api, "POST", "/v2/products", 403, "FORBIDDEN", { ...reader, body: productBody() });
    } finally {
      await api.close();
    }
  });

  test("hidden parents and action targets answer 404 too", async () => {
    let secret = "";
    const api = await startApp({
      store: new MemoryStore(),
      hideForbidden: true,
      authorize: (access) => !(access.principal.id === "dev-reader" && access.record?.id === secret) && scopeAuthorize(access),
    });
    try {
      const user = await createUser(api);
      secret = user.id as string;
      const unknownUser = await expectError(api, "GET", `/v2/users/${UNKNOWN_ID}/orders`, 404, "NOT_FOUND", { auth: "dev-reader" });
      assert.deepEqual(await expectError(api, "GET", `/v2/users/${secret}/orders`, 404, "NOT_FOUND", { auth: "dev-reader" }), unknownUser);
      const order = await createOrder(api, secret);
      secret = order.id as string;
      const unknownOrder = await expectError(api, "POST", `/v2/orders/${UNKNOWN_ID}/cancellations`, 404, "NOT_FOUND", { auth: "dev-reader", body: { reason: "x" } });
      assert.deepEqual(await expectError(api, "POST", `/v2/orders/${secret}/cancellations`, 404, "NOT_FOUND", { auth: "dev-reader", body: { reason: "x" } }), unknownOrder);
    } finally {
      await api.close();
    }
  });

  test("an action asks read on its target as well: allowed to act but not to read is refused, 403 (404 with hideForbidden), nothing kept", async () => {
    for (const hideForbidden of [false, true]) {
      let secret = "";
      const asked: string[] = [];
      const store = new MemoryStore();
      const api = await startApp({
        store,
        hideForbidden,
        authorize: (access) => {
          if (access.record?.id === secret) asked.push(`${access.action} ${access.collection}`);
          return !(access.action === "read" && access.record?.id === secret) && scopeAuthorize(access);
        },
      });
      try {
        const order = await createOrder(api, (await createUser(api)).id as string);
        secret = order.id as string;
        const status = hideForbidden ? 404 : 403;
        await expectError(api, "POST", `/v2/orders/${secret}/cancellations`, status, hideForbidden ? "NOT_FOUND" : "FORBIDDEN", { body: { reason: "x" } });
        assert.equal(asked[0], "read orders", "read is asked first");
        assert.deepEqual((await store.list("orders/cancellations", { where: {}, limit: 10 })).records, [], "nothing was kept");
      } finally {
        await api.close();
      }
    }
  });

  test("a reference to a record the principal may not read answers as one to no record: 422, the same answer", async () => {
    let secret = "";
    const api = await startApp({
      store: new MemoryStore(),
      authorize: (access) => !(access.action === "read" && access.collection === "users" && access.record?.id === secret && access.principal.id === "dev-writer") && scopeAuthorize(access),
    });
    try {
      secret = (await createUser(api)).id as string;
      const missing = await expectError(api, "POST", "/v2/orders", 422, "BUSINESS_RULE_VIOLATION", { body: orderBody("v2", UNKNOWN_ID) });
      const hidden = await expectError(api, "POST", "/v2/orders", 422, "BUSINESS_RULE_VIOLATION", { body: orderBody("v2", secret) });
      assert.deepEqual(hidden, missing);
      // Once readable, the same reference is accepted.
      const user = secret;
      secret = "";
      await createOrder(api, user);
    } finally {
      await api.close();
    }
  });

  test("without it (the default), the same requests answer 403", async () => {
    let secret = "";
    const api = await startApp({ store: new MemoryStore(), authorize: policy(() => secret) });
    try {
      secret = (await createProduct(api)).id as string;
      await expectError(api, "GET", `/v2/products/${secret}`, 403, "FORBIDDEN", { auth: "dev-reader" });
    } finally {
      await api.close();
    }
  });
});
