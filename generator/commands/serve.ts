import path from "node:path";
import { pathToFileURL } from "node:url";
import type { FastifyInstance } from "fastify";
import { checkCursorSecret } from "../../runtime/cursor-keys.ts";
import { folderHolder, FolderInUseError } from "../../runtime/folder-lock.ts";
import type { ApiModel } from "../model/types.ts";
import { generateAndReport } from "./generate.ts";

export interface ServeOptions {
  definitions: string;
  out: string;
  port: string;
  host: string;
  /** `memory`, `pglite:<dir>` or `postgres://…`. */
  store: string;
  /** `redis://…`: one rate limit shared by every instance that names this Redis. */
  redis?: string;
}

/** The default store: embedded PostgreSQL in a folder under the working directory. */
export const DEFAULT_STORE = "pglite:.canon-data";

interface GeneratedEntry {
  buildApp(options: {
    authenticate: unknown;
    store?: unknown;
    logger?: boolean;
    cursorSecret?: string;
    rateLimit?: { max: number; windowMs: number; redis?: unknown } | false;
  }): Promise<FastifyInstance>;
  devAuthenticate: unknown;
}

interface ClosableStore {
  close(): Promise<void>;
}

interface GeneratedStores {
  openStore(target: string): Promise<ClosableStore>;
}

interface RedisClient {
  quit(): Promise<unknown>;
  disconnect(): void;
  ping(): Promise<unknown>;
}

/** Where a store target keeps its data, for the banner (no password of a URL). */
function describeStore(target: string): string {
  if (!/^postgres(ql)?:\/\//.test(target)) return target;
  const url = new URL(target);
  if (url.password) url.password = "***";
  return url.toString();
}

function storeIsValid(target: string): boolean {
  return target === "memory" || /^pglite:.+/.test(target) || /^postgres(ql)?:\/\/.+/.test(target);
}

/**
 * `canon serve`: generates, then serves every version on one port with the dev credentials,
 * over the store `--store` names (default `pglite:.canon-data`). SQL stores are migrated to the
 * current schema first. SIGTERM or SIGINT closes the server, then the store.
 */
export async function serveCommand(options: ServeOptions): Promise<number> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`error --port must be a port number, not "${options.port}"\n`);
    return 2;
  }
  const target = options.store || DEFAULT_STORE;
  if (!storeIsValid(target)) {
    process.stderr.write(`error --store ${target}: use memory, pglite:<dir> (default ${DEFAULT_STORE}) or postgres://user@host:port/database\n`);
    return 2;
  }
  if (options.redis !== undefined && !/^rediss?:\/\/.+/.test(options.redis)) {
    process.stderr.write(`error --redis ${options.redis}: use redis://host:port\n`);
    return 2;
  }
  const secret = process.env.CANON_CURSOR_SECRET || undefined;
  if (secret !== undefined) {
    try {
      checkCursorSecret(secret, "CANON_CURSOR_SECRET");
    } catch (error) {
      process.stderr.write(`error ${(error as Error).message}\n`);
      return 2;
    }
  }
  // A PGlite folder another process has open: refuse before generating or writing anything.
  const folder = /^pglite:(?![a-z]+:\/\/)(.+)$/.exec(target)?.[1];
  const holder = folder === undefined ? null : folderHolder(path.resolve(folder));
  if (holder !== null) {
    process.stderr.write(`error --store ${target}: ${new FolderInUseError(path.resolve(folder!), holder).message}\n`);
    return 1;
  }
  const { code, model } = await generateAndReport(options, true);
  if (code !== 0 || !model) return code;

  const out = path.resolve(options.out);
  const entry = (await import(pathToFileURL(path.join(out, "index.ts")).href)) as GeneratedEntry;
  const stores = (await import(pathToFileURL(path.join(out, "sql", "index.ts")).href)) as GeneratedStores;
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
    app = await entry.buildApp({
      authenticate: entry.devAuthenticate,
      store,
      // Cursors are signed with the store's keys, shared by every instance over one database; the secret overrides them.
      ...(secret !== undefined ? { cursorSecret: secret } : {}),
      ...(redis ? { rateLimit: sharedRateLimit(model, redis) } : {}),
    });
  } catch (error) {
    await store.close();
    redis?.disconnect();
    process.stderr.write(`error ${(error as Error).message}\n`);
    return 1;
  }
  const address = await app.listen({ port, host: options.host });
  process.stdout.write(
    [
      `canon serve: listening on ${address} (store: ${describeStore(target)}${redis ? `, rate limit shared through ${options.redis}` : ""})`,
      ...tryLines(model, address),
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

async function connectRedis(url: string): Promise<RedisClient> {
  const specifier: string = "ioredis";
  const { Redis } = (await import(specifier)) as { Redis: new (url: string, options: object) => RedisClient };
  // Fail fast: a limiter that cannot reach Redis answers 500, so refuse to start without it.
  const client = new Redis(url, {
    connectTimeout: 2000,
    maxRetriesPerRequest: 1,
    keyPrefix: process.env.CANON_REDIS_PREFIX ?? "canon:",
    lazyConnect: false,
  });
  try {
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new Error(`--redis ${url}: ${(error as Error).message}`);
  }
  return client;
}

/** The API's own limit (api.yaml `rate_limit`; none: no limit), counted in Redis. */
function sharedRateLimit(model: ApiModel, redis: RedisClient): { max: number; windowMs: number; redis: unknown } | false {
  const limit = model.rateLimit;
  return limit ? { max: limit.requests, windowMs: limit.perSeconds * 1000, redis } : false;
}

/** How to call what was just generated: the newest version's first collection, and its docs. */
function tryLines(model: ApiModel, address: string): string[] {
  const latest = model.versions[model.versions.length - 1];
  const first = latest?.resources[0];
  if (!latest || !first) return [];
  return [
    `  try:  curl -H 'Authorization: Bearer dev-writer' ${address}/${latest.name}/${first.collection}`,
    `  docs: ${address}/${latest.name}/docs`,
  ];
}
