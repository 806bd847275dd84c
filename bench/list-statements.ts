// PostgreSQL's own CPU time per statement of the `list_under` page of v2 (`GET /v2/users/{id}/orders`,
// issue 24 point 6), measured rather than timed: the backend's utime + stime from /proc (10 ms
// ticks) over many runs of each named statement on one connection, so the figure does not
// depend on the machine's load the way a latency does. Compared: the page with every stored field
// (`product_ids` aggregated from its link table), the page as v2 shows it (`Match.fields`), the
// same with the user's columns on one row only, the projected page alone, and the hand-written
// route's statement (bench/runtime/handwritten-pg.ts). PostgreSQL must run on this machine.
//
//   node bench/list-statements.ts [runs per round, default 2000] [--empty: orders without products, as bench/postgres.ts seeds them]
import { readFileSync } from "node:fs";
import pg from "pg";
import { SqlStore } from "../generated/runtime/sql-store.ts";
import type { StoredRecord } from "../generated/runtime/store.ts";
import { newId } from "../generated/runtime/uuid.ts";
import { openStore } from "../generated/sql/index.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres, recordingStore } from "../test/store/stores.ts";

const RUNS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 2000);
const EMPTY = process.argv.includes("--empty");
const ROUNDS = 5;
const AT = "2026-01-01T00:00:00.000Z";
/** What v2 shows of an order (generated/v2/orders/routes.ts `listFields`). */
const SHOWN = [
  "user_id",
  "code",
  "status",
  "total_cents",
  "currency",
  "note",
  "placed_at",
  "gift_wrap",
  "amount_due_cents",
];
const ORDER_COLUMNS =
  "id, user_id, code, status, total_cents, currency, note, placed_at, gift_wrap, amount_due_cents, created_at, updated_at";

const record = (values: Record<string, unknown>): StoredRecord => ({
  id: newId(),
  created_at: AT,
  updated_at: AT,
  revision: 1,
  values,
});

await preparePostgres();
const schema = freshSchema("canon_bench_lists");
const store = (await openStore(POSTGRES_URL, { schema })) as SqlStore;
try {
  const users: StoredRecord[] = [];
  for (let u = 0; u < 20; u++) {
    const user = record({
      email: `l${u}-${newId()}@example.com`,
      name: `U${u}`,
      role: "customer",
      password: "correct horse battery",
    });
    await store.insert({ collection: "users", record: user, constraints: { unique: ["email"] } });
    users.push(user);
  }
  const products: StoredRecord[] = [];
  for (let n = 0; n < 5; n++) {
    const product = record({
      sku: `L-${newId().slice(-10)}`,
      name: `P${n}`,
      price_cents: 100,
      category: "books",
      tags: [],
    });
    await store.insert({ collection: "products", record: product, constraints: { unique: ["sku"] } });
    products.push(product);
  }
  for (let n = 0; n < 1000; n++) {
    const values = {
      user_id: users[n % 20]!.id,
      code: `L-${newId().slice(-12)}`,
      status: "pending",
      total_cents: n,
      currency: "EUR",
      note: `o${n}`,
      gift_wrap: false,
      amount_due_cents: 0,
      product_ids: EMPTY ? [] : products.slice(0, n % 3).map((p) => p.id),
    };
    await store.insert({ collection: "orders", record: record(values), constraints: { unique: ["code"] } });
  }

  // The store's own statements, as it sends them (parameters: user_id, limit + 1, the parent's id).
  const texts: string[] = [];
  const spy = recordingStore(store, texts);
  const parent = { collection: "users", id: users[0]!.id };
  await spy.list("orders", { where: { user_id: users[0]!.id }, limit: 20, parent });
  await spy.list("orders", { where: { user_id: users[0]!.id }, limit: 20, fields: SHOWN, parent });
  await spy.list("orders", { where: { user_id: users[0]!.id }, limit: 20, fields: SHOWN });
  const [full, projected, alone] = texts as [string, string, string];
  const once = projected.replace(
    /"canon__parent"\.("[^"]+") as ("canon__p\d+")/g,
    'case when row_number() over () = 1 then "canon__parent".$1 end as $2',
  );
  // Every statement takes the same three parameters ($3 unused where there is no parent).
  const unused = (text: string) => text.replace('"user_id" = $1', '"user_id" = $1 and $3::uuid is not null');
  const variants: Array<[string, string]> = [
    ["generated, every field, joined to the user", full],
    ["generated, the fields v2 shows, joined to the user", projected],
    ["the same, the user's columns on the first row only", once],
    ["generated, the fields v2 shows, the page alone", unused(alone)],
    [
      "hand-written page",
      `select ${ORDER_COLUMNS} from orders where user_id = $1 and $3::uuid is not null order by id limit $2`,
    ],
  ];

  const client = new pg.Client({
    connectionString: POSTGRES_URL,
    options: `-c search_path=${schema},public`,
  });
  await client.connect();
  try {
    const pid = Number((await client.query("select pg_backend_pid() as pid")).rows[0].pid);
    /** The backend's CPU time so far, in µs. */
    const cpu = () => {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    };
    const perStatement = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, text] of variants) {
        const statement = { name: `bench_list_${variants.findIndex((v) => v[0] === name)}`, text };
        const values = (i: number) => [users[i % 20]!.id, 21, users[i % 20]!.id];
        for (let i = 0; i < 50; i++) await client.query({ ...statement, values: values(i) });
        const start = cpu();
        for (let i = 0; i < RUNS; i++) await client.query({ ...statement, values: values(i) });
        perStatement.set(name, [...(perStatement.get(name) ?? []), (cpu() - start) / RUNS]);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const [name] of variants) {
      const xs = perStatement.get(name)!;
      console.log(`${name}: ${median(xs).toFixed(0)} µs (${xs.map((x) => x.toFixed(0)).join(", ")})`);
    }
  } finally {
    await client.end();
  }
} finally {
  await store.close();
  await dropSchemas([schema]);
}
