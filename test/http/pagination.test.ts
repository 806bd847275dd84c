// SPEC §5 over real HTTP: page sizes, cursor walks (also while records are created), the
// offset shape of users, search, filters, child collections, and cursors that are refused.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import {
  assertCursorPage,
  createOrder,
  createProduct,
  createUser,
  detailFields,
  expectError,
  expectStatus,
  startApp,
  walk,
  withApp,
} from "./helpers.ts";

type Obj = Record<string, any>;

let walker: Obj; // a user with 250 orders
let other: Obj; // a user with 3 orders
let walkerOrderIds: string[];
const api = suiteFixture(
  () => startApp(),
  async (api) => {
    walker = await createUser(api, "v2", { name: "Walker Zed" });
    other = await createUser(api, "v2", { name: "Other" });
    walkerOrderIds = [];
    // In batches, so that the ids interleave with nothing else and sort in creation order.
    for (let i = 0; i < 250; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: 25 }, (_, j) =>
          createOrder(api, walker.id, "v2", {
            currency: (i + j) % 5 === 0 ? "USD" : "EUR",
            note: (i + j) % 10 === 0 ? `Gift for Tenth ${i + j}` : undefined,
          }),
        ),
      );
      walkerOrderIds.push(...batch.map((o) => o.id as string));
    }
    walkerOrderIds.sort();
    for (let i = 0; i < 3; i++) await createOrder(api, other.id, "v2", { currency: "GBP" });
  },
);

const ids = (records: Obj[]): string[] => records.map((r) => r.id as string);

describe("page sizes", () => {
  test("a list without a page size answers 20 records at most", async () => {
    const page = (await expectStatus(api, "GET", "/v2/orders", 200)).body;
    assertCursorPage(page);
    assert.equal(page.data.length, 20);
    assert.equal(page.pagination.has_more, true);
    const users = (await expectStatus(api, "GET", "/v2/users", 200)).body;
    assert.ok(users.data.length <= 20);
    assert.equal(users.pagination.per_page, 20);
  });

  test("limit=100 answers 100 records", async () => {
    const page = (await expectStatus(api, "GET", "/v2/orders?limit=100", 200)).body;
    assert.equal(page.data.length, 100);
    assert.equal((await expectStatus(api, "GET", "/v2/orders?limit=1", 200)).body.data.length, 1);
  });

  for (const value of ["101", "0", "-1", "abc", "1.5", "", "1e2", "99999999999", "05", "+5", "-0"]) {
    test(`limit=${value} answers 400 naming limit (cursor lists, child lists, events, v1)`, async () => {
      for (const path of [
        "/v2/orders",
        "/v2/products",
        `/v2/users/${walker.id}/orders`,
        "/v2/events",
        "/v1/orders",
        "/v2/users?q=abc",
      ]) {
        const error = await expectError(
          api,
          "GET",
          `${path}${path.includes("?") ? "&" : "?"}limit=${value}`,
          400,
          "VALIDATION_ERROR",
        );
        assert.deepEqual(detailFields(error), ["limit"], path);
      }
    });
  }

  for (const value of ["101", "0", "-1", "abc", "2.5", "05"]) {
    test(`per_page=${value} on users answers 400 naming per_page`, async () => {
      const error = await expectError(api, "GET", `/v2/users?per_page=${value}`, 400, "VALIDATION_ERROR");
      assert.deepEqual(detailFields(error), ["per_page"]);
    });
  }

  // SPEC §5 refuses a page below 1 or not an integer, nothing else: a page far past the end is
  // an empty page on every store (it was refused above nine digits, "must be an integer of 1 or
  // more"), up to 2^53 − 1, beyond which a number is no longer exact.
  for (const value of ["1000000000", "123456789012", "9007199254740991"]) {
    test(`page=${value} on users answers an empty page`, async () => {
      const body = (await expectStatus(api, "GET", `/v2/users?page=${value}&per_page=100`, 200)).body;
      assert.deepEqual(body.data, []);
      assert.equal(body.pagination.page, Number(value));
      assert.equal(body.pagination.per_page, 100);
    });
  }

  for (const value of ["0", "-3", "abc", "1.5", "9007199254740992", "99999999999999999", "01", "+2"]) {
    test(`page=${value} on users answers 400 naming page`, async () => {
      const error = await expectError(api, "GET", `/v2/users?page=${value}`, 400, "VALIDATION_ERROR");
      assert.deepEqual(detailFields(error), ["page"]);
    });
  }

  // One rule for every integer in a query (runtime/pagination.ts integerText): as JSON writes it.
  // A page size or page written with a leading zero answers 400 as an integer filter's does, and
  // the issue says why.
  test("limit, per_page and page with a leading zero answer 400 saying so", async () => {
    const cases: Array<[string, string, string]> = [
      ["/v2/orders?limit=05", "limit", "must be an integer from 1 to 100, written without a leading zero"],
      [`/v2/users/${walker.id}/orders?limit=010`, "limit", "must be an integer from 1 to 100, written without a leading zero"],
      ["/v2/events?limit=05", "limit", "must be an integer from 1 to 100, written without a leading zero"],
      ["/v2/users?per_page=05", "per_page", "must be an integer from 1 to 100, written without a leading zero"],
      ["/v2/users?page=02", "page", "must be an integer of 1 or more, written without a leading zero"],
      ["/v2/users?page=00", "page", "must be an integer of 1 or more, written without a leading zero"],
    ];
    for (const [url, field, issue] of cases) {
      const error = await expectError(api, "GET", url, 400, "VALIDATION_ERROR");
      assert.deepEqual(error.details, [{ field, issue }], url);
    }
    // Written without it, the same values are taken.
    assert.equal((await expectStatus(api, "GET", "/v2/orders?limit=5", 200)).body.data.length, 5);
    assert.equal((await expectStatus(api, "GET", "/v2/users?per_page=5&page=2", 200)).body.pagination.page, 2);
  });

  test("every bad parameter is named at once", async () => {
    const error = await expectError(
      api,
      "GET",
      "/v2/users?page=0&per_page=500&role=root",
      400,
      "VALIDATION_ERROR",
    );
    assert.deepEqual(detailFields(error), ["page", "per_page", "role"]);
  });
});

describe("cursor lists", () => {
  test("following next_cursor over 250 records visits each exactly once, in id order", async () => {
    const seen = await walk(api, `/v2/users/${walker.id}/orders?limit=7`);
    assert.deepEqual(ids(seen), walkerOrderIds);
    const all = await walk(api, "/v2/orders?limit=100");
    assert.equal(all.length, 253);
    assert.deepEqual(ids(all), [...ids(all)].sort());
    assert.equal(new Set(ids(all)).size, 253);
  });

  test("records created during a walk appear at its end, once", async () => {
    const user = await createUser(api);
    const before = [];
    for (let i = 0; i < 30; i++) before.push((await createOrder(api, user.id)).id as string);
    const added: string[] = [];
    const seen = await walk(api, `/v2/users/${user.id}/orders?limit=8`, async (_page, index) => {
      if (index < 3) for (let i = 0; i < 4; i++) added.push((await createOrder(api, user.id)).id as string);
    });
    assert.deepEqual(ids(seen), [...before, ...added]);
  });

  test("records deleted during a walk are skipped; the walk still ends with everything else", async () => {
    const user = await createUser(api);
    const created = [];
    for (let i = 0; i < 20; i++) created.push((await createOrder(api, user.id)).id as string);
    const deleted = new Set([created[5]!, created[6]!, created[15]!]);
    const seen = await walk(api, `/v2/users/${user.id}/orders?limit=5`, async (_page, index) => {
      if (index === 0) for (const id of deleted) await expectStatus(api, "DELETE", `/v2/orders/${id}`, 204);
    });
    assert.deepEqual(
      ids(seen),
      created.filter((id) => !deleted.has(id)),
    );
  });

  test("next_cursor is null exactly when has_more is false, also when the last page is full", async () => {
    const page1 = (await expectStatus(api, "GET", `/v2/users/${other.id}/orders?limit=3`, 200)).body;
    assertCursorPage(page1);
    assert.equal(page1.data.length, 3);
    assert.equal(page1.pagination.has_more, false);
    assert.equal(page1.pagination.next_cursor, null);
    const page2 = (await expectStatus(api, "GET", `/v2/users/${other.id}/orders?limit=2`, 200)).body;
    assert.equal(page2.pagination.has_more, true);
    assert.equal(typeof page2.pagination.next_cursor, "string");
    const empty = (await expectStatus(api, "GET", `/v2/products?q=nothing-matches-this`, 200)).body;
    assert.deepEqual(empty, { data: [], pagination: { next_cursor: null, has_more: false } });
  });

  test("a tampered cursor answers 400 naming cursor", async () => {
    const page = (await expectStatus(api, "GET", "/v2/orders?limit=5", 200)).body;
    const cursor: string = page.pagination.next_cursor;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const tampered = [
      flip(cursor, 3),
      flip(cursor, cursor.length - 2),
      cursor.slice(0, -1),
      `${cursor}x`,
      "abc",
      "",
      "a.b",
      "%00",
      "x".repeat(2000),
    ];
    for (const bad of tampered) {
      const error = await expectError(
        api,
        "GET",
        `/v2/orders?limit=5&cursor=${encodeURIComponent(bad)}`,
        400,
        "VALIDATION_ERROR",
      );
      assert.deepEqual(detailFields(error), ["cursor"], bad);
    }
  });

  test("a cursor from another list answers 400 naming cursor", async () => {
    const orders = (await expectStatus(api, "GET", "/v2/orders?limit=5", 200)).body.pagination
      .next_cursor as string;
    const ofWalker = (await expectStatus(api, "GET", `/v2/users/${walker.id}/orders?limit=5`, 200)).body
      .pagination.next_cursor as string;
    const usd = (await expectStatus(api, "GET", "/v2/orders?limit=5&currency=USD", 200)).body.pagination
      .next_cursor as string;
    const v1 = (await expectStatus(api, "GET", "/v1/orders?limit=5", 200)).body.pagination
      .next_cursor as string;
    await createProduct(api);
    await createProduct(api);
    const products = (await expectStatus(api, "GET", "/v2/products?limit=1", 200)).body.pagination
      .next_cursor as string;
    const foreign: Array<[string, string]> = [
      ["/v2/products", orders],
      ["/v2/orders", products],
      ["/v2/invoices", orders],
      ["/v2/events", orders],
      [`/v2/users/${other.id}/orders`, ofWalker],
      ["/v2/orders", ofWalker],
      ["/v2/orders", usd],
      ["/v2/orders?currency=EUR", usd],
      ["/v2/orders?q=gift", orders],
      ["/v2/orders", v1],
      ["/v1/orders", orders],
    ];
    for (const [path, cursor] of foreign) {
      const error = await expectError(
        api,
        "GET",
        `${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`,
        400,
        "VALIDATION_ERROR",
      );
      assert.deepEqual(detailFields(error), ["cursor"], path);
    }
    // The same cursor on its own list works, and with another page size too.
    await expectStatus(api, "GET", `/v2/orders?limit=5&cursor=${encodeURIComponent(orders)}`, 200);
    await expectStatus(api, "GET", `/v2/orders?limit=50&cursor=${encodeURIComponent(orders)}`, 200);
  });
});

describe("child collections and filters", () => {
  test("/v2/users/{id}/orders lists that user's orders only", async () => {
    const page = (await expectStatus(api, "GET", `/v2/users/${other.id}/orders`, 200)).body;
    assert.equal(page.data.length, 3);
    for (const order of page.data) assert.equal(order.user_id, other.id);
    const v1 = (await expectStatus(api, "GET", `/v1/users/${other.id}/orders`, 200)).body;
    assert.deepEqual(ids(v1.data), ids(page.data));
  });

  test("/v2/orders/{id}/invoices lists that order's invoices, with their status filter", async () => {
    const user = await createUser(api);
    const a = await createOrder(api, user.id);
    const b = await createOrder(api, user.id);
    for (const status of ["draft", "issued", "issued"]) {
      await expectStatus(api, "POST", "/v2/invoices", 201, {
        body: { order_id: a.id, amount_cents: 5, due_date: "2026-03-01", status },
      });
    }
    await expectStatus(api, "POST", "/v2/invoices", 201, {
      body: { order_id: b.id, amount_cents: 5, due_date: "2026-03-01" },
    });
    const all = (await expectStatus(api, "GET", `/v2/orders/${a.id}/invoices`, 200)).body;
    assert.equal(all.data.length, 3);
    const issued = (await expectStatus(api, "GET", `/v2/orders/${a.id}/invoices?status=issued`, 200)).body;
    assert.equal(issued.data.length, 2);
    const error = await expectError(
      api,
      "GET",
      `/v2/orders/${a.id}/invoices?status=sent`,
      400,
      "VALIDATION_ERROR",
    );
    assert.deepEqual(detailFields(error), ["status"]);
  });

  test("filters match exactly; a value not valid for its field answers 400 naming the parameter", async () => {
    const usd = await walk(api, `/v2/users/${walker.id}/orders?currency=USD&limit=100`);
    assert.equal(usd.length, 50);
    for (const o of usd) assert.equal(o.currency, "USD");
    const pending = await walk(api, "/v2/orders?status=pending&limit=100");
    assert.equal(pending.length >= 253, true);
    const paid = (await expectStatus(api, "GET", "/v2/orders?status=paid", 200)).body;
    assert.deepEqual(paid.data, []);
    for (const [query, field] of [
      ["status=bogus", "status"],
      ["status=PENDING", "status"],
      ["currency=usd", "currency"],
      ["currency=DOLLARS", "currency"],
    ]) {
      const error = await expectError(api, "GET", `/v2/orders?${query}`, 400, "VALIDATION_ERROR");
      assert.deepEqual(detailFields(error), [field], query);
      const child = await expectError(
        api,
        "GET",
        `/v2/users/${walker.id}/orders?${query}`,
        400,
        "VALIDATION_ERROR",
      );
      assert.deepEqual(detailFields(child), [field], query);
    }
    const role = await expectError(api, "GET", "/v2/users?role=root", 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(role), ["role"]);
    const category = await expectError(api, "GET", "/v2/products?category=food", 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(category), ["category"]);
  });
});

describe("offset lists and search", () => {
  test("users: { data, pagination: { page, per_page, total, total_pages } }", async () => {
    await withApp({}, async (local) => {
      const created = [];
      for (let i = 0; i < 23; i++) created.push((await createUser(local)).id as string);
      const first = (await expectStatus(local, "GET", "/v2/users?per_page=10", 200)).body;
      assert.deepEqual(first.pagination, { page: 1, per_page: 10, total: 23, total_pages: 3 });
      assert.deepEqual(ids(first.data), created.slice(0, 10));
      const third = (await expectStatus(local, "GET", "/v2/users?per_page=10&page=3", 200)).body;
      assert.deepEqual(third.pagination, { page: 3, per_page: 10, total: 23, total_pages: 3 });
      assert.deepEqual(ids(third.data), created.slice(20));
      const beyond = (await expectStatus(local, "GET", "/v2/users?per_page=10&page=4", 200)).body;
      assert.deepEqual(beyond.data, []);
      const byDefault = (await expectStatus(local, "GET", "/v2/users", 200)).body;
      assert.deepEqual(byDefault.pagination, { page: 1, per_page: 20, total: 23, total_pages: 2 });
      const v1 = (await expectStatus(local, "GET", "/v1/users?page=2&per_page=20", 200)).body;
      assert.deepEqual(ids(v1.data), created.slice(20));
      const hundred = (await expectStatus(local, "GET", "/v2/users?per_page=100", 200)).body;
      assert.equal(hundred.data.length, 23);
      const admins = (await expectStatus(local, "GET", "/v2/users?role=admin", 200)).body;
      assert.deepEqual(admins.pagination, { page: 1, per_page: 20, total: 0, total_pages: 0 });
    });
  });

  test("?q= on users answers the cursor shape, case-insensitively, and walks", async () => {
    const page = (await expectStatus(api, "GET", "/v2/users?q=WALKER", 200)).body;
    assertCursorPage(page);
    assert.deepEqual(ids(page.data), [walker.id]);
    const byEmail = (
      await expectStatus(api, "GET", `/v2/users?q=${encodeURIComponent(walker.email.toUpperCase())}`, 200)
    ).body;
    assert.deepEqual(ids(byEmail.data), [walker.id]);
    const many = await walk(api, "/v2/users?q=example.com&limit=1");
    assert.ok(many.length >= 2);
  });

  test("?q= folds case one character at a time on every store, as PostgreSQL's ILIKE in a UTF-8 database", async () => {
    const named: Record<string, string> = {};
    for (const name of [
      "ΟΔΟΣ Qfold",
      "οδος Qfold",
      "ΣΑΣ Qfold",
      "İstanbul Qfold",
      "Álvaro Qfold",
      "Ǆemal Qfold",
    ])
      named[name] = (await createUser(api, "v2", { name })).id;
    const found = async (q: string) =>
      (
        ((await expectStatus(api, "GET", `/v2/users?limit=100&q=${encodeURIComponent(q)}`, 200)).body as Obj)
          .data as Obj[]
      )
        .map((u) => u.name as string)
        .sort();
    // `Σ` is `σ` wherever it stands (a word's last `ς` is another letter); `İ` is `i`.
    assert.deepEqual(await found("ΟΔΟΣ"), ["ΟΔΟΣ Qfold"]);
    assert.deepEqual(await found("οδοσ"), ["ΟΔΟΣ Qfold"]);
    assert.deepEqual(await found("οδος"), ["οδος Qfold"]);
    assert.deepEqual(await found("σασ"), ["ΣΑΣ Qfold"]);
    assert.deepEqual(await found("σας"), []);
    assert.deepEqual(await found("istanbul"), ["İstanbul Qfold"]);
    assert.deepEqual(await found("ÁLVARO"), ["Álvaro Qfold"]);
    assert.deepEqual(await found("ǆem"), ["Ǆemal Qfold"]);
    for (const id of Object.values(named)) await expectStatus(api, "DELETE", `/v2/users/${id}`, 204);
  });

  test("a q shorter than the search minimum (3 characters, surrounding spaces not counted) answers 400 naming q; the document says minLength", async () => {
    for (const q of ["", "a", "ab", "  ab  ", "é"]) {
      for (const path of ["/v2/products", "/v2/users", `/v2/users/${walker.id}/orders`, "/v1/orders"]) {
        const error = await expectError(
          api,
          "GET",
          `${path}?q=${encodeURIComponent(q)}`,
          400,
          "VALIDATION_ERROR",
        );
        assert.deepEqual(detailFields(error), ["q"], `${path} q=${JSON.stringify(q)}`);
      }
    }
    // Three characters (code points, not UTF-16 units) are enough.
    for (const q of ["abc", "日本語", "😀ab"])
      await expectStatus(api, "GET", `/v2/products?q=${encodeURIComponent(q)}`, 200);
    const doc = (await expectStatus(api, "GET", "/v2/openapi.json", 200)).body;
    assert.deepEqual(doc.components.parameters.q.schema, { type: "string", minLength: 3, maxLength: 200 });
  });

  test("?q= on products matches name and description case-insensitively, in cursor mode", async () => {
    const blue = await createProduct(api, "v2", { name: "Blue Widget" });
    const desc = await createProduct(api, "v2", { name: "Plain", description: "Comes in BLUE and red" });
    await createProduct(api, "v2", { name: "Red Widget" });
    for (const q of ["blue", "BLUE", "bLuE", " blue "]) {
      const page = (await expectStatus(api, "GET", `/v2/products?q=${encodeURIComponent(q)}`, 200)).body;
      assertCursorPage(page);
      assert.deepEqual(ids(page.data), [blue.id, desc.id], q);
    }
    const widgets = await walk(api, "/v2/products?q=widget&limit=1");
    assert.equal(widgets.length, 2);
    const combined = (await expectStatus(api, "GET", "/v2/products?q=widget&category=books", 200)).body;
    assert.deepEqual(combined.data, []);
  });

  test("?q= on orders searches note, combined with the parent and filters", async () => {
    const page = await walk(api, `/v2/users/${walker.id}/orders?q=gift%20FOR&limit=10`);
    assert.equal(page.length, 25);
    const usd = await walk(api, `/v2/users/${walker.id}/orders?q=tenth&currency=USD&limit=10`);
    assert.equal(usd.length, 25);
    const none = (await expectStatus(api, "GET", `/v2/users/${other.id}/orders?q=tenth`, 200)).body;
    assert.deepEqual(none.data, []);
  });

  test("every list is bounded and in cursor shape: products, invoices, events, in v1 too", async () => {
    for (const path of ["/v1/products", "/v1/invoices", "/v2/invoices", "/v1/events"]) {
      const page = (await expectStatus(api, "GET", path, 200)).body;
      assertCursorPage(page);
      assert.ok(page.data.length <= 20);
    }
  });
});
