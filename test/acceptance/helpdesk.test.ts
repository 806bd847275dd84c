// An acceptance run of SPEC §12 as an outside team would do it: a multi-tenant helpdesk
// (organizations, agents, contacts, tickets, comments, tags, SLA policies, time entries) written
// from the words of §12 (test/fixtures/acceptance-helpdesk, every key of §12 used), exercised over
// real HTTP on the store CANON_TEST_STORE names: CRUD, cursor and offset lists with sort and every
// filter operator, ?q=, child and list_under lists, many-to-many with restrict and cascade,
// references in objects and actions, composite unique, tenancy (dev-writer.<uuid>), transitions,
// requires/sets with from, decimal, map, Idempotency-Key, exports (tenant, sort, filters, q) and
// the events feed. Every response is checked against the fixture's own OpenAPI document. All the
// checks run; the test fails listing each that did not hold.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { exportsFolder } from "../exports/helpers.ts";
import { call, startFixture, type Api, type Res } from "../http/helpers.ts";

type Obj = Record<string, any>;

const folder = exportsFolder();
let api: Api;
before(async () => {
  api = await startFixture("acceptance-helpdesk", "test/fixtures/acceptance-helpdesk", ["v1"], {
    exports: { directory: folder.directory },
  });
});
after(async () => {
  await api?.close();
  folder.remove();
});

const failures: string[] = [];
function check(name: string, ok: boolean, info: unknown = ""): void {
  if (!ok) failures.push(`${name}: ${typeof info === "string" ? info : JSON.stringify(info)}`.slice(0, 600));
}

async function req(
  method: string,
  url: string,
  opts: { body?: unknown; auth?: string | null; headers?: Record<string, string> } = {},
): Promise<Res> {
  return call(api, method, url, opts);
}
function fields(res: Res): string[] {
  return ((res.body?.error?.details ?? []) as Obj[]).map((d) => d.field);
}
async function expect(
  name: string,
  method: string,
  url: string,
  status: number,
  opts: Parameters<typeof req>[2] = {},
  field?: string,
): Promise<Res> {
  const res = await req(method, url, opts);
  check(
    `${name} (${method} ${url.slice(0, 100)} → ${status})`,
    res.status === status,
    `${res.status} ${res.text.slice(0, 300)}`,
  );
  if (field !== undefined)
    check(`${name}: names ${field}`, fields(res).includes(field), res.text.slice(0, 300));
  return res;
}
const J = (res: Res) => res.body as Obj;

test(
  "a helpdesk written from SPEC §12 works on every path its records take",
  { timeout: 300_000 },
  async () => {
    const P = "dev-writer";
    const UNKNOWN = "01890a5d-ac96-774b-bcce-b302099a8057";
    const n = Date.now() % 100000;

    // --- organizations: the tenant collection
    const A = J(
      await expect("create org A", "POST", "/v1/organizations", 201, {
        body: { name: `Acme ${n}`, plan: "team" },
      }),
    );
    const B = J(
      await expect("create org B", "POST", "/v1/organizations", 201, { body: { name: `Bolt ${n}` } }),
    );
    const TA = `dev-writer.${A.id}`;
    const TB = `dev-writer.${B.id}`;
    const RA = `dev-reader.${A.id}`;
    await expect("tenant creates org: 403", "POST", "/v1/organizations", 403, {
      auth: TA,
      body: { name: "X" },
    });
    const orgsA = J(
      await expect("tenant lists orgs", "GET", "/v1/organizations?limit=100", 200, { auth: TA }),
    );
    check(
      "tenant sees only its org",
      orgsA.data.length === 1 && orgsA.data[0].id === A.id,
      orgsA.data?.map((o: Obj) => o.id),
    );
    await expect("tenant reads other org: 404", "GET", `/v1/organizations/${B.id}`, 404, { auth: TA });
    await expect("tenant reads own org", "GET", `/v1/organizations/${A.id}`, 200, { auth: TA });
    await expect("tenant patches other org: 404", "PATCH", `/v1/organizations/${B.id}`, 404, {
      auth: TA,
      body: { name: "Hacked" },
    });
    await expect("org sort by plan enum", "GET", "/v1/organizations?sort=-plan,name", 200);

    // --- agents
    const agent = (auth: string, body: Obj) => req("POST", "/v1/agents", { auth, body });
    const a1 = J(
      await expect("agent a1", "POST", "/v1/agents", 201, {
        auth: TA,
        body: { name: "Zed", email: `zed${n}@acme.test`, role: "lead" },
      }),
    );
    check("tenant field filled from principal", a1.organization_id === A.id, a1);
    const a2 = J(
      await expect("agent a2", "POST", "/v1/agents", 201, {
        auth: TA,
        body: { name: "Amy", email: `amy${n}@acme.test` },
      }),
    );
    const a3 = J(
      await expect("agent a3", "POST", "/v1/agents", 201, {
        auth: TA,
        body: { name: "Bob", email: `bob${n}@acme.test`, role: "admin", active: false },
      }),
    );
    const b1 = J(
      await expect("agent b1 same email other tenant", "POST", "/v1/agents", 201, {
        auth: TB,
        body: { name: "Zed", email: `zed${n}@acme.test` },
      }),
    );
    await expect("unique within tenant: 409", "POST", "/v1/agents", 409, {
      auth: TA,
      body: { name: "Zed2", email: `ZED${n}@acme.test` },
    });
    await expect(
      "platform create without tenant field: 400",
      "POST",
      "/v1/agents",
      400,
      { body: { name: "Q", email: `q${n}@x.test` } },
      "organization_id",
    );
    await expect("tenant names other tenant: 403", "POST", "/v1/agents", 403, {
      auth: TA,
      body: { name: "Q", email: `q${n}@x.test`, organization_id: B.id },
    });
    await expect("platform create with tenant field", "POST", "/v1/agents", 201, {
      body: { name: "Pat", email: `pat${n}@x.test`, organization_id: B.id },
    });
    await expect("reader tenant write: 403", "POST", "/v1/agents", 403, {
      auth: RA,
      body: { name: "R", email: `r${n}@x.test` },
    });
    await expect("tenant patch other tenant's agent: 404", "PATCH", `/v1/agents/${b1.id}`, 404, {
      auth: TA,
      body: { name: "X" },
    });
    await expect("tenant delete other tenant's agent: 404", "DELETE", `/v1/agents/${b1.id}`, 404, {
      auth: TA,
    });
    await expect("tenant moves agent to other tenant: 403", "PATCH", `/v1/agents/${a1.id}`, 403, {
      auth: TA,
      body: { organization_id: B.id },
    });
    {
      const r = J(await expect("agents sort name", "GET", "/v1/agents?sort=name", 200, { auth: TA }));
      check(
        "agents sorted by name, tenant only",
        JSON.stringify(r.data?.map((x: Obj) => x.name)) === JSON.stringify(["Amy", "Bob", "Zed"]),
        r.data?.map((x: Obj) => x.name),
      );
      const r2 = J(
        await expect("agents role[in]", "GET", "/v1/agents?role[in]=lead,admin&sort=-role", 200, {
          auth: TA,
        }),
      );
      check(
        "agents role[in] sorted -role (enum order)",
        JSON.stringify(r2.data?.map((x: Obj) => x.name)) === JSON.stringify(["Bob", "Zed"]),
        r2.data?.map((x: Obj) => x.name),
      );
      const r3 = J(await expect("agents active=false", "GET", "/v1/agents?active=false", 200, { auth: TA }));
      check("agents active=false", r3.data.length === 1 && r3.data[0].id === a3.id, r3.data);
      const r4 = J(await expect("agents q", "GET", "/v1/agents?q=zed", 200, { auth: TA }));
      check("agents q within tenant", r4.data.length === 1 && r4.data[0].id === a1.id, r4.data);
      const r5 = J(await expect("platform agents q", "GET", "/v1/agents?q=zed", 200));
      check("platform q sees both tenants", r5.data.length >= 2, r5.data.length);
    }

    // --- tags (shared)
    const t1 = J(
      await expect("tag t1", "POST", "/v1/tags", 201, { body: { name: `bug${n}`, color: "#ff0000" } }),
    );
    const t2 = J(await expect("tag t2", "POST", "/v1/tags", 201, { body: { name: `billing${n}` } }));
    const t3 = J(await expect("tag t3", "POST", "/v1/tags", 201, { body: { name: `vip${n}` } }));
    const tagByTenant = await req("POST", "/v1/tags", { auth: TA, body: { name: `tenant${n}` } });
    check(
      "a tenant principal may create a shared tag (tags are not tenant-scoped)",
      tagByTenant.status === 201,
      tagByTenant.text,
    );

    // --- contacts (offset, composite unique, map)
    const c1 = J(
      await expect("contact c1", "POST", "/v1/contacts", 201, {
        auth: TA,
        body: { name: "Carla", email: `carla${n}@cust.test`, metadata: { "crm.id": "A-1", tier_2: "gold" } },
      }),
    );
    const c2 = J(
      await expect("contact c2", "POST", "/v1/contacts", 201, {
        auth: TA,
        body: { name: "Ben", email: `ben${n}@cust.test`, phone: "+491234" },
      }),
    );
    const cB = J(
      await expect("contact B same email", "POST", "/v1/contacts", 201, {
        auth: TB,
        body: { name: "Carla", email: `carla${n}@cust.test` },
      }),
    );
    await expect("composite unique: 409", "POST", "/v1/contacts", 409, {
      auth: TA,
      body: { name: "Carla 2", email: ` Carla${n}@cust.test`.trim() },
    });
    await expect("map bad key: 400", "POST", "/v1/contacts", 400, {
      auth: TA,
      body: { name: "M", email: `m1${n}@c.test`, metadata: { "bad key!": "x" } },
    });
    await expect("map too long key: 400", "POST", "/v1/contacts", 400, {
      auth: TA,
      body: { name: "M", email: `m2${n}@c.test`, metadata: { ["k".repeat(41)]: "x" } },
    });
    await expect("map too many keys: 400", "POST", "/v1/contacts", 400, {
      auth: TA,
      body: {
        name: "M",
        email: `m3${n}@c.test`,
        metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])),
      },
    });
    await expect("map value too long: 400", "POST", "/v1/contacts", 400, {
      auth: TA,
      body: { name: "M", email: `m4${n}@c.test`, metadata: { a: "x".repeat(501) } },
    });
    await expect("map value wrong type: 400", "POST", "/v1/contacts", 400, {
      auth: TA,
      body: { name: "M", email: `m5${n}@c.test`, metadata: { a: 1 } },
    });
    {
      const r = J(
        await expect("map PATCH replaces", "PATCH", `/v1/contacts/${c1.id}`, 200, {
          auth: TA,
          body: { metadata: { only: "this" } },
        }),
      );
      check(
        "PATCH replaces whole map",
        JSON.stringify(r.metadata) === JSON.stringify({ only: "this" }),
        r.metadata,
      );
      const p = J(
        await expect("contacts offset sort", "GET", "/v1/contacts?sort=name&per_page=1&page=2", 200, {
          auth: TA,
        }),
      );
      check(
        "offset page 2 sort name",
        p.data.length === 1 && p.data[0].id === c1.id && p.pagination.total === 2,
        p,
      );
      const f = J(
        await expect("contacts phone[null]=true", "GET", "/v1/contacts?phone[null]=true", 200, { auth: TA }),
      );
      check(
        "phone[null]=true",
        f.data.length === 1 && f.data[0].id === c1.id,
        f.data?.map((x: Obj) => x.name),
      );
      const f2 = J(
        await expect("contacts name[in]", "GET", "/v1/contacts?name[in]=Ben,Nobody", 200, { auth: TA }),
      );
      check("name[in]", f2.data.length === 1 && f2.data[0].id === c2.id, f2.data);
      const f3 = J(
        await expect(
          "contacts created_at[gte]",
          "GET",
          `/v1/contacts?created_at[gte]=${encodeURIComponent(c2.created_at)}`,
          200,
          { auth: TA },
        ),
      );
      check("created_at[gte]", f3.data.length === 1 && f3.data[0].id === c2.id, f3.data);
      const f4 = J(
        await expect(
          "contacts updated_at[gt]",
          "GET",
          `/v1/contacts?updated_at[gt]=${encodeURIComponent(c2.created_at)}`,
          200,
          { auth: TA },
        ),
      );
      check(
        "updated_at[gt] (c1 was patched after c2)",
        f4.data.length === 1 && f4.data[0].id === c1.id,
        f4.data,
      );
      const q = J(
        await expect("contacts q (offset resource → cursor)", "GET", "/v1/contacts?q=carla&sort=-name", 200, {
          auth: TA,
        }),
      );
      check("q in cursor mode, tenant only", "next_cursor" in q.pagination && q.data.length === 1, q);
    }

    // --- SLA policies (decimal, child of the tenant collection)
    const s1 = J(
      await expect("sla s1", "POST", "/v1/sla-policies", 201, {
        auth: TA,
        body: {
          name: "Gold",
          priority: "high",
          first_response_minutes: 30,
          resolution_hours: 4.5,
          credit: "10.50",
        },
      }),
    );
    check("decimal as string with scale", s1.credit === "10.50", s1.credit);
    const s2 = J(
      await expect("sla s2", "POST", "/v1/sla-policies", 201, {
        auth: TA,
        body: {
          name: "Silver",
          priority: "low",
          first_response_minutes: 240,
          resolution_hours: 48,
          credit: "9",
        },
      }),
    );
    check("decimal normalised to scale", s2.credit === "9.00", s2.credit);
    await expect("sla s3", "POST", "/v1/sla-policies", 201, {
      auth: TA,
      body: {
        name: "Bronze",
        priority: "urgent",
        first_response_minutes: 5,
        resolution_hours: 1,
        credit: "100.00",
      },
    });
    await expect(
      "decimal as JSON number: 400",
      "POST",
      "/v1/sla-policies",
      400,
      {
        auth: TA,
        body: { name: "X", priority: "low", first_response_minutes: 1, resolution_hours: 1, credit: 10.5 },
      },
      "credit",
    );
    await expect(
      "decimal too many fraction digits: 400",
      "POST",
      "/v1/sla-policies",
      400,
      {
        auth: TA,
        body: { name: "X", priority: "low", first_response_minutes: 1, resolution_hours: 1, credit: "1.005" },
      },
      "credit",
    );
    await expect(
      "decimal too many digits: 400",
      "POST",
      "/v1/sla-policies",
      400,
      {
        auth: TA,
        body: {
          name: "X",
          priority: "low",
          first_response_minutes: 1,
          resolution_hours: 1,
          credit: "1234567.00",
        },
      },
      "credit",
    );
    await expect(
      "decimal below minimum: 400",
      "POST",
      "/v1/sla-policies",
      400,
      {
        auth: TA,
        body: { name: "X", priority: "low", first_response_minutes: 1, resolution_hours: 1, credit: "-1.00" },
      },
      "credit",
    );
    {
      const r = J(
        await expect(
          "sla sort -first_response_minutes",
          "GET",
          "/v1/sla-policies?sort=-first_response_minutes",
          200,
          { auth: TA },
        ),
      );
      check(
        "integer sort",
        JSON.stringify(r.data?.map((x: Obj) => x.credit)) === JSON.stringify(["9.00", "10.50", "100.00"]),
        r.data?.map((x: Obj) => x.credit),
      );
      const r2 = J(
        await expect("sla credit[gte]", "GET", "/v1/sla-policies?credit[gte]=10.5&credit[lt]=100", 200, {
          auth: TA,
        }),
      );
      check(
        "decimal range",
        r2.data.length === 1 && r2.data[0].id === s1.id,
        r2.data?.map((x: Obj) => x.credit),
      );
      await expect(
        "decimal filter bad value: 400",
        "GET",
        "/v1/sla-policies?credit[gte]=abc",
        400,
        { auth: TA },
        "credit[gte]",
      );
      await expect(
        "decimal filter too precise: 400",
        "GET",
        "/v1/sla-policies?credit=1.005",
        400,
        { auth: TA },
        "credit",
      );
      const r3 = J(
        await expect(
          "child list under org",
          "GET",
          `/v1/organizations/${A.id}/sla-policies?sort=priority`,
          200,
          { auth: TA },
        ),
      );
      check(
        "child list sorted by enum",
        JSON.stringify(r3.data?.map((x: Obj) => x.priority)) === JSON.stringify(["low", "high", "urgent"]),
        r3.data?.map((x: Obj) => x.priority),
      );
      await expect(
        "child list under other tenant's org: 404",
        "GET",
        `/v1/organizations/${B.id}/sla-policies`,
        404,
        { auth: TA },
      );
      const r4 = J(
        await expect(
          "first_response_minutes[in]",
          "GET",
          "/v1/sla-policies?first_response_minutes[in]=30,5",
          200,
          { auth: TA },
        ),
      );
      check("integer [in]", r4.data.length === 2, r4.data.length);
    }

    // --- tickets
    const tk = (body: Obj, auth = TA) =>
      req("POST", "/v1/tickets", { auth, body: { contact_id: c1.id, ...body } });
    const k1 = J(
      await expect("ticket k1", "POST", "/v1/tickets", 201, {
        auth: TA,
        body: {
          contact_id: c1.id,
          subject: "Printer on fire",
          priority: "urgent",
          due_at: "2026-12-01T10:00:00Z",
          tag_ids: [t2.id, t1.id],
          watcher_ids: [a2.id],
          budget: "120.50",
          score: 3,
          opened_on: "2026-11-01",
          requester: { contact_id: c2.id, channel: "email" },
          custom_fields: { source: "mail" },
        },
      }),
    );
    check("tag_ids order kept", JSON.stringify(k1.tag_ids) === JSON.stringify([t2.id, t1.id]), k1.tag_ids);
    check("status default new", k1.status === "new", k1.status);
    const k2 = J(
      await tk({
        subject: "Login broken",
        priority: "low",
        status: "open",
        due_at: "2026-11-20T10:00:00Z",
        assignee_id: a1.id,
        tag_ids: [t1.id],
        budget: "99.99",
        score: 7,
      }),
    );
    check("create takes any status value", k2.status === "open", k2);
    const k3 = J(
      await tk({ subject: "Billing question", priority: "high", status: "open", tag_ids: [t2.id, t3.id] }),
    );
    const k4 = J(
      await tk({
        subject: "Feature request printer",
        priority: "normal",
        status: "pending",
        assignee_id: null,
        budget: "1000.00",
      }),
    );
    const k5 = J(
      await tk({
        subject: "Another urgent",
        priority: "urgent",
        due_at: "2026-11-15T00:00:00Z",
        assignee_id: a2.id,
      }),
    );
    const kB = J(await tk({ contact_id: cB.id, subject: "Bolt printer", priority: "urgent" }, TB));
    check("ticket kB created", typeof kB.id === "string", kB);

    await expect(
      "read_only field: 400",
      "POST",
      "/v1/tickets",
      400,
      { auth: TA, body: { contact_id: c1.id, subject: "x", resolution_due_at: "2026-01-01T00:00:00Z" } },
      "resolution_due_at",
    );
    await expect(
      "tag_ids unknown: 422",
      "POST",
      "/v1/tickets",
      422,
      { auth: TA, body: { contact_id: c1.id, subject: "x", tag_ids: [t1.id, UNKNOWN] } },
      "tag_ids.1",
    );
    await expect("tag_ids repeated: 400", "POST", "/v1/tickets", 400, {
      auth: TA,
      body: { contact_id: c1.id, subject: "x", tag_ids: [t1.id, t1.id] },
    });
    await expect("tag_ids over max_items: 400", "POST", "/v1/tickets", 400, {
      auth: TA,
      body: { contact_id: c1.id, subject: "x", tag_ids: Array.from({ length: 51 }, () => UNKNOWN) },
    });
    await expect(
      "watcher of other tenant: 422",
      "POST",
      "/v1/tickets",
      422,
      { auth: TA, body: { contact_id: c1.id, subject: "x", watcher_ids: [b1.id] } },
      "watcher_ids.0",
    );
    await expect(
      "object field reference unknown: 422",
      "POST",
      "/v1/tickets",
      422,
      {
        auth: TA,
        body: { contact_id: c1.id, subject: "x", requester: { contact_id: UNKNOWN, channel: "web" } },
      },
      "requester.contact_id",
    );
    await expect(
      "object field reference other tenant: 422",
      "POST",
      "/v1/tickets",
      422,
      {
        auth: TA,
        body: { contact_id: c1.id, subject: "x", requester: { contact_id: cB.id, channel: "web" } },
      },
      "requester.contact_id",
    );
    await expect(
      "contact of other tenant: 422",
      "POST",
      "/v1/tickets",
      422,
      { auth: TA, body: { contact_id: cB.id, subject: "x" } },
      "contact_id",
    );
    await expect(
      "assignee of other tenant: 422",
      "POST",
      "/v1/tickets",
      422,
      { auth: TA, body: { contact_id: c1.id, subject: "x", assignee_id: b1.id } },
      "assignee_id",
    );
    await expect(
      "sla of other tenant / unknown: 422",
      "POST",
      "/v1/tickets",
      422,
      { auth: TA, body: { contact_id: c1.id, subject: "x", sla_policy_id: UNKNOWN } },
      "sla_policy_id",
    );
    await expect(
      "malformed uuid: 400",
      "POST",
      "/v1/tickets",
      400,
      { auth: TA, body: { contact_id: "nope", subject: "x" } },
      "contact_id",
    );
    await expect(
      "malformed uuid in array: 400",
      "POST",
      "/v1/tickets",
      400,
      { auth: TA, body: { contact_id: c1.id, subject: "x", tag_ids: ["nope"] } },
      "tag_ids.0",
    );
    await expect(
      "budget number: 400",
      "POST",
      "/v1/tickets",
      400,
      { auth: TA, body: { contact_id: c1.id, subject: "x", budget: 5 } },
      "budget",
    );

    // transitions
    await expect(
      "new → solved: 422",
      "PATCH",
      `/v1/tickets/${k1.id}`,
      422,
      { auth: TA, body: { status: "solved" } },
      "status",
    );
    {
      const r = await req("PATCH", `/v1/tickets/${k1.id}`, { auth: TA, body: { status: "closed" } });
      check(
        "transition 422 names allowed next values",
        r.status === 422 && /open/.test(JSON.stringify(r.body?.error?.details)),
        r.text,
      );
      const same = await expect("same value is no transition", "PATCH", `/v1/tickets/${k1.id}`, 200, {
        auth: TA,
        body: { status: "new", subject: "Printer on fire!" },
      });
      check("same-value PATCH applied", J(same).subject === "Printer on fire!");
      await expect("new → open", "PATCH", `/v1/tickets/${k1.id}`, 200, {
        auth: TA,
        body: { status: "open" },
      });
      const rd = await expect("read k1", "GET", `/v1/tickets/${k1.id}`, 200, { auth: TA });
      check(
        "k1 still has untouched fields",
        J(rd).budget === "120.50" && J(rd).custom_fields?.source === "mail",
        J(rd),
      );
      // PUT transition check
      const { id, created_at, updated_at, resolution_due_at, ...rest } = J(rd);
      await expect(
        "PUT open → closed: 422",
        "PUT",
        `/v1/tickets/${k1.id}`,
        422,
        { auth: TA, body: { ...rest, status: "closed" } },
        "status",
      );
      await expect("PUT open → pending", "PUT", `/v1/tickets/${k1.id}`, 200, {
        auth: TA,
        body: { ...rest, status: "pending" },
      });
      await expect("PUT with stale If-Match: 409", "PUT", `/v1/tickets/${k1.id}`, 409, {
        auth: TA,
        body: { ...rest, status: "open" },
        headers: { "if-match": rd.headers.get("etag")! },
      });
      await expect("PUT by other tenant: 404", "PUT", `/v1/tickets/${k1.id}`, 404, {
        auth: TB,
        body: { ...rest, organization_id: B.id, contact_id: cB.id, status: "open" },
      });
    }

    // sorting
    async function walkAll(url: string, auth = TA): Promise<Obj[]> {
      const seen: Obj[] = [];
      let next: string | null = url;
      for (let i = 0; next && i < 100; i++) {
        const r = await req("GET", next, { auth });
        if (r.status !== 200) {
          check(`walk ${next}`, false, r.text);
          break;
        }
        seen.push(...J(r).data);
        const c = J(r).pagination.next_cursor;
        next = c ? `${url}${url.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(c)}` : null;
      }
      return seen;
    }
    const PRI = ["low", "normal", "high", "urgent"];
    function cmpTickets(keys: string[]) {
      return (x: Obj, y: Obj) => {
        for (const key of keys) {
          const desc = key.startsWith("-");
          const f = desc ? key.slice(1) : key;
          const a = x[f] ?? null;
          const b = y[f] ?? null;
          if (a === b) continue;
          if (a === null) return 1; // nulls last either way
          if (b === null) return -1;
          const c = f === "priority" ? PRI.indexOf(a) - PRI.indexOf(b) : a < b ? -1 : 1;
          if (c !== 0) return desc ? -c : c;
        }
        const desc = keys.at(-1)!.startsWith("-");
        return (x.id < y.id ? -1 : 1) * (desc ? -1 : 1);
      };
    }
    {
      const all = J(await req("GET", "/v1/tickets?limit=100", { auth: TA })).data as Obj[];
      check(
        "tenant list holds A's tickets only",
        all.every((t) => t.organization_id === A.id) && all.length === 5,
        all.length,
      );
      for (const sort of ["-priority,due_at", "due_at", "-due_at", "priority,-updated_at", "-updated_at"]) {
        const expected = [...all].sort(cmpTickets(sort.split(","))).map((t) => t.id);
        const full = J(
          await expect(`sort ${sort}`, "GET", `/v1/tickets?sort=${sort}&limit=100`, 200, { auth: TA }),
        ).data?.map((t: Obj) => t.id);
        check(`sort ${sort} order`, JSON.stringify(full) === JSON.stringify(expected), { full, expected });
        const walked = (await walkAll(`/v1/tickets?sort=${sort}&limit=2`)).map((t) => t.id);
        check(`sort ${sort} cursor walk`, JSON.stringify(walked) === JSON.stringify(expected), {
          walked,
          expected,
        });
      }
      await expect("sort undeclared key: 400", "GET", "/v1/tickets?sort=subject", 400, { auth: TA }, "sort");
      await expect("sort unknown key: 400", "GET", "/v1/tickets?sort=bogus", 400, { auth: TA }, "sort");
      await expect(
        "sort repeated key: 400",
        "GET",
        "/v1/tickets?sort=priority,-priority",
        400,
        { auth: TA },
        "sort",
      );
      await expect(
        "sort 4 keys: 400",
        "GET",
        "/v1/tickets?sort=priority,due_at,updated_at,created_at",
        400,
        { auth: TA },
        "sort",
      );
      await expect("sort empty: 400", "GET", "/v1/tickets?sort=", 400, { auth: TA }, "sort");
      const p1 = J(await req("GET", "/v1/tickets?sort=-priority&limit=2", { auth: TA }));
      const cur = encodeURIComponent(p1.pagination.next_cursor);
      await expect(
        "cursor with other sort: 400",
        "GET",
        `/v1/tickets?sort=priority&limit=2&cursor=${cur}`,
        400,
        { auth: TA },
        "cursor",
      );
      await expect(
        "cursor with no sort: 400",
        "GET",
        `/v1/tickets?limit=2&cursor=${cur}`,
        400,
        { auth: TA },
        "cursor",
      );
      await expect(
        "cursor with a filter: 400",
        "GET",
        `/v1/tickets?sort=-priority&status=open&limit=2&cursor=${cur}`,
        400,
        { auth: TA },
        "cursor",
      );
      await expect(
        "cursor with q: 400",
        "GET",
        `/v1/tickets?sort=-priority&q=printer&limit=2&cursor=${cur}`,
        400,
        { auth: TA },
        "cursor",
      );
      await expect(
        "cursor of other tenant: 400",
        "GET",
        `/v1/tickets?sort=-priority&limit=2&cursor=${cur}`,
        400,
        { auth: TB },
        "cursor",
      );
      await expect(
        "cursor of tenant used by platform: 400",
        "GET",
        `/v1/tickets?sort=-priority&limit=2&cursor=${cur}`,
        400,
        {},
        "cursor",
      );
      await expect("cursor same query ok", "GET", `/v1/tickets?sort=-priority&limit=2&cursor=${cur}`, 200, {
        auth: TA,
      });
      const q = J(
        await expect("q with sort", "GET", "/v1/tickets?q=printer&sort=-priority", 200, { auth: TA }),
      );
      check(
        "q with sort: A only, sorted",
        JSON.stringify(q.data?.map((t: Obj) => t.id)) === JSON.stringify([k1.id, k4.id]),
        q.data?.map((t: Obj) => [t.subject, t.priority]),
      );
      const pq = J(await expect("platform q", "GET", "/v1/tickets?q=printer", 200));
      check(
        "platform q sees B too",
        pq.data.some((t: Obj) => t.id === kB.id),
        pq.data.length,
      );
    }

    // filters
    async function ids(url: string, auth = TA): Promise<string[]> {
      const r = await req("GET", url, { auth });
      check(`list ${url}`, r.status === 200, r.text);
      return ((J(r)?.data ?? []) as Obj[]).map((t) => t.id).sort();
    }
    const eq = (name: string, got: string[], want: string[]) =>
      check(name, JSON.stringify(got) === JSON.stringify([...want].sort()), { got, want });
    {
      const cur = J(await req("GET", `/v1/tickets/${k1.id}`, { auth: TA }));
      const statusOf = (t: Obj) => t.status;
      check("k1 is pending after its PUT", statusOf(cur) === "pending", cur);
      eq(
        "status=open",
        await ids("/v1/tickets?status=open"),
        [k2.id, k3.id, k5.id].filter(() => true).filter((id) => id !== k5.id),
      );
      eq("status[in]=pending,new", await ids("/v1/tickets?status[in]=pending,new"), [k1.id, k4.id, k5.id]);
      eq("priority[in]", await ids("/v1/tickets?priority[in]=urgent,low"), [k1.id, k2.id, k5.id]);
      eq("due_at[gte]", await ids("/v1/tickets?due_at[gte]=2026-11-20T10:00:00Z"), [k1.id, k2.id]);
      eq(
        "due_at[gt]&due_at[lt]",
        await ids("/v1/tickets?due_at[gt]=2026-11-15T00:00:00Z&due_at[lt]=2026-12-01T10:00:00Z"),
        [k2.id],
      );
      eq(
        "due_at[lte] with offset",
        await ids(`/v1/tickets?due_at[lte]=${encodeURIComponent("2026-11-15T01:00:00+01:00")}`),
        [k5.id],
      );
      eq("due_at[null]=true", await ids("/v1/tickets?due_at[null]=true"), [k3.id, k4.id]);
      eq("assignee_id[null]=true", await ids("/v1/tickets?assignee_id[null]=true"), [k1.id, k3.id, k4.id]);
      eq("assignee_id[null]=false", await ids("/v1/tickets?assignee_id[null]=false"), [k2.id, k5.id]);
      eq("created_at[gte]", await ids(`/v1/tickets?created_at[gte]=${encodeURIComponent(k3.created_at)}`), [
        k3.id,
        k4.id,
        k5.id,
      ]);
      eq("created_at[lt]", await ids(`/v1/tickets?created_at[lt]=${encodeURIComponent(k2.created_at)}`), [
        k1.id,
      ]);
      eq("budget[gte]=100", await ids("/v1/tickets?budget[gte]=100"), [k1.id, k4.id]);
      eq("budget[lt]=100.00", await ids("/v1/tickets?budget[lt]=100.00"), [k2.id]);
      eq("budget=99.99", await ids("/v1/tickets?budget=99.99"), [k2.id]);
      eq("budget[null]=true", await ids("/v1/tickets?budget[null]=true"), [k3.id, k5.id]);
      eq("score[in]=3,7", await ids("/v1/tickets?score[in]=3,7"), [k1.id, k2.id]);
      eq("score[gt]=3", await ids("/v1/tickets?score[gt]=3"), [k2.id]);
      eq("score=3", await ids("/v1/tickets?score=3"), [k1.id]);
      eq("opened_on=2026-11-01", await ids("/v1/tickets?opened_on=2026-11-01"), [k1.id]);
      eq("opened_on[lt]", await ids("/v1/tickets?opened_on[lt]=2026-11-02"), [k1.id]);
      eq("escalated=false AND priority", await ids("/v1/tickets?escalated=false&priority=urgent"), [
        k1.id,
        k5.id,
      ]);
      await expect(
        "operator the type does not take: 400",
        "GET",
        "/v1/tickets?status[gte]=open",
        400,
        { auth: TA },
        "status[gte]",
      );
      await expect(
        "unknown operator: 400",
        "GET",
        "/v1/tickets?due_at[foo]=x",
        400,
        { auth: TA },
        "due_at[foo]",
      );
      await expect(
        "bad datetime value: 400",
        "GET",
        "/v1/tickets?due_at[gte]=yesterday",
        400,
        { auth: TA },
        "due_at[gte]",
      );
      await expect(
        "bad created_at value: 400",
        "GET",
        "/v1/tickets?created_at[gte]=2026-13-01",
        400,
        { auth: TA },
        "created_at[gte]",
      );
      await expect(
        "uuid equality not allowed: 400",
        "GET",
        `/v1/tickets?assignee_id=${a1.id}`,
        400,
        { auth: TA },
        "assignee_id",
      );
      await expect(
        "uuid [in] not allowed: 400",
        "GET",
        `/v1/tickets?assignee_id[in]=${a1.id}`,
        400,
        { auth: TA },
        "assignee_id[in]",
      );
      await expect(
        "[null] bad value: 400",
        "GET",
        "/v1/tickets?assignee_id[null]=maybe",
        400,
        { auth: TA },
        "assignee_id[null]",
      );
      await expect(
        "[null] on a required field: 400",
        "GET",
        "/v1/tickets?status[null]=true",
        400,
        { auth: TA },
        "status[null]",
      );
      await expect("enum bad value: 400", "GET", "/v1/tickets?status=bogus", 400, { auth: TA }, "status");
      await expect(
        "enum [in] bad value: 400",
        "GET",
        "/v1/tickets?status[in]=open,bogus",
        400,
        { auth: TA },
        "status[in]",
      );
      await expect(
        "[in] over 100 values: 400",
        "GET",
        `/v1/tickets?score[in]=${Array.from({ length: 101 }, (_, i) => i % 10).join(",")}`,
        400,
        { auth: TA },
        "score[in]",
      );
      await expect(
        "integer bad value: 400",
        "GET",
        "/v1/tickets?score[gt]=1.5",
        400,
        { auth: TA },
        "score[gt]",
      );
      await expect(
        "boolean bad value: 400",
        "GET",
        "/v1/tickets?escalated=yes",
        400,
        { auth: TA },
        "escalated",
      );
      await expect(
        "created_at equality not declared: 400",
        "GET",
        `/v1/tickets?created_at=${encodeURIComponent(k1.created_at)}`,
        400,
        { auth: TA },
        "created_at",
      );
      await expect("undeclared filter: 400", "GET", "/v1/tickets?subject=x", 400, { auth: TA }, "subject");
      await expect(
        "repeated filter param",
        "GET",
        "/v1/tickets?status=open&status=new",
        400,
        { auth: TA },
        "status",
      );
    }

    // list_under
    {
      eq("agents/{a1}/tickets", await ids(`/v1/agents/${a1.id}/tickets`), [k2.id]);
      eq("tags/{t1}/tickets", await ids(`/v1/tags/${t1.id}/tickets`), [k1.id, k2.id]);
      {
        const got = (
          J(await req("GET", `/v1/tags/${t2.id}/tickets?sort=-priority`, { auth: TA })).data as Obj[]
        ).map((t) => t.id);
        check(
          "tags/{t2}/tickets sort -priority",
          JSON.stringify(got) === JSON.stringify([k1.id, k3.id]),
          got,
        );
      }
      eq("contacts/{c1}/tickets status filter", await ids(`/v1/contacts/${c1.id}/tickets?status=open`), [
        k2.id,
        k3.id,
      ]);
      eq("contacts/{c1}/tickets q", await ids(`/v1/contacts/${c1.id}/tickets?q=printer`), [k1.id, k4.id]);
      eq("agents/{a1}/time-entries (none)", await ids(`/v1/agents/${a1.id}/time-entries`), []);
      await expect("list_under unknown record: 404", "GET", `/v1/agents/${UNKNOWN}/tickets`, 404, {
        auth: TA,
      });
      await expect("list_under other tenant's record: 404", "GET", `/v1/agents/${b1.id}/tickets`, 404, {
        auth: TA,
      });
      const tb = J(
        await expect("tags/{t1}/tickets as B", "GET", `/v1/tags/${t1.id}/tickets`, 200, { auth: TB }),
      );
      check("shared tag list_under holds only B's", tb.data.length === 0, tb.data.length);
      await expect("list_under bad uuid: 400", "GET", `/v1/agents/nope/tickets`, 400, { auth: TA }, "id");
    }

    // comments: composite unique, child list
    {
      await expect("comment 1", "POST", "/v1/comments", 201, {
        auth: TA,
        body: { ticket_id: k1.id, position: 1, body: "first", author_id: a1.id },
      });
      await expect("comment 2", "POST", "/v1/comments", 201, {
        auth: TA,
        body: { ticket_id: k1.id, position: 2, body: "second", public: false },
      });
      await expect("comment dup position: 409", "POST", "/v1/comments", 409, {
        auth: TA,
        body: { ticket_id: k1.id, position: 1, body: "dup" },
      });
      await expect("comment position 1 other ticket", "POST", "/v1/comments", 201, {
        auth: TA,
        body: { ticket_id: k2.id, position: 1, body: "other" },
      });
      await expect(
        "comment on other tenant's ticket: 422",
        "POST",
        "/v1/comments",
        422,
        { auth: TB, body: { ticket_id: k1.id, position: 9, body: "x" } },
        "ticket_id",
      );
      // The platform, without the tenant field: the ticket's tenant (before: 400 naming organization_id).
      const byPlatform = J(
        await expect("comment by the platform, tenant from its ticket", "POST", "/v1/comments", 201, {
          auth: P,
          body: { ticket_id: k1.id, position: 7, body: "from the platform" },
        }),
      );
      check("the platform's comment is in its ticket's tenant", byPlatform.organization_id === A.id, byPlatform.organization_id);
      await expect(
        "comment by the platform naming another tenant than its ticket's: 422",
        "POST",
        "/v1/comments",
        422,
        { auth: P, body: { ticket_id: k1.id, organization_id: B.id, position: 8, body: "x" } },
        "ticket_id",
      );
      await expect(
        "comment by the platform on no ticket: 400 naming organization_id",
        "POST",
        "/v1/comments",
        400,
        { auth: P, body: { ticket_id: "0190a0b0-c0d0-7000-8000-00000000dead", position: 8, body: "x" } },
        "organization_id",
      );
      await expect("the platform's comment removed", "DELETE", `/v1/comments/${byPlatform.id}`, 204, { auth: P });
      const l = J(
        await expect(
          "ticket comments sort -position",
          "GET",
          `/v1/tickets/${k1.id}/comments?sort=-position`,
          200,
          { auth: TA },
        ),
      );
      check(
        "child list sorted",
        JSON.stringify(l.data?.map((c: Obj) => c.position)) === "[2,1]",
        l.data?.map((c: Obj) => c.position),
      );
      eq("comments author_id[null]=true", await ids(`/v1/tickets/${k1.id}/comments?author_id[null]=true`), [
        l.data[0].id,
      ]);
      await expect(
        "child list under other tenant's ticket: 404",
        "GET",
        `/v1/tickets/${k1.id}/comments`,
        404,
        { auth: TB },
      );
    }

    // time entries: offset, decimal sort
    {
      for (const [h, d] of [
        ["9.50", "2026-11-02"],
        ["10.00", "2026-11-01"],
        ["0.25", "2026-11-03"],
      ]) {
        await expect(`time entry ${h}`, "POST", "/v1/time-entries", 201, {
          auth: TA,
          body: { ticket_id: k1.id, agent_id: a1.id, hours: h, work_date: d },
        });
      }
      const r = J(
        await expect(
          "time entries sort -hours",
          "GET",
          `/v1/tickets/${k1.id}/time-entries?sort=-hours`,
          200,
          { auth: TA },
        ),
      );
      check(
        "decimal sort numeric in child offset list",
        JSON.stringify(r.data?.map((x: Obj) => x.hours)) === '["10.00","9.50","0.25"]',
        r.data?.map((x: Obj) => x.hours),
      );
      check("offset child list shape", r.pagination?.total === 3 && r.pagination?.page === 1, r.pagination);
      const r2 = J(
        await expect(
          "time entries hours[gte]=9.5",
          "GET",
          `/v1/agents/${a1.id}/time-entries?hours[gte]=9.5&sort=work_date`,
          200,
          { auth: TA },
        ),
      );
      check(
        "list_under offset with filter + sort",
        JSON.stringify(r2.data?.map((x: Obj) => x.hours)) === '["10.00","9.50"]',
        r2.data?.map((x: Obj) => x.hours),
      );
      const r3 = J(
        await expect(
          "time entries work_date[lt]",
          "GET",
          "/v1/time-entries?work_date[lt]=2026-11-03&per_page=1&page=2&sort=-work_date",
          200,
          { auth: TA },
        ),
      );
      check(
        "offset page with filter and sort",
        r3.data.length === 1 && r3.data[0].hours === "10.00" && r3.pagination.total === 2,
        r3,
      );
      await expect(
        "per_page 101: 400",
        "GET",
        "/v1/time-entries?per_page=101",
        400,
        { auth: TA },
        "per_page",
      );
    }

    // actions: requires / sets / from
    {
      await expect(
        "escalate new ticket (requires): 422",
        "POST",
        `/v1/tickets/${(await J(await req("GET", `/v1/tickets/${k5.id}`, { auth: TA }))).id}/escalations`,
        422,
        { auth: TA, body: { agent_id: a2.id, reason: "x" } },
        "status",
      );
      await expect(
        "escalate with other tenant's agent: 422",
        "POST",
        `/v1/tickets/${k3.id}/escalations`,
        422,
        { auth: TA, body: { agent_id: b1.id, reason: "x" } },
        "agent_id",
      );
      await expect(
        "escalate with unknown agent: 422",
        "POST",
        `/v1/tickets/${k3.id}/escalations`,
        422,
        { auth: TA, body: { agent_id: UNKNOWN, reason: "x" } },
        "agent_id",
      );
      await expect("escalate other tenant's ticket: 404", "POST", `/v1/tickets/${k3.id}/escalations`, 404, {
        auth: TB,
        body: { agent_id: b1.id, reason: "x" },
      });
      const before = await req("GET", `/v1/tickets/${k3.id}`, { auth: TA });
      const esc = await expect("escalate open ticket", "POST", `/v1/tickets/${k3.id}/escalations`, 201, {
        auth: TA,
        body: { agent_id: a3.id, reason: "VIP" },
        headers: { "idempotency-key": `esc-${n}` },
      });
      const rep = await expect("escalation replay", "POST", `/v1/tickets/${k3.id}/escalations`, 201, {
        auth: TA,
        body: { agent_id: a3.id, reason: "VIP" },
        headers: { "idempotency-key": `esc-${n}` },
      });
      check(
        "escalation replayed",
        rep.headers.get("idempotent-replayed") === "true" && J(rep).id === J(esc).id,
        rep.headers.get("idempotent-replayed"),
      );
      const after = await req("GET", `/v1/tickets/${k3.id}`, { auth: TA });
      check(
        "sets from: assignee_id = agent_id",
        J(after).assignee_id === a3.id && J(after).priority === "urgent" && J(after).escalated === true,
        J(after),
      );
      check("new ETag after action", after.headers.get("etag") !== before.headers.get("etag"), [
        after.headers.get("etag"),
        before.headers.get("etag"),
      ]);
      const res1 = await expect("resolve open ticket", "POST", `/v1/tickets/${k3.id}/resolutions`, 201, {
        auth: TA,
        body: { note: "done" },
      });
      check(
        "resolution sets status solved",
        J(await req("GET", `/v1/tickets/${k3.id}`, { auth: TA })).status === "solved",
        res1.text,
      );
      await expect(
        "resolve solved ticket (requires): 422",
        "POST",
        `/v1/tickets/${k3.id}/resolutions`,
        422,
        { auth: TA, body: { note: "again" } },
        "status",
      );
      await expect("solved → closed", "PATCH", `/v1/tickets/${k3.id}`, 200, {
        auth: TA,
        body: { status: "closed" },
      });
      await expect(
        "closed is final: 422",
        "PATCH",
        `/v1/tickets/${k3.id}`,
        422,
        { auth: TA, body: { status: "open" } },
        "status",
      );
      await expect("action on unknown ticket: 404", "POST", `/v1/tickets/${UNKNOWN}/resolutions`, 404, {
        auth: TA,
        body: { note: "x" },
      });
      await expect("reader action: 403", "POST", `/v1/tickets/${k2.id}/resolutions`, 403, {
        auth: RA,
        body: { note: "x" },
      });
    }

    // idempotency
    {
      const body = { contact_id: c2.id, subject: `Idem ${n}` };
      const h = { "idempotency-key": `create-${n}` };
      const r1 = await expect("idempotent create", "POST", "/v1/tickets", 201, {
        auth: TA,
        body,
        headers: h,
      });
      const r2 = await expect("idempotent repeat", "POST", "/v1/tickets", 201, {
        auth: TA,
        body,
        headers: h,
      });
      check(
        "replayed same id/location/etag",
        r2.headers.get("idempotent-replayed") === "true" &&
          J(r2).id === J(r1).id &&
          r2.headers.get("location") === r1.headers.get("location") &&
          r2.headers.get("etag") === r1.headers.get("etag"),
        [r2.headers.get("idempotent-replayed")],
      );
      await expect(
        "same key other body: 422",
        "POST",
        "/v1/tickets",
        422,
        { auth: TA, body: { ...body, subject: "other" }, headers: h },
        "Idempotency-Key",
      );
      await expect(
        "same key other path: 422",
        "POST",
        "/v1/contacts",
        422,
        { auth: TA, body: { name: "I", email: `i${n}@c.test` }, headers: h },
        "Idempotency-Key",
      );
      const r3 = await expect("same key other principal runs", "POST", "/v1/tickets", 201, {
        auth: TB,
        body: { ...body, contact_id: cB.id },
        headers: h,
      });
      check("other principal new record", J(r3).id !== J(r1).id);
      await expect(
        "bad key (non-ASCII): 400",
        "POST",
        "/v1/tickets",
        400,
        { auth: TA, body, headers: { "idempotency-key": "x".repeat(256) } },
        "Idempotency-Key",
      );
      const e1 = await req("POST", "/v1/tickets", {
        auth: TA,
        body: { subject: "no contact" },
        headers: { "idempotency-key": `err-${n}` },
      });
      const e2 = await req("POST", "/v1/tickets", {
        auth: TA,
        body: { contact_id: c2.id, subject: "fixed" },
        headers: { "idempotency-key": `err-${n}` },
      });
      check("an error answer is not kept", e1.status === 400 && e2.status === 201, [e1.status, e2.status]);
      const evs = J(await req("GET", "/v1/events?limit=100", { auth: TA })).data as Obj[];
      // walk all events to count
      const allEv = await walkAll("/v1/events?limit=100");
      check(
        "one event for the idempotent create",
        allEv.filter((e) => e.type === "ticket.created" && e.data.id === J(r1).id).length === 1,
        evs.length,
      );
    }

    // many-to-many on_delete
    {
      await expect("delete agent in watcher_ids (restrict): 422", "DELETE", `/v1/agents/${a2.id}`, 422, {
        auth: TA,
      });
      const r = await req("DELETE", `/v1/agents/${a2.id}`, { auth: TA });
      check("restrict 422 names the referring collection", /tickets/.test(r.text), r.text);
      await expect("delete sla referenced? (none yet) ok", "GET", `/v1/sla-policies/${s1.id}`, 200, {
        auth: TA,
      });
      await expect("ticket with sla", "PATCH", `/v1/tickets/${k2.id}`, 200, {
        auth: TA,
        body: { sla_policy_id: s1.id },
      });
      await expect("delete referenced sla (restrict): 422", "DELETE", `/v1/sla-policies/${s1.id}`, 422, {
        auth: TA,
      });
      const evBefore = await walkAll("/v1/events?limit=100");
      const evBeforeB = await walkAll("/v1/events?limit=100", TB);
      // tag t1 on k1, k2 (A); add to B's ticket too
      await expect("B ticket takes t1", "PATCH", `/v1/tickets/${kB.id}`, 200, {
        auth: TB,
        body: { tag_ids: [t1.id] },
      });
      await expect("tenant deletes shared tag?", "GET", `/v1/tags/${t1.id}`, 200, { auth: TA });
      await expect("delete tag t1 (cascade)", "DELETE", `/v1/tags/${t1.id}`, 204);
      const k1n = J(await req("GET", `/v1/tickets/${k1.id}`, { auth: TA }));
      check(
        "cascade removed id from array, order kept",
        JSON.stringify(k1n.tag_ids) === JSON.stringify([t2.id]),
        k1n.tag_ids,
      );
      const evAfter = await walkAll("/v1/events?limit=100");
      const newEv = evAfter.filter((e) => !evBefore.some((b) => b.id === e.id));
      const upd = newEv
        .filter((e) => e.type === "ticket.updated")
        .map((e) => e.data.id)
        .sort();
      eq("cascade: .updated for each A ticket changed (A's feed)", upd, [k1.id, k2.id]);
      check(
        "A feed: tag.deleted visible (shared)",
        newEv.some((e) => e.type === "tag.deleted"),
        newEv.map((e) => e.type),
      );
      check(
        "A feed never holds B's ticket",
        evAfter.every((e) => e.data?.organization_id === undefined || e.data.organization_id === A.id),
        "",
      );
      const evAfterB = await walkAll("/v1/events?limit=100", TB);
      const newB = evAfterB.filter((e) => !evBeforeB.some((b) => b.id === e.id));
      check(
        "B feed: its own ticket.updated from cascade",
        newB.some((e) => e.type === "ticket.updated" && e.data.id === kB.id),
        newB.map((e) => e.type),
      );
      check(
        "B feed: no A records",
        evAfterB.every((e) => e.data?.organization_id === undefined || e.data.organization_id === B.id),
        "",
      );
      const pf = await walkAll("/v1/events?limit=100", P);
      check(
        "platform feed sees both",
        pf.some((e) => e.data?.organization_id === A.id) && pf.some((e) => e.data?.organization_id === B.id),
        pf.length,
      );
      const oneA = evAfter.find((e) => e.data?.organization_id === A.id)!;
      await expect("B reads A's event by id: 404", "GET", `/v1/events/${oneA.id}`, 404, { auth: TB });
      await expect("A reads its event by id", "GET", `/v1/events/${oneA.id}`, 200, { auth: TA });
      const evCur = J(await req("GET", "/v1/events?limit=1", { auth: TA })).pagination.next_cursor;
      await expect(
        "events cursor of A used by B: 400",
        "GET",
        `/v1/events?limit=1&cursor=${encodeURIComponent(evCur)}`,
        400,
        { auth: TB },
        "cursor",
      );
    }

    // exports
    async function runExport(body: Obj, auth = TA): Promise<{ job: Obj; lines: string[] }> {
      const r = await req("POST", "/v1/exports", { auth, body });
      if (r.status !== 201) {
        check(`export ${JSON.stringify(body)}`, false, r.text);
        return { job: {}, lines: [] };
      }
      let job = J(r);
      for (let i = 0; i < 100 && (job.status === "pending" || job.status === "running"); i++) {
        await new Promise((ok) => setTimeout(ok, 100));
        job = J(await req("GET", `/v1/exports/${job.id}`, { auth }));
      }
      check(`export succeeded ${JSON.stringify(body)}`, job.status === "succeeded", job);
      if (job.status !== "succeeded") return { job, lines: [] };
      await expect("export not visible to other tenant", "GET", `/v1/exports/${job.id}`, 404, {
        auth: auth === TA ? TB : TA,
      });
      const url = job.download_url.startsWith("/") ? job.download_url : new URL(job.download_url).pathname;
      const f = await req("GET", url, { auth });
      return { job, lines: f.text.split("\n").filter((l) => l !== "") };
    }
    {
      const all = await walkAll("/v1/tickets?limit=100");
      const e1 = await runExport({ resource: "tickets", sort: "-priority,due_at" });
      const got = e1.lines.map((l) => JSON.parse(l).id);
      const want = [...all].sort(cmpTickets(["-priority", "due_at"])).map((t) => t.id);
      check("export honours tenant and sort", JSON.stringify(got) === JSON.stringify(want), { got, want });
      const e2 = await runExport({
        resource: "tickets",
        filters: { "status[in]": ["open", "pending"], "assignee_id[null]": true },
        q: "printer",
      });
      const want2 = all
        .filter(
          (t) =>
            ["open", "pending"].includes(t.status) && t.assignee_id == null && /printer/i.test(t.subject),
        )
        .map((t) => t.id)
        .sort();
      eq("export honours filters with operators and q", e2.lines.map((l) => JSON.parse(l).id).sort(), want2);
      const e2b = await runExport({
        resource: "tickets",
        filters: { "due_at[gte]": "2026-11-16T00:00:00Z", "budget[lt]": "200" },
      });
      eq(
        "export honours range filters",
        e2b.lines.map((l) => JSON.parse(l).id).sort(),
        all
          .filter((t) => t.due_at && t.due_at >= "2026-11-16" && t.budget && Number(t.budget) < 200)
          .map((t) => t.id),
      );
      const e3 = await runExport({ resource: "tickets", format: "csv", sort: "priority" });
      check(
        "csv export has header + A rows",
        e3.lines.length === all.length + 1 || e3.lines.length > all.length,
        e3.lines.length,
      );
      const e4 = await runExport({ resource: "tickets" }, P);
      check(
        "platform export holds both tenants",
        e4.lines.some((l) => JSON.parse(l).organization_id === B.id) &&
          e4.lines.some((l) => JSON.parse(l).organization_id === A.id),
        e4.lines.length,
      );
      const e5 = await runExport({ resource: "contacts", sort: "-name" });
      check(
        "offset resource export sorted",
        JSON.stringify(e5.lines.map((l) => JSON.parse(l).name)) === JSON.stringify(["Carla", "Ben"]),
        e5.lines,
      );
      await expect(
        "export bad sort: 400",
        "POST",
        "/v1/exports",
        400,
        { auth: TA, body: { resource: "tickets", sort: "subject" } },
        "sort",
      );
      const bf = await expect("export bad filter op: 400", "POST", "/v1/exports", 400, {
        auth: TA,
        body: { resource: "tickets", filters: { "status[gte]": "open" } },
      });
      check("export bad filter names it under filters", fields(bf).includes("filters.status[gte]"), bf.text);
      await expect("export bad filter value: 400", "POST", "/v1/exports", 400, {
        auth: TA,
        body: { resource: "tickets", filters: { "due_at[gte]": "nope" } },
      });
      await expect("export of non-exportable: 400/422", "POST", "/v1/exports", 400, {
        auth: TA,
        body: { resource: "agents" },
      });
      const ik = { "idempotency-key": `exp-${n}` };
      const x1 = await expect("export with key", "POST", "/v1/exports", 201, {
        auth: TA,
        body: { resource: "time-entries" },
        headers: ik,
      });
      const x2 = await expect("export key repeat", "POST", "/v1/exports", 201, {
        auth: TA,
        body: { resource: "time-entries" },
        headers: ik,
      });
      check(
        "export replayed",
        x2.headers.get("idempotent-replayed") === "true" && J(x2).id === J(x1).id,
        x2.headers.get("idempotent-replayed"),
      );
    }

    // misc errors
    await expect("bad uuid in path: 400", "GET", "/v1/tickets/123", 400, { auth: TA }, "id");
    await expect(
      "v1 uuid: 400",
      "GET",
      "/v1/tickets/c232ab00-9414-11ec-b3c8-9f6bdeced846",
      400,
      { auth: TA },
      "id",
    );
    await expect("no auth: 401", "GET", "/v1/tickets", 401, { auth: null });
    await expect("bad dev tenant token: 401", "GET", "/v1/tickets", 401, { auth: "dev-writer.nope" });
    await expect("If-Match stale: 409", "PATCH", `/v1/tickets/${k4.id}`, 409, {
      auth: TA,
      body: { subject: "y" },
      headers: { "if-match": '"nope"' },
    });
    await expect("delete ticket by other tenant: 404", "DELETE", `/v1/tickets/${k4.id}`, 404, { auth: TB });
    await expect("delete ticket", "DELETE", `/v1/tickets/${k4.id}`, 204, { auth: TA });
    await expect("read deleted: 404", "GET", `/v1/tickets/${k4.id}`, 404, { auth: TA });
    await expect("org with tenant records delete: 422", "DELETE", `/v1/organizations/${A.id}`, 422);
    await expect("tenant deletes its own org: 403?", "DELETE", `/v1/organizations/${A.id}`, 422, {
      auth: TA,
    });

    assert.deepEqual(failures, [], `${failures.length} checks failed:\n${failures.join("\n")}`);
  },
);
