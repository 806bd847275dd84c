// SPEC §12.7: a 2xx answer is replayed "on any instance and after restarts" — also when the
// instance that made it died (SIGKILL) between its write's commit and keeping its answer (on SQL
// the answer is kept a moment after it is sent). A real kill: `canon serve` on PostgreSQL as a
// child process, with its answers kept 10 minutes late (CANON_TEST_IDEMPOTENCY_KEEP_DELAY_MS),
// killed once its answers have arrived; another process over the same schema then gets the
// repeats. The created record answers them, replayed; a record deleted since answers 409.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { workspace } from "../support/cli.ts";
import { call, expect, feed } from "../cluster/client.ts";
import { serve, stop, type Instance } from "./serve.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Obj = Record<string, any>;

describe("an idempotent POST whose instance was killed before its answer was kept (PostgreSQL)", { timeout: 600_000 }, () => {
  let dir = "";
  let schema = "";
  let store = "";
  const started: Instance[] = [];
  const start = async (env: NodeJS.ProcessEnv = {}) => {
    const instance = await serve(dir, ["--host", "127.0.0.1", "--store", store], env);
    started.push(instance);
    return instance;
  };
  const kill = (instance: Instance) =>
    new Promise<void>((resolve) => {
      instance.process.removeAllListeners("exit");
      instance.process.once("exit", () => resolve());
      instance.process.kill("SIGKILL");
    });

  before(async () => {
    await preparePostgres();
    dir = workspace("idempotency-crash", "definitions");
    schema = freshSchema("canon_idem_crash");
    store = `${POSTGRES_URL}?schema=${schema}`;
  });
  after(async () => {
    for (const instance of started) if (instance.process.exitCode === null && instance.process.signalCode === null) await stop(instance);
    if (schema) await dropSchemas([schema]);
  });

  test("the repeat on a new instance replays the record created: same id, one record, one event; a deleted record answers 409", async () => {
    const first = await start({ CANON_TEST_IDEMPOTENCY_KEEP_DELAY_MS: "600000" });
    const tag = schema.slice(-8).toUpperCase();
    const kept = { sku: `CRASH-${tag}-1`, name: "Kept through a crash", price_cents: 1234 };
    const gone = { sku: `CRASH-${tag}-2`, name: "Deleted since", price_cents: 99 };
    const keyKept = `crash-${schema}-1`;
    const keyGone = `crash-${schema}-2`;
    const created = await expect(201, first.base, "POST", "/v2/products", kept, { "idempotency-key": keyKept });
    const createdGone = await expect(201, first.base, "POST", "/v2/products", gone, { "idempotency-key": keyGone });
    await kill(first);

    const second = await start();
    // The first answer was never kept: the repeat rebuilds it from the record, marked a replay.
    const again = await expect(201, second.base, "POST", "/v2/products", kept, { "idempotency-key": keyKept });
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(again.body, created.body);
    assert.equal(again.headers.get("location"), created.headers.get("location"));
    assert.equal(again.headers.get("etag"), created.headers.get("etag"));
    // Now kept: a third time is the kept answer, byte for byte.
    const third = await expect(201, second.base, "POST", "/v2/products", kept, { "idempotency-key": keyKept });
    assert.equal(third.headers.get("idempotent-replayed"), "true");
    assert.equal(third.text, again.text);
    // Another body under the key is still refused.
    const other = await call(second.base, "POST", "/v2/products", { ...kept, name: "Other" }, { "idempotency-key": keyKept });
    assert.equal(other.status, 422, other.text);
    assert.equal(other.body!.error.details[0].field, "Idempotency-Key");

    const listed = await expect(200, second.base, "GET", `/v2/products?limit=100`);
    assert.equal(listed.body!.data.filter((p: Obj) => p.sku === kept.sku).length, 1, "one record");
    const events = (await feed(second.base)).filter((e) => e.type === "product.created" && e.data.id === created.body!.id);
    assert.equal(events.length, 1, "one event");

    // The record created under the second key is deleted before its repeat: nothing to answer with.
    await expect(204, second.base, "DELETE", `/v2/products/${createdGone.body!.id}`);
    const late = await call(second.base, "POST", "/v2/products", gone, { "idempotency-key": keyGone });
    assert.equal(late.status, 409, late.text);
    assert.equal(late.body!.error.details[0].field, "Idempotency-Key");
    assert.match(late.body!.error.message, /deleted since/);
    const relisted = await expect(200, second.base, "GET", `/v2/products?limit=100`);
    assert.equal(relisted.body!.data.filter((p: Obj) => p.sku === gone.sku).length, 0, "not created again");
    assert.equal(await stop(second), 0);
  });
});
