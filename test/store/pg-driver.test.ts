// The `pg` driver's named statements (runtime/sql-pg.ts): each runs as a submittable that has
// its result described once per connection (with the run after its Parse), then only binds and
// executes it. Its rows must be the rows `pg`'s own query returns, on every connection of the
// pool, and a failure must leave the connection usable for the next statement.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { openDriver, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { namedStatement } from "../../generated/runtime/sql-statements.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

describe("pg driver: named statements", () => {
  const schema = freshSchema("canon_pgdriver");
  let driver: SqlDriver;
  let client: pg.Client;

  before(async () => {
    await preparePostgres();
    driver = await openDriver(`${POSTGRES_URL}?schema=${schema}`, { poolSize: 3 });
    await driver.exec(
      [
        `create table t (id int4 primary key, big int8, flag bool, doc jsonb, tags text[], at timestamptz, amount numeric, note text)`,
        `insert into t values (1, 9007199254740993, true, '{"b": [1, null]}', '{a,"b c"}', '2026-01-01 00:00:00.5+00', 1.50, 'x'), (2, null, false, 'null', '{}', null, null, null)`,
      ].join("; "),
    );
    client = new pg.Client({
      connectionString: POSTGRES_URL,
      options: `-c search_path=${schema} -c TimeZone=UTC`,
    });
    await client.connect();
  });

  after(async () => {
    await client.end();
    await driver.close();
    await dropSchemas([schema]);
  });

  /** What `pg`'s own query returns for the same text and values. */
  const pgRows = async (text: string, values: unknown[]) => (await client.query(text, values)).rows;

  test("rows are pg's own rows, on every connection of the pool, run after run", async () => {
    const statement = namedStatement("select * from t where id >= $1 order by id");
    const expected = await pgRows(statement.text, [1]);
    assert.equal(expected.length, 2);
    // More runs at once than the pool has connections: each connection prepares the statement
    // and describes it with its first run there.
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(Array.from({ length: 8 }, () => driver.query(statement, [1])));
      for (const rows of results) assert.deepEqual(rows, expected);
    }
    const [first] = await driver.query(statement, [1]);
    assert.equal(typeof first!.id, "number");
    assert.equal(first!.big, "9007199254740993");
    assert.ok(first!.at instanceof Date);
  });

  test("columns of equal names and a column named __proto__ come as pg makes them", async () => {
    const statement = namedStatement(`select 1 as a, 2 as a, $1::text as "__proto__"`);
    const expected = await pgRows(statement.text, ["p"]);
    for (let i = 0; i < 4; i++) {
      const [row] = await driver.query(statement, ["p"]);
      assert.deepEqual(Object.getOwnPropertyNames(row), Object.getOwnPropertyNames(expected[0]));
      assert.equal(row!.a, 2);
      assert.equal(Object.getOwnPropertyDescriptor(row, "__proto__")?.value, "p");
      assert.equal(Object.getPrototypeOf(row), Object.prototype);
    }
  });

  test("a statement without result columns answers no rows, every time", async () => {
    const statement = namedStatement("update t set note = $1 where id = 2");
    for (let i = 0; i < 5; i++) assert.deepEqual(await driver.query(statement, [`n${i}`]), []);
    assert.deepEqual(await pgRows("select note from t where id = 2", []), [{ note: "n4" }]);
  });

  test("a failing run rejects with the server's error; the statement and the pool go on", async () => {
    const statement = namedStatement("select 10 / $1::int4 as q");
    for (let i = 0; i < 4; i++) {
      await assert.rejects(
        driver.query(statement, [0]),
        (error: { code?: string }) => error.code === "22012",
      );
      assert.deepEqual(await driver.query(statement, [5]), [{ q: 2 }]);
    }
  });

  test("a value pg cannot send rejects before anything runs; the connection goes on", async () => {
    const statement = namedStatement("select $1::text as v");
    const unsendable = {
      toPostgres() {
        throw new Error("not sendable");
      },
    };
    for (let i = 0; i < 4; i++) {
      await assert.rejects(driver.query(statement, [unsendable]), /not sendable/);
      assert.deepEqual(await driver.query(statement, ["ok"]), [{ v: "ok" }]);
    }
  });

  test("in a transaction, statements run on its connection; a rollback undoes them", async () => {
    const update = namedStatement("update t set note = $1 where id = 1 returning note");
    await assert.rejects(
      driver.transaction(async (tx) => {
        assert.deepEqual(await tx.query(update, ["inside"]), [{ note: "inside" }]);
        await tx.query(namedStatement("select 10 / $1::int4 as q"), [0]);
      }),
      (error: { code?: string }) => error.code === "22012",
    );
    assert.deepEqual(await pgRows("select note from t where id = 1", []), [{ note: "x" }]);
    const notes = await driver.transaction((tx) => tx.query(update, ["committed"]));
    assert.deepEqual(notes, [{ note: "committed" }]);
  });
});
