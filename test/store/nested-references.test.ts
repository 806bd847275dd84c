// SPEC §12.3 "every references is enforced", on delete, at the store: an id kept inside a field
// kept whole as JSON (an object's field, a list of objects) restricts a delete of the record it
// names on every store (memory, PGlite, a PostgreSQL server), as a field's foreign key does:
// 422 naming the referring collection, except when the record that names it goes in the same
// delete (a cascade); a delete that matches no record (another revision, a `where` that does not
// hold) answers as it does without such references. Service generated from
// test/fixtures/nested-references. CANON_TEST_STORE=memory|pglite|postgres runs one store only.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres, storeTargets } from "./stores.ts";

type Obj = Record<string, any>;

let out: URL;
before(() => {
  const dir = workspace("nested-references", "test/fixtures/nested-references");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  out = pathToFileURL(path.join(dir, "generated") + path.sep);
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets = storeTargets(schemas);

const only = process.env.CANON_TEST_STORE;

for (const { name, target } of targets.filter((t) => !only || t.name === only)) {
  describe(`a record named from inside a JSON field, ${name} store`, () => {
    let store: Obj;
    let newId: () => string;
    before(async () => {
      const { url, options } = await target();
      store = await (await import(new URL("sql/index.ts", out).href)).openStore(url, options);
      newId = (await import(new URL("runtime/uuid.ts", out).href)).newId;
    });
    after(() => store?.close());

    const now = () => new Date().toISOString();
    const insert = async (collection: string, values: Obj) => {
      const record = { id: newId(), created_at: now(), updated_at: now(), revision: 1, values };
      await store.insert({ collection, record, constraints: { unique: [] } });
      return record;
    };
    const refused = async (collection: string, id: string, holder: string) => {
      await assert.rejects(store.delete({ collection, id, expectedRevision: 1 }), (error: Error) => {
        assert.equal(error.constructor.name, "BusinessRuleError");
        assert.equal(error.message, `Records of ${holder} still refer to this record.`);
        return true;
      });
      assert.ok(await store.get(collection, id), "nothing deleted");
    };

    test("an object's field and a list of objects hold the record they name; once none does, it goes", async () => {
      const org = await insert("organizations", { name: "o" });
      const team = await insert("teams", { organization_id: org.id, name: "t" });
      const note = await insert("notes", { organization_id: org.id, text: "n", about: { team_id: team.id } });
      await refused("teams", team.id, "notes");
      await store.update({ collection: "notes", id: note.id, values: { organization_id: org.id, text: "n" }, expectedRevision: 1, constraints: { unique: [] } });
      const memo = await insert("memos", { text: "m", copies: [{ team_id: newId() }, { team_id: team.id }] });
      await refused("teams", team.id, "memos");
      await store.delete({ collection: "memos", id: memo.id, expectedRevision: 1 });
      assert.equal(await store.delete({ collection: "teams", id: team.id, expectedRevision: 1 }), true);
    });

    test("a delete that matches no record answers as without such references: another revision 409, a where that does not hold false", async () => {
      const org = await insert("organizations", { name: "o" });
      const team = await insert("teams", { organization_id: org.id, name: "t" });
      await insert("memos", { text: "m", copies: [{ team_id: team.id }] });
      await assert.rejects(store.delete({ collection: "teams", id: team.id, expectedRevision: 7 }), (error: Error) => error.constructor.name === "RecordChangedError");
      assert.equal(await store.delete({ collection: "teams", id: team.id, expectedRevision: 1, where: { organization_id: newId() } }), false);
    });

    test("a cascade: a record it takes along is held by one that stays; one that goes with it holds nothing", async () => {
      const org = await insert("organizations", { name: "o" });
      await insert("teams", { organization_id: org.id, name: "first" });
      const team = await insert("teams", { organization_id: org.id, name: "t" });
      // The organization's own note names its team: both go with the organization.
      await insert("notes", { organization_id: org.id, text: "n", about: { team_id: team.id } });
      // Two teams go with it: the second is looked for among several ids.
      const memo = await insert("memos", { text: "m", copies: [{ team_id: team.id }] });
      await refused("organizations", org.id, "memos");
      assert.ok(await store.get("teams", team.id), "the cascade took nothing along");
      await store.delete({ collection: "memos", id: memo.id, expectedRevision: 1 });
      assert.equal(await store.delete({ collection: "organizations", id: org.id, expectedRevision: 1 }), true);
      assert.equal(await store.get("teams", team.id), null);
    });
  });
}

describe("storeOn's `migrated` (canon dev, after a save that changed no migration)", () => {
  test("applies no migration; without it, the folder's migrations are applied", async () => {
    const { storeOn } = await import(new URL("sql/index.ts", out).href);
    const { openDriver } = await import(new URL("runtime/sql-driver.ts", out).href);
    const driver = await openDriver("pglite:memory://");
    try {
      const tables = async () =>
        (await driver.query("select table_name from information_schema.tables where table_schema = current_schema() and table_name = 'teams'")).length;
      await storeOn(driver, "pglite:memory://", { migrated: true });
      assert.equal(await tables(), 0, "nothing applied");
      await storeOn(driver, "pglite:memory://");
      assert.equal(await tables(), 1);
    } finally {
      await driver.close();
    }
  });
});

describe("a delete looks for the records that name it through the GIN index of the field that holds them (postgres)", { skip: only !== undefined && only !== "postgres" }, () => {
  test("the migration indexes each such field (jsonb_path_ops) and the containment a delete runs is one index scan", async () => {
    await preparePostgres();
    const schema = freshSchema();
    schemas.push(schema);
    const store = await (await import(new URL("sql/index.ts", out).href)).openStore(POSTGRES_URL, { schema });
    try {
      const indexes = (await store.driver.query("select indexname, indexdef from pg_indexes where schemaname = current_schema() and indexname like '%refs_idx' order by indexname")) as Obj[];
      assert.deepEqual(indexes.map((i) => i.indexname), ["memos_copies_refs_idx", "notes_about_refs_idx"]);
      assert.ok(indexes.every((i) => /USING gin .* jsonb_path_ops/.test(i.indexdef)), JSON.stringify(indexes));
      // Enough rows that the planner prefers the index; the statement as runtime/sql-deletes.ts writes it.
      await store.driver.exec(
        `insert into "memos" ("id", "created_at", "updated_at", "text", "copies") ` +
          `select gen_random_uuid(), now(), now(), 'm', jsonb_build_array(jsonb_build_object('team_id', gen_random_uuid()::text)) from generate_series(1, 5000)`,
      );
      await store.driver.exec(`analyze "memos"`);
      const plan = (await store.driver.query(`explain select 1 from "memos" where "copies" @> '[{"team_id": "0190a0b0-c0d0-7000-9000-000000000001"}]'::jsonb limit 1`)) as Obj[];
      const text = plan.map((row) => Object.values(row)[0]).join("\n");
      assert.match(text, /Bitmap Index Scan on memos_copies_refs_idx|Index Scan using memos_copies_refs_idx/, text);
    } finally {
      await store.close();
    }
  });
});
