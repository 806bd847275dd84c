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

    test("a decimal that may be null sorts by number, nulls last, on a child list and a list_under list, page by page", async () => {
      const price = (await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "lines", amount: "1" } })).body as Obj;
      const shop = (await expectStatus(api, "POST", "/v1/shops", 201, { body: { name: "S" } })).body as Obj;
      const costs = ["10", "-9.99", null, "9.99", "-10", undefined, "0", "-0.5"];
      for (const [i, cost] of costs.entries()) {
        await expectStatus(api, "POST", "/v1/lines", 201, { body: { price_id: price.id, shop_id: shop.id, label: `l${i}`, qty: "1", ...(cost === undefined ? {} : { cost }) } });
      }
      const walk = async (base: string, sort: string) => {
        const seen: unknown[] = [];
        for (let cursor: string | null = null, pages = 0; pages < 20; pages++) {
          const body = (await expectStatus(api, "GET", `${base}?limit=3&sort=${sort}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, 200)).body as Obj;
          seen.push(...body.data.map((l: Obj) => l.cost ?? null));
          cursor = body.pagination.next_cursor;
          if (!cursor) break;
        }
        return seen;
      };
      for (const base of [`/v1/prices/${price.id}/lines`, `/v1/shops/${shop.id}/lines`]) {
        assert.deepEqual(await walk(base, "cost"), ["-10.00", "-9.99", "-0.50", "0.00", "9.99", "10.00", null, null], base);
        assert.deepEqual(await walk(base, "-cost"), ["10.00", "9.99", "0.00", "-0.50", "-9.99", "-10.00", null, null], base);
        const range = (await expectStatus(api, "GET", `${base}?sort=cost&cost[gte]=-9.99&cost[lt]=10`, 200)).body as Obj;
        assert.deepEqual(range.data.map((l: Obj) => l.cost), ["-9.99", "-0.50", "0.00", "9.99"]);
      }
    });

    test("a unique decimal, alone or in a composite list, compares by value: \"12.5\", \"12.50\" and \"-0\"/\"0\" are one value", async () => {
      // A decimal on its own column (numeric): sent with fewer fraction digits, it is the same value.
      await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "sku-1", amount: "1", sku: "1" } });
      for (const sku of ["1.00", "1.0"]) {
        const error = await expectError(api, "POST", "/v1/prices", 409, "CONFLICT", { body: { code: "sku-2", amount: "1", sku } });
        assert.deepEqual(detailFields(error), ["sku"]);
      }
      await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "sku-3", amount: "1", sku: "0" } });
      assert.deepEqual(detailFields(await expectError(api, "POST", "/v1/prices", 409, "CONFLICT", { body: { code: "sku-4", amount: "1", sku: "-0.00" } })), ["sku"]);
      await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "sku-5", amount: "1" } });
      await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "sku-6", amount: "1" } });

      // A composite list with a decimal: [code, amount].
      const first = (await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "pair", amount: "12.5" } })).body as Obj;
      assert.equal(first.amount, "12.50");
      const repeat = await expectError(api, "POST", "/v1/prices", 409, "CONFLICT", { body: { code: "pair", amount: "12.50" } });
      assert.deepEqual(repeat.details.map((d: Obj) => d.field), ["code", "amount"]);
      const other = (await expectStatus(api, "POST", "/v1/prices", 201, { body: { code: "pair", amount: "-12.5" } })).body as Obj;
      await expectError(api, "PATCH", `/v1/prices/${other.id}`, 409, "CONFLICT", { body: { amount: "12.5" } });
      await expectError(api, "PUT", `/v1/prices/${other.id}`, 409, "CONFLICT", { body: { code: "pair", amount: "12.50" } });
      await expectError(api, "POST", `/v1/prices/${other.id}/adjustments`, 409, "CONFLICT", { body: { to: "12.5" } });
      assert.equal(((await expectStatus(api, "GET", `/v1/prices/${other.id}`, 200)).body as Obj).amount, "-12.50");

      // A decimal that may be absent and null (kept in jsonb on a SQL store): nulls never conflict.
      for (const body of [{ weight: null }, { weight: null }, {}, { weight: "2.5" }]) await expectStatus(api, "POST", "/v1/bags", 201, { body });
      assert.deepEqual(detailFields(await expectError(api, "POST", "/v1/bags", 409, "CONFLICT", { body: { weight: "2.50" } })), ["weight"]);
      for (const body of [{ label: "t", tare: null }, { label: "t", tare: null }, { label: "t", tare: "1" }]) await expectStatus(api, "POST", "/v1/bags", 201, { body });
      const tare = await expectError(api, "POST", "/v1/bags", 409, "CONFLICT", { body: { label: "t", tare: "1.0" } });
      assert.deepEqual(tare.details.map((d: Obj) => d.field), ["label", "tare"]);
      await expectStatus(api, "POST", "/v1/bags", 201, { body: { label: "u", tare: "1.0" } });
    });
  });
}
