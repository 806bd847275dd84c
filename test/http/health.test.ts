// Health and readiness (issue 30): `/vN/health` and `/vN/ready` in every version, without
// credentials and outside the rate limit, documented in each version's OpenAPI (every answer
// here is checked against it by `call`); `/health` without a version stays 404 (SPEC §5).
import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryStore } from "../../generated/index.ts";
import { storeReferences } from "../../generated/services.ts";
import { assertErrorEnvelope, call, documentOf, expectStatus, SHOWCASE, withApp } from "./helpers.ts";

const VERSIONS = [...SHOWCASE.documents.keys()];

test("every version answers /vN/health and /vN/ready without credentials, and documents them", async () => {
  await withApp({}, async (api) => {
    for (const version of VERSIONS) {
      const health = await expectStatus(api, "GET", `/${version}/health`, 200, { auth: null });
      assert.deepEqual(health.body, { status: "ok" });
      const ready = await expectStatus(api, "GET", `/${version}/ready`, 200, { auth: null });
      assert.deepEqual(ready.body, { status: "ready" });
      const doc = documentOf(version);
      for (const path of [`/${version}/health`, `/${version}/ready`]) {
        assert.deepEqual(doc.paths[path].get.security, [], `${path} needs no credentials`);
      }
      assert.ok(doc.paths[`/${version}/ready`].get.responses["503"], "503 is documented");
    }
    await expectStatus(api, "GET", "/health", 404, { auth: null });
    await expectStatus(api, "GET", "/ready", 404, { auth: null });
  });
});

test("health and readiness are not rate-limited", async () => {
  await withApp({ rateLimit: { max: 1, windowMs: 60_000 } }, async (api) => {
    for (let i = 0; i < 5; i++) {
      await expectStatus(api, "GET", "/v2/health", 200, { auth: null });
      await expectStatus(api, "GET", "/v2/ready", 200, { auth: null });
    }
    // The limit itself still holds on an operation.
    await expectStatus(api, "GET", "/v2/users", 200);
    await expectStatus(api, "GET", "/v2/users", 429);
  });
});

test("a store that fails or does not answer: /vN/ready is 503 with Retry-After, /vN/health stays 200", async () => {
  for (const query of [() => Promise.reject(new Error("connection refused")), () => new Promise<never>(() => {})]) {
    const store = Object.assign(new MemoryStore({ references: storeReferences }), { driver: { query } });
    await withApp({ store }, async (api) => {
      const started = Date.now();
      const res = await call(api, "GET", "/v2/ready", { auth: null });
      assert.equal(res.status, 503, res.text);
      assertErrorEnvelope(res.body, "SERVICE_UNAVAILABLE");
      assert.ok(Number(res.headers.get("retry-after")) >= 1);
      assert.ok(Date.now() - started < 3500, "answered within the probe's timeout");
      await expectStatus(api, "GET", "/v2/health", 200, { auth: null });
    });
  }
});
