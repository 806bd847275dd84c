/**
 * One small interface over the two ways the SQL store reaches PostgreSQL, so that both run the
 * same SQL: PGlite (real PostgreSQL compiled to WebAssembly, in the process, no server) and a
 * PostgreSQL server through `pg`. Each driver package is imported only when a store of its kind
 * is opened, so a service on the memory store never loads either.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { lockFolder, type FolderLock } from "./folder-lock.ts";

export type Row = Record<string, unknown>;

export interface SqlQueryable {
  /** One statement with `$1`-style parameters; the rows it returns. */
  query(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Statements without parameters, separated by `;` (a migration file). */
  exec(text: string): Promise<void>;
}

export interface SqlDriver extends SqlQueryable {
  readonly kind: "pglite" | "postgres";
  /** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface SqlStoreOptions {
  /** PostgreSQL schema that holds the tables (created when missing); default: the server's search_path. */
  schema?: string;
  /** Most connections a `postgres://` store opens at once. Default 10. */
  poolSize?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens `pglite:<dir>` (a folder, created when missing, relative to the working directory),
 * `pglite:memory://` (in memory), or `postgres://…` / `postgresql://…` (a server; a `schema`
 * query parameter names the schema to use).
 */
export async function openDriver(target: string, options: SqlStoreOptions = {}): Promise<SqlDriver> {
  if (target.startsWith("pglite:")) {
    const where = target.slice("pglite:".length);
    if (!where) throw new Error("--store pglite:<dir> needs a folder, such as pglite:.canon-data");
    const driver = await openPglite(where);
    if (options.schema) await useSchema(driver, options.schema, true);
    return driver;
  }
  if (/^postgres(ql)?:\/\//.test(target)) {
    const url = new URL(target);
    const schema = options.schema ?? url.searchParams.get("schema") ?? undefined;
    url.searchParams.delete("schema");
    if (schema !== undefined && !SCHEMA_NAME.test(schema))
      throw new Error(`schema "${schema}" must be a lowercase SQL identifier`);
    const driver = await openPostgres(url.toString(), schema, options.poolSize ?? 10);
    if (schema) await useSchema(driver, schema, false);
    return driver;
  }
  throw new Error(`unknown store "${target}": use memory, pglite:<dir> or postgres://…`);
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

/* ---------- PGlite ---------- */

interface PgliteResults {
  rows: Row[];
}
interface PgliteTx {
  query(text: string, params?: unknown[]): Promise<PgliteResults>;
  exec(text: string): Promise<unknown>;
}
interface PgliteDb extends PgliteTx {
  waitReady: Promise<void>;
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
type PgliteConstructor = new (dataDir: string, options: { extensions: Record<string, unknown> }) => PgliteDb;

async function openPglite(where: string): Promise<SqlDriver> {
  // Non-literal specifiers: the driver packages are loaded (and type-checked) only when used.
  const pgliteModule: string = "@electric-sql/pglite";
  const trigramModule: string = "@electric-sql/pglite/contrib/pg_trgm";
  const { PGlite } = (await import(pgliteModule)) as { PGlite: PgliteConstructor };
  const { pg_trgm } = (await import(trigramModule)) as { pg_trgm: unknown };
  let dataDir = where;
  let lock: FolderLock | null = null;
  if (!/^[a-z]+:\/\//.test(where)) {
    dataDir = path.resolve(where);
    mkdirSync(dataDir, { recursive: true });
    // One process per folder: a second one stops here, having written nothing.
    lock = lockFolder(dataDir);
  }
  let db: PgliteDb;
  try {
    db = new PGlite(dataDir, { extensions: { pg_trgm } });
    await db.waitReady;
  } catch (error) {
    lock?.release();
    throw error;
  }
  const wrap = (q: PgliteTx): SqlQueryable => ({
    async query(text, params = []) {
      return (await q.query(text, [...params])).rows;
    },
    async exec(text) {
      await q.exec(text);
    },
  });
  return {
    kind: "pglite",
    ...wrap(db),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    close: async () => {
      try {
        await db.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/* ---------- pg ---------- */

interface PgResult {
  rows: Row[];
}
interface PgClient {
  query(text: string, params?: unknown[]): Promise<PgResult>;
  release(error?: Error | boolean): void;
}
interface PgPool {
  query(text: string, params?: unknown[]): Promise<PgResult>;
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): void;
}
type PgPoolConstructor = new (config: { connectionString: string; max: number; options?: string }) => PgPool;

async function openPostgres(
  connectionString: string,
  schema: string | undefined,
  max: number,
): Promise<SqlDriver> {
  const pgModule: string = "pg";
  const pg = (await import(pgModule)) as { default: { Pool: PgPoolConstructor } };
  const pool = new pg.default.Pool({
    connectionString,
    max,
    ...(schema ? { options: `-c search_path=${schema},public` } : {}),
  });
  // A connection that breaks while idle is dropped by the pool; the next query opens another.
  pool.on("error", () => {});
  // Fail now, with the server's message, rather than on the first request.
  await pool.query("select 1");
  return {
    kind: "postgres",
    async query(text, params = []) {
      return (await pool.query(text, [...params])).rows;
    },
    async exec(text) {
      await pool.query(text);
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const result = await fn({
          async query(text, params = []) {
            return (await client.query(text, [...params])).rows;
          },
          async exec(text) {
            await client.query(text);
          },
        });
        await client.query("commit");
        client.release();
        return result;
      } catch (error) {
        try {
          await client.query("rollback");
          client.release();
        } catch {
          client.release(true);
        }
        throw error;
      }
    },
    close: () => pool.end(),
  };
}
