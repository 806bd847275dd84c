// A cursor page with an array of ids kept in a link table (the orders' `product_ids`, SPEC §12.3):
// the SQL store reads the page first and the ids of all its rows in one aggregate over the link
// table (runtime/sql-reads.ts `pageLinks`, sql-codec.ts `linkedIdsOfPage`) instead of a subquery
// per row. Each record of every page, walked by cursor in id order and sorted, with and without
// its parent (`list_under`), holds the same ids in the same order as the record read by id (which
// still reads them row by row), rows without links `[]`. On PostgreSQL, EXPLAIN shows no subquery
// per row and the link table read through its (row, position) index for the page's row ids at once.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { SqlStore } from "../../generated/runtime/sql-store.ts";
import type { CursorQuery, SortKey, Store, StoredRecord } from "../../generated/runtime/store.ts";
import { positionOf } from "../../generated/runtime/sorting.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { makeStores, recordingStore } from "./stores.ts";

const AT = "2026-01-01T00:00:00.000Z";
const BY_TOTAL_DESC: SortKey[] = [{ field: "total_cents", descending: true, ordering: "number" }];

function record(values: Record<string, unknown>): StoredRecord {
  return { id: newId(), created_at: AT, updated_at: AT, revision: 1, values };
}

for (const factory of makeStores()) {
  describe(`a page's link arrays read for the whole page, ${factory.name} store`, () => {
    let store: Store;
    /** The same tables through a driver that records each statement's text. */
    let spy: Store;
    const sent: string[] = [];
    let owner: StoredRecord;
    const products: StoredRecord[] = [];
    /** Each order's product ids as written, by id. */
    const written = new Map<string, string[]>();

    before(async () => {
      store = await factory.create();
      spy = recordingStore(store, sent);
      owner = record({ email: `links-${newId()}@example.com`, name: "Owner", role: "customer", password: "correct horse battery" });
      await store.insert({ collection: "users", record: owner, constraints: { unique: ["email"] } });
      for (let n = 0; n < 5; n++) {
        const product = record({ sku: `LNK-${newId().slice(-10)}`, name: `P${n}`, price_cents: 100, category: "books", tags: [] });
        await store.insert({ collection: "products", record: product, constraints: { unique: ["sku"] } });
        products.push(product);
      }
      for (let n = 0; n < 23; n++) {
        // None, one, several in the products' order, several against it.
        const ids = (n % 4 === 3 ? [...products].reverse() : products).slice(0, n % 5).map((p) => p.id);
        const order = record({
          user_id: owner.id,
          code: `LNK-${newId().slice(-12)}`,
          status: "pending",
          total_cents: 100 + ((n * 37) % 11),
          currency: "EUR",
          note: `order ${n}`,
          gift_wrap: false,
          amount_due_cents: 0,
          product_ids: ids,
        });
        await store.insert({ collection: "orders", record: order, constraints: { unique: ["code"] } });
        written.set(order.id, ids);
      }
    });
    after(() => factory.cleanup());

    /** Every record of the list, page by page (5 a page), and the number of pages. */
    async function walk(query: Omit<CursorQuery, "limit">): Promise<{ records: StoredRecord[]; pages: number }> {
      const records: StoredRecord[] = [];
      let pages = 0;
      let next: Pick<CursorQuery, "after" | "afterPosition"> = {};
      for (;;) {
        const page = await spy.list("orders", { ...query, ...next, limit: 5 });
        pages++;
        records.push(...page.records);
        const last = page.records.at(-1);
        if (!page.hasMore || !last) return { records, pages };
        next = query.sort ? { afterPosition: positionOf(last, query.sort) } : { after: last.id };
      }
    }

    const cases: Array<[string, Omit<CursorQuery, "limit">]> = [
      ["in id order", { where: { user_id: "" } }],
      ["sorted by total, descending", { where: { user_id: "" }, sort: BY_TOTAL_DESC }],
      ["under the user (list_under), in id order", { where: { user_id: "" }, parent: { collection: "users", id: "" } }],
      ["under the user, sorted", { where: { user_id: "" }, sort: BY_TOTAL_DESC, parent: { collection: "users", id: "" } }],
    ];
    for (const [name, shape] of cases) {
      test(`${name}: every record's product ids, in their order, as read by id`, async () => {
        const query: Omit<CursorQuery, "limit"> = {
          ...shape,
          where: { user_id: owner.id },
          ...(shape.parent ? { parent: { collection: "users", id: owner.id } } : {}),
        };
        const { records, pages } = await walk(query);
        assert.equal(records.length, 23);
        assert.equal(pages, 5);
        assert.deepEqual(new Set(records.map((r) => r.id)), new Set(written.keys()));
        for (const r of records) {
          assert.deepEqual(r.values.product_ids, written.get(r.id), `order ${r.values.note}`);
          const byId = await store.get("orders", r.id);
          assert.deepEqual(r, byId, "the page's record is the record read by id");
        }
      });
    }

    test("offset pages, in id order and sorted: every record's product ids as read by id, the total", async () => {
      for (const sort of [undefined, BY_TOTAL_DESC]) {
        const seen: StoredRecord[] = [];
        for (let offset = 0; offset < 25; offset += 5) {
          const page = await spy.page("orders", { where: { user_id: owner.id }, limit: 5, offset, ...(sort ? { sort } : {}) });
          assert.equal(page.total, 23);
          seen.push(...page.records);
        }
        assert.equal(seen.length, 23);
        assert.deepEqual(new Set(seen.map((r) => r.id)), new Set(written.keys()));
        for (const r of seen) assert.deepEqual(r, await store.get("orders", r.id));
      }
      // Past the end: the total, no record.
      const beyond = await spy.page("orders", { where: { user_id: owner.id }, limit: 5, offset: 40 });
      assert.deepEqual(beyond, { records: [], total: 23 });
    });

    test("a page whose rows have no links: every one `[]`", async () => {
      const page = await spy.list("orders", { where: { user_id: owner.id, note: "order 0" }, limit: 5 });
      assert.equal(page.records.length, 1);
      assert.deepEqual(page.records[0]!.values.product_ids, []);
    });

    if (factory.name === "postgres") {
      test("EXPLAIN: no subquery per row; the link table read through its index for the page's row ids at once", async () => {
        const sqlStore = store as SqlStore;
        // Tables of a realistic size (600 more orders of another user, 3 links each): with a few
        // dozen rows, sequential scans are rightly the cheaper plan.
        const other = record({ email: `links-${newId()}@example.com`, name: "Other", role: "customer", password: "correct horse battery" });
        await store.insert({ collection: "users", record: other, constraints: { unique: ["email"] } });
        for (let i = 0; i < 600; i += 50) {
          await Promise.all(
            Array.from({ length: 50 }, (_, k) =>
              store.insert({
                collection: "orders",
                record: record({
                  user_id: other.id,
                  code: `LNK-${newId().slice(-12)}`,
                  status: "paid",
                  total_cents: i + k,
                  currency: "EUR",
                  gift_wrap: false,
                  amount_due_cents: 0,
                  product_ids: products.slice((i + k) % 3, ((i + k) % 3) + 3).map((p) => p.id),
                }),
                constraints: { unique: ["code"] },
              }),
            ),
          );
        }
        await sqlStore.driver.exec("analyze orders; analyze orders__product_ids; analyze users; analyze products");
        const before = sent.length;
        await spy.list("orders", { where: { user_id: owner.id }, limit: 20, parent: { collection: "users", id: owner.id } });
        assert.equal(sent.length, before + 1);
        const plan = (await sqlStore.driver.query(`explain ${sent.at(-1)!}`, [owner.id, 21, owner.id])).map((r) => String(r["QUERY PLAN"])).join("\n");
        assert.doesNotMatch(plan, /SubPlan/, plan);
        // One scan of the link table for the page's row ids, through its (row_id, …) index.
        assert.match(plan, /Index Scan on orders__product_ids_\w+ (on orders__product_ids )?(canon__l)?[\s\S]*?Index Cond: \(row_id = ANY /, plan);
        assert.doesNotMatch(plan, /Seq Scan on orders__product_ids/, plan);
      });
    }
  });
}
