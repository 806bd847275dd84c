// CORS (buildApp({ cors }) and `canon serve --cors`): off by default; a named origin may call every
// operation with the client's headers and read the headers the client reads; any other request
// (no Origin, another origin) is answered exactly as without CORS, 404 for OPTIONS included.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { canon, workspace } from "../support/cli.ts";
import { suiteFixture } from "../support/fixture.ts";
import { serve, stop } from "../store/serve.ts";
import { startShowcase, UUID_V7, type Service } from "./helpers.ts";

const PAGE = "http://127.0.0.1:5173";
const OTHER = "http://127.0.0.1:9999";

const preflight = (service: Service, url: string, origin: string | null, method = "PATCH") =>
  fetch(service.base + url, {
    method: "OPTIONS",
    headers: {
      ...(origin ? { origin } : {}),
      "access-control-request-method": method,
      "access-control-request-headers": "authorization,content-type,if-match,x-request-id",
    },
  });

async function assertNoOperation(response: Response): Promise<void> {
  assert.equal(response.status, 404);
  assert.deepEqual(await response.json(), { error: { code: "NOT_FOUND", message: "No operation answers this method and path." } });
  assert.match(response.headers.get("x-request-id") ?? "", UUID_V7);
  assert.equal(response.headers.get("access-control-allow-origin"), null);
}

describe("CORS is off by default", () => {
  const service = suiteFixture(() => startShowcase());

  test("no CORS header on any answer; a preflight is a path without an operation", async () => {
    const response = await fetch(`${service.base}/v2/products`, { headers: { origin: PAGE, authorization: "Bearer dev-reader" } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("access-control-allow-origin"), null);
    await assertNoOperation(await preflight(service, "/v2/products", PAGE));
  });
});

describe("CORS for named origins", () => {
  const service = suiteFixture(() => startShowcase({ cors: { origins: [PAGE] } }));

  test("a preflight of a named origin allows the client's methods and headers", async () => {
    for (const method of ["GET", "POST", "PATCH", "PUT", "DELETE"]) {
      const response = await preflight(service, "/v2/products/01a1a1a1-0000-7000-8000-000000000001", PAGE, method);
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
      assert.ok(response.headers.get("access-control-allow-methods")!.split(/,\s*/).includes(method));
      const allowed = response.headers.get("access-control-allow-headers")!.toLowerCase().split(/,\s*/);
      for (const header of ["authorization", "content-type", "if-match", "x-request-id"]) assert.ok(allowed.includes(header), header);
      assert.equal(response.headers.get("access-control-max-age"), "600");
      assert.equal(response.headers.get("access-control-allow-credentials"), null, "no credentials unless asked");
      assert.match(response.headers.get("vary") ?? "", /Origin/i);
      assert.match(response.headers.get("x-request-id") ?? "", UUID_V7, "a preflight has a request id too");
    }
    // A deprecated version's preflight carries its deprecation headers, as every answer does.
    assert.equal((await preflight(service, "/v1/orders", PAGE, "GET")).headers.get("deprecation"), "true");
  });

  test("answers to a named origin, errors included, expose the headers the client reads", async () => {
    const ok = await fetch(`${service.base}/v2/products`, { headers: { origin: PAGE, authorization: "Bearer dev-writer" } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("access-control-allow-origin"), PAGE);
    const exposed = ok.headers.get("access-control-expose-headers")!.toLowerCase().split(/,\s*/);
    for (const header of ["etag", "location", "x-request-id", "retry-after", "deprecation", "sunset", "link"]) assert.ok(exposed.includes(header), header);
    for (const [url, auth, status] of [["/v2/products", "nobody", 401], ["/v2/products/01a1a1a1-0000-7000-8000-000000000001", "dev-reader", 404], ["/health", "dev-reader", 404]] as const) {
      const response = await fetch(service.base + url, { headers: { origin: PAGE, authorization: `Bearer ${auth}` } });
      assert.equal(response.status, status);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE, `${url} ${status}`);
    }
  });

  test("without Origin, or from another origin, every answer is as without CORS", async () => {
    for (const url of ["/v2/products", "/health", "/openapi.json", "/v2/nothing"]) {
      await assertNoOperation(await preflight(service, url, null));
      await assertNoOperation(await preflight(service, url, OTHER));
      const plain = await fetch(service.base + url, { method: "OPTIONS" });
      await assertNoOperation(plain);
    }
    await assertNoOperation(await fetch(`${service.base}/health`));
    const other = await fetch(`${service.base}/v2/products`, { headers: { origin: OTHER, authorization: "Bearer dev-reader" } });
    assert.equal(other.status, 200);
    assert.equal(other.headers.get("access-control-allow-origin"), null);
  });
});

describe("CORS options", () => {
  test("credentials: the origin itself, never *, and Allow-Credentials", async () => {
    const service = await startShowcase({ cors: { origins: [PAGE], credentials: true, allowedHeaders: ["X-Tenant"] } });
    try {
      const response = await fetch(`${service.base}/v2/products`, {
        method: "OPTIONS",
        headers: { origin: PAGE, "access-control-request-method": "GET", "access-control-request-headers": "x-tenant" },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), PAGE);
      assert.equal(response.headers.get("access-control-allow-credentials"), "true");
      assert.match(response.headers.get("access-control-allow-headers") ?? "", /X-Tenant/);
    } finally {
      await service.close();
    }
  });

  test("* and anything that is not an origin are refused, saying what to write", async () => {
    for (const origin of ["*", "https://app.example.com/path", "app.example.com", "ftp://files.example.com"]) {
      await assert.rejects(startShowcase({ cors: { origins: [origin] } }), /name each origin as a browser sends it/);
    }
  });
});

describe("canon serve --cors", () => {
  test("serves CORS for the named origins; a bad origin is a usage error", async () => {
    const dir = workspace("client-serve-cors", "definitions");
    const refused = canon(["serve", "--cors", "*", "--store", "memory"], dir);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--cors: CORS origin "\*": name each origin/);
    const instance = await serve(dir, ["--store", "memory", "--cors", PAGE, "--cors", "https://app.example.com"]);
    try {
      assert.match(instance.output(), /CORS for http:\/\/127\.0\.0\.1:5173, https:\/\/app\.example\.com/);
      const service = { base: instance.base } as Service;
      const response = await preflight(service, "/v2/orders", "https://app.example.com", "POST");
      assert.equal(response.status, 204);
      assert.equal(response.headers.get("access-control-allow-origin"), "https://app.example.com");
      await assertNoOperation(await preflight(service, "/v2/orders", OTHER, "POST"));
    } finally {
      await stop(instance);
    }
  });
});
