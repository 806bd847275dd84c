// Bounded deletes (issue 30.4) on every store, over HTTP on the service generated from
// test/fixtures/clubs (a team's members go with it): a delete whose cascade would take more
// than the store's `cascadeLimit` records along answers 422 at once, counted before anything is
// deleted, and deletes nothing; a delete under the limit takes every child along, set-based
// (one statement per level), with every child's `.deleted` event. The children are inserted
// set-based on SQL (generate_series), one by one through the store in memory.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Obj = Record<string, any>;

let out: URL;
before(() => {
  const dir = workspace("cascade-limit", "test/fixtures/clubs");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  out = pathToFileURL(path.join(dir, "generated") + path.sep);
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets: Array<{ name: string; many: number; few: number; target(): Promise<{ url: string; options: Obj }> }> = [
  // Memory inserts one by one and deletes with a scan per record: a smaller limit, the same rule.
  { name: "memory", many: 20_000, few: 1_500, target: async () => ({ url: "memory", options: { cascadeLimit: 2_000 } }) },
  { name: "pglite", many: 100_000, few: 3_000, target: async () => ({ url: "pglite:memory://", options: {} }) },
  {
    name: "postgres",
    many: 100_000,
    few: 3_000,
    async target() {
      await preparePostgres();
      const schema = freshSchema();
      schemas.push(schema);
      return { url: POSTGRES_URL, options: { schema } };
    },
  },
];

for (const target of targets) {
  describe(`bounded deletes: ${target.name}`, () => {
    let app: Obj;
    let store: Obj;
    const published: Obj[] = [];
    before(async () => {
      const entry = (await import(new URL("index.ts", out).href)) as Obj;
      const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
      const { url, options } = await target.target();
      store = await sql.openStore(url, options);
      app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store, logger: false, events: { publish: (event: Obj) => void published.push(event) } });
    });
    after(async () => {
      await app?.close();
      await store?.close();
    });

    const request = async (method: string, url: string, body?: Obj) => {
      const res = await app.inject({ method, url, headers: { authorization: "Bearer dev-writer", ...(body ? { "content-type": "application/json" } : {}) }, payload: body ? JSON.stringify(body) : undefined });
      return { status: res.statusCode as number, headers: res.headers as Obj, body: res.body ? JSON.parse(res.body) : undefined };
    };
    const team = async () => {
      const res = await request("POST", "/v1/teams", { name: `Team ${Math.random()}` });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body as Obj;
    };
    const addMembers = async (teamId: string, count: number) => {
      if (target.name === "memory") {
        const at = new Date().toISOString();
        for (let i = 0; i < count; i++)
          await store.insert({ collection: "members", record: { id: crypto.randomUUID(), created_at: at, updated_at: at, revision: 1, values: { team_id: teamId, name: `M${i}` } }, constraints: { unique: [] } });
        return;
      }
      await store.driver.query(
        `insert into "members" ("id", "created_at", "updated_at", "_revision", "team_id", "name") select gen_random_uuid(), now(), now(), 1, $1, 'M' || g from generate_series(1, ${count}) g`,
        [teamId],
      );
    };

    test("a parent with more children than the limit is refused with 422 at once, and nothing is deleted", async () => {
      const t = await team();
      await addMembers(t.id, target.many);
      const start = published.length;
      const began = performance.now();
      const res = await request("DELETE", `/v1/teams/${t.id}`);
      const took = performance.now() - began;
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.error.code, "BUSINESS_RULE_VIOLATION");
      assert.match(res.body.error.message, /Delete its children first/);
      assert.ok(took < 5000, `refused in ${Math.round(took)} ms`);
      assert.equal(published.length, start, "a refused delete publishes nothing");
      assert.equal((await request("GET", `/v1/teams/${t.id}`)).status, 200);
      const page = await request("GET", `/v1/teams/${t.id}/members?limit=1`);
      assert.equal(page.status, 200);
      assert.equal(page.body.data.length, 1);
      console.log(`${target.name}: ${target.many} children refused in ${Math.round(took)} ms`);
    });

    test("a parent with a few thousand children is deleted with every child and every event", async () => {
      const t = await team();
      await addMembers(t.id, target.few);
      const start = published.length;
      const began = performance.now();
      const res = await request("DELETE", `/v1/teams/${t.id}`);
      const took = performance.now() - began;
      assert.equal(res.status, 204, JSON.stringify(res.body));
      assert.ok(took < 10_000, `deleted in ${Math.round(took)} ms`);
      const events = published.slice(start);
      assert.equal(events.length, target.few + 1);
      assert.equal(events[0]!.type, "team.deleted");
      assert.equal(events[0]!.data.id, t.id);
      const ids = new Set(events.slice(1).map((e) => (assert.equal(e.type, "member.deleted"), assert.equal(e.data.team_id, t.id), e.data.id)));
      assert.equal(ids.size, target.few);
      assert.equal((await request("GET", `/v1/teams/${t.id}`)).status, 404);
      // Every event is kept in the store's feed too.
      const last = await request("GET", `/v1/events/${events.at(-1)!.id}`);
      assert.equal(last.status, 200);
      console.log(`${target.name}: ${target.few} children deleted in ${Math.round(took)} ms`);
    });

    if (target.name === "postgres")
      test("a child locked by another transaction: the delete gives up after its lock_timeout with 409, and succeeds once it is free", async () => {
        const t = await team();
        await addMembers(t.id, 10);
        const pg = (await import("pg")).default;
        const other = new pg.Client({ connectionString: POSTGRES_URL });
        await other.connect();
        try {
          const schema = (await store.driver.query("select current_schema() as s"))[0].s;
          await other.query("begin");
          await other.query(`select 1 from "${schema}"."members" where "team_id" = $1 for update`, [t.id]);
          const began = performance.now();
          const res = await request("DELETE", `/v1/teams/${t.id}`);
          const took = performance.now() - began;
          assert.equal(res.status, 409, JSON.stringify(res.body));
          assert.equal(res.body.error.code, "CONFLICT");
          assert.ok(took > 1500 && took < 4500, `gave up after ${Math.round(took)} ms`);
          await other.query("rollback");
          assert.equal((await request("DELETE", `/v1/teams/${t.id}`)).status, 204);
        } finally {
          await other.end();
        }
      });
  });
}
