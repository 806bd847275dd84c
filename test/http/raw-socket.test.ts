// Answers written straight to the connection for requests Node's HTTP parser refuses: the
// envelope, a request id and, when the request line names a deprecated version, its headers,
// however the request's bytes were split into chunks.
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import { BASE_URL, SHOWCASE, SUNSET, checkBytesResponse, sendBytes, startApp } from "./helpers.ts";

const api = suiteFixture(() => startApp());

async function refused(pieces: string[]) {
  const res = await sendBytes(api, pieces);
  assert.ok(res, "answered");
  checkBytesResponse(SHOWCASE, pieces.join(""), res);
  assert.equal(res.status, 400);
  assert.equal((res.body as { error: { code: string } }).error.code, "VALIDATION_ERROR");
  return res;
}

function deprecation(res: { headers: Headers }) {
  return { deprecation: res.headers.get("deprecation"), sunset: res.headers.get("sunset"), link: res.headers.get("link") };
}

describe("raw 400s for what the HTTP parser refuses", () => {
  test("a malformed request target whose request line came in two chunks keeps v1's headers", async () => {
    const res = await refused(["GET /v1/ord", "ers/\x01 HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert.deepEqual(deprecation(res), { deprecation: "true", sunset: SUNSET, link: `<${BASE_URL}/v2/orders>; rel="successor-version"` });
  });

  test("a malformed header after the request line, in a later chunk, keeps v1's headers", async () => {
    const res = await refused(["GET /v1/users HTTP/1.1\r\nHost: x\r\n", "Bad Header\r\n\r\n"]);
    assert.deepEqual(deprecation(res), { deprecation: "true", sunset: SUNSET, link: `<${BASE_URL}/v2/users>; rel="successor-version"` });
  });

  test("headers over 64 KiB arriving in several chunks keep v1's headers", async () => {
    const big = "a".repeat(40_000);
    const res = await refused(["GET /v1/products HTTP/1.1\r\nHost: x\r\n", `X-Big: ${big}`, `${big}\r\n\r\n`]);
    assert.deepEqual(deprecation(res), { deprecation: "true", sunset: SUNSET, link: `<${BASE_URL}/v2/products>; rel="successor-version"` });
  });

  test("the same refusals in v2 carry no deprecation headers", async () => {
    const res = await refused(["GET /v2/ord", "ers/\x01 HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert.deepEqual(deprecation(res), { deprecation: null, sunset: null, link: null });
  });

  test("a request line in one chunk, as before", async () => {
    const res = await refused(["GET /v1/invoices/\x01 HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert.equal(res.headers.get("link"), `<${BASE_URL}/v2/invoices>; rel="successor-version"`);
  });

  test("a header whose value holds a control character is named: an Idempotency-Key as the service names a bad key (SPEC §12.7), any other by its name", async () => {
    const post = (header: string, pieces = 1) => {
      const body = '{"name":"Lamp"}';
      const head = `POST /v2/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-writer\r\nContent-Type: application/json\r\n`;
      const rest = `${header}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
      return pieces === 1 ? [head + rest] : [head, rest];
    };
    // Before: { field: "request", issue: "must be a valid HTTP request" } for each of these.
    for (const [header, pieces] of [
      ["Idempotency-Key: a\x7fb", 1],
      ["idempotency-key: a\x01b", 2],
      ["Idempotency-Key: a\rb", 1],
    ] as const) {
      const res = await refused(post(header, pieces));
      assert.deepEqual((res.body as any).error.details, [{ field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" }], JSON.stringify(header));
      assert.equal((res.body as any).error.message, "The Idempotency-Key header is not valid.");
    }
    const other = await refused(post("x-trace-note: a\x00b", 2));
    assert.deepEqual((other.body as any).error.details, [{ field: "X-Trace-Note", issue: "must hold no control character" }]);
    // What is not a header's value stays the request's.
    const line = await refused(["GET /v2/ord", "ers/\x01 HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert.deepEqual((line.body as any).error.details, [{ field: "request", issue: "must be a valid HTTP request" }]);
  });

  test("a malformed request pipelined behind one being answered is answered after it, with its own version's headers", async () => {
    const { port } = new URL(api.base);
    const text = await new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect(Number(port), "127.0.0.1", () =>
        socket.end("GET /v2/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-writer\r\n\r\nGET /v1/orders/\x01 HTTP/1.1\r\nHost: x\r\n\r\n"),
      );
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", reject);
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    });
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    assert.deepEqual(statuses, ["200", "400"], text.slice(0, 500));
    const second = text.slice(text.lastIndexOf("HTTP/1.1 400"));
    assert.match(second, /\r\nlink: <https:\/\/api\.example\.com\/v2\/orders>; rel="successor-version"\r\n/i);
  });
});
