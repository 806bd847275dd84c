// Tenant-scoped reads on PostgreSQL (SPEC §12.4, issue 25 point 5): the tenancy fixture
// (test/fixtures/tenancy) generated into a folder of its own under .bench/, its migrations run in
// a fresh schema, seeded with 10 organizations, one ticket each and 10,000 comments (1,000 per
// organization, interleaved by id, so one tenant's list reads every tenth row of the
// (organization_id, id) index). The generated service, each request a tenant principal's
// (`Bearer dev-reader.<organization>`), against a hand-written Fastify + `pg` server with the tenant
// condition in its named statements (bench/runtime/handwritten-tenancy-pg.ts), over the same
// tables: GET /v1/comments/{id} (a random id of the tenant's 1,000) and the cursor list of 20.
// Pinned as bench/postgres.ts; ratios within a round, medians of the rounds.
//
//   node bench/run.ts --only tenancy
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { SqlStore } from "../generated/runtime/sql-store.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../test/store/stores.ts";
import { log, repoRoot, run, workRoot, type Check } from "./lib.ts";
import { postgresChecks } from "./postgres.ts";
import {
  measureRound,
  runtimeMarkdown,
  startServer,
  stopServer,
  wrk,
  type EndpointResult,
  type RuntimePlan,
  type RuntimeResult,
  type Server,
} from "./runtime.ts";

const ORGANIZATIONS = 10;
const COMMENTS_PER_ORGANIZATION = 1000;
const organizationId = (i: number) => `0190a0b0-c0e0-7000-8000-${i.toString(16).padStart(12, "0")}`;
const ticketId = (i: number) => `0190a0b0-c0e1-7000-8000-${i.toString(16).padStart(12, "0")}`;
const commentId = (i: number) => `0190a0b0-c0e2-7000-8000-${i.toString(16).padStart(12, "0")}`;
/** The tenant whose principal sends every request. */
const TENANT = organizationId(0);
const AUTHORIZATION = `Bearer dev-reader.${TENANT}`;

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 3, 0, 0, seconds)).toISOString();

async function seed(app: string, url: string): Promise<void> {
  const sql = (await import(path.join(app, "sql", "index.ts"))) as typeof import("../generated/sql/index.ts");
  const store = await sql.openStore(url);
  try {
    for (let i = 0; i < ORGANIZATIONS; i++) {
      await store.insert({
        collection: "organizations",
        record: {
          id: organizationId(i),
          created_at: at(0),
          updated_at: at(0),
          revision: 1,
          values: { name: `Org ${i}` },
        },
        constraints: { unique: [] },
      });
      await store.insert({
        collection: "tickets",
        record: {
          id: ticketId(i),
          created_at: at(0),
          updated_at: at(0),
          revision: 1,
          values: {
            organization_id: organizationId(i),
            subject: `Ticket of org ${i}`,
            priority: "normal",
            status: "open",
            tag_ids: [],
          },
        },
        constraints: { unique: [] },
      });
    }
    const total = ORGANIZATIONS * COMMENTS_PER_ORGANIZATION;
    for (let i = 0; i < total; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, total - i) }, (_, k) => {
          const n = i + k;
          const org = n % ORGANIZATIONS;
          return store.insert({
            collection: "comments",
            record: {
              id: commentId(n),
              created_at: at(n),
              updated_at: at(n),
              revision: 1,
              values: {
                ticket_id: ticketId(org),
                organization_id: organizationId(org),
                body: `Comment number ${n}: the printer is still on fire.`,
              },
            },
            constraints: { unique: [] },
          });
        }),
      );
    // The planner's statistics now, not when autovacuum gets to the new tables during a run (bench/postgres.ts).
    await (store as SqlStore).driver.exec("analyze organizations; analyze tickets; analyze comments");
  } finally {
    await store.close();
  }
}

/** A wrk script: `path` (or a random comment of the tenant when null), as the tenant's principal. */
function script(name: string, p: string | null): string {
  mkdirSync(workRoot, { recursive: true });
  const file = path.join(workRoot, `tenancy-${name}.lua`);
  const prefix = commentId(0).slice(0, -12);
  const target =
    p === null
      ? `string.format("/v1/comments/${prefix}%012x", ${ORGANIZATIONS} * math.random(0, ${COMMENTS_PER_ORGANIZATION - 1}))`
      : JSON.stringify(p);
  writeFileSync(
    file,
    [
      "-- A tenant principal's request (bench/tenancy.ts).",
      "math.randomseed(os.time())",
      "request = function()",
      `  return wrk.format("GET", ${target}, { ["Authorization"] = "${AUTHORIZATION}" })`,
      "end",
      "",
    ].join("\n"),
  );
  return file;
}

function endpoint(name: string, p: string, lua: string): EndpointResult {
  return {
    name,
    path: p,
    script: lua,
    handwritten: [],
    generated: [],
    rpsRatios: [],
    p99Ratios: [],
    cpuRatios: [],
  };
}

/** Both servers answer the same JSON to the tenant, and the generated one hides other tenants' records. */
async function verify(generated: Server, handwritten: Server): Promise<void> {
  const get = (s: Server, p: string) =>
    fetch(`http://127.0.0.1:${s.port}${p}`, { headers: { authorization: AUTHORIZATION } });
  for (const p of [`/v1/comments/${commentId(500)}`, "/v1/comments?limit=20"]) {
    const [g, h] = await Promise.all([get(generated, p), get(handwritten, p)]);
    if (g.status !== 200 || h.status !== 200)
      throw new Error(`${p}: generated ${g.status}, hand-written ${h.status}`);
    const body = async (r: Response) => {
      const b = (await r.json()) as Record<string, unknown>;
      return JSON.stringify(
        "pagination" in b ? { data: b.data, has_more: (b.pagination as { has_more: boolean }).has_more } : b,
      );
    };
    if ((await body(g)) !== (await body(h))) throw new Error(`${p}: generated and hand-written JSON differ`);
  }
  for (const s of [generated, handwritten]) {
    const other = await get(s, `/v1/comments/${commentId(501)}`);
    if (other.status !== 404)
      throw new Error(`${s.kind}: another tenant's comment answered ${other.status}, not 404`);
  }
}

export async function benchTenancy(plan: RuntimePlan): Promise<RuntimeResult> {
  await preparePostgres();
  mkdirSync(workRoot, { recursive: true });
  const dir = path.join(workRoot, "tenancy");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(repoRoot, "test", "fixtures", "tenancy"), path.join(dir, "definitions"), {
    recursive: true,
  });
  await run(process.execPath, [path.join(repoRoot, "bin", "canon.js"), "generate"], { cwd: dir });
  const app = path.join(dir, "generated");
  const schema = freshSchema("canon_bench_tenancy");
  const url = `${POSTGRES_URL}?schema=${schema}`;
  const servers: Server[] = [];
  const endpoints = [
    endpoint(
      `Tenant-scoped GET one record (random id of the tenant's ${COMMENTS_PER_ORGANIZATION})`,
      `/v1/comments/${commentId(500)}`,
      script("get", null),
    ),
    endpoint(
      "Tenant-scoped cursor list of 20",
      "/v1/comments?limit=20",
      script("list", "/v1/comments?limit=20"),
    ),
  ];
  const result: RuntimeResult = {
    endpoints,
    ceiling: [],
    pinned: true,
    connections: plan.connections,
    seconds: plan.seconds,
  };
  try {
    await seed(app, url);
    log(`  seeded ${ORGANIZATIONS} organizations and ${ORGANIZATIONS * COMMENTS_PER_ORGANIZATION} comments`);
    servers.push(await startServer("generated-pg", app, ["--store", url]));
    servers.push(await startServer("handwritten-tenancy-pg", undefined, ["--store", url]));
    const [generated, handwritten] = servers as [Server, Server];
    await verify(generated, handwritten);
    for (const e of endpoints)
      for (const s of [handwritten, generated])
        await wrk(
          `http://127.0.0.1:${s.port}${e.path}`,
          plan.warmupSeconds,
          plan.connections,
          undefined,
          e.script,
        );
    for (let round = 0; round < plan.rounds; round++)
      for (const e of endpoints) await measureRound(e, round, plan, generated, handwritten);
  } finally {
    await Promise.all(servers.map(stopServer));
    await dropSchemas([schema]);
  }
  return result;
}

export function tenancyChecks(r: RuntimeResult): Check[] {
  return postgresChecks(r);
}

export function tenancyMarkdown(r: RuntimeResult): string {
  return runtimeMarkdown(r)
    .replace(commentId(500), "{id}")
    .replace(
      /wrk -t1/,
      `the tenancy fixture's migrations in a fresh schema of the PostgreSQL server at ${new URL(POSTGRES_URL).host}, ${ORGANIZATIONS} organizations × ${COMMENTS_PER_ORGANIZATION} comments, every request a tenant principal's; pool of 10 connections on each side; wrk -t1`,
    );
}
