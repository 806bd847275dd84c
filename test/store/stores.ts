// The stores every store-level and HTTP test can run against: memory, PGlite (in memory) and a
// PostgreSQL server (a fresh schema per store, dropped on cleanup). `makeStores()` is what the
// HTTP suite is parameterised with: `for (const s of makeStores()) { … buildApp({ store: await s.create() }) … }`.
import type { SqlDriver } from "../../generated/runtime/sql-driver.ts";
import { pgBossSchema } from "../../generated/runtime/exports-service.ts";
import { openDriver, SqlStore } from "../../generated/runtime/sql-store.ts";
import type { Store } from "../../generated/runtime/store.ts";
import { storeReferences } from "../../generated/services.ts";
import { openStore, sqlSchema } from "../../generated/sql/index.ts";

/** The PostgreSQL server of the tests; `scripts/services.sh` starts it. */
export const POSTGRES_URL = process.env.CANON_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";

export interface StoreFactory {
  name: "memory" | "pglite" | "postgres";
  /** A new, empty store with the current migrations applied. */
  create(): Promise<Store>;
  /** Closes every store this factory created and drops what they kept. */
  cleanup(): Promise<void>;
}

/**
 * A SQL store's tables through a driver that records the text of each statement it sends in
 * `sent` (what a test of the statements reads); any other store as it is. Closing it leaves the
 * store's own driver open (the factory closes that one).
 */
export function recordingStore(store: Store, sent: string[]): Store {
  if (!(store instanceof SqlStore)) return store;
  const driver = store.driver;
  const recording: SqlDriver = {
    ...driver,
    kind: driver.kind,
    query: (statement, params) => {
      sent.push(typeof statement === "string" ? statement : statement.text);
      return driver.query(statement, params);
    },
    close: async () => {},
  };
  return new SqlStore(recording, sqlSchema, storeReferences);
}

let schemas = 0;
/** A schema name no other test process uses. */
export function freshSchema(prefix = "canon_test"): string {
  schemas += 1;
  return `${prefix}_${process.pid}_${schemas}_${Date.now().toString(36)}`;
}

/** Drops schemas of the test database with the given names. */
export async function dropSchemas(names: string[]): Promise<void> {
  if (!names.length) return;
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    for (const name of names) {
      await client.query(`drop schema if exists "${name}" cascade`);
      // Export jobs of an app on this schema went through pg-boss, in a schema beside it.
      await client.query(`drop schema if exists "${pgBossSchema(name)}" cascade`);
    }
  } finally {
    await client.end();
  }
}

/** pg_trgm lives in `public` for every test schema (a schema-local copy would go with its schema). */
export async function preparePostgres(): Promise<void> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query("select pg_advisory_lock(4242)");
    await client.query("create extension if not exists pg_trgm schema public");
    await client.query("select pg_advisory_unlock(4242)");
  } finally {
    await client.end();
  }
}

export function makeStores(): StoreFactory[] {
  return [memoryStores(), pgliteStores(), postgresStores()];
}

export function memoryStores(): StoreFactory {
  return { name: "memory", create: () => openStore("memory"), cleanup: async () => {} };
}

export function pgliteStores(): StoreFactory {
  const opened: Store[] = [];
  return {
    name: "pglite",
    async create() {
      const store = await openStore("pglite:memory://");
      opened.push(store);
      return store;
    },
    async cleanup() {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    },
  };
}

export function postgresStores(): StoreFactory {
  const opened: Store[] = [];
  const names: string[] = [];
  let prepared: Promise<void> | undefined;
  return {
    name: "postgres",
    async create() {
      prepared ??= preparePostgres();
      await prepared;
      const schema = freshSchema();
      names.push(schema);
      const store = await openStore(POSTGRES_URL, { schema });
      opened.push(store);
      return store;
    },
    async cleanup() {
      await Promise.all(opened.splice(0).map((s) => s.close()));
      await dropSchemas(names.splice(0));
    },
  };
}

/** The factory `CANON_TEST_STORE` names (memory, pglite or postgres); memory when unset. */
export function storeFromEnvironment(name = process.env.CANON_TEST_STORE ?? "memory"): StoreFactory {
  const factory = makeStores().find((f) => f.name === name);
  if (!factory) throw new Error(`CANON_TEST_STORE=${name}: use memory, pglite or postgres`);
  return factory;
}

/**
 * Where a generated output's `openStore(url, options)` opens a store, by store name: memory,
 * PGlite in memory, and a fresh schema of the PostgreSQL server (each schema made is pushed to
 * `schemas`, for `dropSchemas` after the tests).
 */
export function storeTargets(
  schemas: string[],
): Array<{ name: string; target(): Promise<{ url: string; options: Record<string, unknown> }> }> {
  return [
    { name: "memory", target: async () => ({ url: "memory", options: {} }) },
    { name: "pglite", target: async () => ({ url: "pglite:memory://", options: {} }) },
    {
      name: "postgres",
      async target() {
        await preparePostgres();
        const schema = freshSchema();
        schemas.push(schema);
        return { url: POSTGRES_URL, options: { schema } };
      },
    },
  ];
}

/**
 * A driver on an empty database of a SQL store: PGlite in memory, or a fresh schema of the
 * PostgreSQL server (pushed to `schemas`, for `dropSchemas` after the tests). No migration applied.
 */
export async function emptyDriver(target: "pglite" | "postgres", schemas: string[]): Promise<SqlDriver> {
  if (target === "pglite") return openDriver("pglite:memory://");
  await preparePostgres();
  const schema = freshSchema();
  schemas.push(schema);
  return openDriver(POSTGRES_URL, { schema });
}
