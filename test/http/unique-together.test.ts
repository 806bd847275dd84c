// SPEC §12.3 "Composite unique" over HTTP, on the service generated from test/fixtures/agents
// (agents unique by [organization_id, email], [organization_id, handle], [handle, badge] and
// [organization_id, desk]), on the store CANON_TEST_STORE names: memory, pglite or postgres (a
// fresh schema). Every response is checked against the service's own OpenAPI document.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
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
let acme: Obj;
let other: Obj;

before(async () => {
  dir = workspace(`http-unique-${STORE}`, "test/fixtures/agents");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
  if (STORE === "postgres") {
    await preparePostgres();
    const schema = freshSchema("canon_unique");
    schemas.push(schema);
    store = await sql.openStore(POSTGRES_URL, { schema });
  } else {
    store = await sql.openStore(STORE === "pglite" ? "pglite:memory://" : "memory");
  }
  const app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store });
  api = await listen(app, loadContract("agents", out, ["v1"]));
  acme = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Acme" } })).body as Obj;
  other = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Other" } }))
    .body as Obj;
});

after(async () => {
  await api?.close();
  await store?.close();
  await dropSchemas(schemas);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

let handles = 0;
/** A body of a new agent: a handle and an email no other test uses, unless given. */
function agentBody(body: Obj = {}, organization: Obj = acme): Obj {
  handles += 1;
  return {
    organization_id: organization.id,
    email: `agent${handles}@example.com`,
    handle: `agent-${handles}`,
    ...body,
  };
}

async function create(body: Obj): Promise<Obj> {
  return (await expectStatus(api, "POST", "/v1/agents", 201, { body })).body as Obj;
}

/** The details of a 409 CONFLICT, as [field, issue] pairs. */
async function conflict(method: string, url: string, body: Obj): Promise<Array<[string, string]>> {
  const error = await expectError(api, method, url, 409, "CONFLICT", { body });
  return ((error.details ?? []) as Obj[]).map((d) => [d.field as string, d.issue as string]);
}

const TAKEN = (field: string, other: string): [string, string] => [
  field,
  `is already taken together with ${other}`,
];

describe(`composite unique on ${STORE}`, () => {
  test("a second record with the same pair answers 409 naming both fields; nothing is created", async () => {
    await create(agentBody({ email: "ann@example.com", handle: "ann" }));
    const details = await conflict("POST", "/v1/agents", agentBody({ email: "ann@example.com" }));
    assert.deepEqual(details, [TAKEN("organization_id", "email"), TAKEN("email", "organization_id")]);
    const list = (await expectStatus(api, "GET", "/v1/agents?limit=100", 200)).body as Obj;
    assert.equal(list.data.filter((a: Obj) => a.email === "ann@example.com").length, 1);
  });

  test("the same email or handle in another organization is accepted", async () => {
    await create(agentBody({ email: "bob@example.com", handle: "bob" }));
    const elsewhere = await create(agentBody({ email: "bob@example.com", handle: "bob", badge: 1 }, other));
    assert.equal(elsewhere.organization_id, other.id);
  });

  test("text compares normalized: surrounding white space, NFC, and the ASCII case of an email", async () => {
    const kept = await create(agentBody({ email: "carol@x.com", handle: "café" }));
    // An email with surrounding white space is no email (400): its case is what is ignored.
    await expectError(api, "POST", "/v1/agents", 400, "VALIDATION_ERROR", {
      body: agentBody({ email: " carol@x.com" }),
    });
    assert.deepEqual(await conflict("POST", "/v1/agents", agentBody({ email: "Carol@X.COM" })), [
      TAKEN("organization_id", "email"),
      TAKEN("email", "organization_id"),
    ]);
    assert.deepEqual(await conflict("POST", "/v1/agents", agentBody({ handle: " cafe\u0301" })), [
      TAKEN("organization_id", "handle"),
      TAKEN("handle", "organization_id"),
    ]);
    // Case matters outside emails; the value kept is the value sent.
    const upper = await create(agentBody({ handle: "Café" }));
    assert.equal(upper.handle, "Café");
    assert.equal(
      ((await expectStatus(api, "GET", `/v1/agents/${kept.id}`, 200)).body as Obj).email,
      "carol@x.com",
    );
    const mixed = await create(agentBody({ email: "Dave@X.com", handle: " dave\t" }));
    assert.deepEqual([mixed.email, mixed.handle], ["Dave@X.com", " dave\t"]);
    await conflict("POST", "/v1/agents", agentBody({ email: "dave@x.com" }));
    await conflict("POST", "/v1/agents", agentBody({ handle: "dave" }));
  });

  test("an update or replace into a duplicate answers 409 and changes nothing; keeping its own values is fine", async () => {
    await create(agentBody({ email: "erin@example.com" }));
    const frank = await create(agentBody({ email: "frank@example.com" }));
    const details = await conflict("PATCH", `/v1/agents/${frank.id}`, { email: "ERIN@example.com" });
    assert.deepEqual(details, [TAKEN("organization_id", "email"), TAKEN("email", "organization_id")]);
    const { organization_id, email, handle } = frank;
    await conflict("PUT", `/v1/agents/${frank.id}`, { organization_id, email: "erin@example.com", handle });
    const after = (await expectStatus(api, "GET", `/v1/agents/${frank.id}`, 200)).body as Obj;
    assert.deepEqual(after, frank, "nothing changed");
    // Its own pair again, and a move to another organization where the pair is free.
    await expectStatus(api, "PATCH", `/v1/agents/${frank.id}`, 200, { body: { email: "Frank@example.com" } });
    await expectStatus(api, "PATCH", `/v1/agents/${frank.id}`, 200, {
      body: { organization_id: other.id, email: "erin@example.com" },
    });
    // Its old pair is free again.
    await create(agentBody({ email: "frank@example.com" }));
  });

  test("a datetime in a composite unique compares by the instant it names, in any notation", async () => {
    const first = await create(agentBody({ shift_starts_at: "2026-06-01T10:00:00+02:00" }));
    assert.equal(first.shift_starts_at, "2026-06-01T10:00:00+02:00", "the value kept is the value sent");
    for (const same of ["2026-06-01T08:00:00Z", "2026-06-01T03:00:00-05:00", "2026-06-01T08:00:00.000Z"]) {
      const details = await conflict("POST", "/v1/agents", agentBody({ shift_starts_at: same }));
      assert.deepEqual(
        details,
        [TAKEN("organization_id", "shift_starts_at"), TAKEN("shift_starts_at", "organization_id")],
        same,
      );
    }
    // Another instant, or the same one in another organization: no conflict.
    await create(agentBody({ shift_starts_at: "2026-06-01T08:00:00.001Z" }));
    await create(agentBody({ shift_starts_at: "2026-06-01T08:00:00Z" }, other));
    const second = await create(agentBody({ shift_starts_at: "2026-06-02T08:00:00Z" }));
    await conflict("PATCH", `/v1/agents/${second.id}`, { shift_starts_at: "2026-06-01T12:00:00+04:00" });
  });

  test("a deleted record's pair is free again", async () => {
    const gone = await create(agentBody({ email: "gina@example.com" }));
    await expectStatus(api, "DELETE", `/v1/agents/${gone.id}`, 204);
    await create(agentBody({ email: "gina@example.com" }));
  });

  test("a record with a field of the list absent or null is held by nothing (NULLs are distinct, as in SQL)", async () => {
    // [handle, badge]: badge absent in both (different organizations, so the other lists hold).
    await create(agentBody({ handle: "hal" }));
    await create(agentBody({ handle: "hal" }, other));
  });

  test("[handle, badge] with both present answers 409 naming handle and badge", async () => {
    await create(agentBody({ handle: "ivy", badge: 3 }));
    assert.deepEqual(await conflict("POST", "/v1/agents", agentBody({ handle: "ivy ", badge: 3 }, other)), [
      TAKEN("handle", "badge"),
      TAKEN("badge", "handle"),
    ]);
    await create(agentBody({ handle: "ivy", badge: 4 }, other));
  });

  test("an optional and nullable field: null and absent are held by nothing, a value is", async () => {
    await create(agentBody({ desk: null }));
    await create(agentBody({ desk: null }));
    await create(agentBody({}));
    await create(agentBody({ desk: "A1" }));
    assert.deepEqual(await conflict("POST", "/v1/agents", agentBody({ desk: " A1" })), [
      TAKEN("organization_id", "desk"),
      TAKEN("desk", "organization_id"),
    ]);
    await create(agentBody({ desk: "A1" }, other));
  });
});
