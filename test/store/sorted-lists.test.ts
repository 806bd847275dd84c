// Sorted lists and operator conditions (SPEC §12.1, §12.2) on every store: memory, PGlite and a
// PostgreSQL server, over one table with a column of every kind a key may order (text, an enum,
// integers, numbers, dates, date-times kept as text, booleans, jsonb-wrapped scalars). Each
// ordering, nulls last both ways, ties by id in the last key's direction, three keys in mixed
// directions, code-point order with astral characters, every condition, sorted offset pages, a
// keyset walk that equals the whole order, and a walk while records are created and updated.
// On PostgreSQL, EXPLAIN shows the first page of a one-key sort is one scan of its sort index.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sortIndexes } from "../../generator/emit/sql/snapshot.ts";
import { createCursorCodec } from "../../generated/runtime/cursor.ts";
import { ValidationError } from "../../generated/runtime/errors.ts";
import { listByCursor, listByOffset } from "../../generated/runtime/lists.ts";
import { MemoryStore } from "../../generated/runtime/memory-store.ts";
import { positionOf } from "../../generated/runtime/sorting.ts";
import type { SqlDriver } from "../../generated/runtime/sql-driver.ts";
import type { SqlSchema } from "../../generated/runtime/sql-schema.ts";
import type { SortTarget } from "../../generated/runtime/sql-sort.ts";
import { openDriver, SqlStore } from "../../generated/runtime/sql-store.ts";
import type { Condition, CursorQuery, SortKey, Store, StoredRecord, Values } from "../../generated/runtime/store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const C = "things";
const RANKS = ["low", "normal", "high", "urgent"] as const;

const sqlSchema: SqlSchema = {
  collections: {
    [C]: {
      table: "things",
      columns: [
        { field: "name", column: "name", kind: "text", optional: false, notNull: true },
        { field: "title", column: "title", kind: "text", optional: true },
        { field: "priority", column: "priority", kind: "text", optional: true },
        { field: "qty", column: "qty", kind: "integer", optional: true },
        { field: "price", column: "price", kind: "number", optional: false, notNull: true },
        { field: "due", column: "due", kind: "date", optional: true },
        { field: "at", column: "at", kind: "text", optional: true },
        { field: "flag", column: "flag", kind: "boolean", optional: true },
        { field: "note", column: "note", kind: "wrapped", optional: true },
        { field: "score", column: "score", kind: "wrapped", optional: true },
        { field: "owner", column: "owner", kind: "uuid", optional: true },
      ],
      search: [],
    },
  },
  constraints: {},
  events: false,
};

/** The sort indexes the emitter writes for these keys. */
const INDEXED: Array<[SortTarget, SortKey["ordering"], (readonly string[])?]> = [
  [{ column: "name", kind: "text", notNull: true }, "text"],
  [{ column: "priority", kind: "text", notNull: false }, "rank", RANKS],
  [{ column: "at", kind: "text", notNull: false }, "instant"],
  [{ column: "price", kind: "number", notNull: true }, "number"],
  [{ column: "qty", kind: "integer", notNull: false }, "number"],
  [{ column: "created_at", kind: "timestamptz", notNull: true }, "instant"],
];

const DDL = [
  `create table things (
    row_id bigint generated always as identity primary key,
    id uuid not null unique,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    _revision integer not null default 1,
    name text not null,
    title text,
    priority text,
    qty bigint,
    price double precision not null,
    due date,
    at text,
    flag boolean,
    note jsonb,
    score jsonb,
    owner uuid
  )`,
  ...INDEXED.flatMap(([target, ordering, rank]) =>
    sortIndexes("things", target, ordering, rank).map((i) => `create index ${i.name} on things ${i.definition}`),
  ),
];

interface Target {
  name: "memory" | "pglite" | "postgres";
  open(): Promise<{ store: Store; driver?: SqlDriver }>;
}

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets: Target[] = [
  { name: "memory", open: async () => ({ store: new MemoryStore() }) },
  {
    name: "pglite",
    async open() {
      const driver = await openDriver("pglite:memory://");
      for (const statement of DDL) await driver.exec(statement);
      return { store: new SqlStore(driver, sqlSchema), driver };
    },
  },
  {
    name: "postgres",
    async open() {
      await preparePostgres();
      const schema = freshSchema();
      schemas.push(schema);
      const driver = await openDriver(POSTGRES_URL, { schema, poolSize: 2 });
      for (const statement of DDL) await driver.exec(statement);
      return { store: new SqlStore(driver, sqlSchema), driver };
    },
  },
];

const key = (field: string, ordering: SortKey["ordering"], descending = false): SortKey =>
  ordering === "rank" ? { field, ordering, descending, rank: RANKS } : { field, ordering, descending };

let clock = Date.parse("2026-03-01T00:00:00.000Z");
function record(values: Values): StoredRecord {
  clock += 1000;
  const at = new Date(clock).toISOString();
  return { id: newId(), created_at: at, updated_at: at, revision: 1, values: { name: "x", price: 1, ...values } };
}

/** Every record of a sorted list, walked by keyset pages of `limit`. */
async function walk(store: Store, query: Omit<CursorQuery, "limit">, limit: number): Promise<StoredRecord[]> {
  const seen: StoredRecord[] = [];
  let position: CursorQuery["afterPosition"];
  for (;;) {
    const page = await store.list(C, { ...query, limit, ...(position ? { afterPosition: position } : {}) });
    seen.push(...page.records);
    if (!page.hasMore) return seen;
    position = positionOf(page.records.at(-1)!, query.sort!);
  }
}

for (const target of targets) {
  describe(`sorted lists: ${target.name}`, () => {
    let store: Store;
    let driver: SqlDriver | undefined;
    before(async () => {
      ({ store, driver } = await target.open());
    });
    after(() => store.close());

    /** Inserts records of one group (their `name`). */
    async function insertAll(group: string, rows: Values[]): Promise<StoredRecord[]> {
      const out: StoredRecord[] = [];
      for (const values of rows) out.push(await store.insert({ collection: C, record: record({ ...values, name: values.name ?? group }), constraints: { unique: [] } }));
      return out;
    }
    /** The names (or another field) of the records of a list of a group, in its order. */
    async function order(group: string, sort: SortKey[], field = "title", conditions: Condition[] = []): Promise<unknown[]> {
      const where = { name: group };
      const all = await walk(store, { where, conditions, sort }, 1000);
      // A keyset walk by pages of 2 visits the same records in the same order.
      const paged = await walk(store, { where, conditions, sort }, 2);
      assert.deepEqual(paged.map((r) => r.id), all.map((r) => r.id));
      // And an offset page of the middle agrees.
      const page = await store.page(C, { where, conditions, sort, offset: 1, limit: 3 });
      assert.deepEqual(page.records.map((r) => r.id), all.slice(1, 4).map((r) => r.id));
      assert.equal(page.total, all.length);
      // SQL keeps null and absent of an optional text column alike (absent): both read as null here.
      return all.map((r) => r.values[field] ?? null);
    }

    test("text by code point: astral characters after U+E000–U+FFFF; nulls last both ways", async () => {
      const titles = ["a", "B", "\u{1F600}", "\uE000", "é", "Z", "\uFFFD", "a\u{10000}", "a\uFFFF", "ab"];
      await insertAll("text", [...titles.map((title) => ({ title })), { title: null }, {}]);
      const expected = ["B", "Z", "a", "ab", "a\uFFFF", "a\u{10000}", "é", "\uE000", "\uFFFD", "\u{1F600}"];
      assert.deepEqual(await order("text", [key("title", "text")]), [...expected, null, null]);
      // Descending: values reversed, nulls still last.
      assert.deepEqual(await order("text", [key("title", "text", true)]), [...expected.reverse(), null, null]);
    });

    test("enum by rank, nulls last both ways, ties broken by id in the last key's direction", async () => {
      const rows = await insertAll("rank", [
        { priority: "urgent", title: "u1" },
        { priority: "low", title: "l1" },
        { priority: null, title: "n1" },
        { priority: "high", title: "h1" },
        { priority: "normal", title: "m1" },
        { title: "n2" },
        { priority: "low", title: "l2" },
      ]);
      assert.ok(rows[1]!.id < rows[6]!.id);
      assert.deepEqual(await order("rank", [key("priority", "rank")]), ["l1", "l2", "m1", "h1", "u1", "n1", "n2"]);
      assert.deepEqual(await order("rank", [key("priority", "rank", true)]), ["u1", "h1", "m1", "l2", "l1", "n2", "n1"]);
    });

    test("numbers, dates, booleans and jsonb-wrapped scalars", async () => {
      await insertAll("scalars", [
        { title: "a", qty: 10, price: 2.5, due: "2026-05-01", flag: true, note: "b", score: 3.5 },
        { title: "b", qty: -3, price: 10, due: "2025-12-31", flag: false, note: null, score: 10 },
        { title: "c", price: -1, flag: null, note: "a", score: -2 },
        { title: "d", qty: 100, price: 2.5, due: "2026-05-01", flag: true, score: null },
        { title: "e", qty: 9, price: 0, due: "0001-01-01", note: "C" },
      ]);
      assert.deepEqual(await order("scalars", [key("qty", "number")]), ["b", "e", "a", "d", "c"]);
      assert.deepEqual(await order("scalars", [key("qty", "number", true)]), ["d", "a", "e", "b", "c"]);
      assert.deepEqual(await order("scalars", [key("price", "number", true)]), ["b", "d", "a", "e", "c"]);
      assert.deepEqual(await order("scalars", [key("due", "date")]), ["e", "b", "a", "d", "c"]);
      assert.deepEqual(await order("scalars", [key("due", "date", true)]), ["d", "a", "b", "e", "c"]);
      assert.deepEqual(await order("scalars", [key("flag", "boolean")]), ["b", "a", "d", "c", "e"]);
      assert.deepEqual(await order("scalars", [key("flag", "boolean", true)]), ["d", "a", "b", "e", "c"]);
      // Wrapped (optional and nullable): JSON null and absent are both null, last.
      assert.deepEqual(await order("scalars", [key("note", "text")]), ["e", "c", "a", "b", "d"]);
      assert.deepEqual(await order("scalars", [key("score", "number", true)]), ["b", "a", "c", "e", "d"]);
    });

    test("date-times by the instant they name, whatever their offset and fraction; created_at and updated_at", async () => {
      await insertAll("instants", [
        { title: "p2", at: "2026-01-02T10:00:00+02:00" }, // 08:00Z
        { title: "z9", at: "2026-01-02T09:00:00Z" },
        { title: "f", at: "2026-01-02T08:30:00.5-00:30" }, // 09:00:00.500Z
        { title: "frac", at: "2026-01-02T09:00:00.0001Z" }, // the same millisecond as z9: ties by id
        { title: "early", at: "2026-01-01T23:59:59.999-23:59" }, // 2026-01-02T23:58:59.999Z
        { title: "leap", at: "2024-02-29T23:00:00-01:00" }, // 2024-03-01T00:00Z
        { title: "y1", at: "0001-01-01T00:00:00+01:00" },
        { title: "none" },
      ]);
      assert.deepEqual(await order("instants", [key("at", "instant")]), ["y1", "leap", "p2", "z9", "frac", "f", "early", "none"]);
      assert.deepEqual(await order("instants", [key("at", "instant", true)]), ["early", "f", "frac", "z9", "p2", "leap", "y1", "none"]);
      const created = await order("instants", [key("created_at", "instant", true)]);
      assert.deepEqual(created, ["none", "y1", "leap", "early", "frac", "f", "z9", "p2"]);
      assert.deepEqual(await order("instants", [key("updated_at", "instant")]), [...created].reverse());
    });

    test("three keys in mixed directions, id in the last key's direction", async () => {
      const rows: Values[] = [];
      for (const priority of ["high", "low", null])
        for (const qty of [1, 2, null])
          for (const flag of [true, false]) rows.push({ priority, qty, flag, title: `${priority}/${qty}/${flag}` }, { priority, qty, flag, title: `${priority}/${qty}/${flag}'` });
      const inserted = await insertAll("three", rows);
      const sort = [key("priority", "rank", true), key("qty", "number"), key("flag", "boolean", true)];
      const got = await order("three", sort);
      const expected: string[] = [];
      for (const priority of ["high", "low", null])
        for (const qty of [1, 2, null])
          // last key descending: the later id of a tie first
          for (const flag of [true, false]) expected.push(`${priority}/${qty}/${flag}'`, `${priority}/${qty}/${flag}`);
      assert.deepEqual(got, expected);
      assert.equal(inserted.length, 36);
    });

    test("conditions: in, ranges (nulls never match), null true and false, on fields and created_at", async () => {
      const rows = await insertAll("conditions", [
        { title: "a", priority: "low", qty: 1, due: "2026-01-01", at: "2026-01-01T10:00:00+02:00", note: "x", owner: newId() },
        { title: "b", priority: "high", qty: 5, due: "2026-02-01", at: "2026-01-01T09:00:00Z", note: null },
        { title: "c", priority: null, qty: null, at: "2026-01-01T08:00:00.001Z" },
        { title: "d", priority: "normal", qty: 9, due: "2026-03-01", note: "y", score: 4 },
      ]);
      const titles = (conditions: Condition[]) => order("conditions", [key("title", "text")], "title", conditions);
      assert.deepEqual(await titles([{ field: "priority", op: "in", ordering: "rank", values: ["low", "normal"] }]), ["a", "d"]);
      assert.deepEqual(await titles([{ field: "qty", op: "in", ordering: "number", values: [5, 9, 7] }]), ["b", "d"]);
      assert.deepEqual(await titles([{ field: "note", op: "in", ordering: "text", values: ["x", "y"] }]), ["a", "d"]);
      assert.deepEqual(await titles([{ field: "qty", op: "gt", ordering: "number", value: 1 }]), ["b", "d"]);
      assert.deepEqual(await titles([{ field: "qty", op: "gte", ordering: "number", value: 1 }]), ["a", "b", "d"]);
      assert.deepEqual(await titles([{ field: "qty", op: "lt", ordering: "number", value: 9 }]), ["a", "b"]);
      assert.deepEqual(
        await titles([
          { field: "qty", op: "gte", ordering: "number", value: 2 },
          { field: "qty", op: "lte", ordering: "number", value: 9 },
        ]),
        ["b", "d"],
      );
      assert.deepEqual(await titles([{ field: "due", op: "gte", ordering: "date", value: "2026-02-01" }]), ["b", "d"]);
      assert.deepEqual(await titles([{ field: "due", op: "lt", ordering: "date", value: "2026-02-01" }]), ["a"]);
      // 08:00Z, 09:00Z and 08:00:00.001Z: after 08:00:00Z are b and c (a is at the bound).
      assert.deepEqual(await titles([{ field: "at", op: "gt", ordering: "instant", value: "2026-01-01T10:00:00+02:00" }]), ["b", "c"]);
      assert.deepEqual(await titles([{ field: "at", op: "lte", ordering: "instant", value: "2026-01-01T08:00:00.0009Z" }]), ["a"]);
      assert.deepEqual(await titles([{ field: "at", op: "in", ordering: "instant", values: ["2026-01-01T08:00:00Z"] }]), ["a"]);
      const third = rows[2]!.created_at;
      assert.deepEqual(await titles([{ field: "created_at", op: "gte", ordering: "instant", value: third }]), ["c", "d"]);
      const offset = new Date(Date.parse(third)).toISOString().replace("Z", "+00:00");
      assert.deepEqual(await titles([{ field: "created_at", op: "lt", ordering: "instant", value: offset }]), ["a", "b"]);
      assert.deepEqual(await titles([{ field: "updated_at", op: "gt", ordering: "instant", value: "0000-01-01T00:00:00Z" }]), ["a", "b", "c", "d"]);
      assert.deepEqual(await titles([{ field: "qty", op: "null", value: true }]), ["c"]);
      assert.deepEqual(await titles([{ field: "qty", op: "null", value: false }]), ["a", "b", "d"]);
      assert.deepEqual(await titles([{ field: "owner", op: "null", value: false }]), ["a"]);
      // A wrapped field: JSON null and absent are both null.
      assert.deepEqual(await titles([{ field: "note", op: "null", value: true }]), ["b", "c"]);
      assert.deepEqual(await titles([{ field: "note", op: "null", value: false }]), ["a", "d"]);
      assert.deepEqual(await titles([{ field: "score", op: "gt", ordering: "number", value: 3 }]), ["d"]);
      // Unsorted lists honour conditions too.
      const unsorted = await store.list(C, { where: { name: "conditions" }, conditions: [{ field: "qty", op: "null", value: false }], limit: 2 });
      assert.deepEqual(unsorted.records.map((r) => r.values.title), ["a", "b"]);
      assert.equal(unsorted.hasMore, true);
      const counted = await store.page(C, { where: { name: "conditions" }, conditions: [{ field: "qty", op: "null", value: false }], offset: 0, limit: 2 });
      assert.equal(counted.total, 3);
    });

    test("a random table: every sort walked by small pages gives the whole order, the same on every store", async () => {
      const random = seeded(42);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const rows: Values[] = [];
      for (let i = 0; i < 120; i++) {
        rows.push({
          title: pick(["a", "b", "ä", "\u{1F600}", "\uE000", null]),
          priority: pick([...RANKS, null]),
          qty: pick([1, 2, 3, null]),
          at: pick(["2026-01-01T00:00:00Z", "2026-01-01T02:00:00+02:00", "2026-01-01T00:00:00.5-01:00", null]),
          flag: pick([true, false, null]),
          seq: i,
        });
      }
      const inserted = await insertAll("random", rows.map(({ seq, ...values }) => ({ ...values, price: seq as number })));
      const sorts: SortKey[][] = [
        [key("title", "text")],
        [key("priority", "rank", true), key("qty", "number")],
        [key("at", "instant", true), key("flag", "boolean"), key("title", "text", true)],
        [key("qty", "number"), key("at", "instant"), key("priority", "rank")],
      ];
      for (const sort of sorts) {
        const walked = await walk(store, { where: { name: "random" }, sort }, 7);
        assert.equal(walked.length, inserted.length);
        // As positions in insertion order: ids differ between stores, their order does not.
        const positions = walked.map((r) => inserted.findIndex((x) => x.id === r.id));
        expectedOrders[JSON.stringify(sort)] ??= positions;
        assert.deepEqual(positions, expectedOrders[JSON.stringify(sort)], JSON.stringify(sort));
      }
    });

    test("walking a sorted cursor while records are created and updated: every unchanged record once, in order", async () => {
      const codec = createCursorCodec();
      const service = { list: (query: CursorQuery) => store.list(C, query) };
      const random = seeded(7);
      const values = (): Values => ({
        name: "walk",
        priority: [...RANKS, null][Math.floor(random() * 5)],
        qty: Math.floor(random() * 4),
        at: random() < 0.2 ? null : `2026-01-0${1 + Math.floor(random() * 3)}T0${Math.floor(random() * 9)}:00:00+0${Math.floor(random() * 3)}:00`,
        title: `t${Math.floor(random() * 1000)}`,
      });
      const start: StoredRecord[] = [];
      for (let i = 0; i < 60; i++) start.push(await store.insert({ collection: C, record: record(values()), constraints: { unique: [] } }));
      const sort = [key("priority", "rank", true), key("at", "instant"), key("qty", "number", true)];
      const changed = new Set<string>();
      const seen: StoredRecord[] = [];
      let cursor: string | undefined;
      for (let pages = 0; ; pages++) {
        const page = await listByCursor(service, codec, "v1/things", { limit: 4, ...(cursor ? { cursor } : {}) }, { where: { name: "walk" } }, (r) => r, sort);
        seen.push(...page.data);
        // Meanwhile: two records created, two updated (their sort values changed).
        for (let i = 0; i < 2; i++) await store.insert({ collection: C, record: record(values()), constraints: { unique: [] } });
        for (let i = 0; i < 2; i++) {
          const victim = start[Math.floor(random() * start.length)]!;
          const current = (await store.get(C, victim.id))!;
          await store.update({ collection: C, id: current.id, values: { ...current.values, ...values() }, expectedRevision: current.revision, constraints: { unique: [] } });
          changed.add(current.id);
        }
        if (!page.pagination.has_more) break;
        cursor = page.pagination.next_cursor!;
        assert.ok(pages < 200);
      }
      const unchanged = start.filter((r) => !changed.has(r.id));
      assert.ok(unchanged.length > 10, `${unchanged.length} records unchanged`);
      const seenUnchanged = seen.filter((r) => !changed.has(r.id) && start.some((s) => s.id === r.id));
      // Each exactly once…
      assert.deepEqual(seenUnchanged.map((r) => r.id).sort(), unchanged.map((r) => r.id).sort());
      // …and in the order of the sort (as the store orders them now).
      const now = await walk(store, { where: { name: "walk" }, sort }, 1000);
      const rank = new Map(now.map((r, i) => [r.id, i]));
      const positions = seenUnchanged.map((r) => rank.get(r.id)!);
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
    });

    test("offset pages follow the sort, and listByOffset passes it", async () => {
      await insertAll("offset", [5, 3, null, 9, 1, 7].map((qty, i) => ({ qty, title: `q${i}` })));
      const view = (r: StoredRecord) => r.values.title;
      const service = { page: (query: Parameters<Store["page"]>[1]) => store.page(C, query) };
      const first = await listByOffset(service, { page: 1, per_page: 4 }, { where: { name: "offset" } }, view, [key("qty", "number", true)]);
      assert.deepEqual(first.data, ["q3", "q5", "q0", "q1"]);
      assert.deepEqual(first.pagination, { page: 1, per_page: 4, total: 6, total_pages: 2 });
      const second = await listByOffset(service, { page: 2, per_page: 4 }, { where: { name: "offset" } }, view, [key("qty", "number", true)]);
      assert.deepEqual(second.data, ["q4", "q2"]);
      const unsorted = await listByOffset(service, { page: 1, per_page: 6 }, { where: { name: "offset" } }, view);
      assert.deepEqual(unsorted.data, ["q0", "q1", "q2", "q3", "q4", "q5"]);
    });

    if (target.name === "postgres") {
      test("EXPLAIN: the first page of a one-key sort is one scan of its sort index, no Sort node", async () => {
        for (let i = 0; i < 2000; i += 200) {
          const batch: StoredRecord[] = [];
          for (let j = i; j < i + 200; j++) {
            batch.push(
              record({
                name: `n${(j * 7919) % 2000}`,
                priority: j % 5 === 0 ? null : RANKS[j % 4],
                qty: j % 3 === 0 ? null : j % 17,
                price: (j * 31) % 101,
                at: j % 4 === 0 ? null : `2026-0${1 + (j % 9)}-1${j % 10}T0${j % 10}:00:00+0${j % 3}:00`,
              }),
            );
          }
          await Promise.all(batch.map((r) => store.insert({ collection: C, record: r, constraints: { unique: [] } })));
        }
        await driver!.exec("analyze things");
        const sent: string[] = [];
        const spy = new SqlStore(
          { ...driver!, query: (statement, params) => (sent.push(typeof statement === "string" ? statement : statement.text), driver!.query(statement, params)) },
          sqlSchema,
        );
        const cases: Array<[SortKey, RegExp]> = [
          [key("name", "text"), /things_name_sort_idx/],
          [key("name", "text", true), /Index Scan Backward using things_name_sort_idx/],
          [key("priority", "rank"), /things_priority_sort_idx/],
          [key("priority", "rank", true), /things_priority_sort_desc_idx/],
          [key("at", "instant"), /things_at_sort_idx/],
          [key("at", "instant", true), /things_at_sort_desc_idx/],
          [key("price", "number", true), /Index Scan Backward using things_price_sort_idx/],
          [key("qty", "number", true), /things_qty_sort_desc_idx/],
          [key("created_at", "instant", true), /Index Scan Backward using things_created_at_sort_idx/],
        ];
        for (const [sortKey, index] of cases) {
          const page = await spy.list(C, { where: {}, sort: [sortKey], limit: 20 });
          assert.equal(page.records.length, 20);
          const plan = (await driver!.query(`explain ${sent.at(-1)!}`, [21])).map((r) => String(r["QUERY PLAN"])).join("\n");
          assert.match(plan, index, `${JSON.stringify(sortKey)}\n${plan}`);
          assert.doesNotMatch(plan, /Sort/, `${JSON.stringify(sortKey)}\n${plan}`);
          // The next page too: a keyset condition on a not-null key is a row comparison, an index range.
          const next = await spy.list(C, { where: {}, sort: [sortKey], limit: 20, afterPosition: positionOf(page.records.at(-1)!, [sortKey]) });
          assert.equal(next.records.length, 20);
        }
        const text = sent.at(-1)!;
        assert.match(text, /\("created_at", "id"\) < \(\$1::timestamptz, \$2::uuid\)/);
      });
    }
  });
}

/** The order each sort gave on the first store (memory): the others must give the same. */
const expectedOrders: Record<string, number[]> = {};

describe("sorted cursors at lists.ts: bound to the sort, filters and q", () => {
  test("a cursor used with another sort, where, condition or q (or sorted ↔ unsorted) answers ValidationError naming cursor", async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 5; i++) await store.insert({ collection: C, record: record({ name: "bind", qty: i % 2, title: `t${i}` }), constraints: { unique: [] } });
    const codec = createCursorCodec();
    const service = { list: (query: CursorQuery) => store.list(C, query) };
    const view = (r: StoredRecord) => r;
    const sortA = [key("qty", "number")];
    const sortB = [key("qty", "number", true)];
    const conditions: Condition[] = [{ field: "qty", op: "in", ordering: "number", values: [0, 1] }];
    const match = { where: { name: "bind" }, conditions, search: { fields: ["title"], text: "t" } };
    const first = await listByCursor(service, codec, "v1/things", { limit: 2 }, match, view, sortA);
    const cursor = first.pagination.next_cursor!;
    assert.ok(cursor);
    // The same list goes on.
    const next = await listByCursor(service, codec, "v1/things", { limit: 2, cursor }, match, view, sortA);
    assert.equal(next.data.length, 2);
    const refused = async (m: typeof match | { where: Values }, sort: typeof sortA | undefined, path = "v1/things") => {
      await assert.rejects(
        listByCursor(service, codec, path, { limit: 2, cursor }, m, view, sort),
        (error: unknown) => error instanceof ValidationError && JSON.stringify(error).includes('"cursor"'),
      );
    };
    await refused(match, sortB);
    await refused(match, [key("title", "text")]);
    await refused(match, undefined);
    await refused(match, [...sortA, key("title", "text")]);
    await refused({ ...match, where: { name: "other" } }, sortA);
    await refused({ ...match, conditions: [{ field: "qty", op: "in", ordering: "number", values: [0] }] }, sortA);
    await refused({ ...match, conditions: [] }, sortA);
    await refused({ ...match, search: { fields: ["title"], text: "t1" } }, sortA);
    await refused({ where: { name: "bind" }, conditions }, sortA);
    await refused(match, sortA, "v2/things");
    // An unsorted cursor is not a sorted one either.
    const plain = await listByCursor(service, codec, "v1/things", { limit: 2 }, match, view);
    await assert.rejects(
      listByCursor(service, codec, "v1/things", { limit: 2, cursor: plain.pagination.next_cursor! }, match, view, sortA),
      ValidationError,
    );
    // A cursor of an unsorted list without conditions is what it always was: [scope, id].
    const events = await listByCursor(service, codec, "v1/events", { limit: 2 }, { where: {} }, view);
    const payload = JSON.parse(Buffer.from(events.pagination.next_cursor!.split(".")[0]!, "base64url").toString());
    assert.deepEqual(payload, [JSON.stringify(["v1/events", [], null]), events.data[1]!.id]);
  });

  test("a position round-trips through the cursor's JSON: numbers, dates and instants as sent, nulls", () => {
    const codec = createCursorCodec();
    const position = { id: newId(), values: [3.5, "2026-01-02", "2026-01-02T10:00:00.5+02:00", null, true, "\u{1F600}"] };
    const cursor = codec.encodePosition("s", position);
    assert.deepEqual(codec.decodePosition("s", cursor), position);
    assert.equal(codec.decodePosition("t", cursor), null);
    assert.equal(codec.decode("s", cursor), null);
    assert.equal(codec.decodePosition("s", codec.encode("s", position.id)), null);
    // A scope too long to carry (100 `in` values) is carried as a digest: the cursor stays short.
    const long = JSON.stringify(Array.from({ length: 100 }, (_, i) => `value-${i}`));
    assert.ok(codec.encode(long, position.id).length < 200);
    assert.equal(codec.decode(long, codec.encode(long, position.id)), position.id);
  });
});

/** A small deterministic generator (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
