// SPEC §5 over real HTTP: invalid input answers 400 VALIDATION_ERROR with one detail per
// problem, all at once; UUIDs are validated in paths and bodies; unknown ids answer 404.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import {
  assertErrorEnvelope,
  assertSchema,
  createOrder,
  createProduct,
  createUser,
  detailFields,
  expectError,
  expectStatus,
  orderBody,
  productBody,
  startApp,
  UNKNOWN_ID,
  userBody,
  V1_UUID,
  V4_UUID,
} from "./helpers.ts";

let user: Record<string, any>;
let order: Record<string, any>;
let product: Record<string, any>;
const api = suiteFixture(
  () => startApp(),
  async (api) => {
    user = await createUser(api);
    order = await createOrder(api, user.id);
    product = await createProduct(api);
  },
);

const UUID_DETAIL = (field: string) => [{ field, issue: "must be a valid UUID" }];
const MALFORMED = ["123", "not-a-uuid", "01890a5d-ac96-774b-bcce-b302099a805", "01890a5d-ac96-774b-bcce-b302099a8057x", "01890a5dac96774bbcceb302099a8057", V1_UUID];

describe("UUIDs in paths and bodies", () => {
  for (const bad of MALFORMED) {
    test(`path id ${bad}: 400 with details [{ field: "id", issue: "must be a valid UUID" }] on every operation`, async () => {
      const cases: Array<[string, string, unknown]> = [
        ["GET", `/v2/orders/${bad}`, undefined],
        ["PATCH", `/v2/orders/${bad}`, { note: "x" }],
        ["DELETE", `/v2/orders/${bad}`, undefined],
        ["PUT", `/v2/products/${bad}`, productBody()],
        ["POST", `/v2/orders/${bad}/cancellations`, { reason: "x" }],
        ["GET", `/v2/users/${bad}/orders`, undefined],
        ["GET", `/v2/orders/${bad}/invoices`, undefined],
        ["GET", `/v1/orders/${bad}`, undefined],
        ["GET", `/v2/events/${bad}`, undefined],
      ];
      for (const [method, url, body] of cases) {
        const error = await expectError(api, method, url, 400, "VALIDATION_ERROR", body === undefined ? {} : { body });
        assert.deepEqual(error.details, UUID_DETAIL("id"), `${method} ${url}`);
      }
    });
  }

  test("a malformed or version-1 UUID in a body field: 400 naming that field, and only it", async () => {
    for (const bad of [...MALFORMED, 42, null]) {
      const error = await expectError(api, "POST", "/v2/orders", 400, "VALIDATION_ERROR", { body: orderBody("v2", user.id, { user_id: bad }) });
      assert.deepEqual(error.details, UUID_DETAIL("user_id"), `user_id ${bad}`);
    }
    const invoiceError = await expectError(api, "POST", "/v2/invoices", 400, "VALIDATION_ERROR", {
      body: { order_id: V1_UUID, amount_cents: 1, due_date: "2026-01-01" },
    });
    assert.deepEqual(invoiceError.details, UUID_DETAIL("order_id"));
    const patchError = await expectError(api, "PATCH", `/v2/orders/${order.id}`, 400, "VALIDATION_ERROR", { body: { user_id: "nope" } });
    assert.deepEqual(patchError.details, UUID_DETAIL("user_id"));
  });

  test("a v4 UUID is well-formed: an unknown reference is 422, an unknown path id is 404", async () => {
    await expectError(api, "POST", "/v2/orders", 422, "BUSINESS_RULE_VIOLATION", { body: orderBody("v2", V4_UUID) });
    await expectError(api, "GET", `/v2/orders/${V4_UUID}`, 404, "NOT_FOUND");
  });
});

describe("well-formed ids that name no record: 404 NOT_FOUND", () => {
  test("read, update, replace, delete, action, and the parent of a child list", async () => {
    const cases: Array<[string, string, unknown]> = [
      ["GET", `/v2/orders/${UNKNOWN_ID}`, undefined],
      ["PATCH", `/v2/orders/${UNKNOWN_ID}`, { note: "x" }],
      ["DELETE", `/v2/orders/${UNKNOWN_ID}`, undefined],
      ["GET", `/v2/users/${UNKNOWN_ID}`, undefined],
      ["PATCH", `/v2/users/${UNKNOWN_ID}`, { name: "x" }],
      ["DELETE", `/v2/users/${UNKNOWN_ID}`, undefined],
      ["GET", `/v2/products/${UNKNOWN_ID}`, undefined],
      ["PUT", `/v2/products/${UNKNOWN_ID}`, productBody()],
      ["GET", `/v2/invoices/${UNKNOWN_ID}`, undefined],
      ["POST", `/v2/orders/${UNKNOWN_ID}/cancellations`, { reason: "x" }],
      ["POST", `/v1/orders/${UNKNOWN_ID}/cancellations`, { reason: "x" }],
      ["GET", `/v2/users/${UNKNOWN_ID}/orders`, undefined],
      ["GET", `/v1/users/${UNKNOWN_ID}/orders`, undefined],
      ["GET", `/v2/orders/${UNKNOWN_ID}/invoices`, undefined],
      ["GET", `/v2/events/${UNKNOWN_ID}`, undefined],
    ];
    for (const [method, url, body] of cases) {
      const error = await expectError(api, method, url, 404, "NOT_FOUND", body === undefined ? {} : { body });
      assert.ok(!("details" in error));
    }
  });
});

describe("bodies", () => {
  test("a body that is not JSON: 400", async () => {
    for (const text of ["{nope", "{\"a\":", "'single'", "\u0000"]) {
      const error = await expectError(api, "POST", "/v2/users", 400, "VALIDATION_ERROR", { body: text, headers: { "content-type": "application/json" } });
      assert.deepEqual(error.details, [{ field: "body", issue: "must be valid JSON" }], text);
    }
  });

  test("valid JSON naming __proto__ (or constructor with prototype), at any depth: 400 saying so", async () => {
    const texts = ['{"__proto__": {"x": 1}}', '{"email": "a@b.co", "address": {"__proto__": "v"}}', '{"constructor": {"prototype": {}}}'];
    for (const text of texts) {
      const error = await expectError(api, "POST", "/v2/users", 400, "VALIDATION_ERROR", { body: text, headers: { "content-type": "application/json" } });
      assert.deepEqual(error.details, [{ field: "body", issue: "must not name a key __proto__, nor constructor with prototype inside" }], text);
    }
  });

  test("JSON that is not an object (array, string, number, null, nothing): 400 naming the body", async () => {
    for (const text of ["[]", "[{\"email\":\"a@b.co\"}]", "\"text\"", "42", "true", "null", ""]) {
      const error = await expectError(api, "POST", "/v2/users", 400, "VALIDATION_ERROR", { body: text, headers: { "content-type": "application/json" } });
      assert.deepEqual(error.details, [{ field: "body", issue: "must be a JSON object" }], JSON.stringify(text));
    }
    const patch = await expectError(api, "PATCH", `/v2/orders/${order.id}`, 400, "VALIDATION_ERROR", {
      body: "[1]",
      headers: { "content-type": "application/json" },
    });
    assert.deepEqual(detailFields(patch), ["body"]);
    const none = await expectError(api, "POST", `/v2/orders/${order.id}/cancellations`, 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(none), ["body"]);
  });

  test("missing, wrong-typed, unknown and read-only fields: one detail each, all at once", async () => {
    const error = await expectError(api, "POST", "/v2/orders", 400, "VALIDATION_ERROR", {
      body: {
        id: UNKNOWN_ID,
        row_id: 7,
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
        status: "paid",
        colour: "red",
        legacy_ref: "v1 only",
        total_cents: "twelve",
        currency: "euro",
        gift_wrap: "yes",
      },
    });
    assert.deepEqual(detailFields(error), [
      "amount_due_cents",
      "code",
      "colour",
      "created_at",
      "currency",
      "gift_wrap",
      "id",
      "legacy_ref",
      "row_id",
      "status",
      "total_cents",
      "updated_at",
      "user_id",
    ]);
    const byField = new Map(error.details.map((d: { field: string; issue: string }) => [d.field, d.issue]));
    assert.equal(byField.get("user_id"), "is required");
    for (const key of ["id", "row_id", "created_at", "updated_at", "status"]) assert.match(byField.get(key) as string, /read-only/, key);
    for (const key of ["colour", "legacy_ref"]) assert.equal(byField.get(key), "is not allowed", key);
  });

  test("PATCH and PUT refuse read-only and unknown keys too, naming each", async () => {
    const patch = await expectError(api, "PATCH", `/v2/orders/${order.id}`, 400, "VALIDATION_ERROR", {
      body: { status: "shipped", row_id: 1, id: order.id, extra: true, total_cents: -1 },
    });
    assert.deepEqual(detailFields(patch), ["extra", "id", "row_id", "status", "total_cents"]);
    const put = await expectError(api, "PUT", `/v2/products/${product.id}`, 400, "VALIDATION_ERROR", {
      body: { ...productBody(), updated_at: "2026-01-01T00:00:00Z", row_id: 3 },
    });
    assert.deepEqual(detailFields(put), ["row_id", "updated_at"]);
    const unchanged = await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200);
    assert.equal(unchanged.body.status, "pending");
    assert.equal(unchanged.body.total_cents, order.total_cents);
  });

  test("nested fields are named by their dotted path", async () => {
    const error = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", {
      body: productBody({ tags: ["ok", "", 3], dimensions: { width_mm: "wide", depth_mm: 1 }, homepage: "not a url", price_cents: 1.5 }),
    });
    assert.deepEqual(detailFields(error), ["dimensions.depth_mm", "dimensions.height_mm", "dimensions.width_mm", "homepage", "price_cents", "tags.1", "tags.2"]);
  });

  test("field rules: pattern, enum, format, length, bounds", async () => {
    const error = await expectError(api, "POST", "/v2/users", 400, "VALIDATION_ERROR", {
      body: { email: "not-an-email", name: "", role: "root", password: "short" },
    });
    assert.deepEqual(detailFields(error), ["email", "name", "password", "role"]);
    const orderError = await expectError(api, "POST", "/v2/orders", 400, "VALIDATION_ERROR", {
      body: orderBody("v2", user.id, { code: "ORD-1", currency: "eur", total_cents: -5, placed_at: "yesterday", note: "x".repeat(501) }),
    });
    assert.deepEqual(detailFields(orderError), ["code", "currency", "note", "placed_at", "total_cents"]);
  });

  test("an unsupported Content-Type answers 400", async () => {
    for (const [type, text] of [
      ["text/plain", '{"name":"x"}'],
      ["application/x-www-form-urlencoded", "email=a%40b.co&name=x"],
      ["multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n--x--\r\n"],
      ["application/xml", "<user/>"],
      ["application/ld+json", "{}"],
    ] as const) {
      const error = await expectError(api, "POST", "/v2/users", 400, "VALIDATION_ERROR", { body: text, headers: { "content-type": type } });
      assert.deepEqual(detailFields(error), ["body"], type);
    }
    // JSON with a charset parameter is JSON.
    await expectStatus(api, "POST", "/v2/users", 201, { body: JSON.stringify(userBody()), headers: { "content-type": "application/json; charset=utf-8" } });
  });

  test("a body over the documented limit (65536 bytes) answers 400; one just under it is read", async () => {
    const over = JSON.stringify(productBody({ description: "x".repeat(65_536) }));
    const error = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", { body: over, headers: { "content-type": "application/json" } });
    assert.deepEqual(detailFields(error), ["body"]);
    const under = JSON.stringify(productBody({ description: "x".repeat(65_000) }));
    assert.ok(Buffer.byteLength(under) < 65_536);
    const read = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", { body: under, headers: { "content-type": "application/json" } });
    assert.deepEqual(detailFields(read), ["description"], "the body was read and its field checked");
  });

  test("a DELETE with a JSON Content-Type and no body is fine", async () => {
    const doomed = await createProduct(api);
    await expectStatus(api, "DELETE", `/v2/products/${doomed.id}`, 204, { headers: { "content-type": "application/json" } });
  });
});

describe("URLs and query parameters", () => {
  test("an over-long URL (> 4096 characters) answers 400, in the query or the path", async () => {
    await expectError(api, "GET", `/v2/orders?q=${"a".repeat(4100)}`, 400, "VALIDATION_ERROR");
    await expectError(api, "GET", `/v2/orders/${"a".repeat(5000)}`, 400, "VALIDATION_ERROR");
    await expectError(api, "GET", `/v2/users/${UNKNOWN_ID}/orders?status=${"p".repeat(4100)}`, 400, "VALIDATION_ERROR");
    await expectError(api, "GET", `/v9/${"a".repeat(5000)}`, 400, "VALIDATION_ERROR");
    // Beyond what the HTTP parser takes in headers (64 KiB): still the envelope.
    await expectError(api, "GET", `/v2/orders?q=${"a".repeat(70_000)}`, 400, "VALIDATION_ERROR");
    // Just under the limit is an ordinary request.
    const url = `/v2/orders?q=`;
    await expectStatus(api, "GET", url + "a".repeat(200), 200);
  });

  test("a malformed percent-encoding in the path answers 400 with the envelope", async () => {
    const error = await expectError(api, "GET", "/v2/orders/%E0%A4%A", 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(error), ["url"]);
    await expectError(api, "GET", "/v1/orders/%E0%A4%A", 400, "VALIDATION_ERROR");
  });

  test("a request the HTTP parser refuses answers 400 with the envelope and a request id", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(api.base).port), "127.0.0.1", () => socket.write("HELLO WORLD\r\n\r\n"));
      let text = "";
      socket.on("data", (chunk) => (text += String(chunk)));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    const [head, body] = answer.split("\r\n\r\n") as [string, string];
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\nX-Request-Id: [0-9a-f]{8}-[0-9a-f]{4}-7/i);
    assertErrorEnvelope(JSON.parse(body), "VALIDATION_ERROR");
    assertSchema("v2", "Error", JSON.parse(body));
  });

  test("an unknown query parameter answers 400 naming it", async () => {
    const error = await expectError(api, "GET", "/v2/orders?colour=red", 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(error), ["colour"]);
  });

  test("a query parameter given twice answers 400 naming it", async () => {
    const error = await expectError(api, "GET", "/v2/orders?limit=5&limit=6", 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(error), ["limit"]);
  });
});
