// The typed client of the acceptance helpdesk (test/fixtures/acceptance-helpdesk, every key of
// SPEC §12) against its service on the store CANON_TEST_STORE names: every query parameter the
// client types (sort, each operator of each filter type, `[null]`, `q`, offset and cursor modes,
// child and `list_under` lists) gives what the same query over raw HTTP gives, page after page;
// an Idempotency-Key option runs a POST once.
import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { describe, test } from "node:test";
import { call, expectStatus, startFixture } from "../http/helpers.ts";
import { repoRoot } from "../support/cli.ts";
import { suiteFixture } from "../support/fixture.ts";
import { SPEC_COMPILER_OPTIONS, tscAsync } from "../support/tsc.ts";

type Obj = Record<string, any>;
const STORE = process.env.CANON_TEST_STORE ?? "memory";

let ids: Obj;
let client: Obj;
let T: string;

const api = suiteFixture(
  () => startFixture("client-helpdesk", "test/fixtures/acceptance-helpdesk", ["v1"]),
  async (api) => {
    const post = async (url: string, body: Obj, auth = T) => (await expectStatus(api, "POST", url, 201, { auth, body })).body as Obj;
    const org = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Acme" } })).body as Obj;
    T = `dev-writer.${org.id}`;
    const mod = (await import(pathToFileURL(path.join(api.dir, "generated/v1/client.ts")).href)) as Obj;
    client = mod.createClient({ baseUrl: api.base, token: T });
    const contacts = [
      await post("/v1/contacts", { name: "Ann", email: "ann@acme.test", phone: "1" }),
      await post("/v1/contacts", { name: "Bob", email: "bob@acme.test", phone: null }),
      await post("/v1/contacts", { name: "Cid", email: "cid@acme.test" }),
    ];
    const agents = [await post("/v1/agents", { name: "Zed", email: "zed@acme.test" }), await post("/v1/agents", { name: "Amy", email: "amy@acme.test", role: "lead" })];
    const tags = [await post("/v1/tags", { name: "bug" }, "dev-writer"), await post("/v1/tags", { name: "vip" }, "dev-writer")];
    const tickets: Obj[] = [];
    const priorities = ["low", "normal", "high", "urgent"];
    const statuses = ["new", "open", "pending", "solved"];
    for (let i = 0; i < 23; i++) {
      tickets.push(
        await post("/v1/tickets", {
          contact_id: contacts[i % 3]!.id,
          subject: `Ticket ${i} ${i % 2 ? "printer" : "lamp"}`,
          status: statuses[i % 4],
          priority: priorities[(i * 7) % 4],
          ...(i % 3 ? { due_at: `2026-0${1 + (i % 9)}-1${i % 10}T1${i % 10}:00:00+02:00` } : {}),
          ...(i % 4 ? { assignee_id: agents[i % 2]!.id } : {}),
          ...(i % 5 ? { budget: `${(i * 37) % 200}.${i % 10}5` } : {}),
          ...(i % 2 ? { score: i % 11 } : {}),
          ...(i % 3 === 1 ? { opened_on: `2026-02-${10 + (i % 18)}` } : {}),
          escalated: i % 6 === 0,
          tag_ids: i % 2 ? [tags[0]!.id] : i % 3 ? [tags[0]!.id, tags[1]!.id] : [],
        }),
      );
    }
    for (let i = 0; i < 7; i++)
      await post("/v1/comments", { ticket_id: tickets[0]!.id, position: 7 - i, body: `c${i}`, ...(i % 2 ? { author_id: agents[0]!.id } : {}), public: i % 3 !== 0 });
    for (let i = 0; i < 9; i++)
      await post("/v1/time-entries", { ticket_id: tickets[1]!.id, agent_id: agents[i % 2]!.id, hours: `${1 + (i % 4)}.${i}0`, work_date: `2026-03-0${1 + (i % 5)}`, billable: i % 2 === 0, ...(i % 3 ? { note: `fixed ${i}` } : {}) });
    await post("/v1/sla-policies", { name: "p", priority: "high", first_response_minutes: 30, resolution_hours: 4, credit: "10.50" });
    ids = { org, contacts, agents, tags, tickets };
  },
);

/** The query string the service reads, written by hand (not by the client): `name[op]=a,b`. */
function raw(query: Obj): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (key === "sort") parts.push(`sort=${encodeURIComponent([value].flat().join(","))}`);
    else if (value !== null && typeof value === "object")
      for (const [op, v] of Object.entries(value)) parts.push(`${key}[${op}]=${encodeURIComponent([v].flat().join(","))}`);
    else parts.push(`${key}=${encodeURIComponent(String(value))}`);
  }
  return parts.join("&");
}

/** Every record of `url` with `query`, page by page over raw HTTP (cursor or offset mode). */
async function rawWalk(url: string, query: Obj): Promise<string[]> {
  const out: string[] = [];
  const offset = "per_page" in query || "page" in query;
  let next: string | null = raw(query);
  let page = 1;
  while (next !== null) {
    const res = await call(api, "GET", `${url}?${next}`, { auth: T });
    assert.equal(res.status, 200, `${url}?${next}: ${res.text}`);
    const body = res.body as Obj;
    out.push(...body.data.map((r: Obj) => r.id));
    if (offset) {
      page += 1;
      next = page <= body.pagination.total_pages ? raw({ ...query, page }) : null;
    } else next = body.pagination.next_cursor ? `${raw(query)}&cursor=${body.pagination.next_cursor}` : null;
  }
  return out;
}

async function clientWalk(list: Obj): Promise<string[]> {
  const out: string[] = [];
  for await (const record of list as AsyncIterable<Obj>) out.push(record.id);
  return out;
}

describe(`the typed client of the helpdesk gives what raw HTTP gives, ${STORE} store`, () => {
  test(
    "its queries are typed per field: every @ts-expect-error of test/fixtures/client-helpdesk-types.ts holds",
    { skip: STORE !== "memory" && "a type check: the memory run covers it" },
    async () => {
      const file = path.join(api.dir, "client-helpdesk-types.ts");
      copyFileSync(path.join(repoRoot, "test/fixtures/client-helpdesk-types.ts"), file);
      const result = await tscAsync(path.join(api.dir, "tsconfig.client.json"), SPEC_COMPILER_OPTIONS, [file]);
      assert.equal(result.code, 0, result.output);
    },
  );

  test("tickets: sort, every operator of every filter type, [null], q, list_under and child lists", async () => {
    const { contacts, agents, tags, tickets } = ids;
    const cases: Array<[string, string, (q: Obj) => Obj, Obj]> = [];
    const top = (query: Obj) => cases.push(["tickets", "/v1/tickets", (q) => client.tickets.list(q), query]);
    top({ limit: 4 });
    top({ limit: 4, sort: "-priority" });
    top({ limit: 3, sort: ["priority", "-due_at"] });
    top({ limit: 5, sort: ["-due_at", "updated_at", "priority"] });
    top({ limit: 4, status: "open" });
    top({ limit: 4, status: { in: ["open", "pending"] }, sort: "due_at" });
    top({ limit: 4, priority: { in: ["urgent", "low"] } });
    top({ limit: 4, escalated: true });
    top({ limit: 4, budget: "74.25" });
    top({ limit: 4, budget: { gte: "50.00", lt: "150" }, sort: "-priority" });
    top({ limit: 4, budget: { null: true } });
    top({ limit: 4, budget: { null: false }, sort: "due_at" });
    top({ limit: 4, due_at: { gt: "2026-03-01T00:00:00Z", lte: "2026-08-20T00:00:00+02:00" } });
    top({ limit: 4, due_at: { null: true } });
    top({ limit: 4, opened_on: "2026-02-14" });
    top({ limit: 4, opened_on: { gte: "2026-02-15" } });
    top({ limit: 4, opened_on: { null: false } });
    top({ limit: 4, score: 3 });
    top({ limit: 4, score: { in: [1, 3, 5, 7] }, sort: "-priority" });
    top({ limit: 4, score: { gt: 2, lte: 9 } });
    top({ limit: 4, score: { null: true } });
    top({ limit: 4, assignee_id: { null: true } });
    top({ limit: 4, assignee_id: { null: false }, sort: ["-priority"] });
    top({ limit: 4, created_at: { gte: tickets[5].created_at } });
    top({ limit: 4, q: "printer", sort: "-due_at" });
    top({ limit: 4, q: "lamp", status: { in: ["new", "solved"] } });
    cases.push(["contact's tickets", `/v1/contacts/${contacts[0].id}/tickets`, (q) => client.contacts.tickets.list(contacts[0].id, q), { limit: 2, sort: "-priority" }]);
    cases.push(["agent's tickets", `/v1/agents/${agents[1].id}/tickets`, (q) => client.agents.tickets.list(agents[1].id, q), { limit: 2, budget: { null: false }, sort: "due_at" }]);
    cases.push(["tag's tickets", `/v1/tags/${tags[0].id}/tickets`, (q) => client.tags.tickets.list(tags[0].id, q), { limit: 3, q: "printer", sort: ["priority", "-updated_at"] }]);
    cases.push(["tag's tickets", `/v1/tags/${tags[1].id}/tickets`, (q) => client.tags.tickets.list(tags[1].id, q), { limit: 2, status: { in: ["open", "new"] } }]);
    cases.push(["comments", `/v1/tickets/${tickets[0].id}/comments`, (q) => client.tickets.comments.list(tickets[0].id, q), { limit: 2, sort: "position", author_id: { null: true } }]);
    cases.push(["comments", `/v1/tickets/${tickets[0].id}/comments`, (q) => client.tickets.comments.list(tickets[0].id, q), { limit: 2, sort: "-position", public: true }]);
    cases.push(["time entries", `/v1/tickets/${tickets[1].id}/time-entries`, (q) => client.tickets.timeEntries.list(tickets[1].id, q), { per_page: 2, sort: ["-hours", "work_date"] }]);
    cases.push(["time entries", `/v1/tickets/${tickets[1].id}/time-entries`, (q) => client.tickets.timeEntries.list(tickets[1].id, q), { per_page: 2, hours: { gte: "2.00", lt: "4" }, billable: true }]);
    cases.push(["time entries", `/v1/tickets/${tickets[1].id}/time-entries`, (q) => client.tickets.timeEntries.list(tickets[1].id, q), { limit: 2, q: "fixed", sort: "-work_date" }]);
    cases.push(["agent's time entries", `/v1/agents/${agents[0].id}/time-entries`, (q) => client.agents.timeEntries.list(agents[0].id, q), { per_page: 2, work_date: { gt: "2026-03-01" }, sort: "hours" }]);
    cases.push(["contacts", "/v1/contacts", (q) => client.contacts.list(q), { per_page: 1, phone: { null: true }, sort: "-name" }]);
    cases.push(["contacts", "/v1/contacts", (q) => client.contacts.list(q), { per_page: 2, name: { in: ["Ann", "Cid"] } }]);
    cases.push(["contacts", "/v1/contacts", (q) => client.contacts.list(q), { per_page: 2, phone: "1" }]);
    cases.push(["sla-policies", "/v1/sla-policies", (q) => client.slaPolicies.list(q), { limit: 2, credit: { gte: "10.5" }, first_response_minutes: { in: [30, 60] } }]);
    for (const [name, url, list, query] of cases) {
      const expected = await rawWalk(url, query);
      assert.deepEqual(await clientWalk(list(query)), expected, `${name} ${JSON.stringify(query)}`);
      const first = await list(query);
      const size = query.per_page ?? query.limit;
      assert.deepEqual(first.data.map((r: Obj) => r.id), expected.slice(0, size), `${name} ${JSON.stringify(query)}: first page`);
    }
  });

  test("an idempotency key given to a POST runs it once; the replay is the first answer", async () => {
    const { contacts, agents, tickets } = ids;
    const key = `checkout-${STORE}`;
    const first = await client.tickets.create({ contact_id: contacts[0].id, subject: "Once" }, { idempotencyKey: key }).withResponse();
    const again = await client.tickets.create({ contact_id: contacts[0].id, subject: "Once" }, { idempotencyKey: key }).withResponse();
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(again.data, first.data);
    const escalated = await client.tickets.escalations.create(tickets[2].id, { agent_id: agents[0].id, reason: "r" }, { idempotencyKey: `${key}-e` }).withResponse();
    const replay = await client.tickets.escalations.create(tickets[2].id, { agent_id: agents[0].id, reason: "r" }, { idempotencyKey: `${key}-e` }).withResponse();
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(replay.data, escalated.data);
    await assert.rejects(client.tickets.create({ contact_id: contacts[0].id, subject: "Other" }, { idempotencyKey: key }), (e: Obj) => e.status === 422 && e.details[0].field === "Idempotency-Key");
    const found = await clientWalk(client.tickets.list({ q: "Once" }));
    assert.deepEqual(found, [first.data.id]);
  });
});
