/**
 * One small interface over the two ways the SQL store reaches PostgreSQL, so that both run the
 * same SQL: PGlite (real PostgreSQL compiled to WebAssembly, in the process, no server;
 * sql-pglite.ts) and a PostgreSQL server through `pg` (sql-pg.ts). Each driver package is
 * imported only when a store of its kind is opened, so a service on the memory store never
 * loads either.
 */

export {
  SESSION_SETTINGS,
  type Row,
  type SqlDriver,
  type SqlQueryable,
  type Statement,
} from "./sql-types.ts";
import { userInfo } from "node:os";
import { SESSION_SETTINGS, type SqlDriver } from "./sql-types.ts";

/** The most time one statement may take, by default: longer, and it is cancelled (a 500, logged). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;

export interface SqlStoreOptions {
  /** PostgreSQL schema that holds the tables (created when missing); default: the server's search_path. */
  schema?: string;
  /** Most connections a `postgres://` store opens at once. Default 10. */
  poolSize?: number;
  /**
   * `statement_timeout` of every statement, in milliseconds: one that runs longer is cancelled
   * and its request answers 500. Default 5000; 0 turns it off.
   */
  statementTimeoutMs?: number;
  /**
   * Most records one delete takes along through `cascade` references: a delete that would take
   * more answers 422 (delete the children first). Default 10,000. Read by `openStore`.
   */
  cascadeLimit?: number;
  /**
   * Longest wait, in milliseconds, for a connection of a `postgres://` store's pool when all are
   * busy (or for a new one to open): past it the request answers 500 `INTERNAL_ERROR` with
   * `Retry-After: 5`, logged. Default 5000; 0 waits for ever.
   */
  connectionTimeoutMs?: number;
}

/** The longest wait for a pool connection, by default. */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 5000;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens `pglite:<dir>` (a folder, created when missing, relative to the working directory),
 * `pglite:memory://` (in memory), or `postgres://…` / `postgresql://…` (a server; a `schema`
 * query parameter names the schema to use).
 */
export async function openDriver(target: string, options: SqlStoreOptions = {}): Promise<SqlDriver> {
  const timeout = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  if (!Number.isInteger(timeout) || timeout < 0)
    throw new Error(`statementTimeoutMs must be a whole number of milliseconds, not ${timeout}`);
  if (target.startsWith("pglite:")) {
    const where = target.slice("pglite:".length);
    if (!where) throw new Error("--store pglite:<dir> needs a folder, such as pglite:.canon-data");
    const { openPglite } = await import("./sql-pglite.ts");
    const driver = await openPglite(where);
    if (options.schema) await useSchema(driver, options.schema, true);
    await driver.exec(
      [
        `set statement_timeout = ${timeout}`,
        ...Object.entries(SESSION_SETTINGS).map(([name, value]) => `set ${name} = '${value}'`),
      ].join("; "),
    );
    return driver;
  }
  if (/^postgres(ql)?:\/\//.test(target)) {
    const url = postgresUrl(target);
    const schema = options.schema ?? url.searchParams.get("schema") ?? undefined;
    url.searchParams.delete("schema");
    if (schema !== undefined && !SCHEMA_NAME.test(schema))
      throw new Error(`schema "${schema}" must be a lowercase SQL identifier`);
    const { openPostgres } = await import("./sql-pg.ts");
    const driver = await openPostgres(url.toString(), {
      schema,
      max: options.poolSize ?? 10,
      statementTimeoutMs: timeout,
      connectionTimeoutMs: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
    });
    if (schema) await useSchema(driver, schema, false);
    return driver;
  }
  throw new Error(`unknown store "${target}": use memory, pglite:<dir> or postgres://…`);
}

/**
 * A `postgres://` URL as libpq (psql) would read it: without a user name in it or in `PGUSER`,
 * the name of the operating system's user. (`pg` takes `$USER` instead, and without it sends no
 * user, which the server refuses: `no PostgreSQL user name specified in startup packet`.)
 */
export function postgresUrl(target: string): URL {
  const url = new URL(target);
  if (!url.username && !process.env.PGUSER && !process.env.USER) {
    try {
      url.username = encodeURIComponent(userInfo().username);
    } catch {
      // No entry for this user (a bare container): the server's message says what is missing.
    }
  }
  return url;
}

async function useSchema(driver: SqlDriver, schema: string, setPath: boolean): Promise<void> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`schema "${schema}" must be a lowercase SQL identifier`);
  try {
    await driver.exec(`create schema if not exists "${schema}"`);
  } catch (error) {
    // Two instances starting at once can race on "if not exists": the loser sees a duplicate.
    const code = (error as { code?: string }).code;
    if (code !== "23505" && code !== "42P06") throw error;
  }
  if (setPath) await driver.exec(`set search_path to "${schema}", public`);
}
