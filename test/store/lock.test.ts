// One PGlite folder, one process (SPEC §10): a second `canon serve` on a folder another one has
// open exits non-zero at start with one line naming the process, having written nothing; the
// lock of a process that died is taken over. In one process, a second openStore is refused too.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { FolderInUseError } from "../../generated/runtime/folder-lock.ts";
import { openStore } from "../../generated/sql/index.ts";
import { canon, workspace } from "../support/cli.ts";
import { postProduct, serve, stop, writerHeaders as headers } from "./serve.ts";

/** Every file under `dir` with its size and modification time. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .sort()
    .map((name) => {
      const stat = statSync(path.join(dir, name));
      return `${name} ${stat.isDirectory() ? "dir" : stat.size} ${stat.mtimeMs}`;
    });
}

describe("a PGlite folder is opened by one process at a time", () => {
  test("a second canon serve on the folder exits 1 with one line naming the holder's pid, and writes nothing", async () => {
    const dir = workspace("lock-two", "definitions");
    const first = await serve(dir, ["--store", "pglite:data"]);
    try {
      await postProduct(first, "LOCK-1", "Locked");
      const pid = Number(readFileSync(path.join(dir, "data", "canon.lock"), "utf8"));
      assert.equal(pid, first.process.pid, "the lock names the first process");
      const before = { data: listing(path.join(dir, "data")), generated: listing(path.join(dir, "generated")) };

      const second = canon(["serve", "--port", "0", "--store", "pglite:data"], dir);
      assert.notEqual(second.code, 0);
      const lines = second.stderr.trim().split("\n");
      assert.equal(lines.length, 1, second.stderr);
      assert.match(lines[0]!, new RegExp(`^error --store pglite:data: .*data is open in process ${pid}: one process at a time`));
      assert.equal(second.stdout, "", "nothing generated, nothing served");
      assert.deepEqual({ data: listing(path.join(dir, "data")), generated: listing(path.join(dir, "generated")) }, before);

      // The first one still answers.
      assert.equal((await fetch(`${first.base}/v2/products`, { headers })).status, 200);
    } finally {
      assert.equal(await stop(first), 0);
    }
  });

  test("the lock of a killed process is taken over; the data it committed is there", async () => {
    const dir = workspace("lock-stale", "definitions");
    const first = await serve(dir, ["--store", "pglite:data"]);
    const product = await postProduct(first, "STALE-1", "Kept");
    await new Promise<void>((resolve) => {
      first.process.once("exit", () => resolve());
      first.process.kill("SIGKILL");
    });
    assert.equal(Number(readFileSync(path.join(dir, "data", "canon.lock"), "utf8")), first.process.pid, "the dead process's lock is left behind");

    const second = await serve(dir, ["--store", "pglite:data"]);
    try {
      assert.equal(Number(readFileSync(path.join(dir, "data", "canon.lock"), "utf8")), second.process.pid);
      const read = await fetch(`${second.base}/v2/products/${product.id}`, { headers });
      assert.equal(read.status, 200);
    } finally {
      assert.equal(await stop(second), 0);
    }
  });

  test("in one process, a second openStore on an open folder is refused; after close it opens", async () => {
    const dir = path.join(workspace("lock-in-process"), "data");
    const store = await openStore(`pglite:${dir}`);
    try {
      await assert.rejects(openStore(`pglite:${dir}`), (error: unknown) => error instanceof FolderInUseError && error.pid === process.pid);
    } finally {
      await store.close();
    }
    const again = await openStore(`pglite:${dir}`);
    await again.close();
  });
});
