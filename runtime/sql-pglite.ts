/**
 * The PGlite driver: PostgreSQL compiled to WebAssembly, in the process, one connection.
 *
 * PGlite's own `query` parses and plans its text on every call, in five trips into the engine.
 * A named `Statement` is instead parsed once (per database: PGlite is one connection) and then
 * run as one message batch — bind, describe, execute, sync — through `execProtocol`, under the
 * same locks `query` takes, so it never runs inside another caller's transaction.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { lockFolder, type FolderLock } from "./folder-lock.ts";
import type { Row, SqlDriver, SqlQueryable, Statement } from "./sql-types.ts";

interface PgliteResults {
  rows: Row[];
}
interface PgliteTx {
  query(text: string, params?: unknown[]): Promise<PgliteResults>;
  exec(text: string): Promise<unknown>;
}
interface PgliteDb extends PgliteTx {
  waitReady: Promise<void>;
  parsers: Record<number | string, unknown>;
  transaction<T>(fn: (tx: PgliteTx) => Promise<T>): Promise<T>;
  execProtocol(message: Uint8Array, options?: { syncToFs?: boolean }): Promise<{ messages: unknown[] }>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
interface PgliteModule {
  PGlite: new (dataDir: string, options: { extensions: Record<string, unknown> }) => PgliteDb;
  protocol: {
    serialize: {
      parse(query: { name: string; text: string; types: number[] }): Uint8Array;
      bind(config: { statement: string; values: Array<string | null> }): Uint8Array;
      describe(msg: { type: "P" | "S"; name?: string }): Uint8Array;
      execute(config: object): Uint8Array;
      sync(): Uint8Array;
      query(text: string): Uint8Array;
    };
  };
  parse: {
    parseResults(messages: unknown[], parsers: Record<number | string, unknown>): PgliteResults[];
  };
}

/** A parameter as PostgreSQL's text input reads it. */
function toText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export async function openPglite(where: string): Promise<SqlDriver> {
  // Non-literal specifiers: the driver packages are loaded (and type-checked) only when used.
  const pgliteModule: string = "@electric-sql/pglite";
  const trigramModule: string = "@electric-sql/pglite/contrib/pg_trgm";
  const { PGlite, protocol, parse } = (await import(pgliteModule)) as PgliteModule;
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
  const { serialize } = protocol;
  const prepared = new Set<string>();

  /** Runs a named statement; the caller holds PGlite's query lock. */
  async function run(statement: Statement, params: readonly unknown[], syncToFs: boolean): Promise<Row[]> {
    if (!prepared.has(statement.name)) {
      await db.execProtocol(
        concat([
          serialize.parse({ name: statement.name, text: statement.text, types: [] }),
          serialize.sync(),
        ]),
        { syncToFs: false },
      );
      prepared.add(statement.name);
    }
    const batch = concat([
      serialize.bind({ statement: statement.name, values: params.map(toText) }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
      serialize.sync(),
    ]);
    const { messages } = await db.execProtocol(batch, { syncToFs });
    return parse.parseResults(messages, db.parsers)[0]?.rows ?? [];
  }

  const wrap = (q: PgliteTx, inTransaction: boolean): SqlQueryable => ({
    async query(statement, params = []) {
      if (typeof statement === "string") return (await q.query(statement, [...params])).rows;
      // In a transaction its lock is held already; outside, take it as `query` does.
      if (inTransaction) return db._runExclusiveQuery(() => run(statement, params, false));
      return db._runExclusiveTransaction(() => db._runExclusiveQuery(() => run(statement, params, true)));
    },
    async exec(text) {
      await q.exec(text);
    },
  });
  return {
    kind: "pglite",
    ...wrap(db, false),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx, true))),
    // Under both locks, as a statement outside a transaction runs: none runs half forgotten.
    forgetStatements: () =>
      db._runExclusiveTransaction(() =>
        db._runExclusiveQuery(async () => {
          prepared.clear();
          await db.execProtocol(serialize.query("deallocate all"), { syncToFs: false });
        }),
      ),
    close: async () => {
      try {
        await db.close();
      } finally {
        lock?.release();
      }
    },
  };
}
