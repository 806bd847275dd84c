import { existsSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { FastifyInstance } from "fastify";
import { corsOrigin } from "../../runtime/cors.ts";
import { checkCursorSecret } from "../../runtime/cursor-keys.ts";
import { folderHolder, FolderInUseError } from "../../runtime/folder-lock.ts";
import { LOG_LEVELS, type LogLevel } from "../../runtime/logging.ts";
import { REDIS_CLIENT_OPTIONS } from "../../runtime/rate-limit.ts";
import type { ApiModel } from "../model/types.ts";
import { generateAndReport } from "./generate.ts";
import { importGenerated, loadGeneratedFrom } from "./generated-modules.ts";

export interface ServeOptions {
  definitions: string;
  out: string;
  port: string;
  host: string;
  /** `memory`, `pglite:<dir>` or `postgres://…`; when absent, `CANON_STORE`, else `pglite:.canon-data`. */
  store?: string;
  /** `redis://…`: one rate limit shared by every instance that names this Redis. */
  redis?: string;
  /** Origins whose browser pages may call the service (CORS): `--cors https://app.example.com`, repeated. */
  cors?: string[];
  /** pino's level for the service's log on stdout (default `info`: a line per request); `silent` for none. */
  logLevel?: string;
  /** Peers whose `X-Forwarded-For` to believe (comma-separated addresses, ranges, `loopback`, `linklocal`, `uniquelocal`), or `none`; default: the runtime's `TRUSTED_PROXIES`. */
  trustProxy?: string;
  /** Accept `Bearer dev-writer` and `dev-reader` on a host that is not loopback (on loopback they are accepted without it). */
  devCredentials?: boolean;
  /** A module of the user's exporting `authenticate` (and optionally `authorize`, `hooks`, `services`). */
  auth?: string;
  /** Records to write into an empty store at start (sample-data.ts). */
  sampleData?: string;
}

/** The default store: embedded PostgreSQL in a folder under the working directory. */
export const DEFAULT_STORE = "pglite:.canon-data";

export interface GeneratedEntry {
  buildApp(options: {
    authenticate: unknown;
    authorize?: unknown;
    services?: unknown;
    hooks?: unknown;
    store?: unknown;
    logger?: boolean | { level: string };
    cursorSecret?: string;
    rateLimit?: { max: number; windowMs: number; redis?: unknown } | false;
    cors?: { origins: string[] };
    trustProxy?: string | false;
  }): Promise<FastifyInstance>;
  devAuthenticate: unknown;
}

export interface ClosableStore {
  close(): Promise<void>;
  /** The memory store's: the references between its collections from now on (`MemoryStore.useReferences`). */
  useReferences?(references: readonly unknown[]): void;
  /** The memory store's: the required fields its records lack under a new schema (`MemoryStore.lacking`). */
  lacking?(schema: unknown): Array<{ collection: string; field: string; records: number }>;
  /** The memory store's: the first decimal value a new schema's precision and scale cannot keep exactly (`MemoryStore.unkept`). */
  unkept?(schema: unknown): { collection: string; id: string; at: string; value: unknown; type: string } | undefined;
  /** The memory store's: the first stored id that names no record of the collection a reference now points to (`MemoryStore.dangling`). */
  dangling?(references: readonly unknown[]): { collection: string; id: string; field: string; value: unknown; references: string } | undefined;
  /** The memory store's: the first two records that repeat a unique constraint of a new schema (`MemoryStore.repeated`). */
  repeated?(schema: unknown): { collection: string; fields: string[]; ids: [string, string]; values: unknown[] } | undefined;
  /** The memory store's: its records brought to a new schema, renames and defaults applied (`MemoryStore.carryTo`). */
  carryTo?(schema: unknown): void;
}

export interface GeneratedStores {
  openStore(target: string): Promise<ClosableStore>;
  /** A store over an open driver, migrated first unless `migrated` (`canon dev`). */
  storeOn(driver: ClosableStore, target: string, options?: { migrated?: boolean }): Promise<ClosableStore>;
  /** The references between the collections (`MemoryStore.useReferences`). */
  storeReferences: readonly unknown[];
  /** The tables and columns (`sql/schema.ts`): what the memory store's records are carried to in `canon dev`. */
  sqlSchema: unknown;
}

export interface RedisClient {
  quit(): Promise<unknown>;
  disconnect(): void;
  ping(): Promise<unknown>;
}

/** Where a store target keeps its data, for the banner (no password of a URL). */
export function describeStore(target: string): string {
  if (!/^postgres(ql)?:\/\//.test(target)) return target;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return target.replace(/:[^:@/]*@/, ":***@");
  }
  if (url.password) url.password = "***";
  return url.toString();
}

function storeIsValid(target: string): boolean {
  return target === "memory" || /^pglite:.+/.test(target) || /^postgres(ql)?:\/\/.+/.test(target);
}

/** The port and store a `serve` or `dev` command names; a usage problem is printed (exit 2). */
export function listenSettings(options: Pick<ServeOptions, "port" | "store" | "redis">): { port: number; target: string } | null {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`error --port must be a port number, not "${options.port}"\n`);
    return null;
  }
  // The store URL may come from the environment, so that its password is not on the command line.
  const target = options.store || process.env.CANON_STORE || DEFAULT_STORE;
  if (!storeIsValid(target)) {
    process.stderr.write(`error --store ${describeStore(target)}: use memory, pglite:<dir> (default ${DEFAULT_STORE}) or postgres://user@host:port/database\n`);
    return null;
  }
  if (options.redis !== undefined && !/^rediss?:\/\/.+/.test(options.redis)) {
    process.stderr.write(`error --redis ${options.redis}: use redis://host:port\n`);
    return null;
  }
  return { port, target };
}

/**
 * Why a server could not listen, in one line: a busy port names the port and `--port`. Null for
 * a failure that is not about the address (then it is reported as it is).
 */
export function listenProblem(error: unknown, command: string, port: number, host: string): string | null {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") {
    return `canon ${command}: port ${port} on ${host} is in use: stop what listens there, or pass --port <another port> (--port 0 picks a free one)`;
  }
  if (code === "EACCES") return `canon ${command}: no permission to listen on port ${port} on ${host}: pass --port with a port above 1023`;
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") return `canon ${command}: cannot listen on host ${host}: pass --host with an address of this machine (default 127.0.0.1)`;
  return null;
}

/** `CANON_CURSOR_SECRET`, when set (an empty value is unset): it signs cursors instead of the store's keys. */
export function cursorSecretFromEnvironment(): string | undefined {
  return process.env.CANON_CURSOR_SECRET || undefined;
}

/** buildApp's `cursorSecret` from the environment, or nothing. */
export function cursorSecretOption(): { cursorSecret?: string } {
  const secret = cursorSecretFromEnvironment();
  return secret === undefined ? {} : { cursorSecret: secret };
}

/**
 * What must hold before anything is generated or opened, each refused with one line: a
 * `CANON_CURSOR_SECRET` long enough to sign with (else 2), and a PGlite folder no other process
 * has open (else 1: that process keeps it, and this one writes nothing). Null when all holds.
 */
export function startProblem(target: string): number | null {
  const secret = cursorSecretFromEnvironment();
  if (secret !== undefined) {
    try {
      checkCursorSecret(secret, "CANON_CURSOR_SECRET");
    } catch (error) {
      process.stderr.write(`error ${(error as Error).message}\n`);
      return 2;
    }
  }
  const folder = /^pglite:(?![a-z]+:\/\/)(.+)$/.exec(target)?.[1];
  const holder = folder === undefined ? null : folderHolder(path.resolve(folder));
  if (holder !== null) {
    process.stderr.write(`error --store ${target}: ${new FolderInUseError(path.resolve(folder!), holder).message}\n`);
    return 1;
  }
  return null;
}

/**
 * `canon serve`: generates, then serves every version on one port with the dev credentials,
 * over the store `--store` names (default `pglite:.canon-data`). SQL stores are migrated to the
 * current schema first. SIGTERM or SIGINT closes the server, then the store.
 */
export async function serveCommand(options: ServeOptions): Promise<number> {
  const settings = listenSettings(options);
  if (!settings) return 2;
  const { port, target } = settings;
  const checked = await serviceSettings(options, target);
  if (typeof checked === "number") return checked;
  const { code, model } = await generateAndReport(options, { model: true });
  if (code !== 0 || !model) return code;

  loadGeneratedFrom(options.out);
  const service = await withAuth(checked);
  if (typeof service === "number") return service;
  const { devCredentials } = service;
  const entry = await importGenerated<GeneratedEntry>(options.out, "index.ts");
  const stores = await importGenerated<GeneratedStores>(options.out, "sql/index.ts");
  let store: ClosableStore;
  try {
    store = await stores.openStore(target);
  } catch (error) {
    process.stderr.write(`error --store ${describeStore(target)}: ${(error as Error).message}\n`);
    return 1;
  }

  let redis: RedisClient | null = null;
  let app: FastifyInstance;
  try {
    if (options.redis) redis = await connectRedis(options.redis);
    app = await entry.buildApp({ ...appOptions(entry, service, model, redis), store });
  } catch (error) {
    await store.close();
    redis?.disconnect();
    process.stderr.write(`error ${(error as Error).message}\n`);
    return 1;
  }
  if (options.sampleData !== undefined) {
    const written = await sampleData(app, options.sampleData, "serve");
    if (!written) {
      await app.close();
      redis?.disconnect();
      return 1;
    }
  }
  let address: string;
  try {
    address = await app.listen({ port, host: options.host });
  } catch (error) {
    const problem = listenProblem(error, "serve", port, options.host);
    if (!problem) throw error;
    process.stderr.write(`${problem}\n`);
    await app.close();
    redis?.disconnect();
    return 1;
  }
  process.stdout.write(
    [
      `canon serve: listening on ${address} (store: ${describeStore(target)}${servingNotes(service, redis ? options.redis : undefined)})`,
      credentialsLine(service, options),
      ...(devCredentials ? tryLines(model, address) : []),
      "",
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      void app
        .close()
        .then(() => store.close())
        .then(() => redis?.quit())
        .catch((error: unknown) => process.stderr.write(`canon serve: while closing: ${(error as Error).message}\n`))
        .finally(resolve);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  process.stdout.write("canon serve: closed\n");
  return 0;
}

/** What `serve` and `dev` read from the options of serve-options.ts, each checked. */
export interface ServiceSettings {
  logLevel: LogLevel;
  /** The `--cors` origins, normalised. */
  origins: string[];
  /** Whether `Bearer dev-writer` and `dev-reader` are accepted. */
  devCredentials: boolean;
  /** The `--auth` module, imported (`withAuth`, once the output's modules resolve). */
  auth: AuthModule | null;
  /** The `--auth` file, checked to exist: imported by `withAuth`. */
  authFile?: string;
  /** `--trust-proxy`, as given (`none`: trust no peer); absent: the runtime's default. */
  trustProxy?: string;
}

/**
 * The options of a running service (serve-options.ts), checked the same way for `serve` and
 * `dev` (and the store's folder, when another process holds it); a problem is printed in one
 * line and its exit code returned.
 */
export async function serviceSettings(options: ServeOptions, target: string): Promise<ServiceSettings | number> {
  const logLevel = options.logLevel ?? "info";
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    process.stderr.write(`error --log-level ${logLevel}: use one of ${LOG_LEVELS.join(", ")}\n`);
    return 2;
  }
  const origins: string[] = [];
  for (const origin of options.cors ?? []) {
    try {
      origins.push(corsOrigin(origin));
    } catch (error) {
      process.stderr.write(`error --cors: ${(error as Error).message}\n`);
      return 2;
    }
  }
  const problem = startProblem(target);
  if (problem !== null) return problem;
  const devCredentials = options.devCredentials === true || (options.auth === undefined && isLoopback(options.host));
  if (!devCredentials && options.auth === undefined) {
    process.stderr.write(
      `error --host ${options.host} is not loopback: the dev credentials are accepted there only with --dev-credentials; pass --auth ./src/auth.ts (a module exporting authenticate) for your own\n`,
    );
    return 2;
  }
  if (options.sampleData !== undefined && !devCredentials) {
    process.stderr.write(`error --sample-data is written as the dev writer: pass --dev-credentials beside --auth\n`);
    return 2;
  }
  // Imported once the output is generated and its modules resolve (`withAuth`): an auth module
  // may import the generated runtime, whose packages come from canon's install. Said now when missing.
  if (options.auth !== undefined && !existsSync(path.resolve(options.auth))) {
    process.stderr.write(`error --auth ${options.auth}: no such file\n`);
    return 2;
  }
  return {
    logLevel: logLevel as LogLevel,
    origins,
    devCredentials,
    auth: null,
    ...(options.auth === undefined ? {} : { authFile: options.auth }),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
  };
}

/**
 * The settings with the `--auth` module imported: after `loadGeneratedFrom`, so that a module that
 * imports the generated runtime (`BusinessRuleError`, the hook types) finds the packages it
 * imports where the generated modules do. A number (the exit code) when it does not load.
 */
export async function withAuth(settings: ServiceSettings): Promise<ServiceSettings | number> {
  if (settings.authFile === undefined || settings.auth) return settings;
  try {
    return { ...settings, auth: await loadAuth(settings.authFile) };
  } catch (error) {
    process.stderr.write(`error --auth ${settings.authFile}: ${(error as Error).message}\n`);
    return 2;
  }
}

/** buildApp's options from the checked settings (all but the store), the same for `serve` and each app of `dev`. */
export function appOptions(entry: GeneratedEntry, settings: ServiceSettings, model: ApiModel, redis: RedisClient | null) {
  const { auth, devCredentials, logLevel, origins, trustProxy } = settings;
  return {
    authenticate: authenticateWith(auth, devCredentials ? entry.devAuthenticate : null),
    ...(auth?.authorize ? { authorize: auth.authorize } : {}),
    ...(auth?.services ? { services: auth.services } : {}),
    ...(auth?.hooks ? { hooks: auth.hooks } : {}),
    logger: logLevel === "silent" ? false : { level: logLevel },
    // Cursors are signed with the store's keys, shared by every instance over one database; a secret overrides them.
    ...cursorSecretOption(),
    ...(redis ? { rateLimit: sharedRateLimit(model, redis) } : {}),
    ...(origins.length ? { cors: { origins } } : {}),
    ...(trustProxy === undefined ? {} : { trustProxy: trustProxy === "none" ? (false as const) : trustProxy }),
  };
}

/** How the listening line describes the options beside the store: the shared rate limit and CORS. */
export function servingNotes(settings: ServiceSettings, redisUrl: string | undefined): string {
  return `${redisUrl ? `, rate limit shared through ${describeRedis(redisUrl)}` : ""}${settings.origins.length ? `, CORS for ${settings.origins.join(", ")}` : ""}`;
}

/** The line that says which credentials are accepted. */
export function credentialsLine(settings: ServiceSettings, options: ServeOptions): string {
  return settings.devCredentials
    ? `  the dev credentials (Bearer dev-writer, dev-reader) are accepted: ${options.devCredentials ? "--dev-credentials" : "the host is loopback"}`
    : `  authentication: ${options.auth}; the dev credentials are not accepted`;
}

/** Writes `--sample-data` into an empty store through the app; false (said in one line) when it fails. */
export async function sampleData(app: FastifyInstance, file: string, command: string): Promise<boolean> {
  try {
    await app.ready();
    const { writeSampleData } = await import("./sample-data.ts");
    process.stdout.write(`canon ${command}: ${await writeSampleData(app, file)}\n`);
    return true;
  } catch (error) {
    process.stderr.write(`error --sample-data ${file}: ${(error as Error).message}\n`);
    return false;
  }
}

/** Whether `host` names this machine only: `localhost`, 127.0.0.0/8, ::1. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || /^::ffff:127\./.test(h);
  return false;
}

interface AuthModule {
  authenticate: (request: unknown) => unknown;
  authorize?: unknown;
  hooks?: unknown;
  services?: unknown;
}

/** The user's module of `--auth`, imported as Node imports it (TypeScript too: Node strips types). */
async function loadAuth(file: string): Promise<AuthModule> {
  const module = (await import(pathToFileURL(path.resolve(file)).href)) as Partial<AuthModule>;
  if (typeof module.authenticate !== "function") throw new Error("exports no function authenticate");
  return module as AuthModule;
}

/** The user's `authenticate`, the dev one, or the user's then the dev one (`--auth` with `--dev-credentials`). */
function authenticateWith(auth: AuthModule | null, dev: unknown): unknown {
  if (!auth) return dev;
  if (!dev) return auth.authenticate;
  const devAuthenticate = dev as (request: unknown) => unknown;
  return async (request: unknown) => (await auth.authenticate(request)) ?? devAuthenticate(request);
}

export async function connectRedis(url: string): Promise<RedisClient> {
  const specifier: string = "ioredis";
  const { Redis } = (await import(specifier)) as { Redis: new (url: string, options: object) => RedisClient & RedisEvents };
  // Commands fail fast while Redis is away; the limiter then counts in this instance (rate-limit.ts).
  const client = new Redis(url, { ...REDIS_CLIENT_OPTIONS, keyPrefix: process.env.CANON_REDIS_PREFIX ?? "canon:" });
  // Connection errors are the limiter's to report (one warning per outage), not one line per retry.
  client.on("error", () => {});
  // Redis down is not the service down: without it at start, the instance starts and counts alone until it answers.
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), REDIS_CLIENT_OPTIONS.connectTimeout);
    client.once("ready", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ready) process.stderr.write(`canon serve: --redis ${describeRedis(url)} does not answer: counting rate limits in this instance until it does\n`);
  return client;
}

interface RedisEvents {
  once(event: "ready", listener: () => void): unknown;
  on(event: "error", listener: () => void): unknown;
}

/** A Redis URL without its password, for a log line. */
function describeRedis(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/** The API's own limit (api.yaml `rate_limit`; none: no limit), counted in Redis. */
function sharedRateLimit(model: ApiModel, redis: RedisClient): { max: number; windowMs: number; redis: unknown } | false {
  const limit = model.rateLimit;
  return limit ? { max: limit.requests, windowMs: limit.perSeconds * 1000, redis } : false;
}

/** How to call what was just generated: the newest version's first collection, and its docs. */
export function tryLines(model: ApiModel, address: string): string[] {
  const latest = model.versions[model.versions.length - 1];
  const first = latest?.resources[0];
  if (!latest || !first) return [];
  return [
    `  try:  curl -H 'Authorization: Bearer dev-writer' ${address}/${latest.name}/${first.collection}`,
    `  docs: ${address}/${latest.name}/docs`,
  ];
}
