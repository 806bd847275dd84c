// A deprecated version's Link header names the successor's resource only when the successor
// serves it (its routes' first path segments), else the successor itself: no character of the
// request's path is ever copied into the header (issue 30.5).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import { MemoryStore } from "../../generated/runtime/memory-store.ts";

const BASE = "https://api.example.com";
let app: Awaited<ReturnType<typeof buildApp>>;
before(async () => {
  app = await buildApp({ authenticate: devAuthenticate, rateLimit: false, store: new MemoryStore() });
});
after(() => app.close());

const link = async (url: string) =>
  (await app.inject({ method: "GET", url, headers: { authorization: "Bearer dev-reader" } })).headers.link;

test("known resources keep their name; anything else links to the successor itself", async () => {
  assert.equal(await link("/v1/orders"), `<${BASE}/v2/orders>; rel="successor-version"`);
  assert.equal(await link("/v1/products/0190a1b2-0000-7000-8000-000000000000"), `<${BASE}/v2/products>; rel="successor-version"`);
  assert.equal(await link("/v1/openapi.json"), `<${BASE}/v2/openapi.json>; rel="successor-version"`);
  assert.equal(await link("/v1/events"), `<${BASE}/v2/events>; rel="successor-version"`);
  for (const url of ["/v1/nothing", "/v1/a>;rel=x", "/v1/%3E%0D%0Aset-cookie:x", "/v1/ord%65rs2", "/v1", "/v1/"])
    assert.equal(await link(url), `<${BASE}/v2>; rel="successor-version"`, url);
});
