// A store kept open while its schema changes (`canon dev` keeps one driver for the session): a
// named statement prepared before a migration that retyped a column must run after it. PostgreSQL
// refuses a prepared statement whose result type changed ("cached plan must not change result
// type"), so `migrate` makes the driver forget its statements when it changed the schema.
// Found by a dev-loop sweep: widening a decimal (or an integer made a number) answered 500 on
// every read that had run before the save, until the process restarted.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, describe, test } from "node:test";
import { migrate, openDriver, type MigrationFile, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { namedStatement } from "../../generated/runtime/sql-statements.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

function pending(type: string): MigrationFile {
  const sql = [
    "-- Pending migration 0001 of the Test API",
    'create table if not exists "items" (',
    '  "row_id" bigint generated always as identity primary key,',
    '  "id" uuid not null constraint "items_id_key" unique,',
    `  "price" ${type}`,
    ");",
    "",
  ].join("\n");
  return { name: "0001_pending", sql, checksum: createHash("sha256").update(sql).digest("hex") };
}

/** The same text before and after the migration: the statement a list of the store prepared. */
const read = namedStatement(`select "price", "id" from "items" order by "price" desc, "id"`);

async function follows(db: SqlDriver, target: string): Promise<void> {
  assert.deepEqual(await migrate(db, [pending("numeric(8, 2)")], { target }), ["0001_pending"]);
  await db.exec(`insert into "items" ("id", "price") values ('01900000-0000-7000-8000-000000000001', 1.5)`);
  // Prepared on every connection of a pool (three at once), as requests would.
  for (let i = 0; i < 3; i++) {
    const rows = await Promise.all([1, 2, 3].map(() => db.query(read)));
    for (const r of rows) assert.equal(String(r[0]?.price), "1.50");
  }
  // A save widens the decimal: the pending migration's new text alters the column in place.
  assert.deepEqual(await migrate(db, [pending("numeric(10, 3)")], { target }), ["0001_pending"]);
  for (let i = 0; i < 3; i++) {
    const rows = await Promise.all([1, 2, 3].map(() => db.query(read)));
    for (const r of rows) assert.equal(String(r[0]?.price), "1.500");
  }
  // In a transaction too (a write's statements run there).
  await db.transaction(async (tx) => assert.equal(String((await tx.query(read))[0]?.price), "1.500"));
  // A migration that changes nothing keeps the statements prepared.
  assert.deepEqual(await migrate(db, [pending("numeric(10, 3)")], { target }), []);
  assert.equal(String((await db.query(read))[0]?.price), "1.500");
}

describe("statements prepared before a migration that retypes a column", () => {
  test("PGlite", async () => {
    const db = await openDriver("pglite:memory://");
    try {
      await follows(db, "pglite:memory://");
    } finally {
      await db.close();
    }
  });

  const schema = freshSchema("canon_retyped");
  after(() => dropSchemas([schema]));
  test("PostgreSQL", async () => {
    await preparePostgres();
    const target = `${POSTGRES_URL}?schema=${schema}`;
    const db = await openDriver(target, { poolSize: 3 });
    try {
      await follows(db, target);
    } finally {
      await db.close();
    }
  });
});
