// SPEC §12.3 many-to-many, over HTTP on the service generated from test/fixtures/relations, on the
// store CANON_TEST_STORE names: tickets' `tag_ids` (restrict, list_under) and `topic_ids`
// (on_delete: cascade) are relations: a repeated id answers 400, the order given is kept, an
// update replaces the ids, a delete is refused (restrict) or removes the id from every array with
// `.updated` events (cascade), and GET /v1/tags/{id}/tickets lists the tickets naming the tag.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { expectError, expectStatus, startFixture, UNKNOWN_ID, type Api } from "./helpers.ts";

type Obj = Record<string, any>;
const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api;
const published: Obj[] = [];

const post = async (path: string, body: Obj) => (await expectStatus(api, "POST", path, 201, { body })).body as Obj;
const get = async (path: string) => (await expectStatus(api, "GET", path, 200)).body as Obj;

before(async () => {
  api = await startFixture("http-relations", "test/fixtures/relations", ["v1"], {
    events: { publish: (event: Obj) => void published.push(event) },
  });
});
after(() => api?.close());

describe(`many-to-many relations, ${STORE} store`, () => {
  test("a repeated id answers 400 naming the field; nothing is written", async () => {
    const tag = await post("/v1/tags", { name: "a" });
    const error = await expectError(api, "POST", "/v1/tickets", 400, "VALIDATION_ERROR", {
      body: { subject: "x", tag_ids: [tag.id, tag.id.toUpperCase()] },
    });
    assert.deepEqual((error.details as Obj[]).map((d) => d.field), ["tag_ids"]);
    const ticket = await post("/v1/tickets", { subject: "x", tag_ids: [tag.id] });
    await expectError(api, "PATCH", `/v1/tickets/${ticket.id}`, 400, "VALIDATION_ERROR", { body: { tag_ids: [tag.id, tag.id] } });
    assert.deepEqual((await get(`/v1/tickets/${ticket.id}`)).tag_ids, [tag.id]);
  });

  test("the order given is kept on read, list and events; an update replaces the ids", async () => {
    const [a, b, c] = [await post("/v1/tags", { name: "a" }), await post("/v1/tags", { name: "b" }), await post("/v1/tags", { name: "c" })];
    const start = published.length;
    const ticket = await post("/v1/tickets", { subject: "order", tag_ids: [c.id, a.id, b.id] });
    assert.deepEqual(ticket.tag_ids, [c.id, a.id, b.id]);
    assert.deepEqual(ticket.topic_ids, [], "an absent array of ids is []");
    assert.deepEqual((await get(`/v1/tickets/${ticket.id}`)).tag_ids, [c.id, a.id, b.id]);
    const listed = (await get("/v1/tickets?q=order")).data as Obj[];
    assert.deepEqual(listed.find((t) => t.id === ticket.id)?.tag_ids, [c.id, a.id, b.id]);
    const patched = (await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { tag_ids: [b.id, c.id] } })).body as Obj;
    assert.deepEqual(patched.tag_ids, [b.id, c.id]);
    assert.deepEqual((await get(`/v1/tickets/${ticket.id}`)).tag_ids, [b.id, c.id]);
    const replaced = (await expectStatus(api, "PUT", `/v1/tickets/${ticket.id}`, 200, { body: { subject: "order", tag_ids: [a.id] } })).body as Obj;
    assert.deepEqual(replaced.tag_ids, [a.id]);
    const events = published.slice(start).filter((e) => e.data.id === ticket.id);
    assert.deepEqual(events.map((e) => [e.type, e.data.tag_ids]), [
      ["ticket.created", [c.id, a.id, b.id]],
      ["ticket.updated", [b.id, c.id]],
      ["ticket.updated", [a.id]],
    ]);
    const feed = (await get(`/v1/events/${events[0]!.id}`)) as Obj;
    assert.deepEqual(feed.data.tag_ids, [c.id, a.id, b.id]);
    await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { tag_ids: [] } });
    assert.deepEqual((await get(`/v1/tickets/${ticket.id}`)).tag_ids, []);
  });

  test("an unknown id is 422 naming its place", async () => {
    const tag = await post("/v1/tags", { name: "a" });
    const error = await expectError(api, "POST", "/v1/tickets", 422, "BUSINESS_RULE_VIOLATION", { body: { subject: "x", tag_ids: [tag.id, UNKNOWN_ID] } });
    assert.deepEqual((error.details as Obj[]).map((d) => d.field), ["tag_ids.1"]);
  });

  test("restrict: a tag an array names cannot be deleted (422 naming tickets); once no array names it, it can", async () => {
    const tag = await post("/v1/tags", { name: "held" });
    const ticket = await post("/v1/tickets", { subject: "x", tag_ids: [tag.id] });
    const error = await expectError(api, "DELETE", `/v1/tags/${tag.id}`, 422, "BUSINESS_RULE_VIOLATION");
    assert.match(error.message as string, /tickets/);
    assert.deepEqual((await get(`/v1/tickets/${ticket.id}`)).tag_ids, [tag.id]);
    await expectStatus(api, "PATCH", `/v1/tickets/${ticket.id}`, 200, { body: { tag_ids: [] } });
    await expectStatus(api, "DELETE", `/v1/tags/${tag.id}`, 204);
  });

  test("cascade: deleting a topic removes its id from every array, with an .updated event for each ticket changed", async () => {
    const [t1, t2] = [await post("/v1/topics", { name: "one" }), await post("/v1/topics", { name: "two" })];
    const first = await post("/v1/tickets", { subject: "x", topic_ids: [t1.id, t2.id] });
    const second = await post("/v1/tickets", { subject: "y", topic_ids: [t2.id] });
    const third = await post("/v1/tickets", { subject: "z", topic_ids: [t1.id] });
    const fourth = await post("/v1/tickets", { subject: "w", topic_ids: [t2.id, t1.id] });
    // An update moves the first ticket's row after the others in a SQL table: the order of events stays the ids'.
    await expectStatus(api, "PATCH", `/v1/tickets/${first.id}`, 200, { body: { subject: "x2" } });
    const start = published.length;
    await expectStatus(api, "DELETE", `/v1/topics/${t2.id}`, 204);
    const afterFirst = await get(`/v1/tickets/${first.id}`);
    const afterSecond = await get(`/v1/tickets/${second.id}`);
    assert.deepEqual(afterFirst.topic_ids, [t1.id]);
    assert.deepEqual(afterSecond.topic_ids, []);
    assert.ok(afterFirst.updated_at > first.updated_at);
    assert.deepEqual((await get(`/v1/tickets/${third.id}`)).topic_ids, [t1.id], "untouched");
    const events = published.slice(start);
    assert.deepEqual(
      events.map((e) => [e.type, e.data.id]),
      // In the order the tickets were created (their ids' order), on every store.
      [["topic.deleted", t2.id], ...[first, second, fourth].map((t) => ["ticket.updated", t.id])],
    );
    assert.deepEqual(events.find((e) => e.data.id === first.id)?.data, afterFirst);
  });

  test("cascade: the records one delete changes share one updated_at, the delete's time, on every store", async () => {
    // The SQL stores read the clock row by row (clock_timestamp()), in the table's physical
    // order, while the memory store took one time: `sort=updated_at` ordered them differently.
    const topic = await post("/v1/topics", { name: "shared-time" });
    const tickets: Obj[] = [];
    for (let i = 0; i < 120; i++) tickets.push(await post("/v1/tickets", { subject: `st-${i}`, topic_ids: [topic.id] }));
    await expectStatus(api, "DELETE", `/v1/topics/${topic.id}`, 204);
    const times = new Set<string>();
    for (const t of tickets) {
      const after = await get(`/v1/tickets/${t.id}`);
      assert.deepEqual(after.topic_ids, []);
      assert.ok(after.updated_at > t.updated_at);
      times.add(after.updated_at as string);
    }
    assert.deepEqual([...times].length, 1, `one updated_at for the whole cascade: ${[...times].join(", ")}`);
  });

  test("GET /v1/tags/{id}/tickets lists exactly the tickets naming the tag: sorted, filtered, paged, searched", async () => {
    const tag = await post("/v1/tags", { name: "listed" });
    const other = await post("/v1/tags", { name: "other" });
    const named = [
      await post("/v1/tickets", { subject: "b-high", priority: "high", tag_ids: [other.id, tag.id] }),
      await post("/v1/tickets", { subject: "a-low", priority: "low", tag_ids: [tag.id] }),
      await post("/v1/tickets", { subject: "c-high", priority: "high", tag_ids: [tag.id, other.id] }),
    ];
    await post("/v1/tickets", { subject: "d-none", priority: "high", tag_ids: [other.id] });
    const all = (await get(`/v1/tags/${tag.id}/tickets`)).data as Obj[];
    assert.deepEqual(all.map((t) => t.id), named.map((t) => t.id));
    const sorted = (await get(`/v1/tags/${tag.id}/tickets?sort=-priority,subject`)).data as Obj[];
    assert.deepEqual(sorted.map((t) => t.subject), ["b-high", "c-high", "a-low"]);
    const filtered = (await get(`/v1/tags/${tag.id}/tickets?priority=high&sort=subject`)).data as Obj[];
    assert.deepEqual(filtered.map((t) => t.subject), ["b-high", "c-high"]);
    const first = await get(`/v1/tags/${tag.id}/tickets?limit=2&sort=subject`);
    assert.deepEqual((first.data as Obj[]).map((t) => t.subject), ["a-low", "b-high"]);
    assert.equal(first.pagination.has_more, true);
    const second = await get(`/v1/tags/${tag.id}/tickets?limit=2&sort=subject&cursor=${encodeURIComponent(first.pagination.next_cursor)}`);
    assert.deepEqual((second.data as Obj[]).map((t) => t.subject), ["c-high"]);
    assert.equal(second.pagination.has_more, false);
    const searched = (await get(`/v1/tags/${tag.id}/tickets?q=high`)).data as Obj[];
    assert.deepEqual(searched.map((t) => t.subject).sort(), ["b-high", "c-high"]);
    assert.deepEqual((await get(`/v1/tags/${other.id}/tickets`)).data.map((t: Obj) => t.subject), ["b-high", "c-high", "d-none"]);
  });

  test("GET /v1/tags/{id}/tickets: 404 for an unknown tag, 400 for a malformed id", async () => {
    await expectError(api, "GET", `/v1/tags/${UNKNOWN_ID}/tickets`, 404, "NOT_FOUND");
    await expectError(api, "GET", "/v1/tags/nope/tickets", 400, "VALIDATION_ERROR");
  });
});
