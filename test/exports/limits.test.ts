// A principal has a bounded number of pending or running exports (issue 13.3): one more answers
// 429 RATE_LIMITED with Retry-After, as the OpenAPI document of POST /vN/exports says, and leaves
// no job behind; other principals are not affected; concurrent requests cannot all slip through.
// Runs on the store CANON_TEST_STORE names (memory by default).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { call, createOrder, createUser, documentOf, expectStatus, startApp, walk, type Api } from "../http/helpers.ts";
import { storeFromEnvironment } from "../store/stores.ts";
import { exportsFolder, principals, settled, slowOrders } from "./helpers.ts";

type Obj = Record<string, any>;

describe(`at most maxJobsPerPrincipal exports pending or running (${process.env.CANON_TEST_STORE ?? "memory"} store)`, () => {
  const factory = storeFromEnvironment();
  const folder = exportsFolder();
  let api: Api;

  before(async () => {
    const store = await factory.create();
    api = await startApp({
      store,
      authenticate: principals,
      // Every page of orders takes 100 ms: a job of 30 orders runs for about a second.
      services: { orders: slowOrders(store, 100) },
      exports: { directory: folder.directory, pageSize: 5, maxJobsPerPrincipal: 2, pgBoss: { pollingIntervalSeconds: 0.5 } },
    });
    const user = await createUser(api);
    for (let i = 0; i < 30; i++) await createOrder(api, user.id);
  });
  after(async () => {
    await api.close();
    await factory.cleanup();
    folder.remove();
  });

  test("POST /vN/exports documents 429 with Retry-After", () => {
    for (const version of ["v1", "v2"]) {
      const doc = documentOf(version);
      const responses = doc.paths[`/${version}/exports`].post.responses;
      assert.equal(responses["429"].$ref, "#/components/responses/TooManyRequests");
      assert.ok("Retry-After" in doc.components.responses.TooManyRequests.headers);
    }
  });

  test("a third job while two are pending or running: 429 with Retry-After, and no job; others may still export", async () => {
    const first = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    const second = (await expectStatus(api, "POST", "/v1/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    const refused = await expectStatus(api, "POST", "/v2/exports", 429, { body: { resource: "orders", format: "ndjson" }, auth: "alice" });
    assert.equal(refused.headers.get("retry-after"), "10");
    assert.equal((refused.body as Obj).error.code, "RATE_LIMITED");
    assert.match((refused.body as Obj).error.message, /2 exports pending or running/);
    const mine = ((await expectStatus(api, "GET", "/v2/exports", 200, { auth: "alice" })).body as Obj).data as Obj[];
    assert.deepEqual(mine.map((j) => j.id), [first.id], "the refused job was not kept");

    const bobs = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "bob" })).body as Obj;
    for (const [id, version, who] of [[first.id, "v2", "alice"], [second.id, "v1", "alice"], [bobs.id, "v2", "bob"]] as const) {
      assert.equal((await settled(api, version, id, who)).status, "succeeded");
    }
    // Finished jobs do not count.
    const again = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    await settled(api, "v2", again.id, "alice");
  });

  test("six requests at once: two jobs, four 429s", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => call(api, "POST", "/v2/exports", { body: { resource: "orders" } })));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 201, 429, 429, 429, 429]);
    const accepted = answers.filter((a) => a.status === 201).map((a) => (a.body as Obj).id as string).sort();
    const listed = await walk(api, "/v2/exports?limit=100");
    assert.deepEqual(listed.map((j) => j.id), accepted);
    for (const id of accepted) await settled(api, "v2", id);
  });
});
