// Tenant-leading indexes (SPEC §12.4, issue 25): on a tenant-scoped resource the tenant column
// leads the indexes its lists use, so that a tenant principal's list page is one index scan
// within its tenant. The tenancy fixture (test/fixtures/tenancy) on PostgreSQL, 4 organizations
// and 4,000 tickets interleaved by id; EXPLAIN of the very statements the store sends for a
// tenant's sorted, filtered, list_under and plain list pages: one Index Scan, no Sort, no other scan.
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
const TICKETS = 4000;
const PRIORITIES = ["low", "normal", "high", "urgent"];

function record(values: Obj): StoredRecord {
  const now = new Date().toISOString();
  return { id: newId(), created_at: now, updated_at: now, revision: 1, values };
}

const schemas: string[] = [];
let store: Store;
let driver: { query(statement: unknown, params?: readonly unknown[]): Promise<Obj[]>; exec(text: string): Promise<void> };
const sent: Array<{ text: string; params: readonly unknown[] }> = [];
const orgs: string[] = [];
let dir = "";
const agents: string[] = [];

before(async () => {
  dir = workspace("store-tenant-indexes", "test/fixtures/tenancy");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const sql = (await import(new URL("sql/index.ts", pathToFileURL(path.join(dir, "generated") + path.sep)).href)) as Obj;
  await preparePostgres();
  const schema = freshSchema("canon_tenant_indexes");
  schemas.push(schema);
  store = (await sql.openStore(POSTGRES_URL, { schema })) as Store;
  driver = (store as unknown as { driver: typeof driver }).driver;
  for (let i = 0; i < ORGANIZATIONS; i++) {
    const org = await store.insert({ collection: "organizations", record: record({ name: `Org ${i}` }), constraints: { unique: [] } });
    orgs.push(org.id);
    const agent = await store.insert({ collection: "agents", record: record({ organization_id: org.id, name: `Agent ${i}`, email: `a${i}@example.com`, level: 1 }), constraints: { unique: [] } });
    agents.push(agent.id);
  }
  // Interleaved: ticket n belongs to organization n % 4; every other one is assigned to its agent.
  await driver.query(
    `insert into "tickets" ("id", "created_at", "updated_at", "organization_id", "subject", "priority", "status", "assignee_id") ` +
      `select gen_random_uuid(), now() - n * interval '1 second', now(), ($1::uuid[])[n % ${ORGANIZATIONS} + 1], 's' || lpad(((n * 7919) % ${TICKETS})::text, 5, '0'), ` +
      `($2::text[])[(n / ${ORGANIZATIONS}) % 4 + 1], (array['new', 'open', 'pending', 'solved', 'closed'])[n % 5 + 1], ` +
      `case when (n / ${ORGANIZATIONS}) % 2 = 0 then ($3::uuid[])[n % ${ORGANIZATIONS} + 1] end from generate_series(0, ${TICKETS - 1}) n`,
    [`{${orgs.join(",")}}`, `{${PRIORITIES.join(",")}}`, `{${agents.join(",")}}`],
  );
  await driver.exec(`analyze "tickets"; analyze "agents"`);
  const query = driver.query.bind(driver);
  driver.query = (statement: unknown, params: readonly unknown[] = []) => {
    sent.push({ text: typeof statement === "string" ? statement : (statement as { text: string }).text, params });
    return query(statement, params);
  };
});
after(async () => {
  await store?.close();
  await dropSchemas(schemas);
  rmSync(dir, { recursive: true, force: true });
});

const key = (field: string, descending: boolean, ordering: SortKey["ordering"], rank?: string[]): SortKey => ({
  field,
  descending,
  ordering,
  ...(rank ? { rank } : {}),
});

describe("tenant-leading list indexes, postgres", () => {
  test("a tenant's sorted, filtered, list_under and plain list pages are each one index scan", async () => {
    const tenant = orgs[1]!;
    const cases: Array<[string, Omit<CursorQuery, "limit">, RegExp]> = [
      ["sort=-priority", { where: { organization_id: tenant }, sort: [key("priority", true, "rank", PRIORITIES)] }, /tickets_organization_id_priority_sort_idx/],
      ["sort=subject", { where: { organization_id: tenant }, sort: [key("subject", false, "text")] }, /tickets_organization_id_subject_sort_idx/],
      ["sort=-created_at", { where: { organization_id: tenant }, sort: [key("created_at", true, "instant")] }, /tickets_organization_id_created_at_sort_idx/],
      ["status=open", { where: { organization_id: tenant, status: "open" } }, /tickets_organization_id_status_id_idx/],
      ["priority=high", { where: { organization_id: tenant, priority: "high" } }, /tickets_organization_id_priority_id_idx/],
      ["list_under /agents/{id}/tickets", { where: { organization_id: tenant, assignee_id: agents[1] } }, /tickets_assignee_id_id_idx/],
      ["the tenant's list", { where: { organization_id: tenant } }, /tickets_organization_id_id_idx/],
    ];
    for (const [name, query, index] of cases) {
      sent.length = 0;
      const page = await store.list("tickets", { ...query, limit: 20 });
      assert.equal(page.records.length, 20, name);
      assert.ok(page.records.every((r) => r.values.organization_id === tenant), name);
      const { text, params } = sent.at(-1)!;
      assert.match(text, /"organization_id" = \$1\b/, `${name}: the tenant is in the statement`);
      const plan = (await driver.query(`explain ${text}`, params)).map((r) => String(r["QUERY PLAN"])).join("\n");
      assert.match(plan, index, `${name}\n${plan}`);
      // The tickets are read by one index scan (the tag_ids of each row of the page are a subplan on the link table's index).
      const scans = plan.match(/\S+ Scan(?: Backward)?(?: using \S+)? on tickets\b/g) ?? [];
      assert.equal(scans.length, 1, `${name}: one scan of tickets\n${plan}`);
      assert.match(scans[0]!, /^Index Scan/, `${name}\n${plan}`);
      // No sort of the page, and nothing else read from tickets (the subplan of tag_ids aside).
      assert.doesNotMatch(plan.split("SubPlan")[0]!, /Sort|Bitmap|Seq Scan/, `${name}\n${plan}`);
    }
  });
});
