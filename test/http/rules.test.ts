// SPEC §12.5 (transitions, actions that act) over HTTP, on the service generated from
// test/fixtures/desk (tickets with a status machine, actions that require and set values) and on
// the showcase (orders whose v3 actions move a read-only status, v1 and v2 as published), on the
// store CANON_TEST_STORE names (memory, pglite or postgres). Every response is checked against
// the service's own OpenAPI document.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  call,
  createOrder,
  createUser,
  expectError,
  expectStatus,
  startApp,
  startFixture,
  type Api,
} from "./helpers.ts";

type Obj = Record<string, any>;

const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api;
let ann: Obj;
let bob: Obj;

/**
 * Holds reads of one ticket so that racing requests all read it before any of them writes: once
 * armed, the first `skip` reads pass (`passed` resolves after them), the next `hold` wait until
 * all of them have arrived.
 */
const barrier = {
  id: "",
  skip: 0,
  hold: 0,
  waiting: [] as Array<() => void>,
  passed: Promise.resolve(),
  onPassed: () => {},
  /** Once: run after the next read of ticket `id` has read it, before that read returns. */
  afterRead: null as null | { id: string; run: () => Promise<void> },
  arm(id: string, hold: number, skip = 0) {
    Object.assign(this, { id, hold, skip, waiting: [] });
    this.passed = new Promise<void>((resolve) => (this.onPassed = resolve));
    if (skip === 0) this.onPassed();
  },
  async reached(collection: string, id: string): Promise<void> {
    if (collection !== "tickets" || id !== this.id) return;
    if (this.skip > 0) {
      if (--this.skip === 0) this.onPassed();
      return;
    }
    if (this.hold === 0) return;
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (this.waiting.length === this.hold) {
        this.hold = 0;
        for (const go of this.waiting) go();
      }
    });
  },
};

/** The store with its reads of tickets going through the barrier. */
function barred(store: any): unknown {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (key !== "get") return typeof value === "function" ? value.bind(target) : value;
      return async (collection: string, id: string) => {
        const record = await target.get(collection, id);
        const after = barrier.afterRead;
        if (after && collection === "tickets" && id === after.id) {
          barrier.afterRead = null;
          await after.run();
        }
        await barrier.reached(collection, id);
        return record;
      };
    },
  });
}

before(async () => {
  api = await startFixture("http-rules", "test/fixtures/desk", ["v1"], { wrapStore: barred });
  ann = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Ann" } })).body as Obj;
  bob = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Bob" } })).body as Obj;
});

after(() => api?.close());

async function ticket(body: Obj = {}): Promise<Obj> {
  return (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { subject: "Printer", ...body } }))
    .body as Obj;
}

async function read(id: string): Promise<{ body: Obj; etag: string }> {
  const res = await expectStatus(api, "GET", `/v1/tickets/${id}`, 200);
  return { body: res.body as Obj, etag: res.headers.get("etag")! };
}

const patch = (id: string, body: Obj) => call(api, "PATCH", `/v1/tickets/${id}`, { body });

/** Moves a new ticket along allowed transitions to `path`'s last state. */
async function moved(...path: string[]): Promise<Obj> {
  let t = await ticket();
  for (const status of path)
    t = (await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, { body: { status } })).body as Obj;
  return t;
}

/** Every event of the feed, in its order. */
async function events(): Promise<Obj[]> {
  const seen: Obj[] = [];
  let url: string | null = "/v1/events?limit=100";
  while (url) {
    const page = (await expectStatus(api, "GET", url, 200)).body as Obj;
    seen.push(...page.data);
    url = page.pagination.has_more
      ? `/v1/events?limit=100&cursor=${encodeURIComponent(page.pagination.next_cursor)}`
      : null;
  }
  return seen;
}

/** The events about ticket `id` (its own and its action records'). */
async function eventsOfTicket(id: string): Promise<Obj[]> {
  return (await events()).filter((e) => e.data.id === id || e.data.ticket_id === id);
}

describe(`transitions (SPEC §12.5), ${STORE} store`, () => {
  test("a create takes the default or any value", async () => {
    assert.equal((await ticket()).status, "new");
    assert.equal((await ticket({ status: "closed" })).status, "closed");
  });

  test("PATCH along an allowed path changes the value; the same value is no transition", async () => {
    const t = await ticket();
    const opened = await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, { body: { status: "open" } });
    assert.equal(opened.body.status, "open");
    const again = await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, {
      body: { status: "open", subject: "Still" },
    });
    assert.equal(again.body.status, "open");
    assert.equal(again.body.subject, "Still");
    const closed = await ticket({ status: "closed" });
    await expectStatus(api, "PATCH", `/v1/tickets/${closed.id}`, 200, { body: { status: "closed" } });
    await expectStatus(api, "PATCH", `/v1/tickets/${closed.id}`, 200, { body: { subject: "Other" } });
  });

  test("PATCH along a path not listed: 422 naming the field with the allowed values, nothing changed", async () => {
    const t = await moved("open", "solved");
    const before = await read(t.id);
    const error = await expectError(api, "PATCH", `/v1/tickets/${t.id}`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { status: "pending", subject: "Changed" },
    });
    assert.deepEqual(error.details, [
      { field: "status", issue: "may change from solved only to closed or open" },
    ]);
    assert.match(error.message, /status may not change from solved to pending/);
    const after = await read(t.id);
    assert.deepEqual(after.body, before.body);
    assert.equal(after.etag, before.etag);
  });

  test("a value that is not a key is final", async () => {
    const t = await ticket({ status: "closed" });
    const error = await expectError(api, "PATCH", `/v1/tickets/${t.id}`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { status: "open" },
    });
    assert.deepEqual(error.details, [{ field: "status", issue: "may not change from closed: it is final" }]);
  });

  test("PUT is checked the same way", async () => {
    const t = await ticket();
    const error = await expectError(api, "PUT", `/v1/tickets/${t.id}`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { subject: "Printer", status: "solved" },
    });
    assert.deepEqual(error.details, [{ field: "status", issue: "may change from new only to open" }]);
    await expectStatus(api, "PUT", `/v1/tickets/${t.id}`, 200, {
      body: { subject: "Printer", status: "new" },
    });
    const put = await expectStatus(api, "PUT", `/v1/tickets/${t.id}`, 200, {
      body: { subject: "Printer", status: "open" },
    });
    assert.equal(put.body.status, "open");
  });

  test("PUT replaces the record: a field with a default left out takes its default, a transition like any other", async () => {
    // An open ticket: a PUT without status means status: new (the default), and open → new is
    // not a transition the machine lists: 422, nothing changed.
    const t = await moved("open");
    const before = await read(t.id);
    const error = await expectError(api, "PUT", `/v1/tickets/${t.id}`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { subject: "Printer, again" },
    });
    assert.deepEqual(error.details, [{ field: "status", issue: "may change from open only to pending or solved" }]);
    const after = await read(t.id);
    assert.deepEqual(after.body, before.body);
    assert.equal(after.etag, before.etag);
    // Sent, the current value is kept (no transition); a new ticket's PUT without status stays new.
    const kept = await expectStatus(api, "PUT", `/v1/tickets/${t.id}`, 200, { body: { subject: "Printer, again", status: "open" } });
    assert.equal(kept.body.status, "open");
    const fresh = await ticket({ assignee_id: ann.id, balance: "2.50" });
    const replaced = await expectStatus(api, "PUT", `/v1/tickets/${fresh.id}`, 200, { body: { subject: "Printer" } });
    assert.equal(replaced.body.status, "new");
    // The optional fields left out are gone, as PUT replaces the whole record: as on a create without them.
    const bare = await ticket();
    assert.equal(replaced.body.assignee_id, bare.assignee_id);
    assert.equal(replaced.body.balance, bare.balance);
    assert.notEqual(replaced.body.assignee_id, ann.id);
    // A PATCH without status leaves it as it is.
    await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, { body: { subject: "Printer, patched" } });
    assert.equal((await read(t.id)).body.status, "open");
  });

  test("PUT keeps what it cannot send: a read_only field with a default keeps its value", async () => {
    const t = await ticket();
    await expectStatus(api, "POST", `/v1/tickets/${t.id}/escalations`, 204, { body: {} });
    assert.equal((await read(t.id)).body.escalated, true);
    const put = await expectStatus(api, "PUT", `/v1/tickets/${t.id}`, 200, { body: { subject: "Printer" } });
    assert.equal(put.body.escalated, true);
  });

  for (const ifMatch of [false, true])
    test(`two PATCHes racing from one state to targets that exclude each other: exactly one wins (${ifMatch ? "with If-Match: the loser gets 409" : "without If-Match: the loser is checked again, 422"})`, async () => {
      // solved → closed and solved → open are both allowed, but neither closed → open nor open → closed
      // is: in whichever order they run, never both. (From open, to solved and to pending, both could
      // win one after the other: pending → solved is allowed.)
      const seen = new Set<number>();
      for (let round = 0; round < 8; round++) {
        const t = await moved("open", "solved");
        const headers: Record<string, string> = ifMatch ? { "if-match": (await read(t.id)).etag } : {};
        const send = (status: string) =>
          call(api, "PATCH", `/v1/tickets/${t.id}`, { body: { status }, headers });
        // Even rounds: both read the ticket before either writes (the write is then a compare-and-set).
        if (round % 2 === 0) barrier.arm(t.id, 2);
        const [a, b] = await Promise.all([send("closed"), send("open")]);
        const won = [a, b].filter((r) => r.status === 200);
        assert.equal(won.length, 1, `round ${round}: ${a.status} ${b.status}`);
        const lost = [a, b].find((r) => r.status !== 200)!;
        seen.add(lost.status);
        assert.ok(lost.status === 409 || lost.status === 422, `round ${round}: ${lost.status} ${lost.text}`);
        assert.equal((await read(t.id)).body.status, won[0]!.body.status);
        const updates = (await eventsOfTicket(t.id)).filter((e) => e.type === "ticket.updated");
        assert.equal(updates.length, 3, "the moves to open and to solved, and the one winner");
      }
      if (ifMatch) assert.ok(seen.has(409), "a loser that read before the winner wrote gets 409");
      // Without If-Match a loser that read before the winner wrote is read and checked again
      // (runtime/http.ts `unconditional`): the winner's state refuses it.
      else assert.deepEqual([...seen], [422]);
    });
});

const statusesOf = (...responses: Array<{ status: number }>) => responses.map((r) => r.status);

describe(`actions that act (SPEC §12.5), ${STORE} store`, () => {
  test("sets applied: the record changes (new ETag), .updated then the action's event, as v1 shows them", async () => {
    const t = await ticket();
    const before = await read(t.id);
    const res = await expectStatus(api, "POST", `/v1/tickets/${t.id}/assignments`, 201, {
      body: { agent_id: ann.id },
    });
    assert.equal(res.body.ticket_id, t.id);
    assert.equal(res.body.agent_id, ann.id);
    const after = await read(t.id);
    assert.equal(after.body.status, "open");
    assert.equal(after.body.assignee_id, ann.id);
    assert.notEqual(after.etag, before.etag);
    const own = await eventsOfTicket(t.id);
    assert.deepEqual(
      own.map((e) => e.type),
      ["ticket.created", "ticket.updated", "ticket.assignment.created"],
    );
    assert.deepEqual(own[1]!.data, after.body);
    assert.deepEqual(own[2]!.data, res.body);
    // Assigned again (open → open is no transition): the assignee changes.
    await expectStatus(api, "POST", `/v1/tickets/${t.id}/assignments`, 201, { body: { agent_id: bob.id } });
    assert.equal((await read(t.id)).body.assignee_id, bob.id);
  });

  test("a read-only field is set by an action; a 204 action acts too", async () => {
    const t = await ticket();
    await expectError(api, "PATCH", `/v1/tickets/${t.id}`, 400, "VALIDATION_ERROR", {
      body: { escalated: true },
    });
    await expectStatus(api, "POST", `/v1/tickets/${t.id}/escalations`, 204, { body: {} });
    assert.equal((await read(t.id)).body.escalated, true);
    const error = await expectError(
      api,
      "POST",
      `/v1/tickets/${t.id}/escalations`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: {} },
    );
    assert.equal(error.details[0].field, "escalated");
  });

  test("a decimal set to a constant is kept in its canonical form (SPEC §12.6)", async () => {
    const t = await ticket({ balance: "12.5" });
    assert.equal(t.balance, "12.50");
    await expectStatus(api, "POST", `/v1/tickets/${t.id}/waivers`, 201, { body: {} });
    assert.equal((await read(t.id)).body.balance, "0.50");
  });

  test("requires refused: 422 naming the field, no action record, no event, the record unchanged", async () => {
    const t = await moved("open");
    const before = await read(t.id);
    const count = (await events()).length;
    const error = await expectError(
      api,
      "POST",
      `/v1/tickets/${t.id}/closures`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: { note: "done" } },
    );
    assert.deepEqual(error.details, [{ field: "status", issue: "must be solved (it is open)" }]);
    assert.equal(error.message, "The action closures requires status to be solved.");
    assert.equal((await events()).length, count);
    const after = await read(t.id);
    assert.deepEqual(after.body, before.body);
    assert.equal(after.etag, before.etag);
    // A requires-only action: created when the value is listed, the record untouched.
    const note = await expectStatus(api, "POST", `/v1/tickets/${t.id}/notes`, 201, {
      body: { text: "on it" },
    });
    assert.equal(note.body.text, "on it");
    assert.equal((await read(t.id)).etag, before.etag);
    const solved = (
      await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, { body: { status: "solved" } })
    ).body as Obj;
    await expectError(api, "POST", `/v1/tickets/${solved.id}/notes`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { text: "late" },
    });
    await expectStatus(api, "POST", `/v1/tickets/${t.id}/closures`, 201, { body: { note: "done" } });
    assert.equal((await read(t.id)).body.status, "closed");
  });

  test("a set whose transition is not allowed: 422, nothing created", async () => {
    const t = await ticket({ status: "closed" });
    const count = (await events()).length;
    const error = await expectError(
      api,
      "POST",
      `/v1/tickets/${t.id}/reopenings`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: {} },
    );
    assert.deepEqual(error.details, [{ field: "status", issue: "may not change from closed: it is final" }]);
    assert.equal((await events()).length, count);
    const solved = await moved("open", "solved");
    await expectStatus(api, "POST", `/v1/tickets/${solved.id}/reopenings`, 201, { body: {} });
    assert.equal((await read(solved.id)).body.status, "open");
  });

  test("an action whose reference names no record: 422, nothing changed", async () => {
    const t = await ticket();
    const before = await read(t.id);
    await expectError(api, "POST", `/v1/tickets/${t.id}/assignments`, 422, "BUSINESS_RULE_VIOLATION", {
      body: { agent_id: "01890a5d-ac96-774b-bcce-b302099a8057" },
    });
    assert.equal((await read(t.id)).etag, before.etag);
  });

  test("If-Match on an action names the revision of the record acted on: a stale one answers 409, nothing created or changed", async () => {
    const t = await ticket();
    const first = await read(t.id);
    await expectStatus(api, "PATCH", `/v1/tickets/${t.id}`, 200, { body: { subject: "Printer jams" } });
    const stale = await expectError(api, "POST", `/v1/tickets/${t.id}/assignments`, 409, "CONFLICT", {
      body: { agent_id: ann.id },
      headers: { "if-match": first.etag },
    });
    assert.deepEqual(stale.details, [{ field: "If-Match", issue: "does not match the current ETag" }]);
    const unchanged = await read(t.id);
    assert.equal(unchanged.body.assignee_id ?? null, null);
    assert.deepEqual(
      (await eventsOfTicket(t.id)).map((e) => e.type),
      ["ticket.created", "ticket.updated"],
    );
    // The current ETag: the action runs.
    await expectStatus(api, "POST", `/v1/tickets/${t.id}/assignments`, 201, {
      body: { agent_id: ann.id },
      headers: { "if-match": unchanged.etag },
    });
    assert.equal((await read(t.id)).body.assignee_id, ann.id);

    // Changed after the handler checked If-Match, before the action's write: 409 too (not acted on the newer record).
    const u = await ticket();
    const seen = await read(u.id);
    barrier.afterRead = {
      id: u.id,
      run: async () => {
        await expectStatus(api, "PATCH", `/v1/tickets/${u.id}`, 200, {
          body: { subject: "Changed meanwhile" },
        });
      },
    };
    await expectError(api, "POST", `/v1/tickets/${u.id}/assignments`, 409, "CONFLICT", {
      body: { agent_id: bob.id },
      headers: { "if-match": seen.etag },
    });
    assert.equal(barrier.afterRead, null, "the PATCH ran between the handler's read and the action's");
    const after = await read(u.id);
    assert.equal(after.body.subject, "Changed meanwhile");
    assert.equal(after.body.assignee_id ?? null, null);
    assert.ok(!(await eventsOfTicket(u.id)).some((e) => e.type === "ticket.assignment.created"));
  });

  test("an action racing a PATCH on the same record: exactly one of them wins", async () => {
    // From solved: the closure (→ closed) and a PATCH to open are each allowed, but neither after the other.
    for (let round = 0; round < 8; round++) {
      const t = await moved("open", "solved");
      // Even rounds: the action's service and the PATCH both read the ticket before either writes.
      if (round % 2 === 0) barrier.arm(t.id, 2, 1);
      const closing = call(api, "POST", `/v1/tickets/${t.id}/closures`, { body: {} });
      await barrier.passed;
      const [closure, reopened] = await Promise.all([closing, patch(t.id, { status: "open" })]);
      // The loser, read before the winner wrote, is read and checked again (no If-Match): 422 from the winner's state.
      if (round % 2 === 0)
        assert.ok(
          statusesOf(closure, reopened).includes(422),
          `round ${round}: ${statusesOf(closure, reopened)}`,
        );
      const statuses = statusesOf(closure, reopened);
      assert.equal(statuses.filter((s) => s === 201 || s === 200).length, 1, `round ${round}: ${statuses}`);
      assert.ok(
        statuses.every((s) => [200, 201, 409, 422].includes(s)),
        `round ${round}: ${statuses}`,
      );
      const status = (await read(t.id)).body.status;
      assert.equal(status, closure.status === 201 ? "closed" : "open");
      const types = (await eventsOfTicket(t.id)).map((e) => e.type);
      assert.equal(
        types.filter((x) => x === "ticket.closure.created").length,
        closure.status === 201 ? 1 : 0,
      );
    }
  });
});

describe(`the showcase's order status (SPEC §12.5): v3 acts, v1 and v2 as published, ${STORE} store`, () => {
  let shop: Api;
  let user: Obj;
  before(async () => {
    shop = await startApp();
    user = await createUser(shop, "v3");
  });
  after(() => shop?.close());

  const order = async () => createOrder(shop, user.id, "v3");
  const readOrder = async (id: string, version = "v3") => {
    const res = await expectStatus(shop, "GET", `/${version}/orders/${id}`, 200);
    return { body: res.body as Obj, etag: res.headers.get("etag")! };
  };
  const feed = async () => {
    const seen: Obj[] = [];
    let url: string | null = "/v3/events?limit=100";
    while (url) {
      const page = (await expectStatus(shop, "GET", url, 200)).body as Obj;
      seen.push(...page.data);
      url = page.pagination.has_more
        ? `/v3/events?limit=100&cursor=${encodeURIComponent(page.pagination.next_cursor)}`
        : null;
    }
    return seen;
  };
  const eventsOfOrder = async (id: string) =>
    (await feed()).filter((e) => e.data.id === id || e.data.order_id === id).map((e) => e.type as string);

  test("a v2 or v1 cancellation records itself and changes nothing; v3's cancels the order, once", async () => {
    const o = await order();
    const before = await readOrder(o.id);
    await expectStatus(shop, "POST", `/v2/orders/${o.id}/cancellations`, 201, {
      body: { reason: "v2 client" },
    });
    const untouched = await readOrder(o.id);
    assert.equal(untouched.body.status, "pending");
    assert.equal(untouched.etag, before.etag);
    assert.deepEqual(await eventsOfOrder(o.id), ["order.created", "order.cancellation.created"]);

    const cancellation = (
      await expectStatus(shop, "POST", `/v3/orders/${o.id}/cancellations`, 201, {
        body: { reason: "v3 client" },
      })
    ).body as Obj;
    assert.equal(cancellation.order_id, o.id);
    const cancelled = await readOrder(o.id);
    assert.equal(cancelled.body.status, "cancelled");
    assert.notEqual(cancelled.etag, before.etag);
    assert.equal((await readOrder(o.id, "v2")).body.status, "cancelled", "one status, read by every version");
    assert.deepEqual((await eventsOfOrder(o.id)).slice(2), ["order.updated", "order.cancellation.created"]);

    const again = await expectError(
      shop,
      "POST",
      `/v3/orders/${o.id}/cancellations`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: { reason: "again" } },
    );
    assert.deepEqual(again.details, [
      { field: "status", issue: "must be pending or paid (it is cancelled)" },
    ]);
    assert.equal((await eventsOfOrder(o.id)).length, 4, "nothing created");
    // A cancellation that only records itself (v2) takes If-Match too: a stale one answers 409.
    await expectError(shop, "POST", `/v2/orders/${o.id}/cancellations`, 409, "CONFLICT", {
      body: { reason: "stale" },
      headers: { "if-match": before.etag },
    });
    assert.equal((await eventsOfOrder(o.id)).length, 4, "nothing created");
    // v1 keeps its cancellations as published too: 201 whatever the status, the order unchanged.
    await expectStatus(shop, "POST", `/v1/orders/${o.id}/cancellations`, 201, {
      body: { reason: "v1 client" },
    });
    assert.equal((await readOrder(o.id)).etag, cancelled.etag);
  });

  test("payments and shipments exist from v3; the machine refuses a pending order's shipment, naming what it may become", async () => {
    const o = await order();
    await expectStatus(shop, "POST", `/v2/orders/${o.id}/payments`, 404, { body: { reference: "pi_1" } });
    const early = await expectError(
      shop,
      "POST",
      `/v3/orders/${o.id}/shipments`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: { carrier: "DHL" } },
    );
    assert.deepEqual(early.details, [
      { field: "status", issue: "may change from pending only to paid or cancelled" },
    ]);
    await expectStatus(shop, "POST", `/v3/orders/${o.id}/payments`, 201, { body: { reference: "pi_1" } });
    const repaid = await expectError(
      shop,
      "POST",
      `/v3/orders/${o.id}/payments`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: { reference: "pi_2" } },
    );
    assert.deepEqual(
      repaid.details.map((d: Obj) => d.field),
      ["status"],
    );
    await expectStatus(shop, "POST", `/v3/orders/${o.id}/shipments`, 201, { body: { carrier: "DHL" } });
    // A second parcel: shipped stays shipped, which is no transition.
    await expectStatus(shop, "POST", `/v3/orders/${o.id}/shipments`, 201, { body: { carrier: "UPS" } });
    const late = await expectError(
      shop,
      "POST",
      `/v3/orders/${o.id}/cancellations`,
      422,
      "BUSINESS_RULE_VIOLATION",
      { body: { reason: "late" } },
    );
    assert.deepEqual(late.details, [{ field: "status", issue: "must be pending or paid (it is shipped)" }]);
    assert.equal((await readOrder(o.id, "v1")).body.status, "shipped");
  });

  test("two v3 cancellations racing: exactly one cancels, the other is refused", async () => {
    for (let round = 0; round < 6; round++) {
      const o = await order();
      const answers = await Promise.all(
        [0, 1].map((i) =>
          call(shop, "POST", `/v3/orders/${o.id}/cancellations`, { body: { reason: `race ${i}` } }),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.equal(statuses.filter((s) => s === 201).length, 1, `round ${round}: ${statuses}`);
      assert.ok(
        statuses.every((s) => [201, 409, 422].includes(s)),
        `round ${round}: ${statuses}`,
      );
      const types = await eventsOfOrder(o.id);
      assert.equal(
        types.filter((t) => t === "order.cancellation.created").length,
        1,
        `round ${round}: ${types}`,
      );
      assert.equal(types.filter((t) => t === "order.updated").length, 1, `round ${round}: ${types}`);
    }
  });
});
