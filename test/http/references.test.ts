// SPEC §12.3 "every references is enforced", over HTTP on the service generated from
// test/fixtures/helpdesk, on the store CANON_TEST_STORE names: an id in an array's items, in an
// object's field and in an action's field must name an existing record (422
// BUSINESS_RULE_VIOLATION naming where it is: `tag_ids.1`, `contact.agent_id`, `agent_id`).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { expectError, expectStatus, startFixture, UNKNOWN_ID, type Api } from "./helpers.ts";

type Obj = Record<string, any>;
const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api;
let org: Obj;
let agent: Obj;
let tag: Obj;

before(async () => {
  api = await startFixture("http-references", "test/fixtures/helpdesk", ["v1"]);
  org = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Acme" } })).body as Obj;
  agent = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Ann" } })).body as Obj;
  tag = (await expectStatus(api, "POST", "/v1/tags", 201, { body: { name: "billing" } })).body as Obj;
});
after(() => api?.close());

const fields = (error: Obj) => (error.details as Obj[]).map((d) => d.field);

describe(`references inside arrays, objects and actions, ${STORE} store`, () => {
  test("an array's items: every id must name a record; the order given is kept", async () => {
    const error = await expectError(api, "POST", "/v1/tickets", 422, "BUSINESS_RULE_VIOLATION", {
      body: { organization_id: org.id, subject: "x", tag_ids: [tag.id, UNKNOWN_ID] },
    });
    assert.deepEqual(fields(error), ["tag_ids.1"]);
    const second = (await expectStatus(api, "POST", "/v1/tags", 201, { body: { name: "urgent" } })).body as Obj;
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "x", tag_ids: [second.id, tag.id] } })).body as Obj;
    assert.deepEqual(ticket.tag_ids, [second.id, tag.id]);
    const patched = await expectError(api, "PATCH", `/v1/tickets/${ticket.id}`, 422, "BUSINESS_RULE_VIOLATION", {
      // Two ids that name no record (one id twice would be a 400: a relation names a record once).
      body: { tag_ids: [UNKNOWN_ID, tag.id, UNKNOWN_ID.replace(/7$/, "8")] },
    });
    assert.deepEqual(fields(patched), ["tag_ids.0", "tag_ids.2"]);
    const unchanged = (await expectStatus(api, "GET", `/v1/tickets/${ticket.id}`, 200)).body as Obj;
    assert.deepEqual(unchanged.tag_ids, [second.id, tag.id], "nothing changed");
  });

  test("an object's field", async () => {
    const error = await expectError(api, "POST", "/v1/tickets", 422, "BUSINESS_RULE_VIOLATION", {
      body: { organization_id: org.id, subject: "x", contact: { agent_id: UNKNOWN_ID } },
    });
    assert.deepEqual(fields(error), ["contact.agent_id"]);
    await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "x", contact: { agent_id: agent.id } } });
  });

  test("an action's field: no action record is made", async () => {
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "x" } })).body as Obj;
    const error = await expectError(api, "POST", `/v1/tickets/${ticket.id}/escalations`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { agent_id: UNKNOWN_ID },
    });
    assert.deepEqual(fields(error), ["agent_id"]);
    const made = (await expectStatus(api, "POST", `/v1/tickets/${ticket.id}/escalations`, 201, { body: { agent_id: agent.id } })).body as Obj;
    assert.equal(made.agent_id, agent.id);
  });

  test("an optional and nullable reference left out reads null on every path, as the SQL stores keep it", async () => {
    const lone = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Lone" } })).body as Obj;
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "unassigned" } })).body as Obj;
    assert.equal(ticket.assignee_id, null, "the create's answer");
    const read = (await expectStatus(api, "GET", `/v1/tickets/${ticket.id}`, 200)).body as Obj;
    assert.equal(read.assignee_id, null, "a read");
    assert.ok("assignee_id" in read);
    const listed = (await expectStatus(api, "GET", `/v1/organizations/${org.id}/tickets?assignee_id[null]=true&limit=100`, 200)).body as Obj;
    assert.equal((listed.data as Obj[]).find((t) => t.id === ticket.id)?.assignee_id, null, "a list filtered on it");
    const events = ((await expectStatus(api, "GET", "/v1/events?limit=100", 200)).body as Obj).data as Obj[];
    const created = events.find((e) => e.type === "ticket.created" && (e.data as Obj).id === ticket.id);
    assert.equal((created?.data as Obj).assignee_id, null, "its event");
    // Assigned, then unassigned again by a replace that leaves it out: null, not absent.
    const assigned = (await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { assignee_id: lone.id } })).body as Obj;
    assert.equal(assigned.assignee_id, lone.id);
    const mine = (await expectStatus(api, "GET", `/v1/agents/${lone.id}/tickets`, 200)).body as Obj;
    assert.deepEqual((mine.data as Obj[]).map((t) => t.id), [ticket.id], "list_under from the agent's side");
    const cleared = (await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { assignee_id: null } })).body as Obj;
    assert.equal(cleared.assignee_id, null);
  });

  test("an agent named by an action record cannot be deleted (restrict, the default)", async () => {
    const other = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Bob" } })).body as Obj;
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "y" } })).body as Obj;
    await expectStatus(api, "POST", `/v1/tickets/${ticket.id}/escalations`, 201, { body: { agent_id: other.id } });
    await expectError(api, "DELETE", `/v1/agents/${other.id}`, 422, "BUSINESS_RULE_VIOLATION");
  });
});

describe(`a record named from inside an object, an array of objects or an action's object cannot be deleted (restrict), ${STORE} store`, () => {
  const named = async () => (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Named" } })).body as Obj;
  const refused = async (agentId: string, holder: string) => {
    const error = await expectError(api, "DELETE", `/v1/agents/${agentId}`, 422, "BUSINESS_RULE_VIOLATION");
    assert.match(String(error.message), new RegExp(`Records of ${holder} still refer to this record`));
    assert.equal((await expectStatus(api, "GET", `/v1/agents/${agentId}`, 200)).status, 200, "still there");
  };

  test("an object's field (contact.agent_id); once no record names it, it goes", async () => {
    const a = await named();
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "c", contact: { agent_id: a.id, note: "n" } } })).body as Obj;
    await refused(a.id, "tickets");
    await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { contact: { note: "n" } } });
    await expectStatus(api, "DELETE", `/v1/agents/${a.id}`, 204);
  });

  test("an array of objects (watchers.*.agent_id)", async () => {
    const a = await named();
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "w", watchers: [{ agent_id: agent.id }, { agent_id: a.id }] } })).body as Obj;
    await refused(a.id, "tickets");
    await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { watchers: [{ agent_id: agent.id }] } });
    await expectStatus(api, "DELETE", `/v1/agents/${a.id}`, 204);
  });

  test("an action's object holding an array of ids (cc.agent_ids.*): the action record holds it until its ticket goes", async () => {
    const a = await named();
    const ticket = (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: org.id, subject: "e" } })).body as Obj;
    await expectStatus(api, "POST", `/v1/tickets/${ticket.id}/escalations`, 201, { body: { agent_id: agent.id, cc: { agent_ids: [a.id] } } });
    await refused(a.id, "tickets/escalations");
    // The ticket's delete takes its action records along; then nothing names the agent.
    await expectStatus(api, "DELETE", `/v1/tickets/${ticket.id}`, 204);
    await expectStatus(api, "DELETE", `/v1/agents/${a.id}`, 204);
  });

  test("a record deleted with the one it names does not hold it: an organization's delete takes its tickets along", async () => {
    const a = await named();
    const other = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Gone soon" } })).body as Obj;
    await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: other.id, subject: "o", contact: { agent_id: a.id } } });
    await refused(a.id, "tickets");
    await expectStatus(api, "DELETE", `/v1/organizations/${other.id}`, 204);
    await expectStatus(api, "DELETE", `/v1/agents/${a.id}`, 204);
  });
});
