// Hardening, part 3: concurrent clients create, update (PATCH with If-Match) and list orders and
// products for a while; then no write is lost, no id is duplicated, no update is lost (two PATCHes
// never both succeed from the same ETag), the last successful PATCH is what is read back, and every
// cursor walk, during the load and after it, is exact: ascending ids, each record once, every record
// created before the walk started present.
//
// CANON_LOAD_SECONDS (default 5, 30 with CANON_FUZZ_FULL=1) and CANON_LOAD_CLIENTS (default 50);
// CANON_TEST_STORE picks the store (memory by default).
import assert from "node:assert/strict";
import { test } from "node:test";
import { UUID_V7, assertCursorPage, call, createUser, orderBody, productBody, startApp } from "../http/helpers.ts";

const FULL = process.env.CANON_FUZZ_FULL === "1";
const SECONDS = Number(process.env.CANON_LOAD_SECONDS ?? (FULL ? 30 : 5));
const CLIENTS = Number(process.env.CANON_LOAD_CLIENTS ?? 50);

type Obj = Record<string, any>;
type Collection = "orders" | "products";

interface Created {
  collection: Collection;
  etag: string;
  /** The field the clients change, and its value at creation. */
  value: unknown;
}

interface Patch {
  id: string;
  from: string;
  to: string;
  value: unknown;
}

const FIELD: Record<Collection, string> = { orders: "note", products: "price_cents" };

test(`${CLIENTS} concurrent clients for ${SECONDS} s: no lost write, no duplicate id, exact cursor walks`, { timeout: (SECONDS + 240) * 1000 }, async () => {
  const api = await startApp();
  try {
    const users: string[] = [];
    for (let i = 0; i < 5; i++) users.push((await createUser(api)).id as string);

    const created = new Map<string, Created>();
    /** Ids in the order their 201 arrived, per collection. */
    const acknowledged: Record<Collection, string[]> = { orders: [], products: [] };
    const patches: Patch[] = [];
    const statuses = new Map<string, number>();
    let requests = 0;
    let walks = 0;
    let pages = 0;
    let walkedRecords = 0;
    const failures: string[] = [];

    const count = (what: string, res: { status: number }) => {
      requests += 1;
      const key = `${what} ${res.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    };
    const expect = (condition: boolean, message: string) => {
      if (!condition && failures.length < 20) failures.push(message);
    };

    async function create(client: number, seq: number): Promise<void> {
      const collection: Collection = seq % 2 ? "orders" : "products";
      const body = collection === "orders" ? orderBody("v2", users[seq % users.length]!, { note: `c${client}-${seq}-created` }) : productBody();
      const res = await call(api, "POST", `/v2/${collection}`, { body });
      count(`POST ${collection}`, res);
      // 409: a generated code or sku that is taken; nothing is written then.
      expect(res.status === 201 || res.status === 409, `POST ${collection} answered ${res.status} ${res.text}`);
      if (res.status !== 201) return;
      const id = res.body.id as string;
      expect(UUID_V7.test(id), `not a v7 id: ${id}`);
      expect(!created.has(id), `id ${id} was given twice`);
      created.set(id, { collection, etag: res.headers.get("etag")!, value: res.body[FIELD[collection]] });
      acknowledged[collection].push(id);
    }

    async function update(client: number, seq: number): Promise<void> {
      const collection: Collection = seq % 2 ? "orders" : "products";
      const ids = acknowledged[collection];
      if (ids.length === 0) return;
      // Recent records, so that clients often race for the same one.
      const id = ids[Math.max(0, ids.length - 1 - Math.floor(Math.random() * Math.min(ids.length, 20)))]!;
      const read = await call(api, "GET", `/v2/${collection}/${id}`);
      count(`GET ${collection}/{id}`, read);
      expect(read.status === 200, `GET ${collection}/${id} answered ${read.status}`);
      if (read.status !== 200) return;
      const etag = read.headers.get("etag")!;
      const value = collection === "orders" ? `c${client}-${seq}` : client * 100_000 + (seq % 100_000);
      const res = await call(api, "PATCH", `/v2/${collection}/${id}`, { body: { [FIELD[collection]]: value }, headers: { "if-match": etag } });
      count(`PATCH ${collection}/{id}`, res);
      expect(res.status === 200 || res.status === 409, `PATCH ${collection}/${id} answered ${res.status} ${res.text}`);
      if (res.status === 200) {
        expect(res.body[FIELD[collection]] === value, `PATCH ${collection}/${id} answered another value`);
        patches.push({ id, from: etag, to: res.headers.get("etag")!, value });
      }
    }

    /** A walk of a few pages during the load: ascending, each record once, nothing acknowledged before it missing. */
    async function walk(seq: number): Promise<void> {
      const collection: Collection = seq % 2 ? "orders" : "products";
      const version = seq % 5 === 0 ? "v1" : "v2";
      const before = new Set(acknowledged[collection]);
      const limit = 1 + Math.floor(Math.random() * 100);
      const seen: string[] = [];
      let cursor: string | null = null;
      let complete = false;
      for (let page = 0; page < 5; page++) {
        const url: string = `/${version}/${collection}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const res = await call(api, "GET", url);
        count(`GET ${collection} (walk)`, res);
        expect(res.status === 200, `GET ${url} answered ${res.status} ${res.text}`);
        if (res.status !== 200) return;
        assertCursorPage(res.body as Obj);
        pages += 1;
        for (const record of res.body.data as Obj[]) seen.push(record.id as string);
        cursor = res.body.pagination.next_cursor as string | null;
        if (cursor === null) {
          complete = true;
          break;
        }
      }
      walks += 1;
      walkedRecords += seen.length;
      for (let i = 1; i < seen.length; i++) expect(seen[i - 1]! < seen[i]!, `a walk of ${collection} is not strictly ascending at ${i}`);
      const last = seen.at(-1) ?? "";
      const set = new Set(seen);
      const missing = [...before].filter((id) => (complete || id <= last) && !set.has(id));
      expect(missing.length === 0, `a walk of ${collection} missed ${missing.length} records acknowledged before it began: ${missing.slice(0, 3)}`);
    }

    const deadline = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let seq = 0; Date.now() < deadline; seq++) {
          const roll = Math.random();
          if (roll < 0.4) await create(client, seq);
          else if (roll < 0.75) await update(client, seq);
          else await walk(seq);
        }
      }),
    );
    assert.deepEqual(failures, [], "answers during the load");

    // After the load: full walks, on both versions, are exactly the acknowledged records.
    for (const collection of ["orders", "products"] as const) {
      for (const version of ["v2", "v1"]) {
        const seen: Obj[] = [];
        let cursor: string | null = null;
        do {
          const url: string = `/${version}/${collection}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
          const res = await call(api, "GET", url);
          assert.equal(res.status, 200, `${url}: ${res.text}`);
          assertCursorPage(res.body as Obj);
          seen.push(...(res.body.data as Obj[]));
          cursor = res.body.pagination.next_cursor as string | null;
        } while (cursor !== null);
        const ids = seen.map((r) => r.id as string);
        assert.equal(new Set(ids).size, ids.length, `${version} ${collection}: a record twice in the final walk`);
        assert.deepEqual(ids, [...ids].sort(), `${version} ${collection}: the final walk is not in ascending id order`);
        assert.deepEqual([...ids].sort(), [...acknowledged[collection]].sort(), `${version} ${collection}: the final walk is not exactly the created records`);

        if (version !== "v2") continue;
        // Each record's updates form one chain from its creation: no two successful PATCHes from one
        // ETag (a lost update), and the value read is the last one's.
        const byFrom = new Map<string, Patch>();
        for (const patch of patches) {
          assert.ok(!byFrom.has(patch.from), `two PATCHes of ${patch.id} succeeded from the same ETag: a lost update`);
          byFrom.set(patch.from, patch);
        }
        for (const record of seen) {
          const origin = created.get(record.id as string)!;
          let expected = origin.value;
          let etag = origin.etag;
          for (let next = byFrom.get(etag); next; next = byFrom.get(etag)) {
            assert.equal(next.id, record.id);
            expected = next.value;
            etag = next.to;
          }
          assert.deepEqual(record[FIELD[collection]], expected, `${collection}/${record.id}: the value read is not the last successful PATCH's`);
        }
      }
    }
    // Every successful PATCH is on a chain: none was applied to a record and then lost.
    const onChains = new Set<string>();
    const byFrom = new Map(patches.map((p) => [p.from, p]));
    for (const [, origin] of created) {
      for (let next = byFrom.get(origin.etag); next; next = byFrom.get(next.to)) onChains.add(next.to);
    }
    assert.equal(onChains.size, patches.length, "every successful PATCH is part of its record's history");

    const conflicts = [...statuses].filter(([k]) => k.startsWith("PATCH") && k.endsWith(" 409")).reduce((a, [, n]) => a + n, 0);
    const lines = [
      `== load: ${CLIENTS} concurrent clients for ${SECONDS} s, ${process.env.CANON_TEST_STORE ?? "memory"} store`,
      `requests: ${requests} (${Math.round(requests / SECONDS)}/s)`,
      `created: ${acknowledged.orders.length} orders, ${acknowledged.products.length} products; ids unique: ${created.size}`,
      `PATCH with If-Match: ${patches.length} succeeded, ${conflicts} answered 409 (another client's PATCH came first)`,
      `cursor walks during the load: ${walks} (${pages} pages, ${walkedRecords} records), each ascending, without repeats or gaps`,
      `answers: ${[...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`).join(", ")}`,
    ];
    console.log(`\n${lines.join("\n")}\n`);
  } finally {
    await api.close();
  }
});
