import type { Server } from "node:http";
import type { FastifyInstance } from "fastify";
import { ms } from "../cli/output.ts";
import type { FormattedFile } from "../format/format.ts";
import { MIGRATION_FILE } from "../../runtime/sql-migrations.ts";
import type { ApiModel } from "../model/types.ts";
import { closeSession, createSession, type GenerateSession } from "../session.ts";
import { generateAndReport, type OutputOptions } from "./generate.ts";
import { importGenerated, loadGeneratedFrom, setModuleVersions } from "./generated-modules.ts";
import { phaseTimer } from "../util/timings.ts";
import { sessionWatcher } from "./watch.ts";
import {
  appOptions,
  connectRedis,
  credentialsLine,
  describeStore,
  listenProblem,
  listenSettings,
  sampleData,
  serviceSettings,
  servingNotes,
  tryLines,
  type ClosableStore,
  type RedisClient,
  type ServiceSettings,
  withAuth,
  type GeneratedEntry,
  type GeneratedStores,
  type ServeOptions,
} from "./serve.ts";

/** serve's options (serve-options.ts), and those of generate that a watched regeneration heeds. */
export type DevOptions = ServeOptions & Pick<OutputOptions, "allowBreaking" | "failOnSunset" | "today">;

/** The events of an HTTP server that carry requests to an app; `dev` moves them to each new app. */
const REQUEST_EVENTS = ["request", "checkExpectation", "clientError", "connect"] as const;

/**
 * The store every app of a `dev` session is given: the one opened at start. An app closes its
 * store when it closes; this one stays open until `dev` ends, so closing is left out.
 */
function borrowed<T extends ClosableStore>(store: T): T {
  return new Proxy(store, {
    get(target, key) {
      if (key === "close") return async () => {};
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * `canon dev`: `serve` that watches the definitions. A save regenerates the output; when it
 * has no error, the new code is loaded (only the changed modules and those importing them, see
 * generated-modules.ts), a new app is built over the same store (a SQL store is migrated first;
 * its driver, and so the PGlite data, stays open) and takes over the listening server's
 * requests; the previous app is closed. A definition error is printed with its position and
 * the last good app keeps answering; at start, `dev` waits for a save that fixes them.
 */
export async function devCommand(options: DevOptions): Promise<number> {
  const settings = listenSettings(options);
  if (!settings) return 2;
  const { port, target } = settings;
  const service = await serviceSettings(options, target);
  if (typeof service === "number") return service;
  // What each generation keeps for the next: a save redoes only what it changed.
  const session = createSession();
  // Watched from now: a save made while the session starts (generating, migrating, listening) is not lost.
  const watcher = sessionWatcher(options.definitions);
  try {
    return await develop(options, port, target, service, session, watcher);
  } finally {
    watcher.close();
    await closeSession(session);
  }
}

/**
 * A save whose definitions require a value (a required field without a default, a tenant field)
 * that records already in the memory store lack is refused, as a SQL store's migration refuses
 * it: the records would be served without it, seen by no tenant, and refused on every write. So
 * is one that gives a decimal a scale at which a stored value would lose digits.
 */
function refuseLacking(store: ClosableStore, schema: unknown, references: readonly unknown[]): void {
  // An id that names no record where a reference now points (an array of ids made a relation):
  // refused as the SQL migration's foreign key is, naming the record and the id.
  const dangling = store.dangling?.(references);
  if (dangling) {
    const { collection, id, field, value, references: to } = dangling;
    throw new Error(
      `${collection}.${field} refers to ${to}, and record ${id} names ${typeof value === "string" ? value : JSON.stringify(value)}, which is no record of ${to}: remove that id from the records that hold it (or create the record it names), then save again (or restart canon dev: the memory store starts empty)`,
    );
  }
  // A decimal given a scale that a stored value would lose digits at: refused as the SQL migration is.
  const unkept = store.unkept?.(schema);
  if (unkept) {
    const { collection, id, at, value, type } = unkept;
    throw new Error(
      `the memory store holds record ${id} of ${collection} with ${JSON.stringify(value)} at ${at}, which ${type} cannot keep exactly: change that record (or give the field a type that keeps it) (or restart canon dev: the memory store starts empty)`,
    );
  }
  // Two records that repeat a unique constraint the save adds: refused as the SQL unique index is.
  const repeated = store.repeated?.(schema);
  if (repeated) {
    const { collection, fields, ids, values } = repeated;
    const shown = values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");
    throw new Error(
      `the memory store holds records ${ids[0]} and ${ids[1]} of ${collection} with the same (${fields.join(", ")}) = (${shown}), which the definitions now require to be unique: change or delete one of them, then save again (or restart canon dev: the memory store starts empty)`,
    );
  }
  const lacking = store.lacking?.(schema) ?? [];
  if (lacking.length === 0) return;
  // A tenant field cannot be given a default or made optional (lint refuses both): what it takes
  // is the field first without `tenant: true`, a tenant given to every record, then the key.
  const collections = (schema as { collections?: Record<string, { tenant?: string }> }).collections ?? {};
  const tenant = lacking.find(({ collection, field }) => collections[collection]?.tenant === field);
  if (tenant) {
    const { collection, field, records: n } = tenant;
    throw new Error(
      `the memory store holds ${n === 1 ? "1 record" : `${n} records`} of ${collection} without ${field}, the tenant field the definitions now give ${collection}: add ${field} without tenant: true (optional) first, give every record its tenant, then add tenant: true; or delete ${n === 1 ? "that record" : "those records"} (or restart canon dev: the memory store starts empty)`,
    );
  }
  const records = (n: number) => (n === 1 ? "1 record" : `${n} records`);
  const which = lacking.map(({ collection, field, records: n }) => `${records(n)} of ${collection} without ${field}`);
  const fields = [...new Set(lacking.map(({ field }) => field))].join(", ");
  const them = lacking.length === 1 && lacking[0]!.records === 1 ? "that record" : "those records";
  throw new Error(
    `the memory store holds ${which.join(", ")}, which the definitions now require: give ${fields} a default, or make it optional, or delete ${them} (or restart canon dev: the memory store starts empty)`,
  );
}

/** The command line of this session with `--allow-breaking`: what lets a refused break through. */
function allowBreakingCommand(): string {
  const args = process.argv.slice(2).filter((arg) => arg !== "--allow-breaking");
  const quoted = args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`));
  return ["npx", "canon", ...quoted, "--allow-breaking"].join(" ");
}

async function develop(
  options: DevOptions,
  port: number,
  target: string,
  service: ServiceSettings,
  session: GenerateSession,
  watcher: ReturnType<typeof sessionWatcher>,
): Promise<number> {
  const generation = () => {
    watcher.generating();
    return generateAndReport(options, { model: true, stamp: false, session, command: "dev", rerun: allowBreakingCommand() });
  };
  const first = await firstGoodGeneration(generation, watcher);
  if (!first) return 1;
  let model = first.model;

  loadGeneratedFrom(options.out);
  setModuleVersions(options.out, first.files);
  const loaded = await withAuth(service);
  if (typeof loaded === "number") return loaded;
  service = loaded;
  // One store for the whole session: the memory store itself, or for SQL the open driver,
  // over which each generation makes its store (with its own table map).
  const stores = await importGenerated<GeneratedStores>(options.out, "sql/index.ts");
  let shared: ClosableStore;
  try {
    shared = target === "memory" ? await stores.openStore(target) : await openDriver(options.out, target);
  } catch (error) {
    process.stderr.write(`error --store ${describeStore(target)}: ${(error as Error).message}\n`);
    return 1;
  }
  // The migrations (`sql/*.sql`, names and texts) the shared database was last brought to: a save
  // that changed none (a description, a rule, a limit) makes its store without applying them
  // again (a transaction of catalog statements: 3-6 ms on PGlite at N = 100). The session's is
  // the only process that migrates this database while it runs (PGlite's folder is its alone; a
  // server's other instances apply the same files).
  let migrated: string | null = null;
  const storeFor = async (generation: GeneratedStores, migrations: string) => {
    if (target === "memory") return borrowed(shared);
    const store = await generation.storeOn(shared, target, { migrated: migrations === migrated });
    migrated = migrations;
    return borrowed(store);
  };

  // One Redis connection for the session, shared by each app's rate limit.
  let redis: RedisClient | null = null;
  // The references of the last app built: the memory store takes them once that app serves
  // (`serving`), so that a new app that fails to start leaves the serving one's.
  let builtReferences: readonly unknown[] = [];
  let builtSchema: unknown = null;
  const build = async (files: FormattedFile[]): Promise<FastifyInstance> => {
    const phase = phaseTimer("canon dev");
    const entry = await importGenerated<GeneratedEntry>(options.out, "index.ts");
    const generation = await importGenerated<GeneratedStores>(options.out, "sql/index.ts");
    builtReferences = generation.storeReferences;
    builtSchema = generation.sqlSchema;
    phase("import the changed modules");
    if (target === "memory") refuseLacking(shared, generation.sqlSchema, generation.storeReferences);
    const store = await storeFor(generation, migrationsOf(files));
    phase("migrate the store");
    const app = await entry.buildApp({ ...appOptions(entry, service, model, redis), store });
    phase("build the app");
    await app.ready();
    phase("app ready");
    return app;
  };
  // The memory store keeps the records; the references, cascades and tenant fields are those of
  // the app that serves, and its records are carried to its schema (renames, new defaults).
  const serving = () => {
    if (target !== "memory") return;
    shared.useReferences?.(builtReferences);
    shared.carryTo?.(builtSchema);
  };

  let current: FastifyInstance;
  try {
    if (options.redis) redis = await connectRedis(options.redis);
    current = await build(first.files);
    serving();
  } catch (error) {
    await shared.close();
    redis?.disconnect();
    process.stderr.write(`error ${(error as Error).message}\n`);
    return 1;
  }
  if (options.sampleData !== undefined && !(await sampleData(current, options.sampleData, "dev"))) {
    await current.close();
    await shared.close();
    redis?.disconnect();
    return 1;
  }
  // The first app's server listens for the whole session (canon calls listen on the server,
  // not on the app, so closing an app never closes it); each new app's request handlers are
  // moved onto it.
  const server: Server = current.server;
  let address: string;
  try {
    address = await listen(server, port, options.host);
  } catch (error) {
    await current.close();
    await shared.close();
    redis?.disconnect();
    const problem = listenProblem(error, "dev", port, options.host);
    if (!problem) throw error;
    process.stderr.write(`${problem}\n`);
    return 1;
  }
  let running: Promise<void> | null = null;
  let again = false;
  const rebuild = async (changedAt: number): Promise<void> => {
    let result;
    try {
      result = await generation();
    } catch (error) {
      process.stderr.write(`canon dev: the generation failed (${(error as Error).message}); still serving the last good version\n`);
      return;
    }
    if (result.code !== 0) {
      process.stderr.write(`canon dev: the definitions have errors; still serving the last good version\n`);
      return;
    }
    try {
      setModuleVersions(options.out, result.files);
      if (result.model) model = result.model;
      const next = await build(result.files);
      for (const event of REQUEST_EVENTS) {
        server.removeAllListeners(event);
        for (const listener of next.server.listeners(event)) server.on(event, listener as (...args: unknown[]) => void);
      }
      const previous = current;
      current = next;
      serving();
      process.stdout.write(`canon dev: serving the new code (${ms(performance.now() - changedAt)} after the change)\n`);
      await previous.close();
    } catch (error) {
      process.stderr.write(`canon dev: the new code did not start (${(error as Error).message}); still serving the last good version\n`);
    }
  };
  const schedule = () => {
    const changedAt = performance.now();
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      let at = changedAt;
      do {
        again = false;
        await rebuild(at);
        at = performance.now();
      } while (again);
      running = null;
    })();
  };
  // A save that came while the session started is served now.
  if (watcher.handOver(schedule)) schedule();
  // Said once the watcher is on: a save made as soon as this is read is picked up.
  process.stdout.write(
    [
      `canon dev: listening on ${address} (store: ${describeStore(target)}${servingNotes(service, redis ? options.redis : undefined)}); watching ${options.definitions} for changes`,
      credentialsLine(service, options),
      ...(service.devCredentials ? tryLines(first.model, address) : []),
      "",
    ].join("\n"),
  );

  await new Promise<void>((resolve) => {
    const stop = () => {
      watcher.close();
      void (async () => {
        await running;
        await current.close();
        await new Promise<void>((done) => server.close(() => done()));
        await shared.close();
        await redis?.quit();
      })()
        .catch((error: unknown) => process.stderr.write(`canon dev: while closing: ${(error as Error).message}\n`))
        .finally(resolve);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  process.stdout.write("canon dev: closed\n");
  return 0;
}

/**
 * The first generation that succeeds: when the definitions have errors at start, each save is
 * tried until one has none. Null when the process is stopped first.
 */
async function firstGoodGeneration(
  generation: () => Promise<{ code: number; model: ApiModel | null; files: FormattedFile[] }>,
  watcher: ReturnType<typeof sessionWatcher>,
): Promise<{ model: ApiModel; files: FormattedFile[] } | null> {
  for (;;) {
    const result = await generation();
    if (result.code === 0 && result.model) return { model: result.model, files: result.files };
    // Waiting before saying so: a save made as soon as the message is read must not be missed.
    const saved = watcher.nextSave();
    process.stderr.write(`canon dev: waiting for a save that fixes the definitions (Ctrl-C stops)\n`);
    if (!(await saved)) return null;
  }
}


/** The migrations of an output, by name and text: what a database migrated to it holds. */
function migrationsOf(files: FormattedFile[]): string {
  return JSON.stringify(files.filter((f) => f.path.startsWith("sql/") && MIGRATION_FILE.test(f.path.slice("sql/".length))).map((f) => [f.path, f.content]));
}

/** Opens the SQL driver of a target with the generated runtime (closed when `dev` ends). */
async function openDriver(out: string, target: string): Promise<ClosableStore> {
  const { openDriver } = await importGenerated<{ openDriver(target: string): Promise<ClosableStore> }>(out, "runtime/sql-driver.ts");
  return openDriver(target);
}

/** Listens on the server itself; resolves with the address as `http://host:port`. */
function listen(server: Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(error);
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      const address = server.address();
      if (!address || typeof address === "string") return resolve(String(address));
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve(`http://${shown}:${address.port}`);
    });
  });
}
