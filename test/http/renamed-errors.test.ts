// A field renamed in a later version keeps its earlier name in the earlier version's errors too
// (SPEC §5: a detail's field is the body path the client sends; §12.5: 422 naming the field):
// the store and the rules name fields by their storage names (`code`, `state`), which v1 calls
// `ref` and `status`. On the service generated from test/fixtures/renamed, on the store
// CANON_TEST_STORE names; every response is checked against the service's own documents.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../store/stores.ts";
import { expectError, expectStatus, listen, loadContract, type Api } from "./helpers.ts";

type Obj = Record<string, any>;

const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api;
let dir = "";
let store: { close(): Promise<void> } | undefined;
const schemas: string[] = [];

before(async () => {
  dir = workspace(`http-renamed-${STORE}`, "test/fixtures/renamed");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
  if (STORE === "postgres") {
    await preparePostgres();
    const schema = freshSchema("canon_renamed");
    schemas.push(schema);
    store = await sql.openStore(POSTGRES_URL, { schema });
  } else {
    store = await sql.openStore(STORE === "pglite" ? "pglite:memory://" : "memory");
  }
  const app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store });
  api = await listen(app, loadContract("renamed", out, ["v1", "v2"]));
});

after(async () => {
  await api?.close();
  await store?.close();
  await dropSchemas(schemas);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const fields = (error: Obj) => ((error.details ?? []) as Obj[]).map((d) => d.field as string);

test("a repeated unique value: v1 names ref, v2 code", async () => {
  await expectStatus(api, "POST", "/v1/tickets", 201, { body: { ref: "T-1", title: "One" } });
  const v1 = await expectError(api, "POST", "/v1/tickets", 409, "CONFLICT", { body: { ref: "T-1", title: "Two" } });
  assert.equal(v1.message, "Another record has this ref.");
  assert.deepEqual(fields(v1), ["ref"]);
  const v2 = await expectError(api, "POST", "/v2/tickets", 409, "CONFLICT", { body: { code: "T-1", title: "Two" } });
  assert.equal(v2.message, "Another record has this code.");
  assert.deepEqual(fields(v2), ["code"]);
});

test("a refused transition and an action's requires: v1 names status, v2 state", async () => {
  const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { ref: "T-2", title: "Two" } })).body as Obj;
  await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { status: "closed" } });
  const v1 = await expectError(api, "PATCH", `/v1/tickets/${ticket.id}`, 422, "BUSINESS_RULE_VIOLATION", { body: { status: "open" } });
  assert.deepEqual(fields(v1), ["status"]);
  assert.match(v1.message, /^status /);
  assert.doesNotMatch(JSON.stringify(v1), /\bstate\b/);
  const v2 = await expectError(api, "PATCH", `/v2/tickets/${ticket.id}`, 422, "BUSINESS_RULE_VIOLATION", { body: { state: "open" } });
  assert.deepEqual(fields(v2), ["state"]);
  const acted = await expectError(api, "POST", `/v1/tickets/${ticket.id}/reopenings`, 422, "BUSINESS_RULE_VIOLATION", { body: { reason: "again" } });
  assert.deepEqual(fields(acted), ["status"]);
  assert.doesNotMatch(JSON.stringify(acted), /\bstate\b/);
});
