// Export files on the memory store and PGlite live in a private folder (issue 13.3): created
// 0700 with files 0600; a service refuses to start on a folder that is a symbolic link, belongs
// to another user or is open to others, saying which and what to do; a symbolic link put in the
// place of a file is never followed. On a PostgreSQL server the files are in the database
// (docs/exports.md): no folder is made or used, so with CANON_TEST_STORE=postgres the tests of
// the folder's files run on PGlite, and one checks that PostgreSQL makes no folder.
import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { buildApp } from "../../generated/index.ts";
import { createUser, createOrder, expectError, expectStatus, startApp, type Api } from "../http/helpers.ts";
import { storeFromEnvironment } from "../store/stores.ts";
import { download, exportsFolder, principals, settled } from "./helpers.ts";

type Obj = Record<string, any>;

/** Builds and readies an app whose exports keep files in `directory`; the error it fails with, if any. */
async function startError(directory: string): Promise<Error | null> {
  const app = await buildApp({ authenticate: principals, rateLimit: false, exports: { directory } });
  try {
    await app.ready();
    return null;
  } catch (error) {
    return error as Error;
  } finally {
    await app.close().catch(() => {});
  }
}

const STORE = process.env.CANON_TEST_STORE ?? "memory";

/** An app over the test's store whose export files are in `directory`: PGlite's when the test's store is a PostgreSQL server (whose files are in the database). */
async function startFolderApp(directory: string): Promise<Api> {
  const factory = storeFromEnvironment(STORE === "postgres" ? "pglite" : STORE);
  const api = await startApp({ authenticate: principals, exports: { directory }, store: await factory.create() });
  return {
    ...api,
    close: async () => {
      await api.close();
      await factory.cleanup();
    },
  };
}

describe("the exports folder is private", () => {
  const root = exportsFolder();
  after(() => root.remove());

  test("a folder that does not exist is created 0700, and every file in it is 0600", async () => {
    const directory = path.join(root.directory, "new", "exports");
    const api = await startFolderApp(directory);
    try {
      assert.equal(statSync(directory).mode & 0o777, 0o700);
      const user = await createUser(api);
      await createOrder(api, user.id);
      const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
      const done = await settled(api, "v2", job.id, "alice");
      assert.equal(done.status, "succeeded");
      const files = readdirSync(directory);
      assert.equal(files.length, 1);
      assert.equal(statSync(path.join(directory, files[0]!)).mode & 0o777, 0o600);
    } finally {
      await api.close();
    }
  });

  test("a folder open to the group or to others is refused at start, naming its mode", async () => {
    for (const mode of [0o750, 0o705, 0o777]) {
      const directory = path.join(root.directory, `open-${mode.toString(8)}`);
      mkdirSync(directory);
      chmodSync(directory, mode);
      const error = await startError(directory);
      assert.ok(error, `mode ${mode.toString(8)} accepted`);
      assert.match(error.message, new RegExp(`exports folder .*open-${mode.toString(8)} is open to other users \\(mode 0${mode.toString(8)}\\): chmod 700`));
    }
  });

  test("a folder that is a symbolic link, even to a private folder, is refused at start", async () => {
    const real = path.join(root.directory, "real");
    mkdirSync(real, { mode: 0o700 });
    const link = path.join(root.directory, "link");
    symlinkSync(real, link);
    const error = await startError(link);
    assert.ok(error);
    assert.match(error.message, /exports folder .*link is a symbolic link/);
    assert.equal(await startError(real), null, "the real folder itself is fine");
  });

  test("a folder that belongs to another user is refused at start", async () => {
    // As root, a folder given to nobody; as anyone else, /usr (root's).
    let directory = "/usr";
    if (process.getuid?.() === 0) {
      directory = path.join(root.directory, "theirs");
      mkdirSync(directory, { mode: 0o700 });
      chownSync(directory, 65534, 65534);
    }
    const error = await startError(directory);
    assert.ok(error);
    assert.match(error.message, /exports folder .* belongs to user \d+, not to this process's user \d+/);
  });

  test("a symbolic link put in the place of a finished file is not followed: the link answers 404", async () => {
    const directory = path.join(root.directory, "planted");
    const api = await startFolderApp(directory);
    try {
      const user = await createUser(api);
      await createOrder(api, user.id);
      const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
      const done = await settled(api, "v2", job.id, "alice");
      await download(api, done.download_url, "alice");
      const [name] = readdirSync(directory);
      const secret = path.join(root.directory, "secret.txt");
      writeFileSync(secret, "not an export\n");
      unlinkSync(path.join(directory, name!));
      symlinkSync(secret, path.join(directory, name!));
      const error = await expectError(api, "GET", done.download_url, 404, "NOT_FOUND", { auth: "alice" });
      assert.match(error.message, /no longer kept/);
    } finally {
      await api.close();
    }
  });

  test("on a PostgreSQL server no folder is made: the files are in the database", { skip: STORE !== "postgres" && "CANON_TEST_STORE=postgres only" }, async () => {
    const directory = path.join(root.directory, "unused");
    const api = await startApp({ authenticate: principals, exports: { directory } });
    try {
      const user = await createUser(api);
      await createOrder(api, user.id);
      const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
      const done = await settled(api, "v2", job.id, "alice");
      assert.equal(done.status, "succeeded");
      await download(api, done.download_url, "alice");
      assert.throws(() => statSync(directory), { code: "ENOENT" });
    } finally {
      await api.close();
    }
  });
});
