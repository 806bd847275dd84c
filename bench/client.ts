// What the generated client (generated/v2/client.ts) costs a call beside a bare fetch of the same
// request: the showcase served in this process on loopback, then the same GETs made by `fetch`
// with the same headers and by the client (which also makes a request id, checks the answer's
// status and headers, and wraps the result). Rounds alternate which goes first; per call, the
// median over rounds of the thread's CPU time (steadier than wall time on a busy machine, and
// the client's cost is CPU) and of wall time. Server and client share the thread, so the
// difference of the two is what the client adds. The same calls against a canned answer (a
// `fetch` that returns a ready Response, no network, no server) show the client's own cost alone,
// which is what stays steady on a busy machine.
//
//   node bench/run.ts --only client
import { buildApp, devAuthenticate } from "../generated/index.ts";
import { createClient } from "../generated/v2/client.ts";
import { log, median, table } from "./lib.ts";

export interface ClientPlan {
  rounds: number;
  /** Calls per variant per round. */
  calls: number;
}

export const CLIENT_PLAN: ClientPlan = { rounds: 7, calls: 300 };

export interface ClientRow {
  request: string;
  /** Per call, in microseconds: CPU time of the thread, and wall time. */
  fetchCpuUs: number;
  clientCpuUs: number;
  fetchWallUs: number;
  clientWallUs: number;
}

export interface ClientResult {
  plan: ClientPlan;
  /** Over loopback, against the showcase in this process. */
  rows: ClientRow[];
  /** Against a canned answer: CPU microseconds per call of `response.json()` alone and of the client. */
  canned: Array<{ request: string; fetchCpuUs: number; clientCpuUs: number }>;
}

function cpuUs(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

/** Per-call CPU and wall microseconds of `calls` sequential calls. */
async function time(calls: number, call: () => Promise<unknown>): Promise<{ cpu: number; wall: number }> {
  const cpu = cpuUs();
  const wall = performance.now();
  for (let i = 0; i < calls; i++) await call();
  return { cpu: (cpuUs() - cpu) / calls, wall: ((performance.now() - wall) * 1000) / calls };
}

export async function benchClient(plan: ClientPlan = CLIENT_PLAN): Promise<ClientResult> {
  const app = await buildApp({ authenticate: devAuthenticate, rateLimit: false });
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  try {
    const writer = createClient({ baseUrl: base, token: "dev-writer" });
    for (let i = 0; i < 20; i++)
      await writer.products.create({ sku: `BENCH-${i}`, name: `Bench ${i}`, price_cents: 100 });
    const id = (await writer.products.list({ limit: 1 })).data[0]!.id;
    const api = createClient({ baseUrl: base, token: "dev-reader" });
    // What the client sends, with a fixed request id.
    const headers = {
      accept: "application/json",
      authorization: "Bearer dev-reader",
      "x-request-id": "01a1a1a1-0000-7000-8000-000000000001",
    };
    const bare = (url: string) => async () => {
      const response = await fetch(url, { method: "GET", headers });
      if (!response.ok) throw new Error(`${url}: ${response.status}`);
      return response.json();
    };
    const cases = [
      {
        request: "GET /v2/products/{id}",
        fetch: bare(`${base}/v2/products/${id}`),
        client: () => api.products.get(id),
      },
      {
        request: "GET /v2/products?limit=20",
        fetch: bare(`${base}/v2/products?limit=20`),
        client: () => api.products.list({ limit: 20 }),
      },
    ];
    const rows: ClientRow[] = [];
    for (const c of cases) {
      log(`client: ${c.request}`);
      await time(200, c.fetch);
      await time(200, c.client);
      const measured = {
        fetch: [] as Array<{ cpu: number; wall: number }>,
        client: [] as Array<{ cpu: number; wall: number }>,
      };
      for (let round = 0; round < plan.rounds; round++) {
        const order = round % 2 ? (["client", "fetch"] as const) : (["fetch", "client"] as const);
        for (const variant of order) measured[variant].push(await time(plan.calls, c[variant]));
      }
      rows.push({
        request: c.request,
        fetchCpuUs: median(measured.fetch.map((m) => m.cpu)),
        clientCpuUs: median(measured.client.map((m) => m.cpu)),
        fetchWallUs: median(measured.fetch.map((m) => m.wall)),
        clientWallUs: median(measured.client.map((m) => m.wall)),
      });
    }
    return { plan, rows, canned: await cannedCalls(plan, base, id) };
  } finally {
    await app.close();
  }
}

/** The client against a fetch that hands back a ready answer (the showcase's own, read once). */
async function cannedCalls(plan: ClientPlan, base: string, id: string): Promise<ClientResult["canned"]> {
  const read = async (url: string) => {
    const response = await fetch(url, { headers: { authorization: "Bearer dev-reader" } });
    return { body: await response.text(), headers: [...response.headers] };
  };
  const cases = [
    {
      request: "GET /v2/products/{id}",
      answer: await read(`${base}/v2/products/${id}`),
      call: (api: Api) => api.products.get(id),
    },
    {
      request: "GET /v2/products?limit=20",
      answer: await read(`${base}/v2/products?limit=20`),
      call: (api: Api) => api.products.list({ limit: 20 }),
    },
  ];
  const out: ClientResult["canned"] = [];
  for (const c of cases) {
    const respond = async () => new Response(c.answer.body, { status: 200, headers: c.answer.headers });
    const api = createClient({ baseUrl: base, token: "dev-reader", fetch: respond });
    const calls = plan.calls * 10;
    const fetchCpu: number[] = [];
    const clientCpu: number[] = [];
    await time(calls, async () => (await respond()).json());
    await time(calls, () => c.call(api));
    for (let round = 0; round < plan.rounds; round++) {
      fetchCpu.push((await time(calls, async () => (await respond()).json())).cpu);
      clientCpu.push((await time(calls, () => c.call(api))).cpu);
    }
    out.push({ request: c.request, fetchCpuUs: median(fetchCpu), clientCpuUs: median(clientCpu) });
  }
  return out;
}

type Api = ReturnType<typeof createClient>;

export function clientMarkdown(result: ClientResult): string {
  const us = (n: number) => `${n.toFixed(0)} µs`;
  const signed = (n: number, digits = 0) => `${n >= 0 ? "+" : "−"}${Math.abs(n).toFixed(digits)}`;
  const plus = (a: number, b: number) => `${signed(a - b)} µs (${signed((a / b - 1) * 100)} %)`;
  return [
    `Sequential calls to the showcase served in the same process, ${result.plan.rounds} rounds of ${result.plan.calls} calls per variant (medians per call; server and client share the thread).`,
    "",
    table(
      [
        "request",
        "fetch, CPU",
        "client, CPU",
        "client adds (CPU)",
        "fetch, wall",
        "client, wall",
        "client adds (wall)",
      ],
      result.rows.map((r) => [
        r.request,
        us(r.fetchCpuUs),
        us(r.clientCpuUs),
        plus(r.clientCpuUs, r.fetchCpuUs),
        us(r.fetchWallUs),
        us(r.clientWallUs),
        plus(r.clientWallUs, r.fetchWallUs),
      ]),
    ),
    "",
    `The client's own cost: the same calls against a canned answer (no network, no server), CPU per call, ${result.plan.rounds} rounds of ${result.plan.calls * 10}.`,
    "",
    table(
      ["request", "Response.json() alone", "client", "client adds"],
      result.canned.map((r) => [
        r.request,
        `${r.fetchCpuUs.toFixed(1)} µs`,
        `${r.clientCpuUs.toFixed(1)} µs`,
        `${signed(r.clientCpuUs - r.fetchCpuUs, 1)} µs`,
      ]),
    ),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${clientMarkdown(await benchClient({ rounds: 5, calls: 200 }))}\n`);
}
