// The SQL store at scale: 1,000,000 orders, then what a page costs at the start and deep in the
// list. A cursor page is a keyset query on the id index (`where id > $after order by id limit
// n+1`), so a deep page should cost about what the first one costs; an offset page has to count
// and skip every row before it, and its cost is printed beside it. Then 50 creates at once over
// HTTP: every id distinct, and id order is creation order.
//
//   node bench/store.ts [--rows 1000000] [--store postgres|pglite] [--runs 15]
//
// postgres (default) uses the test server (CANON_TEST_POSTGRES, default
// postgres://postgres@127.0.0.1:5432/test) in a schema of its own, dropped afterwards.
// Prints a markdown report to stdout and progress to stderr; exits 1 when a check fails.
import assert from "node:assert/strict";
import { buildApp, devAuthenticate } from "../generated/index.ts";
import type { SqlStore } from "../generated/runtime/sql-store.ts";
import { openStore } from "../generated/sql/index.ts";
import { arg } from "./lib.ts";
import { seedOrders } from "./seed-orders.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../test/store/stores.ts";

const ROWS = Number(arg("rows", "1000000"));
const TARGET = arg("store", "postgres");
const RUNS = Number(arg("runs", "15"));
const log = (line: string) => process.stderr.write(`store bench: ${line}\n`);

async function median(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const schema = TARGET === "postgres" ? freshSchema("canon_bench") : undefined;
if (schema) await preparePostgres();
const store = (await openStore(TARGET === "postgres" ? POSTGRES_URL : "pglite:memory://", schema ? { schema } : {})) as SqlStore;
const db = store.driver;
const checks: Array<{ name: string; ok: boolean }> = [];

try {
  // ---- seed: one user, ROWS orders with UUID v7 ids in creation order, in the past
  const user = "01890a5d-ac96-774b-bcce-b302099a8057";
  await db.query(`insert into users (id, created_at, updated_at, email, name, role, password) values ($1, now(), now(), 'bench@example.com', 'Bench', 'customer', 'correct horse battery')`, [user]);
  const start = Date.now() - ROWS - 60_000;
  const seedStarted = performance.now();
  await seedOrders(db, ROWS, start, user);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  // ---- pages: first and deep, by cursor and by offset
  const limit = 20;
  const deep = Math.max(0, ROWS - 1000);
  const [{ id: deepId }] = (await db.query(`select "id" from orders order by "id" offset $1 limit 1`, [deep - 1])) as Array<{ id: string }>;
  const where = {};
  const cursorFirst = await median(RUNS, () => store.list("orders", { where, limit }));
  const cursorDeep = await median(RUNS, () => store.list("orders", { where, limit, after: deepId! }));
  const filteredFirst = await median(RUNS, () => store.list("orders", { where: { user_id: user, status: "paid" }, limit }));
  const filteredDeep = await median(RUNS, () => store.list("orders", { where: { user_id: user, status: "paid" }, limit, after: deepId! }));
  const offsetFirst = await median(Math.min(RUNS, 7), () => store.page("orders", { where, offset: 0, limit }));
  const offsetDeep = await median(Math.min(RUNS, 7), () => store.page("orders", { where, offset: deep, limit }));
  const deepPage = await store.list("orders", { where, limit, after: deepId! });
  assert.equal(deepPage.records.length, limit);
  assert.ok(deepPage.records[0]!.id > deepId!);

  const ratio = cursorDeep / cursorFirst;
  checks.push({ name: `a deep cursor page costs about what the first costs (×${ratio.toFixed(2)}, limit ×3)`, ok: ratio < 3 });

  // ---- 50 creates at once over HTTP
  const app = await buildApp({ authenticate: devAuthenticate, store, rateLimit: false });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  assert.ok(address && typeof address === "object");
  const base = `http://127.0.0.1:${address.port}`;
  const createsStarted = performance.now();
  const created = await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const response = await fetch(`${base}/v2/orders`, {
        method: "POST",
        headers: { authorization: "Bearer dev-writer", "content-type": "application/json" },
        body: JSON.stringify({ user_id: user, code: `ORD-9${String(i).padStart(5, "0")}`, total_cents: 1, currency: "EUR", amount_due_cents: 1 }),
      });
      assert.equal(response.status, 201, await response.clone().text());
      return (await response.json()) as { id: string; created_at: string };
    }),
  );
  const createsMs = performance.now() - createsStarted;
  // Listed in id order, after every seeded row; created_at never goes back in id order.
  const listed = await store.list("orders", { where: {}, limit: 100, after: deepPage.records[deepPage.records.length - 1]!.id });
  let tail = listed.records;
  let more = listed.hasMore;
  while (more) {
    const next = await store.list("orders", { where: {}, limit: 100, after: tail[tail.length - 1]!.id });
    tail = tail.concat(next.records);
    more = next.hasMore;
  }
  const newIds = tail.slice(-50).map((r) => r.id);
  const unique = new Set(created.map((c) => c.id)).size === 50;
  const ordered = JSON.stringify(newIds) === JSON.stringify(created.map((c) => c.id).sort());
  const byId = [...created].sort((x, y) => (x.id < y.id ? -1 : 1));
  const timeOrdered = byId.every((c, i) => i === 0 || c.created_at >= byId[i - 1]!.created_at);
  checks.push({ name: "50 concurrent creates: 50 distinct ids", ok: unique });
  checks.push({ name: "50 concurrent creates: they list last, in id order, after every older record", ok: ordered });
  checks.push({ name: "50 concurrent creates: id order is creation order (created_at never goes back)", ok: timeOrdered });
  await app.close();

  const ms = (n: number) => `${n.toFixed(2)} ms`;
  process.stdout.write(
    [
      `### SQL store at scale (${TARGET}, ${ROWS.toLocaleString("en")} orders; medians of ${RUNS} runs)`,
      "",
      `Seeded in ${seedSeconds.toFixed(1)} s.`,
      "",
      "| page of 20 | first | deep (row " + deep.toLocaleString("en") + ") | deep / first |",
      "|---|---|---|---|",
      `| cursor (keyset on id) | ${ms(cursorFirst)} | ${ms(cursorDeep)} | ×${(cursorDeep / cursorFirst).toFixed(2)} |`,
      `| cursor, parent + filter | ${ms(filteredFirst)} | ${ms(filteredDeep)} | ×${(filteredDeep / filteredFirst).toFixed(2)} |`,
      `| offset (with total) | ${ms(offsetFirst)} | ${ms(offsetDeep)} | ×${(offsetDeep / offsetFirst).toFixed(2)} |`,
      "",
      `50 concurrent creates over HTTP: ${createsMs.toFixed(0)} ms in all.`,
      "",
      ...checks.map((c) => `- ${c.ok ? "✓" : "✗"} ${c.name}`),
      "",
    ].join("\n"),
  );
} finally {
  await store.close();
  if (schema) await dropSchemas([schema]);
}
process.exit(checks.every((c) => c.ok) ? 0 : 1);
