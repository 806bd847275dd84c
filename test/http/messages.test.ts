// Issue 14.9 over real HTTP: every validation message is canon's own (runtime/messages.ts),
// worded the same way for every kind of constraint, and names the limit. One row per
// constraint kind: the request, the detail's field, and the exact issue. Every list answers a
// parameter it does not take the same way: 400 naming it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import { createOrder, createUser, expectError, orderBody, productBody, startApp, UNKNOWN_ID, userBody } from "./helpers.ts";

type Obj = Record<string, any>;

let user: Obj;
let order: Obj;
const api = suiteFixture(
  () => startApp(),
  async (api) => {
    user = await createUser(api);
    order = await createOrder(api, user.id);
  },
);

const OPEN_ORDER = ["pending", "paid", "shipped", "cancelled"].join(", ");

/** [constraint kind, method, url (or a function of the fixtures), body, field, issue] */
type Row = [string, string, string | (() => string), (() => Obj) | null, string, string];

const rows: Row[] = [
  // presence, type, unknown and read-only keys
  ["required", "POST", "/v2/products", () => { const b = productBody(); delete b.sku; return b; }, "sku", "is required"],
  ["string type", "POST", "/v2/products", () => productBody({ name: 5 }), "name", "must be a string"],
  ["null where not nullable", "POST", "/v2/products", () => productBody({ name: null }), "name", "must be a string, not null"],
  ["integer type (a fraction)", "POST", "/v2/products", () => productBody({ price_cents: 1.5 }), "price_cents", "must be an integer"],
  ["integer type (text)", "POST", "/v2/products", () => productBody({ price_cents: "12" }), "price_cents", "must be an integer"],
  ["boolean type", "POST", "/v2/orders", () => orderBody("v2", user.id, { gift_wrap: "yes" }), "gift_wrap", "must be true or false"],
  ["array type", "POST", "/v2/products", () => productBody({ tags: "a,b" }), "tags", "must be an array"],
  ["object type", "POST", "/v2/products", () => productBody({ dimensions: "10x20" }), "dimensions", "must be an object"],
  ["unknown key", "POST", "/v2/products", () => productBody({ colour: "red" }), "colour", "is not allowed"],
  ["unknown nested key", "POST", "/v2/products", () => productBody({ dimensions: { width_mm: 1, height_mm: 2, depth_mm: 3 } }), "dimensions.depth_mm", "is not allowed"],
  ["read-only key", "POST", "/v2/orders", () => orderBody("v2", user.id, { status: "paid" }), "status", "is read-only"],
  ["server key", "POST", "/v2/products", () => productBody({ id: UNKNOWN_ID }), "id", "is read-only"],
  ["required nested field", "POST", "/v2/products", () => productBody({ dimensions: { width_mm: 1 } }), "dimensions.height_mm", "is required"],
  // limits
  ["min_length", "POST", "/v2/users", () => userBody({ password: "short" }), "password", "must be at least 12 characters"],
  ["min_length 1", "POST", "/v2/products", () => productBody({ name: "" }), "name", "must be at least 1 character"],
  ["max_length", "PATCH", () => `/v2/orders/${order.id}`, () => ({ note: "x".repeat(501) }), "note", "must be at most 500 characters"],
  ["minimum", "POST", "/v2/orders", () => orderBody("v2", user.id, { total_cents: -1 }), "total_cents", "must be at least 0"],
  ["maximum", "POST", "/v2/products", () => productBody({ price_cents: 100_000_001 }), "price_cents", "must be at most 100000000"],
  ["nested minimum", "POST", "/v2/products", () => productBody({ dimensions: { width_mm: -5, height_mm: 1 } }), "dimensions.width_mm", "must be at least 0"],
  ["max_items", "POST", "/v2/products", () => productBody({ tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }), "tags", "must have at most 10 items"],
  ["an item's limit", "POST", "/v2/products", () => productBody({ tags: ["ok", "x".repeat(31)] }), "tags.1", "must be at most 30 characters"],
  ["action field limit", "POST", () => `/v2/orders/${order.id}/cancellations`, () => ({ reason: "" }), "reason", "must be at least 1 character"],
  // formats
  ["pattern", "POST", "/v2/orders", () => orderBody("v2", user.id, { code: "ORD-12" }), "code", "must match ^ORD-[0-9]{6}$"],
  ["enum", "POST", "/v2/users", () => userBody({ role: "boss" }), "role", "must be one of: customer, admin"],
  ["email", "POST", "/v2/users", () => userBody({ email: "ann.example.com" }), "email", "must be an email address"],
  ["uuid", "POST", "/v2/orders", () => orderBody("v2", "123"), "user_id", "must be a valid UUID"],
  ["date", "POST", "/v2/invoices", () => ({ order_id: order.id, amount_cents: 1, due_date: "2026-13-01" }), "due_date", "must be a date (YYYY-MM-DD)"],
  ["datetime", "POST", "/v2/orders", () => orderBody("v2", user.id, { placed_at: "yesterday" }), "placed_at", "must be a date-time with a time zone (YYYY-MM-DDTHH:MM:SSZ)"],
  // parameters
  ["path uuid", "GET", "/v2/orders/123", null, "id", "must be a valid UUID"],
  ["filter enum", "GET", "/v2/orders?status=lost", null, "status", `must be one of: ${OPEN_ORDER}`],
  ["filter pattern", "GET", "/v2/orders?currency=eur", null, "currency", "must match ^[A-Z]{3}$"],
  ["page size", "GET", "/v2/orders?limit=0", null, "limit", "must be an integer from 1 to 100"],
  ["page", "GET", "/v2/users?page=0", null, "page", "must be an integer of 1 or more"],
  ["search text", "GET", `/v2/products?q=${"x".repeat(201)}`, null, "q", "must be at most 200 characters"],
];

describe("validation messages are canon's own and name the limit", () => {
  for (const [kind, method, url, body, field, issue] of rows) {
    test(`${kind}: ${field} ${issue}`, async () => {
      const target = typeof url === "function" ? url() : url;
      const error = await expectError(api, method, target, 400, "VALIDATION_ERROR", body ? { body: body() } : {});
      const details = error.details as Array<{ field: string; issue: string }>;
      assert.deepEqual(details.filter((d) => d.field === field), [{ field, issue }], JSON.stringify(details));
    });
  }

  test("uri: a value that is not a URL names the format", async () => {
    const error = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", { body: productBody({ homepage: "not a url" }) });
    const [detail] = error.details as Array<{ field: string; issue: string }>;
    assert.equal(detail?.field, "homepage");
    assert.match(detail!.issue, /^must be an? .*URL/);
  });

  test("every message of a body with every problem at once is worded the same way (`must …` or `is …`)", async () => {
    const body = {
      code: "X", total_cents: -1.5, currency: 3, note: "x".repeat(600), placed_at: "2026-02-30T00:00:00Z", gift_wrap: 1, amount_due_cents: null, user_id: "u", extra: 1,
    };
    const error = await expectError(api, "POST", "/v2/orders", 400, "VALIDATION_ERROR", { body });
    const details = error.details as Array<{ field: string; issue: string }>;
    assert.ok(details.length >= 8, JSON.stringify(details));
    for (const d of details) {
      assert.match(d.issue, /^(must|is) /, `${d.field}: ${d.issue}`);
      assert.doesNotMatch(d.issue, /Invalid|Too (big|small)|expected|received|ISO/, `${d.field}: zod's words leaked: ${d.issue}`);
    }
  });
});

describe("every list answers a parameter it does not take with 400 naming it", () => {
  const lists = () => [
    "/v2/users", "/v1/users", "/v2/orders", "/v1/orders", "/v2/products", `/v2/users/${user.id}/orders`, `/v2/orders/${order.id}/invoices`,
    "/v2/events", "/v1/events", "/v2/exports", "/v2/products?q=lamp", "/v2/users?q=ann",
  ];

  test("an unknown parameter, on every list of both versions", async () => {
    for (const list of lists()) {
      const url = `${list}${list.includes("?") ? "&" : "?"}colour=red`;
      const error = await expectError(api, "GET", url, 400, "VALIDATION_ERROR");
      assert.deepEqual(error.details, [{ field: "colour", issue: "is not allowed" }], url);
    }
  });

  test("a parameter of the other mode of an offset list (it would be ignored)", async () => {
    for (const [url, fields] of [
      ["/v2/users?limit=5", ["limit"]],
      ["/v2/users?cursor=abc&limit=5", ["cursor", "limit"]],
      ["/v1/users?per_page=5&limit=5", ["limit"]],
      ["/v2/users?q=ann&page=2", ["page"]],
      ["/v2/users?q=ann&per_page=5&page=1", ["page", "per_page"]],
    ] as const) {
      const error = await expectError(api, "GET", url, 400, "VALIDATION_ERROR");
      assert.deepEqual((error.details as Obj[]).map((d) => d.field).sort(), [...fields].sort(), url);
      for (const d of error.details as Obj[]) assert.match(d.issue, /^is not allowed (in a search|without q)/);
    }
  });
});
