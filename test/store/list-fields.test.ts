// A list's projection (`Match.fields`, issue 24 point 6): a version's lists ask the store for the
// fields their view shows. The SQL store then reads those columns only, and the sort's: an array
// kept in a link table (the orders' `product_ids`) the view does not show is not aggregated, and
// its records have no such value; the rest of each record, the order, `hasMore` and the parent
// of a `list_under` page are those of the list without `fields`. Without `fields` every field is
// read. The memory store ignores `fields` (its records are complete). Over HTTP on the showcase:
// v2's lists of orders (which do not show `product_ids`) never read the link table, v3's (which
// show them) do and answer them; v2's read by id reads every field (its record goes to authorize).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SqlStore } from "../../generated/runtime/sql-store.ts";
import type { SortKey, Store, StoredRecord } from "../../generated/runtime/store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { buildApp } from "../../generated/index.ts";
import { devAuthenticate } from "../../generated/runtime/auth.ts";
import { sqlSchema } from "../../generated/sql/index.ts";
import { makeStores, recordingStore } from "./stores.ts";

const AT = "2026-01-01T00:00:00.000Z";

/** What v2 shows of an order: not `product_ids`. */
const SHOWN = ["user_id", "code", "status", "total_cents", "currency", "note", "placed_at", "gift_wrap", "amount_due_cents"];
const BY_TOTAL_DESC: SortKey[] = [{ field: "total_cents", descending: true, ordering: "number" }];

function record(values: Record<string, unknown>): StoredRecord {
  return { id: newId(), created_at: AT, updated_at: AT, revision: 1, values };
}

/** `r` without `field`: what a projection that leaves it out reads. */
function without(r: StoredRecord, field: string): StoredRecord {
  const { [field]: _left, ...values } = r.values;
  return { ...r, values };
}

for (const factory of makeStores()) {
  describe(`a list's fields (Match.fields), ${factory.name} store`, () => {
    let store: Store;
    /** The same tables through a driver that records each statement's text. */
    let spy: Store;
    const sent: string[] = [];
    let owner: StoredRecord;
    const products: StoredRecord[] = [];

    before(async () => {
      store = await factory.create();
      spy = recordingStore(store, sent);
      owner = record({ email: `fields-${newId()}@example.com`, name: "Owner", role: "customer", password: "correct horse battery" });
      await store.insert({ collection: "users", record: owner, constraints: { unique: ["email"] } });
      for (let n = 0; n < 3; n++) {
        const product = record({ sku: `FLD-${newId().slice(-10)}`, name: `P${n}`, price_cents: 100, category: "books", tags: [] });
        await store.insert({ collection: "products", record: product, constraints: { unique: ["sku"] } });
        products.push(product);
      }
      for (let n = 0; n < 9; n++) {
        const values = {
          user_id: owner.id,
          code: `FLD-${newId().slice(-12)}`,
          status: "pending",
          total_cents: 100 + ((n * 37) % 11),
          currency: "EUR",
          note: `order ${n}`,
          gift_wrap: false,
          amount_due_cents: 0,
          product_ids: products.slice(0, n % 4).map((p) => p.id),
        };
        await store.insert({ collection: "orders", record: record(values), constraints: { unique: ["code"] } });
      }
    });
    after(() => factory.cleanup());

    const sql = () => store instanceof SqlStore;
    /** The statements `fn` sent through the spy. */
    async function statementsOf<T>(fn: () => Promise<T>): Promise<{ value: T; texts: string[] }> {
      const start = sent.length;
      const value = await fn();
      return { value, texts: sent.slice(start) };
    }

    test("a cursor list without fields reads every field, the link array too", async () => {
      const { value, texts } = await statementsOf(() => spy.list("orders", { where: { user_id: owner.id }, limit: 20 }));
      assert.equal(value.records.length, 9);
      assert.ok(value.records.some((r) => (r.values.product_ids as string[]).length === 3));
      if (sql()) assert.ok(texts.every((t) => t.includes("orders__product_ids")) && texts.length === 1);
    });

    test("a cursor list with fields reads only those: no link table, records otherwise the same", async () => {
      const full = await store.list("orders", { where: { user_id: owner.id }, limit: 4 });
      const { value, texts } = await statementsOf(() =>
        spy.list("orders", { where: { user_id: owner.id }, limit: 4, fields: SHOWN }),
      );
      assert.equal(value.hasMore, full.hasMore);
      if (sql()) {
        assert.equal(texts.length, 1);
        assert.ok(!texts[0]!.includes("orders__product_ids"), texts[0]);
        assert.deepEqual(value.records, full.records.map((r) => without(r, "product_ids")));
      } else assert.deepEqual(value.records, full.records);
    });

    test("fields that leave out a field the sort uses still read it, and the order is the same", async () => {
      const fields = SHOWN.filter((f) => f !== "total_cents");
      const full = await store.list("orders", { where: { user_id: owner.id }, limit: 20, sort: BY_TOTAL_DESC });
      const page = await spy.list("orders", { where: { user_id: owner.id }, limit: 20, sort: BY_TOTAL_DESC, fields });
      assert.deepEqual(page.records.map((r) => r.id), full.records.map((r) => r.id));
      assert.deepEqual(page.records.map((r) => r.values.total_cents), full.records.map((r) => r.values.total_cents));
    });

    test("a list_under page with fields: the page projected, its parent complete", async () => {
      const full = await store.list("orders", {
        where: { user_id: owner.id },
        limit: 5,
        parent: { collection: "users", id: owner.id },
      });
      const { value, texts } = await statementsOf(() =>
        spy.list("orders", {
          where: { user_id: owner.id },
          limit: 5,
          fields: SHOWN,
          parent: { collection: "users", id: owner.id },
        }),
      );
      assert.equal(value.hasMore, true);
      assert.deepEqual(value.parent, full.parent);
      if (sql()) {
        assert.equal(texts.length, 1);
        assert.ok(!texts[0]!.includes("orders__product_ids"), texts[0]);
        assert.equal(value.parent?.values.password, "correct horse battery");
        assert.deepEqual(value.records, full.records.map((r) => without(r, "product_ids")));
      } else assert.deepEqual(value.records, full.records);
    });

    test("an offset page with fields: the same total and records, without the link array", async () => {
      const full = await store.page("orders", { where: { user_id: owner.id }, offset: 2, limit: 4 });
      const { value, texts } = await statementsOf(() =>
        spy.page("orders", { where: { user_id: owner.id }, offset: 2, limit: 4, fields: SHOWN }),
      );
      assert.equal(value.total, 9);
      if (sql()) {
        assert.ok(!texts[0]!.includes("orders__product_ids"), texts[0]);
        assert.deepEqual(value.records, full.records.map((r) => without(r, "product_ids")));
      } else assert.deepEqual(value.records, full.records);
    });

    test("over HTTP: v2's lists leave the link table out, v3's read it and show the ids", async () => {
      const app = await buildApp({ authenticate: devAuthenticate, rateLimit: false, logger: false, store: spy });
      const base = await app.listen({ port: 0, host: "127.0.0.1" });
      try {
        const get = async (path: string) => {
          const start = sent.length;
          const response = await fetch(`${base}${path}`, { headers: { authorization: "Bearer dev-reader" } });
          assert.equal(response.status, 200, path);
          return { body: (await response.json()) as { data?: Array<Record<string, unknown>> } & Record<string, unknown>, texts: sent.slice(start) };
        };
        const reads = (texts: string[]) => texts.some((t) => t.includes("orders__product_ids"));
        for (const path of ["/v2/orders?limit=5", `/v2/users/${owner.id}/orders?limit=5`, `/v2/users/${owner.id}/orders?limit=5&sort=-total_cents`]) {
          const { body, texts } = await get(path);
          assert.equal(body.data!.length, 5, path);
          assert.ok(body.data!.every((o) => !("product_ids" in o)), path);
          if (sql()) assert.ok(!reads(texts), `${path} reads no link table`);
        }
        for (const path of ["/v3/orders?limit=20", `/v3/users/${owner.id}/orders?limit=20`]) {
          const { body, texts } = await get(path);
          const listed = body.data!.find((o) => (o.product_ids as string[]).length === 3);
          assert.deepEqual(listed?.product_ids, products.map((p) => p.id), path);
          if (sql()) assert.ok(reads(texts), `${path} reads the link table`);
        }
        const first = (await get(`/v2/users/${owner.id}/orders?limit=1`)).body.data![0]!;
        const one = await get(`/v2/orders/${String(first.id)}`);
        assert.equal(one.body.id, first.id);
        if (sql()) assert.ok(reads(one.texts), "a read by id reads every field");
      } finally {
        await app.close();
      }
    });

    test("fields that name every field read as a list without fields (the same statement)", async () => {
      const all = sqlSchema.collections.orders!.columns.map((c) => c.field);
      const a = await statementsOf(() => spy.list("orders", { where: { user_id: owner.id }, limit: 3 }));
      const b = await statementsOf(() => spy.list("orders", { where: { user_id: owner.id }, limit: 3, fields: all }));
      assert.deepEqual(b.value, a.value);
      assert.deepEqual(b.texts, a.texts);
    });
  });
}
