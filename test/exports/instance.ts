// One service instance as a process of its own, for the crash tests: the showcase over a store
// (`pglite:<dir>` or `postgres://…` with a schema), its export files in a given folder, and an
// orders service whose list takes a while per page, so that an export is still running when the
// test kills the process. Prints `listening <port>` once it answers.
//
//   node test/exports/instance.ts <store target> <exports folder> [schema]
import { buildApp } from "../../generated/index.ts";
import { openStore } from "../../generated/sql/index.ts";
import { principals, slowOrders } from "./helpers.ts";

const [target, directory, schema] = process.argv.slice(2);
if (!target || !directory) throw new Error("usage: instance.ts <store target> <exports folder> [schema]");
const store = await openStore(target, schema ? { schema } : {});
const app = await buildApp({
  authenticate: principals,
  store,
  rateLimit: false,
  services: { orders: slowOrders(store, Number(process.env.PAGE_DELAY_MS ?? 100)) },
  exports: { directory, pageSize: 5, pgBoss: { heartbeatSeconds: 10, superviseIntervalSeconds: 1, pollingIntervalSeconds: 0.5 } },
});
await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);

