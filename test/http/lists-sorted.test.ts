// SPEC §12.1 and §12.2 over HTTP, on the service generated from test/fixtures/helpdesk (tickets
// of organizations with a priority enum, a due date-time, an optional assignee, …), on the store
// CANON_TEST_STORE names (scripts/test.ts runs the HTTP suite on memory, PGlite and PostgreSQL).
// Every response is checked against the service's own OpenAPI document.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { download, exportsFolder, ndjson, settled } from "../exports/helpers.ts";
import fc from "fast-check";
import { call, detailFields, expectError, expectStatus, startFixture, type Api } from "./helpers.ts";

type Obj = Record<string, any>;

const STORE = process.env.CANON_TEST_STORE ?? "memory";
let api: Api;
const folder = exportsFolder();
let org: Obj;
let other: Obj;
let agent: Obj;

before(async () => {
  api = await startFixture("http-helpdesk", "test/fixtures/helpdesk", ["v1"], { exports: { directory: folder.directory, pageSize: 2 } });
  org = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Acme" } })).body as Obj;
  other = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Other" } })).body as Obj;
  agent = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Ann" } })).body as Obj;
});

after(async () => {
  await api?.close();
  folder.remove();
});

async function ticket(body: Obj, organization: Obj = org): Promise<Obj> {
  return (await expectStatus(api, "POST", "/v1/tickets", 201, { body: { organization_id: organization.id, ...body } })).body as Obj;
}

/** Every record of a cursor list, following next_cursor with `limit` per page. */
async function walk(url: string, limit = 2): Promise<Obj[]> {
  const seen: Obj[] = [];
  let next: string | null = `${url}${url.includes("?") ? "&" : "?"}limit=${limit}`;
  while (next) {
    const page = (await expectStatus(api, "GET", next, 200)).body as Obj;
    seen.push(...page.data);
    next = page.pagination.next_cursor
      ? `${url}${url.includes("?") ? "&" : "?"}limit=${limit}&cursor=${encodeURIComponent(page.pagination.next_cursor)}`
      : null;
  }
  return seen;
}

const subjects = (records: Obj[]) => records.map((r) => r.subject);

describe(`sorted lists (SPEC §12.1), ${STORE} store`, () => {
  let scoped: Obj;
  before(async () => {
    // A fresh organization of its own, so that its list holds just these records.
    scoped = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Sorted" } })).body as Obj;
    const make = (body: Obj) => ticket(body, scoped);
    await make({ subject: "b-normal-late", priority: "normal", due_at: "2026-12-03T10:00:00Z", estimate: 5 });
    await make({ subject: "a-urgent-none", priority: "urgent", estimate: 1 });
    await make({ subject: "c-low-early", priority: "low", due_at: "2026-12-01T09:00:00+02:00", estimate: 5 });
    await make({ subject: "d-high-mid", priority: "high", due_at: "2026-12-01T08:30:00Z" });
    await make({ subject: "e-urgent-mid", priority: "urgent", due_at: "2026-12-02T00:00:00Z", estimate: 3 });
  });
  const list = (query: string) => `/v1/organizations/${scoped.id}/tickets?${query}`;

  test("an enum sorts in the order of its values, descending with -; id breaks ties in the last key's direction", async () => {
    const asc = await walk(list("sort=priority"));
    assert.deepEqual(subjects(asc), ["c-low-early", "b-normal-late", "d-high-mid", "a-urgent-none", "e-urgent-mid"]);
    const desc = await walk(list("sort=-priority"));
    assert.deepEqual(subjects(desc), ["e-urgent-mid", "a-urgent-none", "d-high-mid", "b-normal-late", "c-low-early"]);
  });

  test("date-times sort as instants, whatever their offset; records without a value come last either way", async () => {
    assert.deepEqual(subjects(await walk(list("sort=due_at"))), ["c-low-early", "d-high-mid", "e-urgent-mid", "b-normal-late", "a-urgent-none"]);
    assert.deepEqual(subjects(await walk(list("sort=-due_at"))), ["b-normal-late", "e-urgent-mid", "d-high-mid", "c-low-early", "a-urgent-none"]);
  });

  test("up to three keys, mixed directions, over cursor pages of every size", async () => {
    // estimate ascending (nulls last), then priority descending, then id descending.
    for (const limit of [1, 2, 3, 100]) {
      assert.deepEqual(subjects(await walk(list("sort=estimate,-priority"), limit)), [
        "a-urgent-none",
        "e-urgent-mid",
        "b-normal-late",
        "c-low-early",
        "d-high-mid",
      ], `limit ${limit}`);
    }
    assert.deepEqual(subjects(await walk(list("sort=-estimate,subject,-created_at"))), ["b-normal-late", "c-low-early", "e-urgent-mid", "a-urgent-none", "d-high-mid"]);
  });

  test("strings sort by code point", async () => {
    const o = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Code points" } })).body as Obj;
    for (const subject of ["b", "B", "é", "\u{1F600}", "\uFF21", "a"]) await ticket({ subject }, o);
    const sorted = subjects(await walk(`/v1/organizations/${o.id}/tickets?sort=subject`));
    assert.deepEqual(sorted, ["B", "a", "b", "é", "\uFF21", "\u{1F600}"]);
  });

  test("the top-level list, a search and an offset list honour sort", async () => {
    const top = subjects(await walk(`/v1/tickets?sort=-priority,subject&q=-mid`));
    assert.deepEqual(top, ["e-urgent-mid", "d-high-mid"]);
    await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Cleo" } });
    await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Bob" } });
    const page = (await expectStatus(api, "GET", "/v1/agents?sort=-name&per_page=2", 200)).body as Obj;
    assert.deepEqual(page.data.map((a: Obj) => a.name), ["Cleo", "Bob"]);
    assert.equal(page.pagination.total, 3);
    const second = (await expectStatus(api, "GET", "/v1/agents?sort=-name&per_page=2&page=2", 200)).body as Obj;
    assert.deepEqual(second.data.map((a: Obj) => a.name), ["Ann"]);
  });

  test("a cursor works only with the sort, filters and q it came from (400 naming cursor)", async () => {
    const first = (await expectStatus(api, "GET", list("sort=priority&limit=1"), 200)).body as Obj;
    const cursor = encodeURIComponent(first.pagination.next_cursor);
    await expectStatus(api, "GET", list(`sort=priority&limit=1&cursor=${cursor}`), 200);
    for (const other of ["sort=-priority", "sort=due_at", "", "sort=priority&status=new", "sort=priority&q=urgent", "sort=priority&estimate[gte]=1"]) {
      const error = await expectError(api, "GET", list(`${other}&limit=1&cursor=${cursor}`), 400, "VALIDATION_ERROR");
      assert.deepEqual(detailFields(error), ["cursor"], other);
    }
  });

  test("a cursor is bound to an [in] filter's values as a set: another order or a repeated value goes on, another set answers 400 naming cursor", async () => {
    // Sorted and not: the five records have estimates 5, 1, 5, none and 3, and priorities of four values.
    for (const sort of ["", "sort=-priority&"]) {
      const first = (await expectStatus(api, "GET", list(`${sort}priority[in]=urgent,low,normal&estimate[in]=5,1&limit=1`), 200)).body as Obj;
      assert.ok(first.pagination.next_cursor, sort);
      const cursor = encodeURIComponent(first.pagination.next_cursor);
      // The records after the first, following the cursors from the saved one with `query`.
      const rest = async (query: string) => {
        const seen: Obj[] = [];
        for (let next: string | null = cursor; next; ) {
          const page = (await expectStatus(api, "GET", list(`${sort}${query}&limit=1&cursor=${next}`), 200)).body as Obj;
          seen.push(...page.data);
          next = page.pagination.next_cursor ? encodeURIComponent(page.pagination.next_cursor) : null;
        }
        return seen;
      };
      const expected = subjects(await rest("priority[in]=urgent,low,normal&estimate[in]=5,1"));
      assert.equal(expected.length, 2, sort);
      assert.deepEqual(new Set([...subjects(first.data), ...expected]), new Set(["a-urgent-none", "b-normal-late", "c-low-early"]), sort);
      for (const same of ["priority[in]=low,normal,urgent&estimate[in]=1,5", "estimate[in]=1,5,1&priority[in]=normal,urgent,low,urgent"])
        assert.deepEqual(subjects(await rest(same)), expected, `${sort}${same}`);
      for (const other of ["priority[in]=urgent,low&estimate[in]=5,1", "priority[in]=urgent,low,normal,high&estimate[in]=5,1", "priority[in]=urgent,low,normal&estimate[in]=5", "priority[in]=urgent,low,normal&estimate[in]=5,1,3"]) {
        const error = await expectError(api, "GET", list(`${sort}${other}&limit=1&cursor=${cursor}`), 400, "VALIDATION_ERROR");
        assert.deepEqual(detailFields(error), ["cursor"], `${sort}${other}`);
      }
    }
  });

  test("an unknown, repeated or undeclared key, or more than three, answers 400 naming sort", async () => {
    for (const bad of ["status", "priority,priority", "priority,-priority", "id", "a,b,c,d", "due_at,subject,estimate,priority", "", "+priority", "priority,"]) {
      const error = await expectError(api, "GET", list(`sort=${encodeURIComponent(bad)}`), 400, "VALIDATION_ERROR");
      assert.deepEqual(detailFields(error), ["sort"], bad);
    }
  });

  test("a parameter given twice (?sort=a&sort=b, ?status[in]=…&status[in]=…) answers 400 saying to give it once", async () => {
    for (const [query, field] of [
      ["sort=priority&sort=-due_at", "sort"],
      ["status[in]=open&status[in]=pending", "status[in]"],
      ["limit=5&limit=6", "limit"],
    ]) {
      const error = await expectError(api, "GET", list(query!), 400, "VALIDATION_ERROR");
      assert.deepEqual(error.details, [{ field, issue: "must be given once (list several values comma-separated, as the parameter's description says)" }], query);
    }
  });
});

describe(`a sorted walk while records change, ${STORE} store`, () => {
  test("every record unchanged during the walk is seen exactly once, in order", async () => {
    const o = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Walk" } })).body as Obj;
    const priorities = ["low", "normal", "high", "urgent"];
    const made: Obj[] = [];
    for (let i = 0; i < 24; i++) made.push(await ticket({ subject: `t${String(i).padStart(2, "0")}`, priority: priorities[i % 4], estimate: i % 5 }, o));
    const changed = new Set<string>();
    const seen: Obj[] = [];
    const base = `/v1/organizations/${o.id}/tickets?sort=-priority,estimate&limit=3`;
    let url: string | null = base;
    let step = 0;
    while (url) {
      const page = (await expectStatus(api, "GET", url, 200)).body as Obj;
      seen.push(...page.data);
      // Meanwhile: a new record, and a change of one not seen yet.
      await ticket({ subject: `new${step}`, priority: priorities[step % 4], estimate: step % 5 }, o);
      const target = made[(step * 7) % made.length]!;
      if (!seen.some((r) => r.id === target.id)) {
        await expectStatus(api, "PATCH", `/v1/tickets/${target.id}`, 200, { body: { priority: priorities[(step + 1) % 4] } });
        changed.add(target.id);
      }
      step++;
      url = page.pagination.next_cursor ? `${base}&cursor=${encodeURIComponent(page.pagination.next_cursor)}` : null;
    }
    const ids = seen.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length, "no record twice");
    for (const r of made) if (!changed.has(r.id)) assert.ok(ids.includes(r.id), `unchanged ${r.subject} seen`);
    const unchanged = seen.filter((r) => made.some((m) => m.id === r.id) && !changed.has(r.id));
    const rank = (r: Obj) => priorities.indexOf(r.priority);
    for (let i = 1; i < unchanged.length; i++) {
      const [a, b] = [unchanged[i - 1]!, unchanged[i]!];
      assert.ok(rank(a) > rank(b) || (rank(a) === rank(b) && (a.estimate < b.estimate || (a.estimate === b.estimate && a.id < b.id))), `${a.subject} before ${b.subject}`);
    }
  });
});

describe(`operator filters (SPEC §12.2), ${STORE} store`, () => {
  let o: Obj;
  before(async () => {
    o = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Filters" } })).body as Obj;
    await ticket({ subject: "open-1", status: "open", estimate: 1, score: 0.5, opened_on: "2026-11-01", due_at: "2026-11-27T12:00:00Z", assignee_id: agent.id, vip: true }, o);
    await ticket({ subject: "pending-2", status: "pending", estimate: 2, score: 1.5, opened_on: "2026-11-10", due_at: "2026-11-30T12:00:00+01:00", assignee_id: null }, o);
    await ticket({ subject: "new-3", status: "new", estimate: 3, opened_on: "2026-11-20" }, o);
    await ticket({ subject: "closed-4", status: "closed", due_at: "2026-12-05T00:00:00Z" }, o);
  });
  const names = async (query: string) =>
    subjects(await walk(`/v1/organizations/${o.id}/tickets?sort=subject&${query}`)).sort();

  test("[in] on an enum and an integer; equality still works", async () => {
    assert.deepEqual(await names("status[in]=open,pending"), ["open-1", "pending-2"]);
    assert.deepEqual(await names("estimate[in]=1,3"), ["new-3", "open-1"]);
    assert.deepEqual(await names("status=new"), ["new-3"]);
    assert.deepEqual(await names("status%5Bin%5D=closed"), ["closed-4"]);
  });

  test("ranges on integers, numbers, dates, date-times (as instants) and created_at, combined by AND; records without a value never match", async () => {
    assert.deepEqual(await names("estimate[gte]=2"), ["new-3", "pending-2"]);
    assert.deepEqual(await names("estimate[gt]=1&estimate[lt]=3"), ["pending-2"]);
    assert.deepEqual(await names("score[lte]=0.5"), ["open-1"]);
    // Every number as String() writes it (the typed client's form): the exponent form, 17 significant digits.
    assert.deepEqual(await names("score[lte]=5e-1"), ["open-1"]);
    assert.deepEqual(await names(`score[lte]=${String(0.1 + 0.4)}&score[gt]=1e-300`), ["open-1"]);
    assert.deepEqual(await names("estimate[gte]=2&estimate[lt]=9007199254740991"), ["new-3", "pending-2"]);
    assert.deepEqual(await names("opened_on[gt]=2026-11-01&opened_on[lte]=2026-11-20"), ["new-3", "pending-2"]);
    // 2026-11-30T12:00:00+01:00 is 11:00Z.
    assert.deepEqual(await names(`due_at[lt]=${encodeURIComponent("2026-11-30T11:30:00Z")}`), ["open-1", "pending-2"]);
    assert.deepEqual(await names(`due_at[gte]=${encodeURIComponent("2026-11-30T11:00:00Z")}`), ["closed-4", "pending-2"]);
    assert.deepEqual(await names(`created_at[gte]=${encodeURIComponent("2000-01-01T00:00:00Z")}&created_at[lt]=${encodeURIComponent("2100-01-01T00:00:00+05:00")}`), ["closed-4", "new-3", "open-1", "pending-2"]);
    assert.deepEqual(await names(`updated_at[lt]=${encodeURIComponent("2000-01-01T00:00:00Z")}`), []);
  });

  test("[null] on an optional reference (unassigned) and on an optional number", async () => {
    assert.deepEqual(await names("assignee_id[null]=true"), ["closed-4", "new-3", "pending-2"]);
    assert.deepEqual(await names("assignee_id[null]=false"), ["open-1"]);
    assert.deepEqual(await names("due_at[null]=true"), ["new-3"]);
    assert.deepEqual(await names("estimate[null]=false&status[in]=closed,new"), ["new-3"]);
  });

  test("a bad value, an unknown operator or an operator the type does not take answers 400 naming the parameter as sent", async () => {
    const cases: Array<[string, string]> = [
      ["status[in]=open,nope", "status[in]"],
      ["due_at[gte]=tomorrow", "due_at[gte]"],
      ["due_at[gte]=2026-11-01", "due_at[gte]"],
      ["estimate[gt]=1.5", "estimate[gt]"],
      ["assignee_id[null]=yes", "assignee_id[null]"],
      ["status[gt]=open", "status[gt]"],
      ["vip[in]=true", "vip[in]"],
      ["subject[gte]=a", "subject[gte]"],
      ["estimate[like]=1", "estimate[like]"],
      ["assignee_id=" + agent.id, "assignee_id"],
      ["priority[null]=true", "priority[null]"],
      [`estimate[in]=${Array.from({ length: 101 }, (_, i) => i).join(",")}`, "estimate[in]"],
      ["estimate[in]=", "estimate[in]"],
      // Outside the field's bounds (estimate: minimum 0), as OpenAPI states them for each parameter.
      ["estimate=-1", "estimate"],
      ["estimate[gte]=-1", "estimate[gte]"],
      ["estimate[in]=1,-1", "estimate[in]"],
      // An integer as JSON writes it, as limit, per_page and page take it: no leading zero, no +.
      ["estimate=01", "estimate"],
      ["estimate[gt]=01", "estimate[gt]"],
      ["estimate[in]=1,03", "estimate[in]"],
      ["estimate[lte]=+3", "estimate[lte]"],
    ];
    for (const [query, field] of cases) {
      const error = await expectError(api, "GET", `/v1/organizations/${o.id}/tickets?${query}`, 400, "VALIDATION_ERROR");
      assert.deepEqual(detailFields(error), [field], query);
    }
  });

  test("an integer filter and limit written with a leading zero answer alike: 400, saying so", async () => {
    const error = await expectError(api, "GET", `/v1/organizations/${o.id}/tickets?estimate[gt]=01&estimate[in]=1,03&limit=05`, 400, "VALIDATION_ERROR");
    assert.deepEqual(error.details, [
      { field: "limit", issue: "must be an integer from 1 to 100, written without a leading zero" },
      { field: "estimate[in]", issue: "each value must be an integer, written without a leading zero" },
      { field: "estimate[gt]", issue: "must be an integer, written without a leading zero" },
    ]);
    assert.deepEqual(await names("estimate[gt]=0&estimate[in]=1,3"), ["new-3", "open-1"]);
  });

  test("the OpenAPI document lists each parameter under its full name", () => {
    const doc = api.contract.documents.get("v1")!;
    const params = (doc.paths["/v1/tickets"].get.parameters as Obj[]).map((p) => p.name ?? p.$ref);
    for (const name of ["sort", "status", "status[in]", "due_at[gte]", "due_at[lt]", "assignee_id[null]", "created_at[gte]", "updated_at[lte]", "estimate[in]"]) {
      assert.ok(params.includes(name), name);
    }
    assert.ok(!params.includes("assignee_id"), "a uuid is filtered by [null] only");
    assert.ok(!params.includes("due_at[in]"), "[in] is for string, enum and integer");
  });
});

test(`the other organization's tickets stay out of a child list, ${STORE} store`, async () => {
  await ticket({ subject: "elsewhere", priority: "urgent" }, other);
  const mine = await walk(`/v1/organizations/${org.id}/tickets?sort=-priority`);
  assert.ok(!mine.some((r) => r.subject === "elsewhere"));
});

describe(`list_under (SPEC §12.3), ${STORE} store`, () => {
  test("GET /v1/agents/{id}/tickets lists the tickets assigned to that agent, with sort, filters and q; 404 for an unknown agent", async () => {
    const bea = (await expectStatus(api, "POST", "/v1/agents", 201, { body: { name: "Bea" } })).body as Obj;
    const o = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Under" } })).body as Obj;
    await ticket({ subject: "bea-low", priority: "low", assignee_id: bea.id }, o);
    await ticket({ subject: "bea-urgent", priority: "urgent", assignee_id: bea.id, status: "open" }, o);
    await ticket({ subject: "nobody", priority: "urgent" }, o);
    await ticket({ subject: "ann's", priority: "high", assignee_id: agent.id }, o);
    assert.deepEqual(subjects(await walk(`/v1/agents/${bea.id}/tickets?sort=-priority`, 1)), ["bea-urgent", "bea-low"]);
    assert.deepEqual(subjects(await walk(`/v1/agents/${bea.id}/tickets?status[in]=open,solved`)), ["bea-urgent"]);
    assert.deepEqual(subjects(await walk(`/v1/agents/${bea.id}/tickets?q=urgent`)), ["bea-urgent"]);
    await expectError(api, "GET", `/v1/agents/01890a5d-ac96-774b-bcce-b302099a8057/tickets`, 404, "NOT_FOUND");
    const doc = api.contract.documents.get("v1")!;
    assert.equal(doc.paths["/v1/agents/{id}/tickets"].get.operationId, "listAgentTickets");
  });
});

describe(`exports honour sort and operator filters, ${STORE} store`, () => {
  test("a sorted, filtered export writes the records the list shows, in its order, page after page", async () => {
    const o = (await expectStatus(api, "POST", "/v1/organizations", 201, { body: { name: "Export" } })).body as Obj;
    const priorities = ["low", "normal", "high", "urgent"];
    for (let i = 0; i < 9; i++) {
      await ticket({ subject: `exp${i}`, priority: priorities[i % 4], status: i % 3 === 0 ? "closed" : "open", estimate: i }, o);
    }
    const body = {
      resource: "tickets",
      q: "exp",
      sort: "-priority,estimate",
      filters: { "status[in]": ["open", "pending"], "estimate[lt]": 8, "due_at[null]": true },
    };
    const job = (await expectStatus(api, "POST", "/v1/exports", 201, { body })).body as Obj;
    assert.equal(job.sort, "-priority,estimate");
    assert.deepEqual(job.filters, body.filters);
    // Created after the export was asked for: not in the file.
    await ticket({ subject: "exp-late", priority: "urgent", status: "open", estimate: 0 }, o);
    const done = await settled(api, "v1", job.id);
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    const file = ndjson((await download(api, done.download_url)).text);
    const listed = await walk(`/v1/tickets?q=exp&sort=-priority,estimate&status[in]=open,pending&estimate[lt]=8&due_at[null]=true`);
    const fromList = listed.filter((r) => r.organization_id === o.id && r.subject !== "exp-late");
    const fromFile = file.filter((r) => r.organization_id === o.id);
    assert.deepEqual(subjects(fromFile), subjects(fromList));
    assert.deepEqual(subjects(fromFile), ["exp7", "exp2", "exp1", "exp5", "exp4"]);
  });

  test("an export's sort and operator filters are validated as the list's (400 naming them)", async () => {
    for (const [bad, field] of [
      [{ sort: "status" }, "sort"],
      [{ filters: { "status[in]": "open" } }, "filters.status[in]"],
      [{ filters: { "estimate[gte]": "1" } }, "filters.estimate[gte]"],
      [{ filters: { "subject[gt]": "a" } }, "filters.subject[gt]"],
    ] as const) {
      const error = await expectError(api, "POST", "/v1/exports", 400, "VALIDATION_ERROR", { body: { resource: "tickets", ...bad } });
      assert.deepEqual(detailFields(error), [field], JSON.stringify(bad));
    }
  });
});

describe(`fuzzed list parameters (sort, operators, cursors), ${STORE} store`, () => {
  test("random combinations of the new parameters, valid and not: 200 or a 400 naming a parameter as sent, never a 500, every answer as documented", async () => {
    const doc = api.contract.documents.get("v1")!;
    const names = (doc.paths["/v1/tickets"].get.parameters as Obj[]).filter((p) => p.name).map((p) => p.name as string);
    const first = (await expectStatus(api, "GET", "/v1/tickets?sort=-priority&limit=1", 200)).body as Obj;
    const value = fc.oneof(
      fc.constantFrom("open", "new,open", "urgent", "-priority", "priority,-due_at,subject", "1", "-3", "2.5", "1e3", "", ",", "true", "false",
        "2026-11-01", "2026-11-01T00:00:00Z", "2026-11-01T00:00:00+14:00", "9999-99-99T99:99:99Z", "null", "%00", "🙂", "a".repeat(300),
        Array.from({ length: 101 }, (_, i) => String(i)).join(","), first.pagination.next_cursor ?? "x", agent.id),
      fc.string({ maxLength: 20 }),
    );
    const param = fc.tuple(fc.oneof(fc.constantFrom(...names), fc.constantFrom("status[nope]", "sort[in]", "due_at[eq]", "priority[null]", "id", "x[]")), value);
    await fc.assert(
      fc.asyncProperty(fc.array(param, { minLength: 1, maxLength: 4 }), async (params) => {
        const query = params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
        for (const path of ["/v1/tickets", `/v1/organizations/${org.id}/tickets`, `/v1/agents/${agent.id}/tickets`]) {
          const res = await call(api, "GET", `${path}?${query}`);
          assert.ok(res.status === 200 || res.status === 400, `${path}?${query} → ${res.status} ${res.text.slice(0, 300)}`);
          if (res.status === 400) {
            const fields = ((res.body as Obj).error.details as Obj[]).map((d) => d.field as string);
            assert.ok(fields.length > 0 && fields.every((f) => params.some(([k]) => k === f) || f === "cursor"), `${query}: ${fields.join(", ")}`);
          }
        }
      }),
      { numRuns: 60, seed: 20261125 },
    );
  });
});
