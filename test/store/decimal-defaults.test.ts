// Defaults that hold decimals answer in the canonical form (SPEC §12.6: "always with `scale`
// fraction digits") on every store: a read-only decimal's default, which the service fills
// (memory answered "1.5" where PostgreSQL's numeric answered "1.50"), and decimals inside a map's,
// an array's and an object's default (answered as written, "2.5", "-0", on every store). Every
// response is checked against the fixture's OpenAPI document by `listen`, whose decimal pattern
// wants exactly `scale` fraction digits. CANON_TEST_STORE=memory|pglite|postgres runs one store.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { expectStatus, listen, loadContract, type Api } from "../http/helpers.ts";
import { dropSchemas, storeTargets } from "./stores.ts";

type Obj = Record<string, any>;

let out: URL;
let dir: string;
before(() => {
  dir = workspace("decimal-defaults", "test/fixtures/decimal-defaults");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  out = pathToFileURL(path.join(dir, "generated") + path.sep);
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const expected = {
  charge: "1.50",
  rates: { base: "2.50", zero: "0.00" },
  steps: ["1.0", "0.0"],
  limits: { amount: "3.00" },
};

test("the generated defaults are canonical: validators, OpenAPI and SQL", () => {
  const openapi = JSON.parse(readFileSync(path.join(dir, "generated", "v1", "openapi.json"), "utf8")) as Obj;
  const create = openapi.components.schemas.FeeCreate.properties as Obj;
  assert.deepEqual(create.rates.default, expected.rates);
  assert.deepEqual(create.steps.default, expected.steps);
  assert.deepEqual(create.limits.default, expected.limits);
  const sql = readFileSync(path.join(dir, "generated", "sql", "0001_pending.sql"), "utf8");
  assert.match(sql, /"charge" numeric\(5, 2\) not null default '1\.50'/);
  assert.match(sql, /"rates" jsonb not null default '\{"base":"2\.50","zero":"0\.00"\}'::jsonb/);
});

const only = process.env.CANON_TEST_STORE;
for (const target of storeTargets(schemas)) {
  if (only && only !== target.name) continue;
  describe(`decimal defaults over HTTP: ${target.name}`, () => {
    let api: Api;
    before(async () => {
      const entry = (await import(new URL("index.ts", out).href)) as Obj;
      const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
      const { url, options } = await target.target();
      const store = await sql.openStore(url, options);
      api = await listen(
        await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store }),
        loadContract(`decimal-defaults-${target.name}`, out, ["v1"]),
      );
    });
    after(() => api?.close());

    test("a create that leaves them out gets every default in its canonical form, and reads it back so", async () => {
      const created = (await expectStatus(api, "POST", "/v1/fees", 201, { body: { name: "late fee" } })).body as Obj;
      const { charge, rates, steps, limits } = created;
      assert.deepEqual({ charge, rates, steps, limits }, expected);
      const read = (await expectStatus(api, "GET", `/v1/fees/${created.id}`, 200)).body as Obj;
      assert.deepEqual({ charge: read.charge, rates: read.rates, steps: read.steps, limits: read.limits }, expected);
    });
  });
}
