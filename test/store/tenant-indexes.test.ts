// Tenant indexes (SPEC §12.4, issue 25): on a tenant-scoped resource the tenant column leads every
// index its lists use (a filter's, a sort's, a reference's), so that a tenant principal's list page
// is one index scan with the tenant in its condition; a reference keeps its (reference, id) index
// too, for what matches the reference alone. The tenancy fixture (test/fixtures/tenancy) on
// PostgreSQL: 4 organizations of 5 agents, 4,000 tickets interleaved by id (every other one
// assigned, 100 to each agent) and 4,000 comments on 40 of them, analyzed. EXPLAIN of the very
// statements the store sends for a tenant's sorted, filtered and plain list pages, and of those the
// generated service sends over HTTP for a `list_under` list (/v1/agents/{id}/tickets) and a child
// list (/v1/tickets/{id}/comments), first page and next, for a tenant and for the platform: one
// Index Scan of the listed table, its conditions in the index's condition, right under the page's
// Limit (no Sort of its rows), and no other scan of it. And the foreign key's check of a delete,
// by the reference alone. (A tenant's list under a record needs the statistics canon creates on
// (tenant, reference): without them PostgreSQL expects 25 of an agent's 100 tickets here, reads
// them all off the index with a bitmap scan and sorts them.)
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { CursorQuery, SortKey, Store, StoredRecord } from "../../runtime/store.ts";
import { newId } from "../../runtime/uuid.ts";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Obj = Record<string, any>;
const ORGANIZATIONS = 4;
const AGENTS = 5;
const TICKETS = 4000;
const COMMENTED = 40;
const PRIORITIES = ["low", "normal", "high", "urgent"];

function record(values: Obj): StoredRecord {
  const now = new Date().toISOString();
  return { id: newId(), created_at: now, updated_at: now, revision: 1, values };
}

const schemas: string[] = [];
let store: Store;
let driver: {
  query(statement: unknown, params?: readonly unknown[]): Promise<Obj[]>;
  exec(text: string): Promise<void>;
};
const sent: Array<{ text: string; params: readonly unknown[] }> = [];
const orgs: string[] = [];
/** By organization: the agents of orgs[i] are agents[i * AGENTS …]. */
const agents: string[] = [];
let dir = "";
let base = "";
let closeApp = async () => {};

before(async () => {
  dir = workspace("store-tenant-indexes", "test/fixtures/tenancy");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
  await preparePostgres();
  const schema = freshSchema("canon_tenant_indexes");
  schemas.push(schema);
  store = (await sql.openStore(POSTGRES_URL, { schema })) as Store;
  driver = (store as unknown as { driver: typeof driver }).driver;
  for (let i = 0; i < ORGANIZATIONS; i++) {
    const org = await store.insert({
      collection: "organizations",
      record: record({ name: `Org ${i}` }),
      constraints: { unique: [] },
    });
    orgs.push(org.id);
    for (let j = 0; j < AGENTS; j++) {
      const values = {
        organization_id: org.id,
        name: `Agent ${i}.${j}`,
        email: `a${j}@example.com`,
        level: 1,
      };
      agents.push(
        (await store.insert({ collection: "agents", record: record(values), constraints: { unique: [] } }))
          .id,
      );
    }
  }
  // Interleaved: ticket n belongs to organization n % 4; every other one of an organization's is
  // assigned, to each of its agents in turn.
  await driver.query(
    `insert into "tickets" ("id", "created_at", "updated_at", "organization_id", "subject", "priority", "status", "assignee_id") ` +
      `select gen_random_uuid(), now() - n * interval '1 second', now(), ($1::uuid[])[n % ${ORGANIZATIONS} + 1], 's' || lpad(((n * 7919) % ${TICKETS})::text, 5, '0'), ` +
      `($2::text[])[(n / ${ORGANIZATIONS}) % 4 + 1], (array['new', 'open', 'pending', 'solved', 'closed'])[n % 5 + 1], ` +
      `case when (n / ${ORGANIZATIONS}) % 2 = 0 then ($3::uuid[])[(n % ${ORGANIZATIONS}) * ${AGENTS} + (n / ${ORGANIZATIONS} / 2) % ${AGENTS} + 1] end ` +
      `from generate_series(0, ${TICKETS - 1}) n`,
    [`{${orgs.join(",")}}`, `{${PRIORITIES.join(",")}}`, `{${agents.join(",")}}`],
  );
  // 100 comments on each of the 40 newest tickets (10 of each organization), interleaved.
  await driver.query(
    `with "picked" as (select "id", "organization_id", row_number() over (order by "created_at" desc) as k from "tickets" order by "created_at" desc limit ${COMMENTED}) ` +
      `insert into "comments" ("id", "created_at", "updated_at", "ticket_id", "organization_id", "body") ` +
      `select gen_random_uuid(), now(), now(), p."id", p."organization_id", 'comment ' || n from generate_series(0, ${TICKETS - 1}) n join "picked" p on p.k = n % ${COMMENTED} + 1`,
  );
  await driver.exec(`analyze "tickets"; analyze "agents"; analyze "comments"`);
  const query = driver.query.bind(driver);
  driver.query = (statement: unknown, params: readonly unknown[] = []) => {
    sent.push({
      text: typeof statement === "string" ? statement : (statement as { text: string }).text,
      params,
    });
    return query(statement, params);
  };
  // The generated service over this store: the lists under a record as its handlers send them.
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store });
  await app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  closeApp = () => app.close();
});
after(async () => {
  await closeApp();
  await store?.close();
  await dropSchemas(schemas);
  rmSync(dir, { recursive: true, force: true });
});

const key = (
  field: string,
  descending: boolean,
  ordering: SortKey["ordering"],
  rank?: string[],
): SortKey => ({
  field,
  descending,
  ordering,
  ...(rank ? { rank } : {}),
});

async function explain(statement: { text: string; params: readonly unknown[] }): Promise<string> {
  return (await driver.query(`explain ${statement.text}`, statement.params))
    .map((r) => String(r["QUERY PLAN"]))
    .join("\n");
}

/**
 * `table` is read by one Index Scan using `index` whose condition matches `condition`, right under
 * the page's Limit: the page is read off the index in its order and the scan stops at the limit; no
 * other scan of the table, no row of it filtered out, no Sort of its rows. (A list under a record
 * joins the page to its parent's row and orders the at most limit + 1 rows of the join again; the
 * tag_ids of a page's tickets are a subplan on the link table.)
 */
function assertOneScan(plan: string, table: string, index: string, condition: RegExp, name: string): void {
  const scans =
    plan.match(
      new RegExp(
        String.raw`\S+ Scan(?: Backward)?(?: using \S+)? on ${table}\b.*(?:\n\s+(?:Index Cond|Filter): .*)*`,
        "g",
      ),
    ) ?? [];
  assert.equal(scans.length, 1, `${name}: one scan of ${table}\n${plan}`);
  assert.match(
    scans[0]!,
    new RegExp(String.raw`^Index Scan(?: Backward)? using ${index} on ${table}\b`),
    `${name}\n${plan}`,
  );
  assert.match(scans[0]!, condition, `${name}: the index's condition\n${plan}`);
  assert.doesNotMatch(scans[0]!, /Filter: /, `${name}: no row of the scan is filtered out\n${plan}`);
  assert.match(
    plan,
    new RegExp(String.raw`Limit  \(.*\n\s*->  Index Scan(?: Backward)? using ${index} on ${table}\b`),
    `${name}: the scan is the page's\n${plan}`,
  );
}

/** `table` is read once, through `index` (an index scan, or a bitmap scan of it). */
function assertTheIndex(plan: string, table: string, index: string, name: string): void {
  const scans = plan.match(new RegExp(String.raw`\S+ Scan(?: Backward)?(?: using \S+)? on ${table}\b`, "g")) ?? [];
  assert.equal(scans.length, 1, `${name}: one scan of ${table}\n${plan}`);
  assert.match(plan, new RegExp(String.raw`(?:Index Scan(?: Backward)? using|Bitmap Index Scan on) ${index}\b`), `${name}\n${plan}`);
}

/** The tenant is in the index's condition. */
const TENANT = /Index Cond: .*organization_id = /;

describe("tenant list indexes, postgres", () => {
  test("a tenant's sorted, filtered and plain list pages are each one index scan led by the tenant", async () => {
    const tenant = orgs[1]!;
    const cases: Array<[string, Omit<CursorQuery, "limit">, string]> = [
      [
        "sort=-priority",
        { where: { organization_id: tenant }, sort: [key("priority", true, "rank", PRIORITIES)] },
        "tickets_organization_id_priority_sort_idx",
      ],
      [
        "sort=subject",
        { where: { organization_id: tenant }, sort: [key("subject", false, "text")] },
        "tickets_organization_id_subject_sort_idx",
      ],
      [
        "sort=-created_at",
        { where: { organization_id: tenant }, sort: [key("created_at", true, "instant")] },
        "tickets_organization_id_created_at_sort_idx",
      ],
      [
        "status=open",
        { where: { organization_id: tenant, status: "open" } },
        "tickets_organization_id_status_id_idx",
      ],
      [
        "priority=high",
        { where: { organization_id: tenant, priority: "high" } },
        "tickets_organization_id_priority_id_idx",
      ],
      ["the tenant's list", { where: { organization_id: tenant } }, "tickets_organization_id_id_idx"],
    ];
    for (const [name, query, index] of cases) {
      sent.length = 0;
      const page = await store.list("tickets", { ...query, limit: 20 });
      assert.equal(page.records.length, 20, name);
      assert.ok(
        page.records.every((r) => r.values.organization_id === tenant),
        name,
      );
      const statement = sent.at(-1)!;
      assert.match(statement.text, /"organization_id" = \$1\b/, `${name}: the tenant is in the statement`);
      assertOneScan(await explain(statement), "tickets", index, TENANT, name);
    }
  });

  /**
   * The pages of a `list_under` list and a child list, first and next, as the generated service
   * sends them for `token` (of `tenant`, or of the platform): each one statement (the parent read
   * with the page, runtime/lists.ts listUnder), read by one index scan of `index` whose condition
   * matches `condition`.
   */
  async function assertListsUnder(
    token: string,
    tenant: string | undefined,
    cases: Array<[string, string, string, string, RegExp]>,
    /** "the index": a next page may be read off the index by a bitmap scan and sorted (the planner's choice for a few rows). */
    nextPage: "one scan" | "the index" = "one scan",
  ): Promise<void> {
    for (const [route, url, table, index, condition] of cases) {
      const seen = new Set<string>();
      let cursor: string | null = null;
      for (const which of ["first page", "next page"]) {
        const name = `${route}, ${which}, ${token}`;
        sent.length = 0;
        const response: Response = await fetch(
          `${base}${url}${url.includes("?") ? "&" : "?"}limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          {
            headers: { authorization: `Bearer ${token}` },
          },
        );
        assert.equal(response.status, 200, name);
        const page = (await response.json()) as { data: Obj[]; pagination: { next_cursor: string | null } };
        assert.equal(page.data.length, 20, name);
        for (const row of page.data) {
          if (tenant) assert.equal(row.organization_id, tenant, name);
          assert.ok(!seen.has(row.id), `${name}: ${row.id} twice`);
          seen.add(row.id);
        }
        const statements = sent.filter((s) => s.text.includes(`from "${table}"`));
        assert.equal(statements.length, 1, `${name}\n${statements.map((s) => s.text).join("\n")}`);
        const statement = statements[0]!;
        assert.match(statement.text, /"canon__p0"/, `${name}: the parent is read with the page`);
        if (tenant)
          assert.match(
            statement.text,
            /"organization_id" = \$\d+ /,
            `${name}: the tenant is in the statement`,
          );
        else
          assert.doesNotMatch(statement.text, /"organization_id" = /, `${name}: no tenant in the statement`);
        if (which === "next page" && nextPage === "the index") assertTheIndex(await explain(statement), table, index, name);
        else assertOneScan(await explain(statement), table, index, condition, name);
        cursor = page.pagination.next_cursor;
        assert.ok(cursor, name);
      }
    }
  }

  test("a tenant's list_under and child list pages, as the service sends them, are each one index scan of (tenant, reference, id)", async () => {
    const tenant = orgs[1]!;
    const agent = agents[1 * AGENTS + 2]!;
    const [commented] = await driver.query(
      `select "ticket_id"::text as "id" from "comments" where "organization_id" = $1 limit 1`,
      [tenant],
    );
    const both = (reference: string) =>
      new RegExp(String.raw`Index Cond: \(\(organization_id = .*\) AND \(${reference} = `);
    await assertListsUnder(`dev-reader.${tenant}`, tenant, [
      [
        "/v1/agents/{id}/tickets",
        `/v1/agents/${agent}/tickets`,
        "tickets",
        "tickets_organization_id_assignee_id_id_idx",
        both("assignee_id"),
      ],
      [
        "/v1/tickets/{id}/comments",
        `/v1/tickets/${commented!.id}/comments`,
        "comments",
        "comments_organization_id_ticket_id_id_idx",
        both("ticket_id"),
      ],
    ]);
  });

  test("a tenant's sorted list_under pages are read off (tenant, reference, sort key, id): the first page by one index scan", async () => {
    const tenant = orgs[2]!;
    const agent = agents[2 * AGENTS + 3]!;
    const both = new RegExp(String.raw`Index Cond: \(\(organization_id = .*\) AND \(assignee_id = `);
    await assertListsUnder(`dev-reader.${tenant}`, tenant, [
      ["?sort=-priority", `/v1/agents/${agent}/tickets?sort=-priority`, "tickets", "tickets_organization_id_assignee_id_priority_sort_idx", both],
      ["?sort=subject", `/v1/agents/${agent}/tickets?sort=subject`, "tickets", "tickets_organization_id_assignee_id_subject_sort_idx", both],
    ], "the index");
  });

  test("the platform's list_under and child list pages (no tenant) are each one index scan of (reference, id)", async () => {
    const agent = agents[2 * AGENTS + 1]!;
    const [commented] = await driver.query(
      `select "ticket_id"::text as "id" from "comments" where "organization_id" = $1 limit 1`,
      [orgs[2]!],
    );
    await assertListsUnder("dev-reader", undefined, [
      [
        "/v1/agents/{id}/tickets",
        `/v1/agents/${agent}/tickets`,
        "tickets",
        "tickets_assignee_id_id_idx",
        /Index Cond: \(+assignee_id = /,
      ],
      [
        "/v1/tickets/{id}/comments",
        `/v1/tickets/${commented!.id}/comments`,
        "comments",
        "comments_ticket_id_id_idx",
        /Index Cond: \(+ticket_id = /,
      ],
    ]);
  });

  test("a lookup by the reference alone, as a foreign key's check on a delete reads it, uses (reference, id)", async () => {
    // What PostgreSQL runs on a delete of an agent or a ticket: the rows that name it, by the reference alone.
    const [commented] = await driver.query(`select "ticket_id"::text as "id" from "comments" limit 1`);
    const cases: Array<[string, string, string, string]> = [
      ["tickets", "assignee_id", agents[3]!, "tickets_assignee_id_id_idx"],
      ["comments", "ticket_id", commented!.id, "comments_ticket_id_id_idx"],
    ];
    for (const [table, column, id, index] of cases) {
      const plan = await explain({
        text: `select 1 from only "${table}" x where "${column}" = $1 for key share of x`,
        params: [id],
      });
      assert.match(
        plan,
        new RegExp(
          String.raw`Index (?:Only )?Scan using ${index} on ${table}|Bitmap Index Scan on ${index}\b`,
        ),
        plan,
      );
      assert.doesNotMatch(plan, /Seq Scan/, plan);
    }
  });
});
