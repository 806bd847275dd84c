// SPEC §12.5 hooks in code over HTTP, on the service generated from test/fixtures/hooks with the
// documented example (test/fixtures/hooks-example.ts, docs/hooks.md) and hooks of the test's
// own, on the store CANON_TEST_STORE names (memory, pglite or postgres). Also: services get the
// principal, and `authorize` is told the record a list hangs under.
import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { call, detailFields, expectError, expectStatus, startFixture, type Api } from "./helpers.ts";
import { repoRoot } from "../support/cli.ts";
import { SPEC_COMPILER_OPTIONS, tscAsync } from "../support/tsc.ts";

type Obj = Record<string, any>;

const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api & { dir: string };
let org: Obj;
const seen: Obj[] = [];
const accesses: Obj[] = [];
const logged: string[] = [];
/** What the delete hook read back of the audit record it had just written. */
const deleteReads: Array<Obj | null> = [];
/** Set while the delete hook of a ticket named `race` waits, having read its organization. */
let raceRead: (() => void) | null = null;

before(async () => {
  const stream = new PassThrough();
  stream.on("data", (chunk: Buffer) => logged.push(chunk.toString()));
  api = await startFixture("http-hooks", "test/fixtures/hooks", ["v1"], {
    logger: { level: "error", stream },
    authorize: (access: Obj) => {
      accesses.push(access);
      return access.principal.scopes.includes(
        access.action === "list" || access.action === "read" ? "read" : "write",
      );
    },
    prepare: async (dir: string) => {
      copyFileSync(path.join(repoRoot, "test/fixtures/hooks-example.ts"), path.join(dir, "hooks-example.ts"));
      const example = (await import(pathToFileURL(path.join(dir, "hooks-example.ts")).href)) as Obj;
      const tickets = example.hooks.tickets;
      return {
        hooks: {
          tickets: {
            ...tickets,
            async create(args: Obj) {
              seen.push({ principal: args.principal, requestId: args.requestId, current: args.current });
              await tickets.create(args);
              // Decimals a hook sets, on the record and through the handle (SPEC §12.6: `scale` digits).
              if (typeof args.values.subject === "string" && args.values.subject.startsWith("estimate ")) {
                args.values.estimate = args.values.subject.slice("estimate ".length);
                await args.store.insert("audits", { text: `estimated ${args.values.estimate}`, cost: "5.5" });
              }
              // Decimals inside a map, an object and an array's items, on the record and through the handle.
              if (typeof args.values.subject === "string" && args.values.subject.startsWith("quotes ")) {
                const [quote, cost] = JSON.parse(args.values.subject.slice("quotes ".length));
                args.values.quotes = { base: quote, "extra.1": "0" };
                await args.store.insert("audits", {
                  text: `quoted ${args.values.subject}`,
                  breakdown: { total: "-0", parts: [{ cost }, { cost: "1.5" }] },
                });
              }
              // A map a hook sets (SPEC §12.6: its key rules and max_items hold).
              if (typeof args.values.subject === "string" && args.values.subject.startsWith("labels ")) {
                args.values.labels = JSON.parse(args.values.subject.slice("labels ".length));
                await args.store.insert("audits", { text: `labelled ${args.values.subject}` });
              }
              // A plain Error after a write through the handle: 500, and nothing of either is kept.
              if (args.values.subject === "boom") {
                await args.store.insert("audits", { text: "never kept" });
                throw new Error("the hook failed: secret-detail");
              }
            },
            // With reason "recompute", the action's hook updates the ticket it acts on through
            // the handle (a computed field), and the action's `sets` (priority urgent) go on top.
            async escalations(args: Obj) {
              if (args.values.reason === "recompute")
                await args.store.update("tickets", args.current, { ...args.current.values, estimate: "9" });
              await tickets.escalations(args);
            },
            // Notes each delete in an audit record, reads it back through the handle (a record
            // written earlier in the same write), and then, by the ticket's subject, fails or
            // waits after reading the ticket's organization.
            async delete(args: Obj) {
              const audit = await args.store.insert("audits", {
                text: `${args.principal.id} deleted ${args.current.id}`,
              });
              deleteReads.push(await args.store.get("audits", audit.id));
              if (args.current.values.subject === "boom on delete")
                throw new Error("the delete hook failed: secret-delete");
              if (args.current.values.subject === "race") {
                await args.store.get("organizations", args.current.values.organization_id);
                await new Promise<void>((resolve) => (raceRead = resolve));
              }
            },
          },
        },
      };
    },
  });
  org = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Acme" } })).body as Obj;
});

after(() => api?.close());

async function ticket(body: Obj = {}): Promise<Obj> {
  return (
    await expectStatus(api, "POST", "/v1/tickets", 201, {
      body: { organization_id: org.id, subject: "Printer", ...body },
    })
  ).body as Obj;
}

async function events(): Promise<Obj[]> {
  return ((await expectStatus(api, "GET", "/v1/events?limit=100", 200)).body as Obj).data;
}

async function audits(): Promise<Obj[]> {
  return ((await expectStatus(api, "GET", "/v1/audits?limit=100", 200)).body as Obj).data;
}

const HOUR = 3_600_000;

describe(`hooks (SPEC §12.5), ${STORE} store`, () => {
  test(
    "the documented example type-checks against the generated types",
    { skip: STORE !== "memory" && "a type check: the memory run covers it, the store changes nothing" },
    async () => {
      const result = await tscAsync(path.join(api.dir, "tsconfig.example.json"), SPEC_COMPILER_OPTIONS, [
        path.join(api.dir, "hooks-example.ts"),
      ]);
      assert.equal(result.code, 0, result.output);
    },
  );

  test("a create hook computes a read_only field, with the principal and the request id", async () => {
    const res = await expectStatus(api, "POST", "/v1/tickets", 201, {
      body: { organization_id: org.id, subject: "Urgent", priority: "urgent" },
    });
    const due = Date.parse(res.body.resolution_due_at) - Date.parse(res.body.created_at);
    assert.ok(Math.abs(due - 4 * HOUR) < 5_000, `due 4 h after creation, is ${due} ms`);
    const last = seen[seen.length - 1]!;
    assert.equal(last.principal.id, "dev-writer");
    assert.equal(last.requestId, res.headers.get("x-request-id"));
    assert.equal(last.current, null);
    // A client may not send it.
    await expectError(api, "POST", "/v1/tickets", 400, "VALIDATION_ERROR", {
      body: { organization_id: org.id, subject: "x", resolution_due_at: new Date().toISOString() },
    });
  });

  test("an update hook moves the due date with the priority", async () => {
    const t = await ticket({ priority: "low" });
    const res = await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, {
      body: { priority: "normal" },
    });
    assert.equal(Date.parse(res.body.resolution_due_at) - Date.parse(t.created_at), 24 * HOUR);
    const read = await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200);
    assert.equal(read.body.resolution_due_at, res.body.resolution_due_at);
  });

  test("a hook refuses: 422 with its details, nothing written, no event", async () => {
    const t = await ticket();
    const before = (await events()).length;
    const error = await expectError(api, "PATCH", `/v1/tickets/${t.id}`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { status: "closed" },
    });
    assert.deepEqual(error.details, [{ field: "resolution", issue: "is required to close a ticket" }]);
    assert.equal((await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200)).body.status, "open");
    assert.equal((await events()).length, before);
    const closed = await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, {
      body: { status: "closed", resolution: "Fixed" },
    });
    assert.equal(closed.body.status, "closed");
  });

  test("a hook writes another record through the handle: both records and both events, in order", async () => {
    const t = await ticket();
    const count = (await events()).length;
    await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, { body: { status: "solved" } });
    const audit = (await audits()).find((a) => a.ticket_id === t.id);
    assert.ok(audit, "the audit record exists");
    assert.equal(audit.text, "dev-writer moved it from open to solved");
    const added = (await events()).slice(count);
    assert.deepEqual(
      added.map((e) => e.type),
      ["audit.created", "ticket.updated"],
    );
    assert.equal(added[0].data.id, audit.id);
    assert.equal(added[1].data.id, t.id);
  });

  test("an action's hook sees the record acted on and sets the action's values", async () => {
    const t = await ticket({ priority: "low" });
    const res = await expectStatus(api, "POST", `/v1/tickets/${t.id}/escalations`, 201, { body: {} });
    assert.equal(res.body.reason, "escalated at priority low");
    assert.equal((await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200)).body.priority, "urgent");
  });

  test("an action's hook that updates the record acted on: one update, the hook's values with the action's sets on top, one event", async () => {
    const t = await ticket({ priority: "low" });
    const before = (await events()).length;
    const res = await expectStatus(api, "POST", `/v1/tickets/${t.id}/escalations`, 201, {
      body: { reason: "recompute" },
    });
    assert.equal(res.body.reason, "recompute");
    const read = await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200);
    assert.deepEqual([read.body.priority, read.body.estimate], ["urgent", "9.00"]);
    assert.equal(read.headers.get("etag"), `"${t.id}.2"`, "one new revision");
    const added = (await events())
      .slice(before)
      .filter((e) => e.data.id === t.id || e.type === "ticket.escalation.created");
    assert.deepEqual(
      added.map((e) => e.type),
      ["ticket.updated", "ticket.escalation.created"],
    );
    assert.deepEqual([added[0].data.priority, added[0].data.estimate], ["urgent", "9.00"]);
  });

  test("a decimal a hook sets is written with its scale's digits, on the record and through the handle; one the field cannot hold answers 500, nothing written", async () => {
    const priced = await ticket({ subject: "estimate 1.5" });
    assert.equal(priced.estimate, "1.50");
    assert.equal(
      ((await expectStatus(api, "GET", `/v1/tickets/${priced.id}`, 200)).body as Obj).estimate,
      "1.50",
    );
    const created = (await events()).find((e) => e.type === "ticket.created" && e.data.id === priced.id);
    assert.equal(created?.data.estimate, "1.50");
    const audit = (await audits()).find((a) => a.text === "estimated 1.5");
    assert.equal(audit?.cost, "5.500");
    for (const bad of ["abc", "12345.5", "-1", "1.234"]) {
      const before = (await audits()).length;
      await expectError(api, "POST", "/v1/tickets", 500, "INTERNAL_ERROR", {
        body: { organization_id: org.id, subject: `estimate ${bad}` },
      });
      assert.equal((await audits()).length, before, `${bad}: the hook's audit is not kept either`);
      assert.ok(
        logged.some(
          (line) =>
            line.includes('decimal field \\"estimate\\"') && line.includes(JSON.stringify(bad).slice(1, -1)),
        ),
        `${bad}: logged`,
      );
    }
  });

  test("a decimal a hook sets inside a map, an object or an array's items is written with its scale's digits too; one its field cannot hold answers 500, nothing written", async () => {
    const quoted = await ticket({ subject: 'quotes ["12.5","7"]' });
    assert.deepEqual(quoted.quotes, { base: "12.50", "extra.1": "0.00" });
    assert.deepEqual(((await expectStatus(api, "GET", `/v1/tickets/${quoted.id}`, 200)).body as Obj).quotes, {
      base: "12.50",
      "extra.1": "0.00",
    });
    const created = (await events()).find((e) => e.type === "ticket.created" && e.data.id === quoted.id);
    assert.deepEqual(created?.data.quotes, { base: "12.50", "extra.1": "0.00" });
    const audit = (await audits()).find((a) => a.text === 'quoted quotes ["12.5","7"]');
    assert.deepEqual(audit?.breakdown, { total: "0.000", parts: [{ cost: "7.000" }, { cost: "1.500" }] });
    for (const [bad, field] of [
      ['["-1","1"]', "quotes.base"],
      ['["1.234","1"]', "quotes.base"],
      ['["1","100.001"]', "breakdown.parts.0.cost"],
      ['["1","1e2"]', "breakdown.parts.0.cost"],
    ] as const) {
      const before = (await audits()).length;
      await expectError(api, "POST", "/v1/tickets", 500, "INTERNAL_ERROR", {
        body: { organization_id: org.id, subject: `quotes ${bad}` },
      });
      assert.equal((await audits()).length, before, `${bad}: the hook's audit is not kept either`);
      assert.ok(
        logged.some((line) => line.includes(`decimal field \\"${field}\\"`)),
        `${bad}: logged naming ${field}`,
      );
    }
  });

  test("a map a hook sets is held to the rules of every map: keys, max_items, an object; one that breaks them answers 500, nothing written", async () => {
    const labelled = await ticket({ subject: 'labels {"team.a":"x","b-2":"y"}' });
    assert.deepEqual(labelled.labels, { "team.a": "x", "b-2": "y" });
    for (const [bad, said] of [
      ['{"a/b":"x"}', 'has the key \\"a/b\\"'],
      ['{"a":"1","b":"2","c":"3","d":"4"}', "must have at most 3 keys"],
      ['["x"]', "is not an object"],
      [`{"${"k".repeat(41)}":"x"}`, "is not a valid key"],
    ] as const) {
      const before = (await audits()).length;
      await expectError(api, "POST", "/v1/tickets", 500, "INTERNAL_ERROR", {
        body: { organization_id: org.id, subject: `labels ${bad}` },
      });
      assert.equal((await audits()).length, before, `${bad}: the hook's audit is not kept either`);
      assert.ok(
        logged.some((line) => line.includes('map field \\"labels\\"') && line.includes(said)),
        `${bad}: logged (${said})`,
      );
    }
  });

  test("a hook that throws a plain Error: 500 envelope, nothing written (its other record neither), logged", async () => {
    const beforeEvents = (await events()).length;
    const beforeAudits = (await audits()).length;
    const beforeTickets = ((await expectStatus(api, "GET", "/v1/tickets?limit=100", 200)).body as Obj).data
      .length;
    const res = await expectStatus(api, "POST", "/v1/tickets", 500, {
      body: { organization_id: org.id, subject: "boom" },
    });
    assert.deepEqual(res.body, {
      error: { code: "INTERNAL_ERROR", message: "An unexpected error occurred." },
    });
    assert.doesNotMatch(res.text, /secret-detail/);
    assert.equal((await events()).length, beforeEvents);
    assert.equal((await audits()).length, beforeAudits);
    assert.equal(
      ((await expectStatus(api, "GET", "/v1/tickets?limit=100", 200)).body as Obj).data.length,
      beforeTickets,
    );
    assert.match(logged.join(""), /secret-detail/, "the original error is logged");
  });

  test("a delete hook writes another record: kept with the delete, its event first; it reads its own write back", async () => {
    const t = await ticket({ subject: "Old printer" });
    const count = (await events()).length;
    deleteReads.length = 0;
    await expectStatus(api, "DELETE", `/v1/tickets/${t.id}`, 204);
    await expectError(api, "GET", `/v1/tickets/${t.id}`, 404, "NOT_FOUND");
    const audit = (await audits()).find((a) => a.text === `dev-writer deleted ${t.id}`);
    assert.ok(audit, "the audit record exists");
    assert.equal(deleteReads.length, 1);
    assert.equal(deleteReads[0]?.id, audit.id, "the hook read the record it wrote in the same write");
    const added = (await events()).slice(count);
    assert.deepEqual(
      added.map((e) => e.type),
      ["audit.created", "ticket.deleted"],
    );
    assert.equal(added[0].data.id, audit.id);
    assert.equal(added[1].data.id, t.id);
  });

  test("a delete hook that writes a record and then throws: 500, neither the delete nor the record kept, logged", async () => {
    const t = await ticket({ subject: "boom on delete" });
    const beforeEvents = (await events()).length;
    const beforeAudits = (await audits()).length;
    const res = await expectStatus(api, "DELETE", `/v1/tickets/${t.id}`, 500);
    assert.deepEqual(res.body, {
      error: { code: "INTERNAL_ERROR", message: "An unexpected error occurred." },
    });
    assert.doesNotMatch(res.text, /secret-delete/);
    assert.equal((await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200)).body.id, t.id);
    assert.equal((await audits()).length, beforeAudits);
    assert.equal((await events()).length, beforeEvents);
    assert.match(logged.join(""), /secret-delete/, "the original error is logged");
  });

  test("what a hook read holds in the write's transaction: changed before the commit, 409 with If-Match and nothing written; without, the write is done again", async () => {
    const other = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Other" } }))
      .body as Obj;
    const t = await ticket({ subject: "race", organization_id: other.id });
    const beforeAudits = (await audits()).length;
    const etag = (await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200)).headers.get("etag")!;
    const hookRead = async () => {
      for (let i = 0; raceRead === null; i++) {
        assert.ok(i < 500, "the delete hook never read the organization");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const release = raceRead as () => void;
      raceRead = null;
      return release;
    };
    const deleting = call(api, "DELETE", `/v1/tickets/${t.id}`, { headers: { "if-match": etag } });
    for (let i = 0; raceRead === null; i++) {
      assert.ok(i < 500, "the delete hook never read the organization");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await expectStatus(api, "PATCH", `/v1/organizations/${other.id}`, 200, {
      body: { name: "Other renamed" },
    });
    const release = raceRead as () => void;
    raceRead = null;
    release();
    const res = await deleting;
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.code, "CONFLICT");
    assert.equal((await expectStatus(api, "GET", `/v1/tickets/${t.id}`, 200)).body.id, t.id);
    assert.equal((await audits()).length, beforeAudits);
    // Without If-Match, a change between the hook's read and the commit has the delete done again:
    // its hook reads the organization anew, and the delete goes through.
    const again = call(api, "DELETE", `/v1/tickets/${t.id}`);
    const first = await hookRead();
    await expectStatus(api, "PATCH", `/v1/organizations/${other.id}`, 200, {
      body: { name: "Other renamed again" },
    });
    first();
    (await hookRead())();
    assert.equal((await again).status, 204);
    assert.equal((await audits()).length, beforeAudits + 1, "one delete, one audit");
  });

  test("authorize sees the principal, and the record a list hangs under", async () => {
    await ticket();
    accesses.length = 0;
    await expectStatus(api, "GET", `/v1/organizations/${org.id}/tickets`, 200);
    const list = accesses.find((a) => a.action === "list" && a.collection === "tickets")!;
    assert.equal(list.principal.id, "dev-writer");
    assert.equal(list.under.collection, "organizations");
    assert.equal(list.under.record.id, org.id);
    assert.equal(list.under.record.values.name, "Acme");
    accesses.length = 0;
    await expectStatus(api, "GET", "/v1/tickets", 200);
    const top = accesses.find((a) => a.action === "list" && a.collection === "tickets")!;
    assert.equal(top.under, undefined);
  });

  test("a reference that is optional and nullable: on SQL a uuid column with its foreign key; a record naming a deleted record goes with it (on_delete: cascade)", async () => {
    const t = await ticket();
    const named = (
      await expectStatus(api, "POST", "/v1/audits", 201, {
        body: { ticket_id: t.id, text: "names the ticket" },
      })
    ).body as Obj;
    const none = (
      await expectStatus(api, "POST", "/v1/audits", 201, { body: { ticket_id: null, text: "names none" } })
    ).body as Obj;
    assert.equal(named.ticket_id, t.id);
    assert.equal(none.ticket_id, null);
    // A ticket that does not exist is refused (on SQL by the foreign key).
    const missing = await expectStatus(api, "POST", "/v1/audits", 422, {
      body: { ticket_id: "00000000-0000-4000-8000-000000000000", text: "names nothing" },
    });
    assert.deepEqual(detailFields(missing.body.error), ["ticket_id"]);
    // The delete walks the records that go with the ticket (on SQL: jsonb = uuid failed here).
    await expectStatus(api, "DELETE", `/v1/tickets/${t.id}`, 204);
    await expectError(api, "GET", `/v1/audits/${named.id}`, 404, "NOT_FOUND");
    assert.equal((await expectStatus(api, "GET", `/v1/audits/${none.id}`, 200)).body.ticket_id, null);
  });
});
