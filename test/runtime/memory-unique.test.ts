// The memory store's unique indexes when the constraints change under it (a `canon dev` save that
// adds `unique: true` or a composite list keeps the store): the records stored before are held by
// the new constraint too, as the SQL store's new unique index holds every row.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore } from "../../generated/runtime/memory-store.ts";
import type { StoredRecord, WriteConstraints } from "../../generated/runtime/store.ts";

const record = (id: string, values: Record<string, unknown>): StoredRecord => ({ id, created_at: "2026-11-27T00:00:00.000Z", updated_at: "2026-11-27T00:00:00.000Z", revision: 1, values });

test("a unique constraint added while the store runs holds the records stored before it; taken away, it holds nothing", async () => {
  const store = new MemoryStore();
  const none: WriteConstraints = { unique: [] };
  await store.insert({ collection: "projects", record: record("01900000-0000-7000-8000-000000000001", { key: "CORE", number: 1 }), constraints: none });
  await store.insert({ collection: "projects", record: record("01900000-0000-7000-8000-000000000002", { key: "WEB", number: 1 }), constraints: none });
  const keyed: WriteConstraints = { unique: ["key"] };
  await assert.rejects(
    store.insert({ collection: "projects", record: record("01900000-0000-7000-8000-000000000003", { key: "CORE", number: 2 }), constraints: keyed }),
    (e: Error & { status?: number }) => e.status === 409 && /key/.test(e.message),
  );
  const together: WriteConstraints = { unique: [], uniqueTogether: [["key", "number"]] };
  await assert.rejects(
    store.insert({ collection: "projects", record: record("01900000-0000-7000-8000-000000000004", { key: "WEB", number: 1 }), constraints: together }),
    (e: Error & { status?: number }) => e.status === 409,
  );
  await store.insert({ collection: "projects", record: record("01900000-0000-7000-8000-000000000005", { key: "WEB", number: 2 }), constraints: together });
  // A record's own values never conflict with itself after the indexes were built again.
  const current = await store.get("projects", "01900000-0000-7000-8000-000000000001");
  await store.update({ collection: "projects", id: current!.id, values: { ...current!.values, number: 7 }, expectedRevision: current!.revision, constraints: keyed });
  // Without the constraint, the same values are taken.
  await store.insert({ collection: "projects", record: record("01900000-0000-7000-8000-000000000006", { key: "CORE", number: 1 }), constraints: none });
});
