// `export` in a definition, end to end: the definition format (`true`, or the formats offered),
// and a service generated from the showcase with `users` exportable as CSV only. The users have
// a write-only field (password), which no file ever holds, and offset pagination, which an
// export does not use: the file is every record in id order.
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { BASE_URL, detailFields, expectError, expectStatus, listen, loadContract, SUNSET, type Api } from "../http/helpers.ts";
import { csvCell, csvRows, download, exportsFolder, settled } from "./helpers.ts";

type Obj = Record<string, any>;

describe("export in the definition format", () => {
  let dir = "";
  before(() => {
    dir = workspace("exports-format", "definitions");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("export takes true or the formats offered; anything else is an error naming file, line and rule", () => {
    const file = path.join(dir, "definitions", "products.yaml");
    const original = readFileSync(file, "utf8");
    for (const [value, ok] of [
      ["true", true],
      ["false", true],
      ["{ formats: [csv] }", true],
      ["{ formats: [ndjson, csv] }", true],
      ["{ formats: [] }", false],
      ["{ formats: [xml] }", false],
      ["{ format: csv }", false],
      ["yes please", false],
    ] as const) {
      writeFileSync(file, `${original}export: ${value}\n`);
      const run = canon(["lint"], dir);
      assert.equal(run.code, ok ? 0 : 1, `export: ${value}\n${run.stdout}${run.stderr}`);
      if (!ok) assert.match(run.stdout + run.stderr, /products\.yaml:\d+:\d+ error/);
    }
    writeFileSync(file, original);
  });

  test("a collection named exports collides with /vN/exports once a resource sets export", () => {
    writeFileSync(
      path.join(dir, "definitions", "exports.yaml"),
      "resource: exports\nfields:\n  name: { type: string }\n",
    );
    try {
      const run = canon(["lint"], dir);
      assert.equal(run.code, 1);
      assert.match(run.stdout + run.stderr, /exports\.yaml:\d+:\d+ error path-conflict/);
    } finally {
      rmSync(path.join(dir, "definitions", "exports.yaml"));
    }
  });
});

/**
 * The showcase with `tail` appended to users.yaml (its export, a field), generated into a
 * workspace of its own and served over HTTP, its exports kept in `folder`.
 */
async function serveUsers(name: string, tail: string, folder: ReturnType<typeof exportsFolder>): Promise<{ dir: string; api: Api }> {
  const dir = workspace(name, "definitions");
  const users = path.join(dir, "definitions", "users.yaml");
  writeFileSync(users, `${readFileSync(users, "utf8")}${tail}`);
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, exports: { directory: folder.directory } });
  const contract = loadContract(name, out, ["v1", "v2"], new Map([["v1", { sunset: SUNSET, successor: "v2", baseUrl: BASE_URL }]]));
  return { dir, api: await listen(app, contract) };
}

describe("a generated service that exports users as CSV", () => {
  let dir = "";
  let api: Api;
  const folder = exportsFolder();

  before(async () => {
    ({ dir, api } = await serveUsers("exports-users", "export: { formats: [csv] }\n", folder));
  });
  after(async () => {
    await api?.close();
    folder.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the document offers both collections, each in its own formats", () => {
    const doc = api.contract.documents.get("v2")!;
    const create = doc.components.schemas;
    assert.deepEqual(create.ExportCreate.discriminator.mapping, {
      orders: "#/components/schemas/OrderExportCreate",
      users: "#/components/schemas/UserExportCreate",
    });
    assert.deepEqual(create.UserExportCreate.properties.format, { type: "string", enum: ["csv"], default: "csv", description: "The file's format." });
    assert.deepEqual(Object.keys(doc.paths["/v2/exports/{id}/files/{token}"].get.responses["200"].content), ["application/x-ndjson", "text/csv"]);
  });

  test("the default format is the first offered; one not offered is a 400 naming format", async () => {
    const error = await expectError(api, "POST", "/v2/exports", 400, "VALIDATION_ERROR", { body: { resource: "users", format: "ndjson" } });
    assert.deepEqual(detailFields(error), ["format"]);
    const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "users" } })).body as Obj;
    assert.equal(job.format, "csv");
    await settled(api, "v2", job.id);
  });

  test("the file holds every user in id order, without the write-only password, whatever the list's pagination", async () => {
    for (let i = 0; i < 12; i++) {
      const body = { email: `person${i}@example.com`, name: i % 2 ? `Ann, "the" ${i}` : `Bo ${i}`, password: "correct horse battery", ...(i % 3 ? {} : { role: "admin" }) };
      await expectStatus(api, "POST", "/v2/users", 201, { body });
    }
    const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "users", filters: { role: "customer" } } })).body as Obj;
    const done = await settled(api, "v2", job.id);
    const [header, ...rows] = csvRows((await download(api, done.download_url)).text);
    assert.deepEqual(header, ["id", "email", "name", "role", "created_at", "updated_at"]);
    // The offset list in one page (at most 100): the same users, in the same order.
    const listed = ((await expectStatus(api, "GET", "/v2/users?role=customer&per_page=100", 200)).body as Obj).data as Obj[];
    assert.equal(listed.length, 8);
    assert.deepEqual(rows, listed.map((u) => header!.map((c) => csvCell(u[c]))));
    assert.ok(!rows.some((r) => r.includes("correct horse battery")));
  });
});

describe("a CSV export of a decimal field (SPEC §12.6)", () => {
  let dir = "";
  let api: Api;
  const folder = exportsFolder();

  before(async () => {
    ({ dir, api } = await serveUsers("exports-decimal", "  balance: { type: decimal, precision: 10, scale: 2, optional: true }\nexport: { formats: [csv] }\n", folder));
  });
  after(async () => {
    await api?.close();
    folder.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a negative decimal is written as the number it is; a text cell that starts with - is still guarded", async () => {
    const body = (name: string, balance: string) => ({ email: `${name.replace(/\W/g, "") || "minus"}@example.com`, name, password: "correct horse battery", balance });
    await expectStatus(api, "POST", "/v2/users", 201, { body: body("-1", "-5.00") });
    await expectStatus(api, "POST", "/v2/users", 201, { body: body("Bo", "1234.5") });
    const job = (await expectStatus(api, "POST", "/v2/exports", 201, { body: { resource: "users" } })).body as Obj;
    const done = await settled(api, "v2", job.id);
    const [header, ...rows] = csvRows((await download(api, done.download_url)).text);
    const at = (row: string[], column: string) => row[header!.indexOf(column)];
    assert.deepEqual(rows.map((r) => [at(r, "name"), at(r, "balance")]), [
      ["'-1", "-5.00"],
      ["Bo", "1234.50"],
    ]);
  });
});
