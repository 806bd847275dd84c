// What a hook costs a write (SPEC §12.5, issue 26 point 5): PATCH /v2/products/{id} on the
// generated showcase, in process (Fastify's inject, so that only the service's work differs),
// with an `update` hook that does nothing and without hooks, side by side: on the memory store
// and on the PostgreSQL server (a fresh schema, dropped afterwards; one store each, pool of 10).
// `workers` PATCH loops run at once, each on a product of its own in each app (no revision
// conflicts), each loop sending one PATCH to each app in turn (which first alternates): both
// apps meet the same load at the same moments. A round's ratio is the time spent in hooked
// PATCHes ÷ that in plain ones; the median of the rounds is reported. Target on PostgreSQL: at
// most 1.05.
//
//   node bench/run.ts --only hooks        (or: node bench/hooks.ts)
import { buildApp, devAuthenticate } from "../generated/index.ts";
import { openStore } from "../generated/sql/index.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "../test/store/stores.ts";
import { log, median, table, type Check } from "./lib.ts";

export interface HooksPlan {
  rounds: number;
  /** PATCHes per app and round, split over the workers. */
  requests: number;
  workers: number;
}

export const HOOKS_PLAN: HooksPlan = { rounds: 7, requests: 3000, workers: 16 };

export interface HooksSide {
  store: "memory" | "postgres";
  /** Milliseconds spent in each app's PATCHes per round (summed latencies). */
  plainMs: number[];
  hookedMs: number[];
  /** hooked ÷ plain time, per round. */
  ratios: number[];
}

export interface HooksResult {
  sides: HooksSide[];
  requests: number;
  workers: number;
}

type Target = { app: Awaited<ReturnType<typeof buildApp>>; ids: string[] };

const HEADERS = { authorization: "Bearer dev-writer", "content-type": "application/json" };

async function appWith(hooked: boolean, workers: number, store?: Awaited<ReturnType<typeof openStore>>): Promise<Target> {
  const app = await buildApp({
    authenticate: devAuthenticate,
    rateLimit: false,
    ...(store ? { store } : {}),
    ...(hooked ? { hooks: { products: { update() {} } } } : {}),
  });
  const ids: string[] = [];
  const tag = `${process.pid.toString(36)}${Date.now().toString(36)}`.toUpperCase();
  for (let i = 0; i < workers; i++) {
    const created = await app.inject({
      method: "POST",
      url: "/v2/products",
      headers: HEADERS,
      payload: { sku: `BENCH-${hooked ? "H" : "P"}-${tag}-${i}`, name: "Bench", price_cents: 1 },
    });
    if (created.statusCode !== 201) throw new Error(`POST answered ${created.statusCode}: ${created.body}`);
    ids.push((created.json() as { id: string }).id);
  }
  return { app, ids };
}

/** One PATCH of worker `w`'s product; its milliseconds. */
async function patch(target: Target, w: number, i: number): Promise<number> {
  const start = process.hrtime.bigint();
  const res = await target.app.inject({
    method: "PATCH",
    url: `/v2/products/${target.ids[w]}`,
    headers: HEADERS,
    payload: `{"name":"Bench ${w} ${i}"}`,
  });
  if (res.statusCode !== 200) throw new Error(`PATCH answered ${res.statusCode}: ${res.body}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * `n` PATCHes to each app, over the workers at once: each worker sends one to each app in turn
 * (which first alternates), so that both meet the same load at the same moments. Milliseconds
 * spent in each app's PATCHes, summed.
 */
async function round(plain: Target, hooked: Target, n: number): Promise<{ plain: number; hooked: number }> {
  const per = Math.ceil(n / plain.ids.length);
  const spent = { plain: 0, hooked: 0 };
  await Promise.all(
    plain.ids.map(async (_, w) => {
      for (let i = 0; i < per; i++) {
        if ((i + w) % 2 === 0) {
          spent.plain += await patch(plain, w, i);
          spent.hooked += await patch(hooked, w, i);
        } else {
          spent.hooked += await patch(hooked, w, i);
          spent.plain += await patch(plain, w, i);
        }
      }
    }),
  );
  return spent;
}

async function side(store: HooksSide["store"], plan: HooksPlan): Promise<HooksSide> {
  let schema: string | undefined;
  const stores: Array<Awaited<ReturnType<typeof openStore>>> = [];
  if (store === "postgres") {
    await preparePostgres();
    schema = freshSchema("canon_bench_hooks");
    // Two stores (the same schema), one per app: each its own pool, as two services would have.
    for (let i = 0; i < 2; i++) stores.push(await openStore(POSTGRES_URL, { schema }));
  }
  const plain = await appWith(false, plan.workers, stores[0]);
  const hooked = await appWith(true, plan.workers, stores[1]);
  try {
    await round(plain, hooked, plan.requests / 2);
    const result: HooksSide = { store, plainMs: [], hookedMs: [], ratios: [] };
    for (let r = 0; r < plan.rounds; r++) {
      const { plain: p, hooked: h } = await round(plain, hooked, plan.requests);
      result.plainMs.push(p);
      result.hookedMs.push(h);
      result.ratios.push(h / p);
      log(
        `  ${store} round ${r + 1}/${plan.rounds}: without a hook ${((p * 1000) / plan.requests).toFixed(0)} µs/PATCH, ` +
          `with ${((h * 1000) / plan.requests).toFixed(0)} µs/PATCH → ${(h / p).toFixed(3)}×`,
      );
    }
    return result;
  } finally {
    await plain.app.close();
    await hooked.app.close();
    for (const s of stores) await s.close();
    if (schema) await dropSchemas([schema]);
  }
}

export async function benchHooks(plan: HooksPlan): Promise<HooksResult> {
  return {
    sides: [await side("memory", plan), await side("postgres", plan)],
    requests: plan.requests,
    workers: plan.workers,
  };
}

/** The target of issue 26 point 5: a PATCH through a hook that does nothing costs at most 5 % more (PostgreSQL). */
export function hooksChecks(r: HooksResult): Check[] {
  const pg = r.sides.find((s) => s.store === "postgres")!;
  const ratio = median(pg.ratios);
  return [
    {
      name: "hooks: PATCH time with a do-nothing update hook ÷ without (PostgreSQL)",
      value: `${ratio.toFixed(3)}×`,
      target: "≤ 1.05×",
      met: ratio <= 1.05,
      margin: "≤ 1.15×",
      withinMargin: ratio <= 1.15,
    },
  ];
}

export function hooksMarkdown(r: HooksResult): string {
  const perPatch = (ms: number[]) => `${((median(ms) * 1000) / r.requests).toFixed(0)} µs`;
  return [
    table(
      ["PATCH /v2/products/{id}", "without a hook (median)", "with a do-nothing `update` hook", "hooked ÷ plain (median)", "each round"],
      r.sides.map((s) => [
        s.store === "postgres" ? "PostgreSQL" : "memory",
        perPatch(s.plainMs),
        perPatch(s.hookedMs),
        `**${median(s.ratios).toFixed(3)}×**`,
        s.ratios.map((x) => x.toFixed(3)).join(", "),
      ]),
    ),
    `In process (Fastify's inject), ${r.workers} PATCH loops at once, each on a product of its own, ${r.requests} PATCHes per app and round; ` +
      `each loop sends one PATCH to each app in turn (which first alternates); the time per PATCH is the median over rounds of the mean latency of each app's PATCHes (${r.workers * 2} in flight at once).`,
  ].join("\n\n");
}

if (import.meta.main) {
  const result = await benchHooks(HOOKS_PLAN);
  console.log(hooksMarkdown(result));
  for (const c of hooksChecks(result)) console.log(`${c.name}: ${c.value} (target ${c.target}) ${c.met ? "met" : "NOT met"}`);
  process.exit(0);
}
