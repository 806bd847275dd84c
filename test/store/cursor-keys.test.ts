// Cursor keys kept in the store (runtime/cursor-keys.ts): the first instance makes the key,
// every instance over one database and every restart uses it, with no setting; a rotation keeps
// the previous key verifying for the grace period; CANON_CURSOR_SECRET overrides the store's
// keys and must be long enough.
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import {
  CURSOR_KEY_GRACE_MS,
  storeCursorCodec,
  verifyingSecrets,
} from "../../generated/runtime/cursor-keys.ts";
import { createCursorCodec } from "../../generated/runtime/cursor.ts";
import { SqlStore } from "../../generated/runtime/sql-store.ts";
import { openStore } from "../../generated/sql/index.ts";
import { createProduct, expectStatus, listen, SHOWCASE } from "../http/helpers.ts";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

const scope = "v2/products";

describe("cursor keys", () => {
  test("a rotated-out key verifies until its successor is older than the grace period", () => {
    const now = Date.parse("2026-07-02T12:00:00.000Z");
    const at = (msAgo: number) => new Date(now - msAgo).toISOString();
    const hour = 3_600_000;
    assert.deepEqual(verifyingSecrets([{ secret: "new", created_at: at(hour) }, { secret: "old", created_at: at(100 * hour) }], now), ["new", "old"]);
    assert.deepEqual(
      verifyingSecrets([{ secret: "new", created_at: at(CURSOR_KEY_GRACE_MS + 1) }, { secret: "old", created_at: at(100 * hour) }], now),
      ["new"],
    );
    assert.deepEqual(
      verifyingSecrets(
        [
          { secret: "c", created_at: at(hour) },
          { secret: "b", created_at: at(2 * hour) },
          { secret: "a", created_at: at(100 * hour) },
        ],
        now,
      ),
      ["c", "b", "a"],
    );
  });

  test("on PostgreSQL: instances starting at once make one key; each accepts the others' cursors; a rotation keeps old cursors for the grace period", async () => {
    await preparePostgres();
    const schema = freshSchema();
    const stores = await Promise.all([0, 1, 2].map(() => openStore(POSTGRES_URL, { schema })));
    try {
      const keys = await Promise.all(stores.map((s) => s.cursorKeys()));
      assert.equal(keys[0]!.length, 1, "one key");
      assert.deepEqual(keys[1], keys[0]);
      assert.deepEqual(keys[2], keys[0]);
      const [a, b] = await Promise.all([storeCursorCodec(stores[0]!), storeCursorCodec(stores[1]!)]);
      const old = a!.encode(scope, "after-1");
      assert.equal(b!.decode(scope, old), "after-1");

      await stores[2]!.rotateCursorKey();
      await Promise.all([a!.refresh(), b!.refresh()]);
      const fresh = a!.encode(scope, "after-2");
      assert.notEqual(fresh.split(".")[1], old.split(".")[1], "the new key signs");
      assert.equal(b!.decode(scope, fresh), "after-2");
      assert.equal(b!.decode(scope, old), "after-1", "the previous key still verifies");
      assert.equal(createCursorCodec((await stores[0]!.cursorKeys())[1]!.secret).decode(scope, fresh), null);

      // The grace period ends once the rotation is older than it.
      const driver = (stores[0] as SqlStore).driver;
      await driver.query(`update canon__cursor_keys set created_at = now() - interval '25 hours' where generation = 2`);
      await b!.refresh();
      assert.equal(b!.decode(scope, old), null, "past the grace period, a cursor of the old key answers 400");
      assert.equal(b!.decode(scope, fresh), "after-2");
      a!.close();
      b!.close();
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await dropSchemas([schema]);
    }
  });

  test("over HTTP, two apps on one database with no secret accept each other's cursors, also after a restart", async () => {
    await preparePostgres();
    const schema = freshSchema();
    const start = async () =>
      listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, store: await openStore(POSTGRES_URL, { schema }) }), SHOWCASE);
    let one = await start();
    const two = await start();
    try {
      for (let i = 0; i < 3; i++) await createProduct(one);
      const first = (await expectStatus(one, "GET", "/v2/products?limit=1", 200)).body;
      const cursor = encodeURIComponent(first.pagination.next_cursor);
      const next = (await expectStatus(two, "GET", `/v2/products?limit=1&cursor=${cursor}`, 200)).body;
      assert.ok(next.data[0].id > first.data[0].id);
      await one.close();
      one = await start();
      assert.deepEqual((await expectStatus(one, "GET", `/v2/products?limit=1&cursor=${cursor}`, 200)).body, next);
    } finally {
      await one.close();
      await two.close();
      await dropSchemas([schema]);
    }
  });

  test("a PGlite folder keeps its key across restarts", async () => {
    const dir = path.join(workspace("cursor-keys-pglite"), "data");
    let store = await openStore(`pglite:${dir}`);
    let codec = await storeCursorCodec(store);
    const cursor = codec.encode(scope, "x");
    codec.close();
    await store.close();
    store = await openStore(`pglite:${dir}`);
    codec = await storeCursorCodec(store);
    try {
      assert.equal(codec.decode(scope, cursor), "x");
    } finally {
      codec.close();
      await store.close();
    }
  });

  test("the memory store keeps one key per process, rotated like the others", async () => {
    const store = await openStore("memory");
    const codec = await storeCursorCodec(store);
    const old = codec.encode(scope, "x");
    await store.rotateCursorKey();
    await codec.refresh();
    assert.equal(codec.decode(scope, old), "x");
    assert.notEqual(codec.encode(scope, "x"), old);
    codec.close();
  });

  test("a secret overrides the store's keys and must be at least 32 bytes: buildApp throws, canon serve refuses with one line", async () => {
    await assert.rejects(
      buildApp({ authenticate: devAuthenticate, cursorSecret: "too short" }),
      /cursorSecret must be at least 32 bytes \(it has 9\)/,
    );
    const secret = "s".repeat(32);
    const app = await buildApp({ authenticate: devAuthenticate, cursorSecret: secret });
    await app.close();
    const dir = workspace("cursor-secret", "definitions");
    const run = canon(["serve", "--port", "0", "--store", "memory"], dir, { CANON_CURSOR_SECRET: "short" });
    assert.equal(run.code, 2);
    assert.deepEqual(run.stderr.trim().split("\n"), [
      "error CANON_CURSOR_SECRET must be at least 32 bytes (it has 5): use a random value such as `openssl rand -hex 32`, or leave it unset to use the store's key",
    ]);
  });
});
