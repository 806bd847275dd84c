// Exports over real HTTP (SPEC §8, conventions §4.5): a job with a UUID v7 id made by POST,
// read and listed by its creator only, a download link with a token and an expiry, and a file
// that holds exactly the records a cursor walk of the same list shows, as that version shows
// them. Every JSON response is checked against the version's OpenAPI document by `call`; the
// file's response by `download`.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MemoryStore } from "../../generated/index.ts";
import { openStore } from "../../generated/sql/index.ts";
import type { Store } from "../../generated/runtime/store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import {
  createOrder,
  createUser,
  detailFields,
  expectError,
  expectStatus,
  startApp,
  UNKNOWN_ID,
  UUID_V7,
  walk,
  type Api,
} from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { suiteFixture } from "../support/fixture.ts";
import { csvCell, csvRows, download, exportsFolder, ndjson, principals, settled } from "./helpers.ts";

type Obj = Record<string, any>;

const pgSchemas: string[] = [];
const STORES: Array<{ name: string; open(): Promise<Store> }> = [
  { name: "memory", open: async () => new MemoryStore() },
  { name: "pglite", open: () => openStore("pglite:memory://") },
  {
    // Through pg-boss (in a schema of its own beside the store's).
    name: "postgres",
    open: async () => {
      await preparePostgres();
      const schema = freshSchema("canon_test_exports");
      pgSchemas.push(schema, `${schema}_pgboss`);
      return openStore(POSTGRES_URL, { schema });
    },
  },
];
after(() => dropSchemas(pgSchemas));

for (const { name, open } of STORES) {
  describe(`an export on the ${name} store`, () => {
    let api: Api;
    const folder = exportsFolder();
    let user: Obj;

    before(async () => {
      api = await startApp({
        store: await open(),
        authenticate: principals,
        exports: { directory: folder.directory, pageSize: 7, pgBoss: { pollingIntervalSeconds: 0.5 } },
      });
      user = await createUser(api);
      const other = await createUser(api);
      for (let i = 0; i < 23; i++) {
        await createOrder(api, i % 3 ? user.id : other.id, i % 2 ? "v1" : "v2", {
          currency: i % 4 ? "EUR" : "USD",
          ...(i % 5 ? { note: i % 3 ? `gift, "wrapped"\nwith care ${i}` : `plain ${i}` } : {}),
        });
      }
    });
    after(async () => {
      await api.close();
      folder.remove();
    });

    test("POST answers 201 with a pending job; it succeeds with a link; the file is a cursor walk of the list, as v2 shows it", async () => {
      const created = await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" } });
      const job = created.body as Obj;
      assert.match(job.id, UUID_V7);
      assert.equal(job.status, "pending");
      assert.equal(job.resource, "orders");
      assert.equal(job.format, "ndjson");
      assert.deepEqual(job.filters, {});
      assert.equal(job.download_url, undefined);
      assert.equal(created.headers.get("location"), `/v2/exports/${job.id}`);

      const done = await settled(api, "v2", job.id);
      assert.equal(done.status, "succeeded", JSON.stringify(done));
      assert.ok(done.download_url.startsWith(`/v2/exports/${job.id}/files/`), done.download_url);
      assert.ok(Date.parse(done.expires_at) > Date.now());
      assert.ok(Date.parse(done.finished_at) >= Date.parse(done.started_at));

      const file = await download(api, done.download_url);
      assert.equal(file.headers.get("content-type"), "application/x-ndjson");
      assert.equal(file.headers.get("content-disposition"), `attachment; filename="orders-${job.id}.ndjson"`);
      const records = ndjson(file.text);
      const listed = await walk(api, "/v2/orders?limit=9");
      assert.equal(records.length, 23);
      assert.equal(done.record_count, 23);
      assert.deepEqual(records, listed);
      for (const record of records) assert.ok(!("row_id" in record));
    });

    test("an export through v1 holds v1's view: its field names, in id order", async () => {
      const job = (await expectStatus(api, "POST", "/v1/exports", 201, { body: { resource: "orders" } })).body as Obj;
      const done = await settled(api, "v1", job.id);
      assert.ok(done.download_url.startsWith("/v1/"));
      const records = ndjson((await download(api, done.download_url)).text);
      assert.deepEqual(records, await walk(api, "/v1/orders?limit=100"));
      assert.ok(records.every((r) => "due_cents" in r && !("amount_due_cents" in r) && !("gift_wrap" in r)));
    });

    test("filters and q narrow the export exactly as they narrow the list", async () => {
      const body = { resource: "orders", filters: { currency: "EUR", status: "pending" }, q: "GIFT" };
      const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body })).body as Obj;
      assert.deepEqual(job.filters, body.filters);
      assert.equal(job.q, "GIFT");
      const done = await settled(api, "v2", job.id);
      const records = ndjson((await download(api, done.download_url)).text);
      const listed = await walk(api, "/v2/orders?currency=EUR&status=pending&q=GIFT&limit=5");
      assert.ok(listed.length > 0 && listed.length < 23, String(listed.length));
      assert.deepEqual(records, listed);
      assert.equal(done.record_count, listed.length);
    });

    test("CSV: a header of the version's field names, then one row per record", async () => {
      const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders", format: "csv" } })).body as Obj;
      const done = await settled(api, "v2", job.id);
      const file = await download(api, done.download_url);
      assert.equal(file.headers.get("content-type"), "text/csv; charset=utf-8");
      const [header, ...rows] = csvRows(file.text);
      const columns = ["id", "user_id", "code", "status", "total_cents", "currency", "note", "placed_at", "gift_wrap", "amount_due_cents", "created_at", "updated_at"];
      assert.deepEqual(header, columns);
      const listed = await walk(api, "/v2/orders?limit=100");
      assert.deepEqual(rows, listed.map((r) => columns.map((c) => csvCell(r[c]))));
    });
  });
}

describe("export jobs belong to the principal who made them", () => {
  const folder = exportsFolder();
  const calls: Obj[] = [];
  let denyList = false;
  let job: Obj;
  const api = suiteFixture(() =>
    startApp({
      authenticate: principals,
      authorize: (access) => {
        calls.push(access);
        if (denyList && access.action === "list" && access.collection === "orders") return false;
        return access.principal.scopes.includes(access.action === "list" || access.action === "read" ? "read" : "write");
      },
      exports: { directory: folder.directory },
    }),
  );
  after(() => folder.remove());

  before(async () => {
    const user = await createUser(api);
    for (let i = 0; i < 3; i++) await createOrder(api, user.id);
    job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    job = await settled(api, "v2", job.id, "alice");
  });

  test("another principal gets 404 for the job, its file and its link; its list does not show it", async () => {
    await expectError(api, "GET", `/v2/exports/${job.id}`, 404, "NOT_FOUND", { auth: "bob" });
    await expectError(api, "GET", job.download_url, 404, "NOT_FOUND", { auth: "bob" });
    const bobs = await walk(api, "/v2/exports");
    assert.ok(!bobs.some((j) => j.id === job.id));
    // dev-writer is yet another principal: walk() calls as dev-writer.
    const alices = (await expectStatus(api, "GET", "/v2/exports", 200, { auth: "alice" })).body as Obj;
    assert.deepEqual(alices.data.map((j: Obj) => j.id), [job.id]);
  });

  test("every access goes through authorize: create and list of the collection on POST, read on the job and its file", async () => {
    calls.length = 0;
    const mine = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    assert.deepEqual(
      calls.map((c) => [c.principal.id, c.action, c.collection]),
      [["alice", "create", "exports"], ["alice", "list", "orders"]],
    );
    calls.length = 0;
    await expectStatus(api, "GET", `/v2/exports/${job.id}`, 200, { auth: "alice" });
    await download(api, job.download_url, "alice");
    assert.deepEqual(calls.map((c) => [c.principal.id, c.action, c.collection, c.record?.id]), [
      ["alice", "read", "exports", job.id],
      ["alice", "read", "exports", job.id],
    ]);
    assert.equal(calls[0]!.record.values.owner, "alice");
    assert.equal(calls[0]!.record.values.token, undefined, "authorize is not given the link's token");
    await settled(api, "v2", mine.id, "alice");
  });

  test("no right to list the collection, no export of it: 403; a reader may not create one; no credentials: 401", async () => {
    denyList = true;
    try {
      await expectError(api, "POST", "/v2/exports", 403, "FORBIDDEN", { body: { resource: "orders" }, auth: "alice" });
    } finally {
      denyList = false;
    }
    await expectError(api, "POST", "/v2/exports", 403, "FORBIDDEN", { body: { resource: "orders" }, auth: "reader" });
    await expectError(api, "POST", "/v2/exports", 401, "UNAUTHENTICATED", { body: { resource: "orders" }, auth: null });
    await expectError(api, "GET", job.download_url, 401, "UNAUTHENTICATED", { auth: null });
  });

  test("a wrong token, an unknown job, a job of another version: 404 with the envelope", async () => {
    await expectError(api, "GET", `/v2/exports/${job.id}/files/${"A".repeat(43)}`, 404, "NOT_FOUND", { auth: "alice" });
    await expectError(api, "GET", `/v2/exports/${UNKNOWN_ID}`, 404, "NOT_FOUND", { auth: "alice" });
    await expectError(api, "GET", `/v1/exports/${job.id}`, 404, "NOT_FOUND", { auth: "alice" });
    await expectError(api, "GET", job.download_url.replace("/v2/", "/v1/"), 404, "NOT_FOUND", { auth: "alice" });
    const error = await expectError(api, "GET", "/v2/exports/not-a-uuid", 400, "VALIDATION_ERROR", { auth: "alice" });
    assert.deepEqual(detailFields(error), ["id"]);
  });
});

describe("creating and listing exports", () => {
  const folder = exportsFolder();
  // More jobs at once than a principal may have by default.
  const api = suiteFixture(() => startApp({ authenticate: principals, exports: { directory: folder.directory, maxJobsPerPrincipal: 10 } }));
  after(() => folder.remove());

  test("a body that is not an export of an exportable collection: 400 naming every problem", async () => {
    const cases: Array<[unknown, string[]]> = [
      [{}, ["resource"]],
      [{ resource: "users" }, ["resource"]],
      [{ resource: "exports" }, ["resource"]],
      [{ resource: "orders", format: "xml" }, ["format"]],
      [{ resource: "orders", filters: { status: "lost", user_id: UNKNOWN_ID } }, ["filters.status", "filters.user_id"]],
      [{ resource: "orders", filters: { currency: "euro" }, q: "x".repeat(201), extra: true }, ["extra", "filters.currency", "q"]],
      [{ resource: "orders", filters: [] }, ["filters"]],
    ];
    for (const [body, fields] of cases) {
      const error = await expectError(api, "POST", "/v2/exports", 400, "VALIDATION_ERROR", { body: body as object, auth: "alice" });
      assert.deepEqual(detailFields(error), fields, JSON.stringify(body));
    }
    await expectError(api, "POST", "/v2/exports", 400, "VALIDATION_ERROR", { body: "[1]", auth: "alice", headers: { "content-type": "application/json" } });
  });

  test("the list is the caller's jobs of the version, cursor-paginated in id order; page sizes over 100 answer 400", async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(((await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "bob" })).body as Obj).id);
    }
    await expectStatus(api, "POST", "/v1/exports", 201, { body: { resource: "orders" }, auth: "bob" });
    const seen: string[] = [];
    let url: string | null = "/v2/exports?limit=2";
    while (url) {
      const page = (await expectStatus(api, "GET", url, 200, { auth: "bob" })).body as Obj;
      assert.ok(page.data.length <= 2);
      seen.push(...page.data.map((j: Obj) => j.id as string));
      url = page.pagination.next_cursor ? `/v2/exports?limit=2&cursor=${encodeURIComponent(page.pagination.next_cursor)}` : null;
    }
    assert.deepEqual(seen, made);
    for (const limit of ["101", "0", "x"]) {
      assert.deepEqual(detailFields(await expectError(api, "GET", `/v2/exports?limit=${limit}`, 400, "VALIDATION_ERROR", { auth: "bob" })), ["limit"]);
    }
    // A cursor of bob's list is not a cursor of alice's.
    const page = (await expectStatus(api, "GET", "/v2/exports?limit=1", 200, { auth: "bob" })).body as Obj;
    const foreign = await expectError(api, "GET", `/v2/exports?cursor=${encodeURIComponent(page.pagination.next_cursor)}`, 400, "VALIDATION_ERROR", { auth: "alice" });
    assert.deepEqual(detailFields(foreign), ["cursor"]);
    for (const id of made) await settled(api, "v2", id, "bob");
  });

  test("creating an export publishes export.created with the job as the version shows it", async () => {
    const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders", filters: { currency: "EUR" } }, auth: "alice" })).body as Obj;
    // Only the owner sees an export job's events.
    const events = (await expectStatus(api, "GET", "/v2/events?limit=100", 200, { auth: "alice" })).body.data as Obj[];
    const event = events.find((e) => e.type === "export.created" && e.data.id === job.id);
    assert.ok(event, "an export.created event");
    assert.deepEqual(event.data, job);
    const bobs = (await expectStatus(api, "GET", "/v2/events?limit=100", 200, { auth: "bob" })).body.data as Obj[];
    assert.ok(!bobs.some((e) => e.type === "export.created" && e.data.id === job.id), "bob never sees alice's export");
    await settled(api, "v2", job.id, "alice");
  });
});

describe("a download link expires", () => {
  const folder = exportsFolder();
  const api = suiteFixture(() => startApp({ authenticate: principals, exports: { directory: folder.directory, linkTtlSeconds: 0.3 } }));
  after(() => folder.remove());

  test("past expires_at the link answers 404 with the envelope; the job still says when it expired", async () => {
    const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    const done = await settled(api, "v2", job.id, "alice");
    assert.equal(done.record_count, 0);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(done.expires_at) - Date.now()) + 50));
    const error = await expectError(api, "GET", done.download_url, 404, "NOT_FOUND", { auth: "alice" });
    assert.match(error.message, /expired/);
    const again = (await expectStatus(api, "GET", `/v2/exports/${job.id}`, 200, { auth: "alice" })).body as Obj;
    assert.equal(again.status, "succeeded");
    assert.ok(Date.parse(again.expires_at) < Date.now());
  });
});

describe("an export runs in the background", () => {
  const folder = exportsFolder();
  const store = new MemoryStore();
  const ROWS = 30_000;
  const api = suiteFixture(() => startApp({ store, authenticate: principals, exports: { directory: folder.directory, pageSize: 250 } }));
  after(() => folder.remove());

  before(async () => {
    const user = await createUser(api);
    for (let i = 0; i < ROWS; i++) {
      const now = new Date().toISOString();
      const values = { user_id: user.id, code: `ORD-${String(i).padStart(6, "0")}`, status: "pending", total_cents: i, currency: "EUR", gift_wrap: false, amount_due_cents: 0 };
      await store.insert({ collection: "orders", record: { id: newId(), created_at: now, updated_at: now, revision: 1, values }, constraints: { unique: [] } });
    }
  });

  test("POST answers at once; other requests are answered while the job runs", async () => {
    const started = performance.now();
    const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    assert.ok(performance.now() - started < 1000, "the export is not made while the client waits");
    let answeredWhileRunning = 0;
    let slowest = 0;
    for (;;) {
      const t = performance.now();
      await expectStatus(api, "GET", "/v2/orders?limit=5", 200, { auth: "alice" });
      slowest = Math.max(slowest, performance.now() - t);
      const state = (await expectStatus(api, "GET", `/v2/exports/${job.id}`, 200, { auth: "alice" })).body as Obj;
      if (state.status === "succeeded") {
        assert.equal(state.record_count, ROWS);
        break;
      }
      if (state.status === "running") answeredWhileRunning += 1;
    }
    assert.ok(answeredWhileRunning >= 3, `requests answered while the job ran: ${answeredWhileRunning}`);
    assert.ok(slowest < 1000, `the slowest list took ${slowest.toFixed(0)} ms`);
  });
});
