// Writes by id that race, over HTTP on the store CANON_TEST_STORE names: a PATCH, PUT or DELETE
// without If-Match whose record another request changed between its read and its write is read
// and checked again, and applies to the record as it is then (never 409: the client asked for no
// revision); with an If-Match that a concurrent write made stale, 409 and nothing changed. The
// SQL stores answered 409 to racing PATCHes without If-Match, the memory store 200.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { suiteFixture } from "../support/fixture.ts";
import { call, createOrder, createProduct, createUser, expectStatus, startApp } from "./helpers.ts";

type Obj = Record<string, any>;
const api = suiteFixture(() => startApp());
const STORE = process.env.CANON_TEST_STORE ?? "memory";

describe(`writes by id that race, ${STORE} store`, () => {
  test("racing PATCHes and PUTs without If-Match all apply, one after another; a DELETE among them goes", async () => {
    const product = await createProduct(api);
    const url = `/v2/products/${product.id}`;
    const names = Array.from({ length: 8 }, (_, i) => `racer ${i}`);
    const answers = await Promise.all(
      names.map((name, i) =>
        i % 2
          ? call(api, "PATCH", url, { body: { name } })
          : call(api, "PUT", url, {
              body: { sku: product.sku, name, price_cents: 100 + i, category: "tools" },
            }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      names.map(() => 200),
      JSON.stringify(answers.map((a) => a.body)),
    );
    const after = (await expectStatus(api, "GET", url, 200)).body as Obj;
    assert.ok(names.includes(after.name));
    // Each write made its own revision: the ETags answered are all different.
    assert.equal(new Set(answers.map((a) => a.headers.get("etag"))).size, names.length);
    const last = (await expectStatus(api, "GET", url, 200)).headers.get("etag");
    const [deleted, ...patched] = await Promise.all([
      call(api, "DELETE", url),
      ...names.slice(0, 3).map((name) => call(api, "PATCH", url, { body: { name } })),
    ]);
    assert.equal(deleted.status, 204);
    for (const p of patched)
      assert.ok([200, 404].includes(p.status), `${p.status} ${JSON.stringify(p.body)}`);
    await expectStatus(api, "GET", url, 404);
    assert.ok(last);
  });

  test("with If-Match, a write that another changed meanwhile answers 409 and changes nothing", async () => {
    const product = await createProduct(api);
    const url = `/v2/products/${product.id}`;
    const etag = (await expectStatus(api, "GET", url, 200)).headers.get("etag")!;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(api, "PATCH", url, { body: { name: `guarded ${i}` }, headers: { "if-match": etag } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses.filter((s) => s === 200).length, 1, JSON.stringify(statuses));
    assert.ok(
      statuses.every((s) => s === 200 || s === 409),
      JSON.stringify(statuses),
    );
    const after = (await expectStatus(api, "GET", url, 200)).body as Obj;
    assert.equal(after.name, answers.find((a) => a.status === 200)!.body.name);
  });

  test("racing actions that set the record (v3 payments: requires pending, sets paid): one 201, the others 422 on the record as it then is, none 409", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call(api, "POST", `/v3/orders/${order.id}/payments`, { body: { reference: `psp-${i}` } }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 422, 422, 422, 422, 422], JSON.stringify(answers.map((a) => a.body)));
    assert.equal(
      ((await expectStatus(api, "GET", `/v3/orders/${order.id}`, 200)).body as Obj).status,
      "paid",
    );
  });
});
