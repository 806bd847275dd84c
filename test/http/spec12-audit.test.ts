// SPEC §12 sentence by sentence, where the acceptance helpdesk (test/acceptance/helpdesk.test.ts)
// does not reach, over real HTTP on the store CANON_TEST_STORE names (test/fixtures/spec12-audit):
// a decimal answers 400 naming its place wherever it is (a map's values, an array's items, an
// object's field, an action's field, a query filter, an export's filters); keeping the same value
// is no transition through an action's sets, PUT and PATCH; a composite unique list without the
// tenant field holds within the tenant; a query parameter the list does not take is "not allowed".
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { exportsFolder } from "../exports/helpers.ts";
import { call, detailFields, expectStatus, startFixture, type Api, type Res } from "./helpers.ts";

type Obj = Record<string, any>;
const STORE = process.env.CANON_TEST_STORE ?? "memory";

const folder = exportsFolder();
let api: Api;
let A: Obj;
let B: Obj;
let TA: string;
let TB: string;
before(async () => {
  api = await startFixture("spec12-audit", "test/fixtures/spec12-audit", ["v1"], {
    exports: { directory: folder.directory },
  });
  A = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Acme Org" } })).body;
  B = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Bolt Org" } })).body;
  TA = `dev-writer.${A.id}`;
  TB = `dev-writer.${B.id}`;
});
after(async () => {
  await api?.close();
  folder.remove();
});

let codes = 0;
const invoice = (overrides: Obj = {}): Obj => ({ code: `C${++codes}`, year: 2026, amount: "10", ...overrides });

/** A 400 VALIDATION_ERROR whose details name exactly `field`. */
function names(res: Res, field: string): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.code, "VALIDATION_ERROR", res.text);
  assert.deepEqual(detailFields(res.body.error), [field], res.text);
}

describe(`SPEC §12.6: a decimal is a string of its scale and precision wherever it is (${STORE})`, () => {
  test("a map's values, an array's items, an object's field: a JSON number, more fraction digits or more digits answer 400 naming the place", async () => {
    const cases: Array<[Obj, string]> = [
      [{ rates: { usd: 1.5 } }, "rates.usd"],
      [{ rates: { usd: "1.2345" } }, "rates.usd"],
      [{ rates: { usd: "123.4" } }, "rates.usd"],
      [{ parts: ["1.00", 1.5] }, "parts.1"],
      [{ parts: ["1.234"] }, "parts.0"],
      [{ parts: ["12345.00"] }, "parts.0"],
      [{ detail: { fee: 1 } }, "detail.fee"],
      [{ detail: { fee: "1.001" } }, "detail.fee"],
      [{ amount: 10 }, "amount"],
      [{ amount: "1234567.00" }, "amount"],
    ];
    for (const [overrides, field] of cases) {
      names(await call(api, "POST", "/v1/invoices", { auth: TA, body: invoice(overrides) }), field);
    }
    const list = await expectStatus(api, "GET", "/v1/invoices?limit=100", 200, { auth: TA });
    assert.equal(list.body.data.length, 0, "nothing was created");
  });

  test("kept exact and returned with the scale's fraction digits, in the map, the array and the object", async () => {
    const created = await expectStatus(api, "POST", "/v1/invoices", 201, {
      auth: TA,
      body: invoice({ amount: "0.1", rates: { usd: "1", eur: "0.125" }, parts: ["1", "2.5"], detail: { fee: "3" } }),
    });
    const read = await expectStatus(api, "GET", `/v1/invoices/${created.body.id}`, 200, { auth: TA });
    for (const record of [created.body, read.body]) {
      assert.equal(record.amount, "0.10");
      assert.deepEqual(record.rates, { usd: "1.000", eur: "0.125" });
      assert.deepEqual(record.parts, ["1.00", "2.50"]);
      assert.deepEqual(record.detail, { fee: "3.00", note: "none" });
    }
  });

  test("an action's decimal field: 400 naming it, and the record does not change", async () => {
    const sent = await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TA, body: invoice({ status: "sent" }) });
    for (const paid of [1, "1.001", "1234567.00"]) {
      names(await call(api, "POST", `/v1/invoices/${sent.body.id}/payments`, { auth: TA, body: { paid } }), "paid");
    }
    const read = await expectStatus(api, "GET", `/v1/invoices/${sent.body.id}`, 200, { auth: TA });
    assert.equal(read.body.status, "sent");
    const paid = await expectStatus(api, "POST", `/v1/invoices/${sent.body.id}/payments`, 201, { auth: TA, body: { paid: "12.5" } });
    assert.equal(paid.body.paid, "12.50");
  });

  test("a query filter and an export's filters: 400 naming the parameter as sent", async () => {
    for (const [query, field] of [
      ["amount[gte]=1.234", "amount[gte]"],
      ["amount[lt]=1234567", "amount[lt]"],
      ["amount=1.001", "amount"],
      ["amount[gt]=1e2", "amount[gt]"],
      ["amount[in]=1,2", "amount[in]"],
    ]) {
      names(await call(api, "GET", `/v1/invoices?${query}`, { auth: TA }), field!);
    }
    for (const value of [1.5, "1.234"]) {
      names(
        await call(api, "POST", "/v1/exports", { auth: TA, body: { resource: "invoices", filters: { "amount[gte]": value } } }),
        "filters.amount[gte]",
      );
    }
  });
});

describe(`SPEC §12.5: keeping the same value is no transition (${STORE})`, () => {
  test("through an action's sets, PATCH and PUT, on a final value too; another value still answers 422", async () => {
    const created = await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TA, body: invoice() });
    const id = created.body.id;
    await expectStatus(api, "POST", `/v1/invoices/${id}/reminders`, 201, { auth: TA, body: {} });
    // sent → sent by the action that sets sent: no transition, a new revision.
    const before = await expectStatus(api, "GET", `/v1/invoices/${id}`, 200, { auth: TA });
    await expectStatus(api, "POST", `/v1/invoices/${id}/reminders`, 201, { auth: TA, body: { note: "again" } });
    await expectStatus(api, "POST", `/v1/invoices/${id}/payments`, 201, { auth: TA, body: { paid: "10" } });
    // paid is final: paid → paid by sets, PATCH and PUT is kept; paid → sent is refused.
    await expectStatus(api, "POST", `/v1/invoices/${id}/payments`, 201, { auth: TA, body: { paid: "1" } });
    const patched = await expectStatus(api, "PATCH", `/v1/invoices/${id}`, 200, { auth: TA, body: { status: "paid", code: `${created.body.code}b` } });
    assert.equal(patched.body.status, "paid");
    const { id: _id, created_at, updated_at, organization_id, ...rest } = patched.body;
    const replaced = await expectStatus(api, "PUT", `/v1/invoices/${id}`, 200, { auth: TA, body: { ...rest, year: 2027 } });
    assert.equal(replaced.body.status, "paid");
    assert.equal(replaced.body.year, 2027);
    assert.notEqual(replaced.headers.get("etag"), before.headers.get("etag"));
    const refused = await call(api, "POST", `/v1/invoices/${id}/reminders`, { auth: TA, body: {} });
    assert.equal(refused.status, 422, refused.text);
    assert.deepEqual(detailFields(refused.body.error), ["status"]);
    // A PUT without status takes the default (draft): a change from paid, refused.
    const { status, ...withoutStatus } = rest;
    const reset = await call(api, "PUT", `/v1/invoices/${id}`, { auth: TA, body: withoutStatus });
    assert.equal(reset.status, 422, reset.text);
    assert.deepEqual(detailFields(reset.body.error), ["status"]);
    const read = await expectStatus(api, "GET", `/v1/invoices/${id}`, 200, { auth: TA });
    assert.equal(read.body.status, "paid");
    assert.equal(read.body.year, 2027);
  });
});

describe(`SPEC §12.3/§12.4: unique lists of a tenant-scoped resource hold within the tenant (${STORE})`, () => {
  test("a composite list without the tenant field, and a unique field: another tenant may repeat them, the same tenant gets 409", async () => {
    await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TA, body: invoice({ code: "U-1", year: 2030, number: 71 }) });
    await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TB, body: invoice({ code: "U-1", year: 2030, number: 71 }) });
    const pair = await call(api, "POST", "/v1/invoices", { auth: TA, body: invoice({ code: " U-1 ", year: 2030 }) });
    assert.equal(pair.status, 409, pair.text);
    assert.equal(pair.body.error.code, "CONFLICT");
    assert.deepEqual(detailFields(pair.body.error), ["code", "year"]);
    const number = await call(api, "POST", "/v1/invoices", { auth: TA, body: invoice({ number: 71 }) });
    assert.equal(number.status, 409, number.text);
    assert.deepEqual(detailFields(number.body.error), ["number"]);
    // On PATCH and PUT too: a value another tenant holds is free, one the same tenant holds is not.
    await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TA, body: invoice({ code: "U-2", year: 2030, number: 72 }) });
    const mine = await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TB, body: invoice({ code: "U-3", year: 2030 }) });
    const moved = await expectStatus(api, "PATCH", `/v1/invoices/${mine.body.id}`, 200, { auth: TB, body: { code: "U-2", number: 72 } });
    assert.equal(moved.body.number, 72);
    const other = await expectStatus(api, "POST", "/v1/invoices", 201, { auth: TA, body: invoice({ code: "U-4", year: 2030 }) });
    const patched = await call(api, "PATCH", `/v1/invoices/${other.body.id}`, { auth: TA, body: { number: 72 } });
    assert.equal(patched.status, 409, patched.text);
    assert.deepEqual(detailFields(patched.body.error), ["number"]);
    const { id, created_at, updated_at, organization_id, ...rest } = other.body;
    const replaced = await call(api, "PUT", `/v1/invoices/${other.body.id}`, { auth: TA, body: { ...rest, code: "U-2" } });
    assert.equal(replaced.status, 409, replaced.text);
    assert.deepEqual(detailFields(replaced.body.error), ["code", "year"]);
    // The platform writes into either tenant by naming it: the same rule.
    const platform = await call(api, "POST", "/v1/invoices", { body: invoice({ code: "U-1", year: 2030, organization_id: B.id }) });
    assert.equal(platform.status, 409, platform.text);
  });
});

describe(`SPEC §12.2: a query parameter the list does not take (${STORE})`, () => {
  test("?created_at= and ?id= on a list are not allowed (a query has no read-only keys)", async () => {
    for (const name of ["created_at", "updated_at", "id"]) {
      const res = await call(api, "GET", `/v1/invoices?${name}=2026-01-01T00:00:00Z`, { auth: TA });
      names(res, name);
      assert.equal(res.body.error.details[0].issue, "is not allowed", res.text);
    }
  });
});

describe(`SPEC §12.4: in the tenant collection a tenant sees only its own record, on every path (${STORE})`, () => {
  test("its list, filters, search, export and events feed hold its organization only; it creates none (403), keyed or not", async () => {
    await expectStatus(api, "PATCH", `/v1/organizations/${B.id}`, 200, { body: { name: "Bolt Org 2" } });
    const ids = (res: Res) => res.body.data.map((o: Obj) => o.id);
    assert.deepEqual(ids(await expectStatus(api, "GET", "/v1/organizations?limit=100", 200, { auth: TA })), [A.id]);
    assert.deepEqual(ids(await expectStatus(api, "GET", "/v1/organizations?q=Org", 200, { auth: TA })), [A.id]);
    assert.deepEqual(ids(await expectStatus(api, "GET", "/v1/organizations?q=Bolt", 200, { auth: TA })), []);
    assert.deepEqual(
      ids(await expectStatus(api, "GET", "/v1/organizations?created_at[gte]=2000-01-01T00:00:00Z", 200, { auth: TA })),
      [A.id],
    );
    for (const headers of [{}, { "idempotency-key": "tenant-creates-a-tenant" }] as Array<Record<string, string>>) {
      const refused = await call(api, "POST", "/v1/organizations", { auth: TA, body: { name: "Mine" }, headers });
      assert.equal(refused.status, 403, refused.text);
    }
    assert.deepEqual(ids(await expectStatus(api, "GET", "/v1/organizations?limit=100", 200)).sort(), [A.id, B.id].sort());
    // Its export: its organization only.
    let job = (await expectStatus(api, "POST", "/v1/exports", 201, { auth: TA, body: { resource: "organizations" } })).body;
    for (let i = 0; i < 200 && (job.status === "pending" || job.status === "running"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      job = (await expectStatus(api, "GET", `/v1/exports/${job.id}`, 200, { auth: TA })).body;
    }
    assert.equal(job.status, "succeeded", JSON.stringify(job));
    const url = job.download_url.startsWith("/") ? job.download_url : new URL(job.download_url).pathname;
    const file = await expectStatus(api, "GET", url, 200, { auth: TA });
    const lines = file.text.split("\n").filter((line) => line !== "");
    assert.deepEqual(lines.map((line) => JSON.parse(line).id), [A.id]);
    // Its events feed: its organization's events only, none of the other's (created, updated).
    const events: Obj[] = [];
    for (let cursor: string | null = null, i = 0; i === 0 || cursor !== null; i++) {
      const page: Obj = (await expectStatus(api, "GET", `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ""}`, 200, { auth: TA })).body;
      events.push(...page.data);
      cursor = page.pagination.next_cursor;
    }
    const organizations = events.filter((e) => e.type.startsWith("organization."));
    assert.deepEqual(organizations.map((e) => [e.type, e.data.id]), [["organization.created", A.id]]);
  });
});
