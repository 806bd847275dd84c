// `canon serve` and its stores: the default is embedded PostgreSQL (PGlite) in `.canon-data`
// under the working directory, which keeps records across restarts; SIGTERM closes cleanly.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { canon, workspace } from "../support/cli.ts";
import { postProduct, serve, stop, writerHeaders as headers } from "./serve.ts";

describe("canon serve --store", () => {
  test("the default store is pglite:.canon-data: records survive a restart; SIGTERM closes cleanly", async () => {
    const dir = workspace("serve-default", "definitions");
    let instance = await serve(dir, []);
    assert.match(instance.output(), /store: pglite:\.canon-data/);
    const product = await postProduct(instance, "KEEP-1", "Kept");
    assert.equal(await stop(instance), 0);
    assert.match(instance.output(), /canon serve: closed/);
    assert.ok(existsSync(path.join(dir, ".canon-data")), "the data folder is under the working directory");

    instance = await serve(dir, []);
    try {
      const read = await fetch(`${instance.base}/v2/products/${product.id}`, { headers });
      assert.equal(read.status, 200);
      assert.deepEqual(await read.json(), product);
    } finally {
      assert.equal(await stop(instance), 0);
    }
  });

  test("--store memory keeps nothing across restarts", async () => {
    const dir = workspace("serve-memory", "definitions");
    const instance = await serve(dir, ["--store", "memory"]);
    try {
      assert.match(instance.output(), /store: memory/);
      const list = await fetch(`${instance.base}/v2/products`, { headers });
      assert.deepEqual(await list.json(), { data: [], pagination: { next_cursor: null, has_more: false } });
    } finally {
      assert.equal(await stop(instance), 0);
    }
    assert.ok(!existsSync(path.join(dir, ".canon-data")));
  });

  test("an unknown store is a usage error (exit 2); an unreachable server fails loudly (exit 1)", () => {
    const dir = workspace("serve-bad", "definitions");
    const unknown = canon(["serve", "--store", "mysql://x"], dir);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--store mysql:\/\/x: use memory, pglite:<dir>/);
    const unreachable = canon(["serve", "--port", "0", "--store", "postgres://postgres@127.0.0.1:1/none"], dir);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /error --store postgres:\/\/postgres@127\.0\.0\.1:1\/none: .*ECONNREFUSED/);
  });
});
