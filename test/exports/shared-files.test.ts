// Export files on a PostgreSQL server live in the database (issue 13.3): an export made through
// one app instance downloads through another over the same schema, as the whole file, streamed a
// chunk at a time. The chunks are written as the job streams and read one query per chunk, only
// as fast as the client takes them: a paused download has read a few chunks, not the file.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { DatabaseExportFiles } from "../../generated/runtime/exports-files-sql.ts";
import { openDriver, type SqlDriver } from "../../generated/runtime/sql-driver.ts";
import { migrate } from "../../generated/runtime/sql-migrations.ts";
import type { SqlStore } from "../../generated/runtime/sql-store.ts";
import { newId } from "../../generated/runtime/uuid.ts";
import { migrationsFolder, openStore } from "../../generated/sql/index.ts";
import { createUser, expectStatus, startApp, type Api } from "../http/helpers.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { download, ndjson, principals, settled } from "./helpers.ts";

type Obj = Record<string, any>;
const FAST_PGBOSS = { heartbeatSeconds: 10, superviseIntervalSeconds: 1, pollingIntervalSeconds: 0.5 };
const ROWS = 40_000;
const CHUNK = 256 * 1024;

/** Counts the queries that read a chunk of an export file. */
function countChunkReads(driver: SqlDriver): { reads: number } {
  const counter = { reads: 0 };
  const query = driver.query.bind(driver);
  driver.query = (statement, params) => {
    const text = typeof statement === "string" ? statement : statement.text;
    if (/^select convert_from\("bytes", 'UTF8'\) as "text" from "canon__export_chunks"/.test(text)) counter.reads += 1;
    return query(statement, params);
  };
  return counter;
}

describe("PostgreSQL: an export made on one instance downloads from another", () => {
  const schema = freshSchema("canon_test_exports");
  let a: Api;
  let b: Api;
  let driverA: SqlDriver;
  let driverB: SqlDriver;

  before(async () => {
    await preparePostgres();
    const storeA = (await openStore(POSTGRES_URL, { schema })) as SqlStore;
    const storeB = (await openStore(POSTGRES_URL, { schema })) as SqlStore;
    driverA = storeA.driver;
    driverB = storeB.driver;
    a = await startApp({ store: storeA, authenticate: principals, exports: { pgBoss: FAST_PGBOSS } });
    b = await startApp({ store: storeB, authenticate: principals, exports: { pgBoss: FAST_PGBOSS } });
    const user = await createUser(a);
    // 40,000 orders with a 400-character note: a file of about 28 MB, a hundred-odd chunks.
    // In one statement, on a connection of its own: longer than the store's statement timeout.
    const ids = Array.from({ length: ROWS }, () => newId());
    const client = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      await client.query(
        `insert into "orders" ("id", "created_at", "updated_at", "user_id", "code", "total_cents", "currency", "note", "amount_due_cents")
         select o.id, now(), now(), $2, 'ORD-' || lpad(o.n::text, 6, '0'), o.n, 'EUR', repeat('x', 400), 0
         from unnest($1::uuid[]) with ordinality as o(id, n)`,
        [ids, user.id],
      );
    } finally {
      await client.end();
    }
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await dropSchemas([schema]);
  });

  test("the file is in the database in chunks; both instances serve it whole; a paused download reads a few chunks", { timeout: 120_000 }, async (t) => {
    const created = (await expectStatus(a, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
    const job = await settled(b, "v2", created.id, "alice", 90_000);
    assert.equal(job.status, "succeeded", JSON.stringify(job));
    assert.equal(job.record_count, ROWS);

    const [stored] = await driverA.query(
      `select count(*)::integer as chunks, max(octet_length("bytes"))::integer as largest, sum(octet_length("bytes"))::bigint as size
       from "canon__export_chunks" where "job_id" = $1`,
      [job.id],
    );
    const chunks = Number(stored!.chunks);
    assert.ok(chunks > 50, `${chunks} chunks`);
    assert.ok(Number(stored!.largest) < CHUNK + 512 * 1024, `largest chunk ${stored!.largest} bytes`);

    // The whole file, from the instance that did not take the request, and from the one that did.
    const fromB = await download(b, job.download_url, "alice");
    assert.equal(Number(fromB.headers.get("content-length")), Number(stored!.size));
    const records = ndjson(fromB.text);
    assert.equal(records.length, ROWS);
    for (let i = 1; i < records.length; i++) assert.ok(records[i - 1]!.id < records[i]!.id, "ids ascend");
    for (const record of [records[0]!, records[ROWS - 1]!]) {
      assert.deepEqual(record, (await expectStatus(b, "GET", `/v2/orders/${record.id}`, 200, { auth: "alice" })).body);
    }
    assert.equal((await download(a, job.download_url, "alice")).text, fromB.text);

    // Chunks are read as the client takes them: paused after its first bytes, the server has
    // read only what the socket buffers hold.
    const counter = countChunkReads(driverB);
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const url = new URL(b.base + job.download_url);
    const received = await new Promise<number>((resolve, reject) => {
      const request = http.get(url, { headers: { authorization: "Bearer alice" } }, (response) => {
        assert.equal(response.statusCode, 200);
        let bytes = 0;
        response.once("data", (first: Buffer) => {
          bytes += first.length;
          response.pause();
          setTimeout(() => {
            try {
              assert.ok(counter.reads < chunks / 2, `read ${counter.reads} of ${chunks} chunks while the client paused`);
            } catch (error) {
              reject(error);
              request.destroy();
              return;
            }
            response.on("data", (chunk: Buffer) => {
              bytes += chunk.length;
              rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
            });
            response.on("end", () => resolve(bytes));
            response.resume();
          }, 500);
        });
        response.on("error", reject);
      });
      request.on("error", reject);
    });
    assert.equal(received, Number(stored!.size));
    assert.equal(counter.reads, chunks, "every chunk read once");
    t.diagnostic(
      `file ${(received / 2 ** 20).toFixed(1)} MiB in ${chunks} chunks; RSS growth during the download ${((rssPeak - rssBefore) / 2 ** 20).toFixed(1)} MiB`,
    );
  });
});

describe("DatabaseExportFiles", () => {
  let driver: SqlDriver;
  before(async () => {
    driver = await openDriver("pglite:memory://");
    await migrate(driver, migrationsFolder);
  });
  after(() => driver.close());

  test("writes a chunk as soon as a chunk's worth has gathered, and reads one chunk per query", async () => {
    const id = newId();
    const now = new Date().toISOString();
    await driver.query(
      `insert into "canon__exports" ("id", "created_at", "updated_at", "version", "resource", "format", "owner", "status", "filters", "match", "record_count", "attempts", "attempt")
       values ($1, $2, $2, 'v2', 'orders', 'ndjson', 'alice', 'running', '{}', '{"where":{}}', 0, 1, 'a1')`,
      [id, now],
    );
    const files = new DatabaseExportFiles(driver, 1024);
    const count = async () => Number((await driver.query(`select count(*)::integer as n from "canon__export_chunks" where "job_id" = $1`, [id]))[0]!.n);
    const writer = await files.create({ id, attempt: "a1", format: "ndjson" });
    const line = `${"y".repeat(299)}\n`;
    for (let i = 0; i < 3; i++) await writer.write(line);
    assert.equal(await count(), 0, "under a chunk: nothing written yet");
    await writer.write(line);
    assert.equal(await count(), 1, "a chunk's worth: written at once");
    for (let i = 0; i < 10; i++) await writer.write(line);
    await writer.close();
    assert.equal(await count(), 4);

    const counter = countChunkReads(driver);
    const file = await files.open({ id, attempt: "a1", format: "ndjson" });
    assert.ok(file);
    assert.equal(file.size, 14 * 300);
    const parts: Buffer[] = [];
    for await (const part of file.stream) {
      parts.push(part as Buffer);
      assert.ok(counter.reads <= parts.length + 1, `${counter.reads} chunks read for ${parts.length} handed out`);
    }
    assert.equal(Buffer.concat(parts).toString(), line.repeat(14));
    assert.equal(counter.reads, 4);

    assert.equal(await files.open({ id, attempt: "another", format: "ndjson" }), null, "another attempt's file is not this one");
    await files.remove({ id, attempt: "a1", format: "ndjson" });
    assert.equal(await files.open({ id, attempt: "a1", format: "ndjson" }), null);
  });
});
