// The records every benchmark server holds: the same products, with the same ids, in the same
// MemoryStore class (runtime/memory-store.ts), so that generated and hand-written routes read
// identical data and answer identical JSON.
import { MemoryStore } from "../../runtime/memory-store.ts";
import type { StoredRecord } from "../../runtime/store.ts";

export const PRODUCT_COUNT = 1000;

/** A fixed, valid UUID v7 per index: same timestamp, counter in the last group. */
export function productId(i: number): string {
  return `0190a0b0-c0d0-7000-8000-${i.toString(16).padStart(12, "0")}`;
}

/** The product every GET-by-id benchmark reads: in the middle of the collection. */
export const BENCH_ID = productId(500);

const categories = ["books", "games", "tools", "other"] as const;

export function productRecord(i: number): StoredRecord {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  return {
    id: productId(i),
    created_at: at,
    updated_at: at,
    revision: 1,
    values: {
      sku: `SKU-${String(i).padStart(6, "0")}`,
      name: `Product number ${i}`,
      description: `A sturdy, well-made product (${i}) that does what it says on the box.`,
      price_cents: 1000 + i,
      category: categories[i % categories.length],
      tags: ["bench", `tag-${i % 10}`],
      dimensions: { width_mm: 100 + (i % 50), height_mm: 200 + (i % 30) },
      homepage: `https://example.com/products/${i}`,
    },
  };
}

/** The users whose orders the PostgreSQL bench lists (`list_under`: GET /v2/users/{id}/orders). */
export const ORDER_USERS = [
  "0190a0b0-c0d0-7000-9000-000000000001",
  "0190a0b0-c0d0-7000-9000-000000000002",
] as const;
/** Orders seeded over PostgreSQL: every other one is the first user's, so its list skips the other's in the index. */
export const ORDER_COUNT = 2000;

export function userRecord(i: number): StoredRecord {
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  return {
    id: ORDER_USERS[i]!,
    created_at: at,
    updated_at: at,
    revision: 1,
    values: {
      email: `bench-${i}@example.com`,
      name: `Bench user ${i}`,
      role: "customer",
      password: "correct horse battery",
    },
  };
}

export function orderRecord(i: number): StoredRecord {
  const at = new Date(Date.UTC(2026, 0, 2, 0, 0, i)).toISOString();
  return {
    id: `0190a0b0-c0d1-7000-8000-${i.toString(16).padStart(12, "0")}`,
    created_at: at,
    updated_at: at,
    revision: 1,
    values: {
      user_id: ORDER_USERS[i % 2]!,
      code: `ORD-${String(i).padStart(7, "0")}`,
      status: (["pending", "paid", "shipped", "cancelled"] as const)[i % 4],
      total_cents: 500 + i,
      currency: (["EUR", "USD", "GBP"] as const)[i % 3],
      note: `Order number ${i}`,
      placed_at: at,
      gift_wrap: i % 5 === 0,
      amount_due_cents: i % 7,
      product_ids: [],
    },
  };
}

export async function seededStore(): Promise<MemoryStore> {
  const store = new MemoryStore();
  for (let i = 0; i < PRODUCT_COUNT; i++)
    await store.insert({ collection: "products", record: productRecord(i), constraints: { unique: [] } });
  return store;
}
