// decimal and map fields at their edges (SPEC §12.6) and unique fields that a SQL store keeps
// wrapped in JSON, over HTTP on every store (memory, PGlite, a PostgreSQL server), on the service
// generated from test/fixtures/decimal-edges: each answer the same on every store. Every response
// is checked against the fixture's OpenAPI document by `listen`. CANON_TEST_STORE=memory|pglite|postgres
// runs one store only.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { detailFields, expectError, expectStatus, listen, loadContract, type Api } from "../http/helpers.ts";
import { dropSchemas, storeTargets } from "./stores.ts";

type Obj = Record<string, any>;

let out: URL;
before(() => {
  const dir = workspace("decimal-edges", "test/fixtures/decimal-edges");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  out = pathToFileURL(path.join(dir, "generated") + path.sep);
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const only = process.env.CANON_TEST_STORE;

for (const target of storeTargets(schemas)) {
  if (only && only !== target.name) continue;
  describe(`decimal and map edges over HTTP: ${target.name}`, () => {
    let api: Api;
    before(async () => {
      const entry = (await import(new URL("index.ts", out).href)) as Obj;
      const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
      const { url, options } = await target.target();
      const store = await sql.openStore(url, options);
      api = await listen(
        await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store }),
        loadContract(`decimal-edges-${target.name}`, out, ["v1"]),
      );
    });
    after(() => api?.close());

    test("a unique field that may be absent or null: any number of records hold null or nothing, a value is held once", async () => {
      for (const field of ["num", "day", "kind"]) {
        const value = { num: 7, day: "2026-01-31", kind: "small" }[field];
        for (const body of [{ [field]: null }, { [field]: null }, {}, {}]) await expectStatus(api, "POST", "/v1/bags", 201, { body });
        const held = (await expectStatus(api, "POST", "/v1/bags", 201, { body: { [field]: value } })).body as Obj;
        const again = await expectError(api, "POST", "/v1/bags", 409, "CONFLICT", { body: { [field]: value } });
        assert.deepEqual(detailFields(again), [field]);
        // Set to null, the value is free again; a record's null does not stop another's.
        await expectStatus(api, "PATCH", `/v1/bags/${held.id}`, 200, { body: { [field]: null } });
        await expectStatus(api, "POST", "/v1/bags", 201, { body: { [field]: value } });
      }
    });
  });
}
