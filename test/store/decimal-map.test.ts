// decimal and map fields over HTTP on every store (memory, PGlite, a PostgreSQL server), on the
// service generated from test/fixtures/ledger (SPEC §12.6, issue 27): exact decimals in their
// canonical form, bad input answered 400 naming the field, whole-map replacement on PATCH, and
// the keys of nested objects and maps in one order on every store. Every response is checked
// against the fixture's OpenAPI document by `listen`. CANON_TEST_STORE=memory|pglite|postgres
// runs one store only.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { canon, workspace } from "../support/cli.ts";
import { detailFields, expectError, expectStatus, listen, loadContract, type Api } from "../http/helpers.ts";
import { dropSchemas, storeTargets } from "./stores.ts";

type Obj = Record<string, any>;

let out: URL;
before(() => {
  const dir = workspace("decimal-map", "test/fixtures/ledger");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  out = pathToFileURL(path.join(dir, "generated") + path.sep);
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets = storeTargets(schemas);

const only = process.env.CANON_TEST_STORE;

/** The canonical form of a decimal written with `fraction` digits after the point, at `scale`. */
function canonical(negative: boolean, integer: bigint, fraction: string, scale: number): string {
  const padded = fraction.padEnd(scale, "0");
  const zero = integer === 0n && /^0*$/.test(padded);
  return `${negative && !zero ? "-" : ""}${integer}${scale ? `.${padded}` : ""}`;
}

for (const target of targets) {
  if (only && only !== target.name) continue;
  describe(`decimal and map fields over HTTP: ${target.name}`, () => {
    let api: Api;
    const published: Obj[] = [];
    before(async () => {
      const entry = (await import(new URL("index.ts", out).href)) as Obj;
      const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
      const { url, options } = await target.target();
      const store = await sql.openStore(url, options);
      api = await listen(
        await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store, events: { publish: (event: Obj) => void published.push(event) } }),
        loadContract(`ledger-${target.name}`, out, ["v1"]),
      );
    });
    after(() => api?.close());

    const create = async (extra: Obj = {}) => (await expectStatus(api, "POST", "/v1/accounts", 201, { body: { name: "Account", balance: "0", ...extra } })).body as Obj;
    const read = async (id: string) => (await expectStatus(api, "GET", `/v1/accounts/${id}`, 200)).body as Obj;

    test("decimals sort and filter by range exactly (SPEC §12.1, §12.2): never through a float", async () => {
      const marker = `sorted-${Date.now()}`;
      // 0.1 + 0.2 would be 0.30000000000000004 as floats; 9999999999.99 is past 2^53 cents.
      const values = ["0.30", "-999.99", "9999999999.99", "9999999999.98", "0.10", "10.00", "9.99"];
      for (const balance of values) await create({ name: marker, balance, rate: balance.length < 5 && !balance.startsWith("-") && !balance.startsWith("1") ? "0.1234" : null });
      const mine = (body: Obj) => (body.data as Obj[]).filter((a) => a.name === marker).map((a) => a.balance);
      const list = async (query: string) => mine((await expectStatus(api, "GET", `/v1/accounts?limit=100&${query}`, 200)).body as Obj);
      assert.deepEqual(await list("sort=balance"), ["-999.99", "0.10", "0.30", "9.99", "10.00", "9999999999.98", "9999999999.99"]);
      assert.deepEqual(await list("sort=-balance"), ["9999999999.99", "9999999999.98", "10.00", "9.99", "0.30", "0.10", "-999.99"]);
      assert.deepEqual(await list("sort=balance&balance[gt]=0.1&balance[lte]=10"), ["0.30", "9.99", "10.00"]);
      assert.deepEqual(await list("sort=balance&balance[gte]=9999999999.98&balance[lt]=9999999999.99"), ["9999999999.98"]);
      assert.deepEqual(await list("sort=balance&balance=0.3"), ["0.30"]);
      // A nullable decimal (kept as jsonb): nulls last either way.
      const rates = ((await expectStatus(api, "GET", `/v1/accounts?limit=100&sort=-rate,balance`, 200)).body as Obj).data.filter((a: Obj) => a.name === marker);
      assert.deepEqual(rates.map((a: Obj) => a.rate ?? null), ["0.1234", "0.1234", "0.1234", null, null, null, null]);
      const bad = await expectStatus(api, "GET", "/v1/accounts?balance[gt]=1e3", 400);
      assert.deepEqual(((bad.body as Obj).error.details as Obj[]).map((d) => d.field), ["balance[gt]"]);
    });

    test("a decimal is answered in its canonical form, scale digits always, and read back unchanged", async () => {
      const cases: Array<[Obj, Obj]> = [
        [{ balance: "12.5" }, { balance: "12.50", shares: "0" }],
        [{ balance: "12" }, { balance: "12.00" }],
        [{ balance: "-0" }, { balance: "0.00" }],
        [{ balance: "-0.00" }, { balance: "0.00" }],
        [{ balance: "-1000" }, { balance: "-1000.00" }],
        [{ balance: "9999999999.99" }, { balance: "9999999999.99" }],
        [{ balance: "1", shares: "99999" }, { shares: "99999" }],
        [{ balance: "1", rate: "0.1" }, { rate: "0.1000" }],
        [{ balance: "1", rate: "-0.9999" }, { rate: "-0.9999" }],
        [{ balance: "1", rate: null }, { rate: null }],
        [
          { balance: "1", credit_limit: "1234567890123456789012345678.1234567891" },
          { credit_limit: "1234567890123456789012345678.1234567891" },
        ],
        [{ balance: "1", credit_limit: "-9999999999999999999999999999.9999999999" }, { credit_limit: "-9999999999999999999999999999.9999999999" }],
        [{ balance: "1", limits: { daily: "1.5", monthly: "999999.999" } }, { limits: { daily: "1.500", monthly: "999999.999" } }],
      ];
      for (const [input, expected] of cases) {
        const created = await create(input);
        const again = await read(created.id);
        for (const [key, value] of Object.entries(expected)) {
          assert.deepEqual(created[key], value, `${JSON.stringify(input)}: ${key}`);
          assert.deepEqual(again[key], value, `${JSON.stringify(input)}: ${key} read back`);
        }
        if (!("rate" in input)) assert.equal("rate" in again, false, "an absent nullable decimal stays absent");
      }
    });

    test("property: any decimal in range goes through the store and back unchanged (canonical form)", async () => {
      const digits = (max: number) => fc.array(fc.constantFrom(..."0123456789"), { minLength: 0, maxLength: max }).map((d) => d.join(""));
      const decimal = (integerDigits: number, scale: number) =>
        fc.record({
          negative: fc.boolean(),
          integer: fc.bigInt({ min: 0n, max: 10n ** BigInt(integerDigits) - 1n }),
          fraction: digits(scale),
        });
      await fc.assert(
        fc.asyncProperty(decimal(28, 10), decimal(1, 0), decimal(0, 4), async (limit, share, rate) => {
          const text = (d: { negative: boolean; integer: bigint; fraction: string }) => `${d.negative ? "-" : ""}${d.integer}${d.fraction ? `.${d.fraction}` : ""}`;
          const body = { credit_limit: text(limit), shares: text(share), rate: text(rate) };
          const expected = {
            credit_limit: canonical(limit.negative, limit.integer, limit.fraction, 10),
            shares: canonical(share.negative, share.integer, share.fraction, 0),
            rate: canonical(rate.negative, rate.integer, rate.fraction, 4),
          };
          const created = await create(body);
          const again = await read(created.id);
          for (const key of Object.keys(expected) as Array<keyof typeof expected>) {
            assert.equal(created[key], expected[key], `${key} created from ${body[key]}`);
            assert.equal(again[key], expected[key], `${key} read back from ${body[key]}`);
          }
        }),
        { numRuns: 25 },
      );
    });

    test("bad decimals answer 400 naming the field, on create and on PATCH: numbers, exponents, NaN, a leading +, too many digits, out of range", async () => {
      const bad: unknown[] = [12.5, 0, "1e3", "1E3", "NaN", "Infinity", "+1", "01", "1.", ".5", " 1", "1 ", "1,5", "0x10", "", "12.505", "10000000000.00", "-1000.01", "10000000000", true, [], {}];
      for (const balance of bad) {
        const error = await expectError(api, "POST", "/v1/accounts", 400, "VALIDATION_ERROR", { body: { name: "Bad", balance } });
        assert.deepEqual(detailFields(error), ["balance"], JSON.stringify(balance));
      }
      for (const [field, value] of [["shares", "100000"], ["shares", "1.0"], ["rate", "1"], ["rate", "0.12345"], ["credit_limit", "1".repeat(29)], ["credit_limit", "1.12345678901"]] as const) {
        const error = await expectError(api, "POST", "/v1/accounts", 400, "VALIDATION_ERROR", { body: { name: "Bad", balance: "1", [field]: value } });
        assert.deepEqual(detailFields(error), [field], `${field}: ${value}`);
      }
      const a = await create();
      const error = await expectError(api, "PATCH", `/v1/accounts/${a.id}`, 400, "VALIDATION_ERROR", { body: { balance: 1 } });
      assert.deepEqual(error.details, [{ field: "balance", issue: 'must be a decimal string with at most 10 digits before the point and 2 after, such as "12.50"' }]);
      const below = await expectError(api, "PATCH", `/v1/accounts/${a.id}`, 400, "VALIDATION_ERROR", { body: { balance: "-1000.01" } });
      assert.deepEqual(below.details, [{ field: "balance", issue: "must be at least -1000.00" }]);
      const nested = await expectError(api, "PATCH", `/v1/accounts/${a.id}`, 400, "VALIDATION_ERROR", { body: { limits: { daily: 1.5, weekly: "1.2345" } } });
      assert.deepEqual(detailFields(nested), ["limits.daily", "limits.weekly"]);
      assert.equal((await read(a.id)).balance, "0.00");
    });

    test("a map keeps free-form keys; a PATCH replaces the whole map", async () => {
      const a = await create({ metadata: { plan: "gold", "ref-2024.q1": "x", A_b: "" } });
      assert.deepEqual(a.metadata, { A_b: "", plan: "gold", "ref-2024.q1": "x" });
      const patched = (await expectStatus(api, "PATCH", `/v1/accounts/${a.id}`, 200, { body: { metadata: { tier: "2" } } })).body as Obj;
      assert.deepEqual(patched.metadata, { tier: "2" });
      assert.deepEqual((await read(a.id)).metadata, { tier: "2" });
      const emptied = (await expectStatus(api, "PATCH", `/v1/accounts/${a.id}`, 200, { body: { metadata: {} } })).body as Obj;
      assert.deepEqual(emptied.metadata, {});
      assert.deepEqual((await read(a.id)).limits, {}, "the default of a map");
      const nested = await create({ labels: { team: { a: 1, b: 2 }, empty: {} } });
      assert.deepEqual((await read(nested.id)).labels, { empty: {}, team: { a: 1, b: 2 } });
    });

    test("bad maps answer 400 naming the key or the map: bad keys, too many keys, wrong values, nesting deeper than declared", async () => {
      const post = (extra: Obj) => expectError(api, "POST", "/v1/accounts", 400, "VALIDATION_ERROR", { body: { name: "Bad", balance: "1", ...extra } });
      const long = "k".repeat(41);
      const keys = await post({ metadata: { ok: "x", "has space": "x", "a/b": "x", [long]: "x", "": "x", "é": "x" } });
      assert.deepEqual(detailFields(keys).sort(), ["metadata.", "metadata.a/b", "metadata.has space", `metadata.${long}`, "metadata.é"].sort());
      assert.ok(keys.details.every((d: Obj) => d.issue === "is not a valid key: 1 to 40 letters, digits, _, - or ."), JSON.stringify(keys.details));
      const fine = await create({ metadata: { ["k".repeat(40)]: "x" } });
      assert.deepEqual(Object.keys(fine.metadata), ["k".repeat(40)]);
      const many = await post({ limits: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, "1"])) });
      assert.deepEqual(many.details, [{ field: "limits", issue: "must have at most 100 keys" }]);
      const over = await post({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "x"])) });
      assert.deepEqual(over.details, [{ field: "metadata", issue: "must have at most 50 keys" }]);
      const values = await post({ metadata: { a: 1, b: null, c: "x".repeat(501) } });
      assert.deepEqual(detailFields(values), ["metadata.a", "metadata.b", "metadata.c"]);
      const deep = await post({ labels: { team: { a: { b: 1 } } } });
      assert.deepEqual(detailFields(deep), ["labels.team.a"]);
      const inner = await post({ labels: { team: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, i])) } });
      assert.deepEqual(inner.details, [{ field: "labels.team", issue: "must have at most 5 keys" }]);
      for (const metadata of [[], "x", 1, null]) {
        const error = await post({ metadata });
        assert.deepEqual(detailFields(error), ["metadata"], JSON.stringify(metadata));
      }
    });

    test("nested objects and maps come back with their keys in one order: the same on every store, in the response, on read, in lists and in events", async () => {
      const sent = {
        address: { zip: "12345", country: "NL", street: "Main 1", city: "Utrecht" },
        metadata: { zeta: "1", alpha: "2", "10": "3", "9": "4", B: "5", a: "6" },
        labels: { z: { y: 1, x: 2 }, a: { b: 1, a: 2 } },
      };
      const created = await create(sent);
      const expected = {
        address: ["city", "country", "street", "zip"],
        // JavaScript lists keys that are array indexes first, in numeric order; then code point order.
        metadata: ["9", "10", "B", "a", "alpha", "zeta"],
        labels: ["a", "z"],
      };
      const listed = ((await expectStatus(api, "GET", "/v1/accounts?limit=100", 200)).body as Obj).data.find((r: Obj) => r.id === created.id) as Obj;
      const event = published.find((e) => e.type === "account.created" && e.data.id === created.id);
      assert.ok(event, "the created event");
      for (const [name, record] of [["response", created], ["read", await read(created.id)], ["list", listed], ["event", event.data]] as const) {
        for (const [field, keys] of Object.entries(expected)) assert.deepEqual(Object.keys(record[field]), keys, `${name}: ${field}`);
        assert.deepEqual(Object.keys(record.labels.z), ["x", "y"], `${name}: labels.z`);
      }
      const updated = (await expectStatus(api, "PATCH", `/v1/accounts/${created.id}`, 200, { body: { address: { country: "BE", city: "Gent", street: "Kerk 2" } } })).body as Obj;
      assert.deepEqual(Object.keys(updated.address), ["city", "country", "street"]);
      assert.deepEqual(Object.keys((await read(created.id)).address), ["city", "country", "street"]);
    });
  });
}
