// Export jobs outlive what happens to the process that runs them. PGlite: a job interrupted by a
// stopping service, or left running by a killed one, runs again when the service starts. A
// PostgreSQL server: jobs go through pg-boss, two instances split them, and a job whose instance
// was killed (SIGKILL) is run again by the other once its heartbeat has stopped. Every file holds
// each record once: it equals a cursor walk of the same list, and one attempt's file is kept (in
// the folder on PGlite, as chunks in the database on a PostgreSQL server).
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { buildApp } from "../../generated/index.ts";
import type { Store } from "../../generated/runtime/store.ts";
import { openStore } from "../../generated/sql/index.ts";
import { createOrder, createUser, expectStatus, listen, SHOWCASE, walk, type Api } from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { download, exportsFolder, ndjson, principals, settled, slowOrders } from "./helpers.ts";

type Obj = Record<string, any>;
const instanceScript = fileURLToPath(new URL("./instance.ts", import.meta.url));
const FAST_PGBOSS = { heartbeatSeconds: 10, superviseIntervalSeconds: 1, pollingIntervalSeconds: 0.5 };

/** The showcase on `store`, with an orders list `delay` ms slow per page and exports in `directory`. */
async function instance(store: Store, directory: string, delay: number, onList?: () => void): Promise<Api> {
  const app = await buildApp({
    authenticate: principals,
    store,
    rateLimit: false,
    services: { orders: slowOrders(store, delay, onList) },
    exports: { directory, pageSize: 5, maxJobsPerPrincipal: 10, pgBoss: FAST_PGBOSS },
  });
  return listen(app, SHOWCASE);
}

/** `test/exports/instance.ts` as a process of its own; resolves once it listens. */
async function child(target: string, directory: string, schema?: string): Promise<{ api: Api; process: ChildProcess }> {
  const proc = spawn(process.execPath, [instanceScript, target, directory, ...(schema ? [schema] : [])], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, PAGE_DELAY_MS: "150" },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    proc.once("exit", (code) => reject(new Error(`the instance exited (${code}) before listening`)));
  });
  return { api: { app: null as never, base: `http://127.0.0.1:${port}`, contract: SHOWCASE, close: async () => {} }, process: proc };
}

async function seedOrders(api: Api, count: number): Promise<void> {
  const user = await createUser(api);
  for (let i = 0; i < count; i++) await createOrder(api, user.id, "v2", i % 3 ? {} : { note: `note ${i}` });
}

async function untilRunning(api: Api, id: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const job = (await expectStatus(api, "GET", `/v2/exports/${id}`, 200, { auth: "alice" })).body as Obj;
    if (job.status === "running") return;
    assert.equal(job.status, "pending", JSON.stringify(job));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.fail("the job did not start");
}

async function kill(proc: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  await exited;
}

/** Seeds `count` orders and starts an export of them as alice; the job as created, once it runs. */
async function runningExport(api: Api, count: number): Promise<Obj> {
  await seedOrders(api, count);
  const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
  await untilRunning(api, job.id);
  return job;
}

/** An export of 20 orders started by a child process serving `target`, killed while the job runs. */
async function exportOfKilledChild(target: string, directory: string, schema?: string): Promise<Obj> {
  const first = await child(target, directory, schema);
  try {
    return await runningExport(first.api, 20);
  } finally {
    await kill(first.process);
  }
}

/** The finished files of a job in a folder (PGlite). */
function inFolder(directory: string): (id: string) => Promise<string[]> {
  return async (id) => readdirSync(directory).filter((n) => n.startsWith(`${id}.`) && !n.endsWith(".part"));
}

/** The attempts whose chunks of a job are in the database (a PostgreSQL server). */
function inDatabase(schema: string): (id: string) => Promise<string[]> {
  return async (id) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const { rows } = await client.query(`select distinct "attempt" from "${schema}"."canon__export_chunks" where "job_id" = $1`, [id]);
      return rows.map((r) => String(r.attempt));
    } finally {
      await client.end();
    }
  };
}

/** The file of a succeeded job equals a walk of the list; one attempt's file of it is kept. */
async function assertExported(api: Api, job: Obj, kept: (id: string) => Promise<string[]>, url = "/v2/orders?limit=100"): Promise<void> {
  assert.equal(job.status, "succeeded", JSON.stringify(job));
  const records = ndjson((await download(api, job.download_url, "alice")).text);
  const listed = await walk(api, url);
  assert.deepEqual(records, listed);
  assert.equal(job.record_count, listed.length);
  const files = await kept(job.id);
  assert.equal(files.length, 1, files.join(", "));
}

describe("PGlite: jobs run in the process and survive it", () => {
  const folder = exportsFolder();
  after(() => folder.remove());

  test("a job interrupted by a stopping service goes back to pending and runs when the service starts again", async () => {
    const data = path.join(folder.directory, "db-stop");
    let api = await instance(await openStore(`pglite:${data}`), folder.directory, 60);
    const job = await runningExport(api, 30);
    await api.close();

    api = await instance(await openStore(`pglite:${data}`), folder.directory, 0);
    try {
      const done = await settled(api, "v2", job.id, "alice");
      await assertExported(api, done, inFolder(folder.directory));
      assert.ok(done.started_at > job.created_at);
    } finally {
      await api.close();
    }
  });

  test("a job left running by a killed process runs again when the service starts", async () => {
    const data = path.join(folder.directory, "db-kill");
    const job = await exportOfKilledChild(`pglite:${data}`, folder.directory);
    const api = await instance(await openStore(`pglite:${data}`), folder.directory, 0);
    try {
      const done = await settled(api, "v2", job.id, "alice");
      await assertExported(api, done, inFolder(folder.directory));
    } finally {
      await api.close();
    }
  });
});

describe("PostgreSQL: jobs go through pg-boss, shared by every instance", () => {
  const folder = exportsFolder();
  const schemas: string[] = [];
  after(async () => {
    folder.remove();
    await dropSchemas(schemas.flatMap((s) => [s, `${s}_pgboss`]));
  });

  test("two instances split the jobs; each file holds every record once", async () => {
    await preparePostgres();
    const schema = freshSchema("canon_test_exports");
    schemas.push(schema);
    const lists = [0, 0];
    const a = await instance(await openStore(POSTGRES_URL, { schema }), folder.directory, 40, () => (lists[0]! += 1));
    const b = await instance(await openStore(POSTGRES_URL, { schema }), folder.directory, 40, () => (lists[1]! += 1));
    try {
      await seedOrders(a, 24);
      lists[0] = lists[1] = 0;
      const jobs: Obj[] = [];
      for (let i = 0; i < 8; i++) {
        const via = i % 2 ? b : a;
        jobs.push((await expectStatus(via, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj);
      }
      const done = await Promise.all(jobs.map((j, i) => settled(i % 2 ? a : b, "v2", j.id, "alice")));
      assert.ok(lists[0]! > 0 && lists[1]! > 0, `both instances ran exports (pages read: ${lists.join(" and ")})`);
      for (const job of done) await assertExported(a, job, inDatabase(schema));
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a job whose instance was killed is run again by another once its heartbeat stops", { timeout: 120_000 }, async () => {
    await preparePostgres();
    const schema = freshSchema("canon_test_exports");
    schemas.push(schema);
    const job = await exportOfKilledChild(POSTGRES_URL, folder.directory, schema);
    const api = await instance(await openStore(POSTGRES_URL, { schema }), folder.directory, 0);
    try {
      const running = (await expectStatus(api, "GET", `/v2/exports/${job.id}`, 200, { auth: "alice" })).body as Obj;
      assert.equal(running.status, "running", "the killed instance's claim is still there");
      const done = await settled(api, "v2", job.id, "alice", 90_000);
      await assertExported(api, done, inDatabase(schema));
      assert.ok(done.started_at > running.started_at, "a second attempt ran it");
    } finally {
      await api.close();
    }
  });
});
