// The export cap holds across instances (issue 30, point 5): concurrent POST /v2/exports of one
// principal through two instances over the same PostgreSQL schema (two SqlStores, two pools,
// as two processes would have) never keep more jobs pending or running than the cap. The count
// and the insert run in one transaction holding an advisory lock of the principal
// (SqlStore.exclusive, exports-limits.ts); checking after an autocommitted insert let 4 and 5
// jobs through in the cluster review.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Store } from "../../generated/runtime/store.ts";
import { openStore } from "../../generated/sql/index.ts";
import { call, createOrder, createUser, startApp, type Api } from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { exportsFolder, principals, slowOrders } from "./helpers.ts";

const CAP = 3;

describe("the export cap across two instances over one PostgreSQL schema", () => {
  const schema = freshSchema();
  const folder = exportsFolder();
  const stores: Store[] = [];
  const apis: Api[] = [];

  before(async () => {
    await preparePostgres();
    for (let i = 0; i < 2; i++) {
      const store = await openStore(POSTGRES_URL, { schema });
      stores.push(store);
      apis.push(
        await startApp({
          store,
          // `Bearer p1`, `Bearer p2`, …: a principal each, who may write; the usual ones besides.
          authenticate: (request) => {
            const token = /^Bearer (p\d+)$/.exec(request.headers.authorization ?? "")?.[1];
            return token ? { id: token, scopes: ["read", "write"] } : principals(request);
          },
          expensiveReads: false,
          // Every page of orders takes 2 s: the jobs are still pending or running when the requests end.
          services: { orders: slowOrders(store, 2000) },
          exports: { directory: folder.directory, pageSize: 5, maxJobsPerPrincipal: CAP, pgBoss: { pollingIntervalSeconds: 0.5 } },
        }),
      );
    }
    const user = await createUser(apis[0]!);
    for (let i = 0; i < 12; i++) await createOrder(apis[0]!, user.id);
  });
  after(async () => {
    for (const api of apis) await api.close();
    for (const store of stores) await store.close();
    await dropSchemas([schema]);
    folder.remove();
  });

  test(`rounds of 24 concurrent requests of one principal, alternating instances: never more than ${CAP} jobs`, async () => {
    for (let round = 1; round <= 8; round++) {
      const who = `p${round}`;
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) => call(apis[i % 2]!, "POST", "/v2/exports", { body: { resource: "orders" }, auth: who })),
      );
      const statuses = answers.map((a) => a.status);
      const created = statuses.filter((s) => s === 201).length;
      assert.ok(statuses.every((s) => s === 201 || s === 429), statuses.join(","));
      const jobs = await stores[0]!.list("canon/exports", { where: { owner: who }, limit: 100 });
      const active = jobs.records.filter((j) => j.values.status === "pending" || j.values.status === "running");
      console.log(`round ${round}: ${created} created, ${active.length} pending or running, ${statuses.length - created} answered 429`);
      assert.equal(created, CAP, `exactly ${CAP} of 24 created`);
      assert.equal(active.length, CAP);
      assert.equal(jobs.records.length, CAP, "no refused job is left behind");
    }
  });
});
