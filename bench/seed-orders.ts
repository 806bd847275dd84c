// Seeds `rows` orders of one user straight into the SQL store's `orders` table, 100,000 per
// statement, with UUID v7 ids in creation order starting at `start` ms: the benchmarks of the
// store and of exports need a million rows faster than the HTTP API can create them.
import type { SqlDriver } from "../generated/runtime/sql-driver.ts";
import { log } from "./lib.ts";

export async function seedOrders(db: SqlDriver, rows: number, start: number, user: string): Promise<void> {
  const chunk = 100_000;
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1);
    await db.query(
      `insert into orders (id, created_at, updated_at, user_id, code, status, total_cents, currency, gift_wrap, amount_due_cents)
       select (lpad(to_hex($1::bigint + g), 12, '0') || '7' || lpad(to_hex(g % 4096), 3, '0') || '8' || lpad(to_hex(g), 15, '0'))::uuid,
              to_timestamp(($1::bigint + g) / 1000.0), to_timestamp(($1::bigint + g) / 1000.0), $2::uuid,
              'ORD-' || lpad(g::text, 7, '0'), (array['pending','paid','shipped','cancelled'])[1 + g % 4],
              g % 100000, (array['EUR','USD','GBP'])[1 + g % 3], false, 0
       from generate_series($3::bigint, $4::bigint) g`,
      [start, user, from, to],
    );
    log(`seeded ${to.toLocaleString("en")} of ${rows.toLocaleString("en")} rows`);
  }
  await db.exec("analyze orders");
}
