// Expired files and old jobs are swept (issue 13.3): a file is deleted once its link has expired
// (in a folder: a minute later; in the database: at once), a finished job once `retentionSeconds`
// have passed since it failed or its link expired, and what attempts that died left behind.
// Jobs pending or running are never swept. On every store: memory and PGlite keep files in a
// folder, a PostgreSQL server in the database.
import assert from "node:assert/strict";
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ExportService, type ExportJob } from "../../generated/runtime/exports.ts";
import type { SqlStore } from "../../generated/runtime/sql-store.ts";
import type { Store } from "../../generated/runtime/store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { makeStores } from "../store/stores.ts";
import { exportsFolder } from "./helpers.ts";

const MINUTE = 60_000;
const LINK_TTL = 60;
const RETENTION = 3600;

/** The values of a job of `owner` that exports v2's users. */
function jobValues(owner: string) {
  return { version: "v2", resource: "users", format: "ndjson", owner, status: "pending", filters: {}, match: { where: {} }, record_count: 0, attempts: 0 };
}

async function finished(service: ExportService, id: string): Promise<ExportJob> {
  for (let i = 0; i < 1000; i++) {
    const job = await service.get(id);
    if (job && (job.values.status === "succeeded" || job.values.status === "failed")) return job;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`export ${id} did not finish`);
}

async function contents(service: ExportService, job: ExportJob): Promise<string | null> {
  const file = await service.openFile(job);
  if (!file) return null;
  let text = "";
  for await (const part of file.stream) text += String(part);
  return text;
}

for (const factory of makeStores()) {
  describe(`sweeping exports on the ${factory.name} store`, () => {
    const folder = exportsFolder();
    let store: Store;
    let service: ExportService;
    after(async () => {
      await service?.stop();
      await factory.cleanup();
      folder.remove();
    });

    test("files go once their link expired; finished jobs once retention has passed; pending jobs stay", async () => {
      store = await factory.create();
      service = new ExportService(store, {
        directory: folder.directory,
        linkTtlSeconds: LINK_TTL,
        retentionSeconds: RETENTION,
        pgBoss: { pollingIntervalSeconds: 0.5 },
      });
      const now = new Date().toISOString();
      await store.insert({ collection: "users", record: { id: newId(), created_at: now, updated_at: now, revision: 1, values: { email: "a@example.com", name: "A", password: "correct horse battery", role: "customer" } }, constraints: { unique: [] } });
      service.register({ version: "v2", resource: "users", columns: ["id"], list: (q) => store.list("users", q), view: (r) => ({ id: r.id }) });
      service.register({
        version: "v2",
        resource: "broken",
        columns: ["id"],
        list: async () => {
          throw new Error("this collection cannot be read");
        },
        view: (r) => r,
      });
      const request = (resource: string, owner = "alice") =>
        service.create({ owner, version: "v2", resource, format: "ndjson", filters: {}, match: { where: {} } });
      await service.start();
      const succeeded = await finished(service, (await request("users")).id);
      const failed = await finished(service, (await request("broken")).id);
      assert.equal(succeeded.values.status, "succeeded");
      assert.equal(failed.values.status, "failed");
      // A job left pending (as by a service that stopped before it ran): never queued here.
      const waiting = await store.insert({ collection: "canon/exports", record: { id: newId(), created_at: now, updated_at: now, revision: 1, values: { ...jobValues("bob"), status: "pending" } }, constraints: { unique: [] } });
      const expires = Date.parse(succeeded.values.expires_at!);
      const text = await contents(service, succeeded);
      assert.match(text ?? "", /^\{"id":"[0-9a-f-]{36}"\}\n$/);

      // Before the link expires, nothing goes.
      await service.sweep(expires - 1000);
      assert.equal(await contents(service, succeeded), text);
      // Past it (a folder keeps a file one more minute: its age is what the folder knows), the file goes, the job stays.
      await service.sweep(expires + 2 * MINUTE);
      assert.equal(await contents(service, succeeded), null);
      assert.equal((await service.get(succeeded.id))?.values.status, "succeeded");
      assert.ok(await service.get(failed.id));
      // Past retention, the finished jobs go; a pending one never does.
      const finishedAt = Date.parse(failed.values.finished_at!);
      await service.sweep(Math.max(expires, finishedAt) + RETENTION * 1000 + 1000);
      assert.equal(await service.get(succeeded.id), null);
      assert.equal(await service.get(failed.id), null);
      assert.ok(await service.get(waiting.id), "a pending job is never swept");
    });

    test("what a dead attempt left behind is swept", async () => {
      const id = newId();
      if (factory.name === "postgres") {
        const driver = (store as SqlStore).driver;
        const job = await store.insert({ collection: "canon/exports", record: {
            id,
            created_at: new Date().toISOString(),
            updated_at: new Date().toISOString(),
            revision: 1,
            values: { ...jobValues("carol"), status: "running", attempts: 2, attempt: "alive" },
          }, constraints: { unique: [] } });
        for (const attempt of ["dead", "alive"]) {
          await driver.query(`insert into "canon__export_chunks" ("job_id", "attempt", "seq", "bytes") values ($1, $2, 0, $3)`, [job.id, attempt, Buffer.from("x")]);
        }
        await service.sweep();
        const left = await driver.query(`select "attempt" from "canon__export_chunks" where "job_id" = $1`, [job.id]);
        assert.deepEqual(left.map((r) => r.attempt), ["alive"], "the running attempt's chunks stay");
        return;
      }
      const dead = path.join(folder.directory, `${id}.dead.part`);
      const alive = path.join(folder.directory, `${id}.alive.part`);
      writeFileSync(dead, "x", { mode: 0o600 });
      writeFileSync(alive, "x", { mode: 0o600 });
      const old = (Date.now() - 16 * MINUTE) / 1000;
      utimesSync(dead, old, old);
      await service.sweep();
      const names = readdirSync(folder.directory);
      assert.ok(!names.includes(path.basename(dead)), "a part untouched for 15 minutes is gone");
      assert.ok(names.includes(path.basename(alive)), "a part being written stays");
    });
  });
}
