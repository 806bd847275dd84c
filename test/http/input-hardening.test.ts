// Hostile input, round two (issue 14, point 5): duplicate JSON keys, thousands of unknown keys,
// URL schemes, and `X-Content-Type-Options: nosniff` on every kind of answer.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import { call, createUser, expectError, expectStatus, productBody, sendBytes, startApp, userBody } from "./helpers.ts";

const api = suiteFixture(() => startApp());

describe("duplicate keys in a JSON body", () => {
  test("a key given twice answers 400 naming it, at any depth; nothing is created", async () => {
    const cases: Array<[string, string]> = [
      ['{"email":"a@example.com","name":"A","password":"correct horse","role":"customer","role":"admin"}', "role"],
      ['{"email":"a@example.com","name":"A","password":"correct horse","email":"b@example.com"}', "email"],
      ['{"email":"a@example.com", "name" : "A","password":"correct horse", "na\\u006de" : "B"}', "name"],
    ];
    for (const [text, field] of cases) {
      const error = await expectError(api, "POST", "/v2/users", 400, "VALIDATION_ERROR", { body: text, headers: { "content-type": "application/json" } });
      assert.deepEqual(error.details, [{ field, issue: "is given more than once" }], text);
    }
    const nested = JSON.stringify(productBody({ dimensions: { width_mm: 1, height_mm: 2 } })).replace('"width_mm":', '"width_mm":1,"width_mm":');
    const error = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", { body: nested, headers: { "content-type": "application/json" } });
    assert.deepEqual(error.details, [{ field: "dimensions.width_mm", issue: "is given more than once" }]);
    const list = await expectStatus(api, "GET", "/v2/users?q=a%40example.com", 200);
    assert.equal(list.body.data.length, 0);
  });

  test("the same key in different objects, and quotes and colons inside strings, are fine", async () => {
    const body = productBody({ name: 'say "x": 1, "name": 2', homepage: "https://example.com/a:b", tags: ["a", "b"], dimensions: { width_mm: 1, height_mm: 2 } });
    const text = JSON.stringify(body).replace("{", '{ "description" : "at 10:00:00 \\"name\\":" , ');
    await expectStatus(api, "POST", "/v2/products", 201, { body: text, headers: { "content-type": "application/json" } });
  });
});

describe("the number of details", () => {
  test("5,000 unknown keys (within the body limit): 100 details, and the message says how many more", async () => {
    const body = { ...userBody(), ...Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`u${i}`, 0])) };
    const res = await call(api, "POST", "/v2/users", { body });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.length, 100);
    assert.match(res.body.error.message, /5000 problems: the first 100 are listed, 4900 more are not\./);
    assert.ok(res.text.length < 10_000, `a small answer (${res.text.length} bytes)`);
  });
});

describe("URL fields accept only http and https by default", () => {
  test("javascript:, data:, file: and mailto: URLs answer 400 naming the field; http and https pass", async () => {
    for (const homepage of ["javascript:alert(1)", "data:text/html,<script>alert(1)</script>", "file:///etc/passwd", "mailto:a@example.com", "JavaScript:alert(1)"]) {
      const error = await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", { body: productBody({ homepage }) });
      assert.deepEqual(error.details.map((d: { field: string }) => d.field), ["homepage"], homepage);
    }
    for (const homepage of ["http://example.com/", "https://example.com/p?q=1", "HTTPS://EXAMPLE.COM/"]) {
      await expectStatus(api, "POST", "/v2/products", 201, { body: productBody({ homepage }) });
    }
  });
});

describe("X-Content-Type-Options: nosniff", () => {
  test("on records, errors, 404s, the documents and the reference page", async () => {
    const user = await createUser(api);
    for (const [method, path, auth] of [
      ["GET", `/v2/users/${user.id}`, "dev-writer"],
      ["GET", "/v2/users", null],
      ["GET", "/v2/nothing", "dev-writer"],
      ["GET", "/nothing", "dev-writer"],
      ["GET", "/v1/openapi.json", null],
      ["GET", "/v2/docs", null],
      ["GET", "/v2/docs/", null],
    ] as const) {
      const res = await fetch(`${api.base}${path}`, { method, headers: auth ? { authorization: `Bearer ${auth}` } : {} });
      await res.arrayBuffer();
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${method} ${path} → ${res.status}`);
    }
  });

  test("on a 400 written straight to the connection", async () => {
    const res = await sendBytes(api, "GET /v2/users/\x01 HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.equal(res?.status, 400);
    assert.equal(res?.headers.get("x-content-type-options"), "nosniff");
  });
});
