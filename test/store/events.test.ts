// Events kept by the store (runtime/events.ts, sql-events.ts) on every store: a write and its
// event commit together (one transaction on SQL), a failed write has none, the feed is read
// in id order as a principal may see it, and on SQL it is the same from every instance over
// one database and after a restart. The memory log is bounded by count and by bytes.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ConflictError } from "../../generated/runtime/errors.ts";
import {
  createEvent,
  MemoryEventLog,
  type ApiEvent,
  type EventOf,
  type EventScope,
} from "../../generated/runtime/events.ts";
import { MemoryStore } from "../../generated/runtime/memory-store.ts";
import type { Store, StoredRecord, Values } from "../../generated/runtime/store.ts";
import { insertEvents } from "../../generated/runtime/sql-events.ts";
import type { SqlStore } from "../../generated/runtime/sql-store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { openStore } from "../../generated/sql/index.ts";
import { dropSchemas, freshSchema, makeStores, POSTGRES_URL, preparePostgres } from "./stores.ts";

let n = Math.floor(Math.random() * 100_000);
const product = (overrides: Values = {}): Values => {
  n += 1;
  return { sku: `EV-${n}`, name: `Product ${n}`, price_cents: 100, category: "other", tags: [], ...overrides };
};
const record = (values: Values): StoredRecord => {
  const at = new Date().toISOString();
  return { id: newId(), created_at: at, updated_at: at, revision: 1, values };
};
const UNIQUE = { unique: ["sku"] };
const ALL: EventScope = { collections: ["products", "users", "orders", "exports"], principal: "p1" };
const view = (r: StoredRecord) => ({ id: r.id, ...r.values, updated_at: r.updated_at });
const publishing = (type: string, collection = "products"): EventOf<StoredRecord> => (r) => createEvent(type, collection, view(r));

async function feed(store: Store, scope: EventScope, limit = 100): Promise<ApiEvent[]> {
  const out: ApiEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.listEvents(scope, after, limit);
    out.push(...page.events);
    if (!page.hasMore) return out;
    assert.equal(page.events.length, limit, "a page before the last is full");
    after = page.events[page.events.length - 1]!.id;
  }
}

for (const factory of makeStores()) {
  describe(`events in the store: ${factory.name}`, () => {
    let store: Store;
    before(async () => {
      store = await factory.create();
    });
    after(() => factory.cleanup());

    test("each write keeps the event made from the record written; a delete's shows the record as it was", async () => {
      const seen: ApiEvent[] = [];
      const stop = store.subscribe({ publish: (e) => void seen.push(e) });
      try {
        const inserted = await store.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
        const updated = await store.update({ collection: "products", id: inserted.id, values: { ...inserted.values, name: "Renamed" }, expectedRevision: 1, constraints: UNIQUE, publish: publishing("product.updated") });
        assert.ok(updated);
        assert.equal(await store.delete({ collection: "products", id: inserted.id, expectedRevision: 2, publish: publishing("product.deleted") }), true);
        const mine = (await feed(store, ALL)).filter((e) => (e.data as { id?: string }).id === inserted.id);
        assert.deepEqual(mine.map((e) => e.type), ["product.created", "product.updated", "product.deleted"]);
        assert.deepEqual(mine[0]!.data, view(inserted));
        assert.deepEqual(mine[1]!.data, view(updated));
        assert.deepEqual(mine[2]!.data, view(updated), "the deleted record as it was");
        // Keys come back in their order (json, not jsonb), timestamps as written.
        assert.deepEqual(Object.keys(mine[0]!.data), Object.keys(view(inserted)));
        assert.deepEqual(seen.slice(-3), mine, "the sinks get the same events, after the commit");
        assert.deepEqual(await store.getEvent(ALL, mine[1]!.id), mine[1]);
      } finally {
        stop();
      }
    });

    test("given the record as read, each write keeps the event of the record as read back, odd values too", async () => {
      // On SQL the write and its event are then one statement, the event made first from the
      // record as the columns will keep it: keys in code point order (runtime/json-order.ts, the
      // same on every store, where jsonb alone would put shorter keys first), SQL NULL for
      // a missing optional value. A value the column keeps otherwise than predicted (a bigint
      // column given 1.5 keeps 2) has its kept event made again from the row read back.
      const odd = product({ dimensions: { width: 1, h: 2, depth: { zz: 1, a: [{ yy: 1, x: 2 }] } }, description: undefined });
      const inserted = await store.insert({ collection: "products", record: record(odd), constraints: UNIQUE, publish: publishing("product.created") });
      const changed = { ...inserted.values, name: "Renamed", dimensions: { long_key: true, k: null } };
      const updated = await store.update({ collection: "products", id: inserted.id, values: changed, expectedRevision: 1, constraints: UNIQUE, publish: publishing("product.updated"), current: inserted });
      assert.ok(updated);
      assert.equal(updated.revision, 2);
      assert.ok(updated.updated_at > inserted.updated_at || updated.updated_at === new Date(Date.parse(inserted.updated_at) + 1).toISOString());
      const rounded = await store.update({ collection: "products", id: inserted.id, values: { ...updated.values, name: "lone \uD800 surrogate" }, expectedRevision: 2, constraints: UNIQUE, publish: publishing("product.updated"), current: updated });
      assert.ok(rounded);
      assert.equal(await store.delete({ collection: "products", id: inserted.id, expectedRevision: 3, publish: publishing("product.deleted"), current: rounded }), true);
      const mine = (await feed(store, ALL)).filter((e) => (e.data as { id?: string }).id === inserted.id);
      assert.deepEqual(mine.map((e) => e.type), ["product.created", "product.updated", "product.updated", "product.deleted"]);
      const reread = [inserted, updated, rounded, rounded];
      mine.forEach((event, i) => {
        assert.deepEqual(event.data, JSON.parse(JSON.stringify(view(reread[i]!))), `event ${i} is the record as read back`);
        assert.equal(JSON.stringify(event.data), JSON.stringify(view(reread[i]!)), `event ${i}: keys in the order read back`);
      });
      assert.deepEqual(Object.keys(inserted.values.dimensions as object), ["depth", "h", "width"], "keys in code point order, on every store");
      if (factory.name !== "memory") {
        assert.equal(rounded.values.name, "lone \uFFFD surrogate", "kept otherwise than sent");
      }
      // A stale `current` (another revision) is only a hint: the write still checks the revision.
      const again = await store.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
      const moved = await store.update({ collection: "products", id: again.id, values: { ...again.values, name: "Moved" }, expectedRevision: 1, constraints: UNIQUE, publish: publishing("product.updated"), current: again });
      assert.ok(moved);
      await assert.rejects(
        store.update({ collection: "products", id: again.id, values: { ...again.values, name: "Stale" }, expectedRevision: 1, constraints: UNIQUE, publish: publishing("product.updated"), current: again }),
        ConflictError,
      );
      await assert.rejects(store.delete({ collection: "products", id: again.id, expectedRevision: 1, publish: publishing("product.deleted"), current: again }), ConflictError);
      const its = (await feed(store, ALL)).filter((e) => (e.data as { id?: string }).id === again.id);
      assert.deepEqual(its.map((e) => e.type), ["product.created", "product.updated"], "failed writes keep no event");
    });

    test("a write that fails has no event: a unique conflict, a revision conflict, a gone record, a failing producer", async () => {
      const taken = await store.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
      const before = (await feed(store, ALL)).length;
      const seen: ApiEvent[] = [];
      const stop = store.subscribe({ publish: (e) => void seen.push(e) });
      try {
        await assert.rejects(store.insert({ collection: "products", record: record(product({ sku: taken.values.sku })), constraints: UNIQUE, publish: publishing("product.created") }), ConflictError);
        await assert.rejects(store.update({ collection: "products", id: taken.id, values: { ...taken.values, name: "x" }, expectedRevision: 7, constraints: UNIQUE, publish: publishing("product.updated") }), ConflictError);
        assert.equal(await store.update({ collection: "products", id: newId(), values: product(), expectedRevision: 1, constraints: UNIQUE, publish: publishing("product.updated") }), null);
        assert.equal(await store.delete({ collection: "products", id: newId(), expectedRevision: 1, publish: publishing("product.deleted") }), false);
        const failing: EventOf<StoredRecord> = () => {
          throw new Error("the producer failed");
        };
        const doomed = record(product());
        await assert.rejects(store.insert({ collection: "products", record: doomed, constraints: UNIQUE, publish: failing }), /the producer failed/);
        assert.equal(await store.get("products", doomed.id), null, "no record without its event");
        assert.equal((await feed(store, ALL)).length, before);
        assert.deepEqual(seen, []);
      } finally {
        stop();
      }
    });

    test("the feed shows a principal only its collections and its own owned events, with full pages and exact has_more", async () => {
      const scoped = await factory.create();
      for (let i = 0; i < 9; i++) {
        await scoped.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
        await scoped.appendEvents([createEvent("user.created", "users", { i })]);
      }
      await scoped.appendEvents([createEvent("export.created", "exports", { mine: true }, "p1")]);
      await scoped.appendEvents([createEvent("export.created", "exports", { mine: false }, "p2")]);
      const products = await feed(scoped, { collections: ["products"], principal: "p1" }, 4);
      assert.equal(products.length, 9);
      assert.ok(products.every((e) => e.type === "product.created"));
      assert.deepEqual(products.map((e) => e.id), products.map((e) => e.id).sort(), "in id order");
      const first = await scoped.listEvents({ collections: ["products"], principal: "p1" }, undefined, 9);
      assert.equal(first.events.length, 9);
      assert.equal(first.hasMore, false, "no more products, though other events follow");
      const exportsOfP1 = await feed(scoped, { collections: ["exports"], principal: "p1" });
      assert.deepEqual(exportsOfP1.map((e) => e.data), [{ mine: true }]);
      const userEvent = (await feed(scoped, { collections: ["users"], principal: "p1" }))[0]!;
      assert.equal(await scoped.getEvent({ collections: ["products"], principal: "p1" }, userEvent.id), null);
      const foreign = (await feed(scoped, { collections: ["exports"], principal: "p2" }))[0]!;
      assert.equal(await scoped.getEvent({ collections: ["exports"], principal: "p1" }, foreign.id), null);
      assert.deepEqual(await scoped.listEvents({ collections: [], principal: "p1" }, undefined, 10), { events: [], hasMore: false });
    });
  });
}

describe("the SQL feed is one feed", () => {
  test("two stores over one PostgreSQL schema show the same events, in id order", async () => {
    await preparePostgres();
    const schema = freshSchema();
    const a = await openStore(POSTGRES_URL, { schema });
    const b = await openStore(POSTGRES_URL, { schema });
    try {
      const writes = [];
      for (let i = 0; i < 10; i++) writes.push((i % 2 ? a : b).insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") }));
      await Promise.all(writes);
      const fromA = await feed(a, ALL, 3);
      const fromB = await feed(b, ALL, 3);
      assert.equal(fromA.length, 10);
      assert.deepEqual(fromA, fromB);
      assert.deepEqual(fromA.map((e) => e.id), fromA.map((e) => e.id).sort());
    } finally {
      await a.close();
      await b.close();
      await dropSchemas([schema]);
    }
  });

  test("a page never shows an event before which another, still to commit, may appear (PostgreSQL server)", async () => {
    // Event ids are the database's, taken when the row is inserted; a page stops at the start of
    // the oldest transaction that has the event table open for writing. Without that, a reader
    // that had read the later event would never see the earlier one.
    await preparePostgres();
    const schema = freshSchema();
    const a = (await openStore(POSTGRES_URL, { schema })) as SqlStore;
    const b = (await openStore(POSTGRES_URL, { schema })) as SqlStore;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
    let release = () => {};
    try {
      await a.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
      await settle();
      const start = await feed(b, ALL);
      assert.equal(start.length, 1);
      const gate = new Promise<void>((resolve) => (release = resolve));
      let slowEvent: ApiEvent | undefined;
      const slow = a.transaction(async (tx) => {
        [{ event: slowEvent }] = await insertEvents(tx, [createEvent("product.slow", "products", { id: "slow" })]);
        await gate;
      });
      while (!slowEvent) await settle();
      await settle();
      await b.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
      await settle();
      const during = await feed(b, ALL);
      assert.deepEqual(during, start, "the later write waits for the open transaction's event");
      release();
      await slow;
      await settle();
      const all = await feed(b, ALL, 1);
      assert.deepEqual(all.map((e) => e.type), ["product.created", "product.slow", "product.created"]);
      assert.equal(all[1]!.id, slowEvent!.id, "the id the insert returned is the kept one");
      const after = await b.listEvents(ALL, during.at(-1)!.id, 10);
      assert.deepEqual(after.events, all.slice(1), "a reader going on from its last page misses nothing");
    } finally {
      release();
      await a.close();
      await b.close();
      await dropSchemas([schema]);
    }
  });

  test("a PGlite folder keeps its events across a restart", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "canon-events-"));
    try {
      let store = await openStore(`pglite:${dir}/data`);
      await store.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
      const before = await feed(store, ALL);
      await store.close();
      store = await openStore(`pglite:${dir}/data`);
      try {
        assert.equal(before.length, 1);
        assert.deepEqual(await feed(store, ALL), before);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the memory event log is bounded", () => {
  test("by count: the oldest events go first", () => {
    const log = new MemoryEventLog({ maxEvents: 3 });
    const events = Array.from({ length: 5 }, (_, i) => createEvent("user.created", "users", { i }));
    log.append(events);
    assert.deepEqual(log.list(ALL, undefined, 10).events.map((e) => e.data), [{ i: 2 }, { i: 3 }, { i: 4 }]);
    assert.equal(log.size.events, 3);
  });

  test("by bytes: large events never hold more than the bound", () => {
    const log = new MemoryEventLog({ maxBytes: 100_000 });
    const big = "x".repeat(10_000);
    for (let i = 0; i < 100; i++) log.append([createEvent("user.updated", "users", { i, big })]);
    assert.ok(log.size.bytes <= 100_000, `${log.size.bytes} bytes`);
    assert.ok(log.size.events >= 9 && log.size.events <= 10, `${log.size.events} events`);
    const kept = log.list(ALL, undefined, 100).events;
    assert.equal((kept.at(-1)!.data as { i: number }).i, 99, "the newest is kept");
    assert.equal(log.get(ALL, kept[0]!.id), kept[0]);
  });

  test("a loop of large writes on a memory store keeps its event log within the bound", async () => {
    const store = new MemoryStore({ events: { maxBytes: 1_000_000 } });
    const first = await store.insert({ collection: "products", record: record(product()), constraints: UNIQUE, publish: publishing("product.created") });
    let current = first;
    const note = "y".repeat(60_000);
    for (let i = 0; i < 200; i++) {
      current = (await store.update({ collection: "products", id: first.id, values: { ...current.values, description: `${i}${note}` }, expectedRevision: current.revision, constraints: UNIQUE, publish: publishing("product.updated") }))!;
    }
    assert.ok(store.eventLog.size.bytes <= 1_000_000, `${store.eventLog.size.bytes} bytes`);
    assert.ok(store.eventLog.size.events < 20);
  });
});
