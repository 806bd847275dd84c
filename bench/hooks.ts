// What a hook costs a write (SPEC §12.5, issue 26 point 6): PATCH /v2/products/{id} on the
// generated showcase over the memory store, in process (Fastify's inject, so that only the
// service's work differs), with an `update` hook that does nothing and without hooks. Rounds
// alternate which app goes first; the ratio (hooked ÷ plain time) is taken within a round and
// the median of the rounds is reported. Target: at most 1.05.
//
//   node bench/hooks.ts [rounds] [requests per round]
import { buildApp, devAuthenticate } from "../generated/index.ts";

const rounds = Number(process.argv[2] ?? 11);
const requests = Number(process.argv[3] ?? 4000);

async function appWith(hooked: boolean) {
  const app = await buildApp({
    authenticate: devAuthenticate,
    rateLimit: false,
    ...(hooked ? { hooks: { products: { update() {} } } } : {}),
  });
  const created = await app.inject({
    method: "POST",
    url: "/v2/products",
    headers: { authorization: "Bearer dev-writer", "content-type": "application/json" },
    payload: { sku: hooked ? "BENCH-H" : "BENCH-P", name: "Bench", price_cents: 1 },
  });
  if (created.statusCode !== 201) throw new Error(`POST answered ${created.statusCode}: ${created.body}`);
  const id = (created.json() as { id: string }).id;
  return { app, id };
}

async function time(target: Awaited<ReturnType<typeof appWith>>, n: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const res = await target.app.inject({
      method: "PATCH",
      url: `/v2/products/${target.id}`,
      headers: { authorization: "Bearer dev-writer", "content-type": "application/json" },
      payload: `{"name":"Bench ${i}"}`,
    });
    if (res.statusCode !== 200) throw new Error(`PATCH answered ${res.statusCode}: ${res.body}`);
  }
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const plain = await appWith(false);
const hooked = await appWith(true);
await time(plain, requests);
await time(hooked, requests);
const ratios: number[] = [];
const plainMs: number[] = [];
const hookedMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  let p: number;
  let h: number;
  if (round % 2 === 0) {
    p = await time(plain, requests);
    h = await time(hooked, requests);
  } else {
    h = await time(hooked, requests);
    p = await time(plain, requests);
  }
  plainMs.push(p);
  hookedMs.push(h);
  ratios.push(h / p);
}
await plain.app.close();
await hooked.app.close();
const perRequest = (ms: number) => ((ms * 1000) / requests).toFixed(1);
console.log(
  JSON.stringify({
    rounds,
    requests,
    plainMicrosPerPatch: perRequest(median(plainMs)),
    hookedMicrosPerPatch: perRequest(median(hookedMs)),
    ratios: ratios.map((r) => r.toFixed(3)),
    medianRatio: median(ratios).toFixed(3),
    target: 1.05,
  }),
);
