// A delete refused by `restrict` (SPEC §12.3: 422 naming the referring collection) names the same
// collection on every store when records of several collections refer to the record: the first
// in the generated order of references (`storeReferences`), as the memory store checks them. On
// PostgreSQL and PGlite the foreign key that refuses the delete is whichever the database checks
// first (comments' here, created after tickets'), so the SQL store looks the collection up again.
// test/fixtures/acceptance-helpdesk: an agent is a ticket's assignee and a comment's author.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { expectError, expectStatus, startFixture, type Api } from "./helpers.ts";

type Obj = Record<string, any>;
const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api;

before(async () => {
  api = await startFixture("http-restrict-order", "test/fixtures/acceptance-helpdesk", ["v1"]);
});
after(() => api?.close());

const post = async (path: string, body: Obj) => (await expectStatus(api, "POST", path, 201, { body })).body as Obj;

test(`restrict: the 422 names the first referring collection in the generated order, ${STORE} store`, async () => {
  const org = await post("/v1/organizations", { name: "Acme" });
  const organization_id = org.id as string;
  const agent = await post("/v1/agents", { organization_id, name: "Ann", email: "ann@acme.example" });
  const contact = await post("/v1/contacts", { organization_id, name: "Carl", email: "carl@acme.example" });
  const ticket = await post("/v1/tickets", { organization_id, contact_id: contact.id, subject: "Printer", assignee_id: agent.id });
  // Only the ticket names the agent: tickets.
  const first = await expectError(api, "DELETE", `/v1/agents/${agent.id}`, 422, "BUSINESS_RULE_VIOLATION");
  assert.deepEqual(first.details, [{ field: "id", issue: "is referred to by records of tickets" }]);
  // A comment names the agent too: comments come first in the generated order (comments.author_id, then tickets.assignee_id).
  await post("/v1/comments", { organization_id, ticket_id: ticket.id, author_id: agent.id, position: 1, body: "On it." });
  for (let i = 0; i < 2; i++) {
    const error = await expectError(api, "DELETE", `/v1/agents/${agent.id}`, 422, "BUSINESS_RULE_VIOLATION");
    assert.equal(error.message, "Records of comments still refer to this record.");
    assert.deepEqual(error.details, [{ field: "id", issue: "is referred to by records of comments" }]);
  }
  await expectStatus(api, "GET", `/v1/agents/${agent.id}`, 200);
});
