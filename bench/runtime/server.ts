// One benchmark server per process, started by bench/runtime.ts pinned to one core:
//
//   node bench/runtime/server.ts generated|handwritten|ceiling [--app <generated dir>]
//   node bench/runtime/server.ts generated-pg|handwritten-pg|handwritten-tenancy-pg --store postgres://…?schema=… [--app <generated dir>]
//
// It listens on a free port of 127.0.0.1 and prints `ready <port>` once it serves.
//   generated    buildApp from generated/index.ts with every convention on: devAuthenticate,
//                request ids, the rate limiter (1e9 per minute: never triggers), ETags, and
//                deprecation headers on v1.
//   handwritten  bench/runtime/handwritten.ts: Fastify 5 and zod by hand, same store, same JSON.
//   ceiling      bare node:http answering a fixed body: the most this machine can do.
//   generated-pg    the generated app as above, on the SQL store over a PostgreSQL server (the
//                   generated openStore; tables migrated and seeded by bench/postgres.ts).
//   handwritten-pg  bench/runtime/handwritten-pg.ts: Fastify 5, zod and `pg` with named statements.
//   handwritten-tenancy-pg  bench/runtime/handwritten-tenancy-pg.ts: the same for the tenancy
//                   fixture's tenant-scoped comments (bench/tenancy.ts).
// Both PostgreSQL servers use the same pool size (POOL_SIZE).
import { createServer } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { FastifyInstance } from "fastify";
import { buildHandwritten } from "./handwritten.ts";
import { buildHandwrittenPg } from "./handwritten-pg.ts";
import { buildHandwrittenTenancyPg } from "./handwritten-tenancy-pg.ts";
import { BENCH_ID, seededStore } from "./seed.ts";

const [kind, ...rest] = process.argv.slice(2);
const appIndex = rest.indexOf("--app");
const appDir =
  appIndex >= 0 ? path.resolve(rest[appIndex + 1]!) : path.resolve(import.meta.dirname, "../../generated");
const storeIndex = rest.indexOf("--store");
const storeUrl = storeIndex >= 0 ? rest[storeIndex + 1]! : "";
/** Connections of each PostgreSQL server's pool: the generated store's default. */
const POOL_SIZE = 10;

async function buildGenerated(sql: boolean): Promise<FastifyInstance> {
  const generated = (await import(
    pathToFileURL(path.join(appDir, "index.ts")).href
  )) as typeof import("../../generated/index.ts");
  const sqlIndex = (await import(
    pathToFileURL(path.join(appDir, "sql", "index.ts")).href
  )) as typeof import("../../generated/sql/index.ts");
  const store = sql ? await sqlIndex.openStore(storeUrl, { poolSize: POOL_SIZE }) : await seededStore();
  return generated.buildApp({
    authenticate: generated.devAuthenticate,
    rateLimit: { max: 1e9, windowMs: 60_000 },
    // On, as in production, but never reached: wrk's 32 connections are one principal, and the
    // hand-written server has no such limit (a sorted or filtered list is an expensive read).
    expensiveReads: { perPrincipal: 1e9 },
    store,
    logger: false,
  });
}

async function main(): Promise<void> {
  if (kind === "ceiling") {
    const store = await seededStore();
    const record = await store.get("products", BENCH_ID);
    const body = JSON.stringify({
      id: record!.id,
      ...record!.values,
      created_at: record!.created_at,
      updated_at: record!.updated_at,
    });
    const server = createServer((_request, response) => {
      response.writeHead(200, {
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
      });
      response.end(body);
    });
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      process.stdout.write(`ready ${typeof address === "object" && address ? address.port : 0}\n`);
    });
    return;
  }
  const app =
    kind === "generated" || kind === "generated-pg"
      ? await buildGenerated(kind === "generated-pg")
      : kind === "handwritten"
        ? await buildHandwritten()
        : kind === "handwritten-pg"
          ? await buildHandwrittenPg(storeUrl, POOL_SIZE)
          : kind === "handwritten-tenancy-pg"
            ? await buildHandwrittenTenancyPg(storeUrl, POOL_SIZE)
            : null;
  if (!app)
    throw new Error(
      `unknown server kind ${kind}: generated, handwritten, ceiling, generated-pg, handwritten-pg or handwritten-tenancy-pg`,
    );
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  process.stdout.write(`ready ${typeof address === "object" && address ? address.port : 0}\n`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

await main();
