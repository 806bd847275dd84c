// The events of what a hook writes through its store handle show the record as the version that
// served the request shows it (SPEC §5: "data is the record as the version that served the write
// shows it"), on every store: a v1 request's hook that updates an order publishes `order.updated`
// with v1's `due_cents`, a v2 request's with v2's `amount_due_cents` and `gift_wrap`, a v3
// request's with v3's `product_ids`. (They all showed v3's shape before.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Hooks } from "../../generated/index.ts";
import { createOrder, createUser, expectStatus, startApp, type Api } from "./helpers.ts";

type Obj = Record<string, any>;

const hooks: Hooks = {
  invoices: {
    // Notes on the order that it was invoiced: a write of another record through the handle.
    async create({ values, store }) {
      const order = await store.get("orders", values.order_id);
      if (order) await store.update("orders", order, { ...order.values, note: `invoiced ${values.amount_cents}` });
    },
  },
};

let api: Api;
before(async () => {
  api = await startApp({ hooks });
});
after(() => api?.close());

async function hookEvent(version: string, orderId: string, amount: number): Promise<Obj> {
  const invoice = (
    await expectStatus(api, "POST", `/${version}/invoices`, 201, {
      body: { order_id: orderId, amount_cents: amount, due_date: "2026-12-01" },
    })
  ).body as Obj;
  // The feed, walked to its end: the hook's order.updated comes just before the invoice's event.
  const events: Obj[] = [];
  let cursor: string | null = null;
  do {
    const page = (await expectStatus(api, "GET", `/${version}/events?limit=100${cursor ? `&cursor=${cursor}` : ""}`, 200)).body as Obj;
    events.push(...page.data);
    cursor = page.pagination.next_cursor;
  } while (cursor);
  const at = events.findIndex((e) => e.type === "invoice.created" && e.data.id === invoice.id);
  assert.ok(at > 0, "the invoice's event is in the feed");
  const updated = events[at - 1]!;
  assert.equal(updated.type, "order.updated");
  assert.equal(updated.data.id, orderId);
  assert.equal(updated.data.note, `invoiced ${amount}`);
  // The same event by id, through every version's feed.
  for (const v of ["v1", "v2", "v3"])
    assert.deepEqual((await expectStatus(api, "GET", `/${v}/events/${updated.id}`, 200)).body, updated);
  return updated.data;
}

test("a hook's write publishes its record as the request's version shows it: v1, v2, v3", async () => {
  const user = await createUser(api);
  const order = await createOrder(api, user.id, "v3");

  const v1 = await hookEvent("v1", order.id, 100);
  assert.deepEqual((await expectStatus(api, "GET", `/v1/orders/${order.id}`, 200)).body, v1);
  assert.ok("due_cents" in v1 && !("amount_due_cents" in v1) && !("gift_wrap" in v1), JSON.stringify(v1));

  const v2 = await hookEvent("v2", order.id, 200);
  assert.deepEqual((await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200)).body, v2);
  assert.ok("amount_due_cents" in v2 && "gift_wrap" in v2 && !("product_ids" in v2), JSON.stringify(v2));

  const v3 = await hookEvent("v3", order.id, 300);
  assert.deepEqual((await expectStatus(api, "GET", `/v3/orders/${order.id}`, 200)).body, v3);
  assert.ok("product_ids" in v3 && !("due_cents" in v3), JSON.stringify(v3));
});
