// What a database's schema is, for comparing a database migrated step by step with one migrated
// fresh from the same files: its tables' columns, constraints and indexes.
import assert from "node:assert/strict";
import { migrate, openDriver, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";

/** The tables, columns, constraints and indexes of a database's current schema (canon_migrations aside), sorted. */
export async function catalog(db: SqlDriver): Promise<string[]> {
  const columns = await db.query(`
    select c.relname as t, a.attname as c, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as nn,
           pg_get_expr(d.adbin, d.adrelid) as def, a.attidentity as ident
    from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where n.nspname = current_schema() and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped and c.relname <> 'canon_migrations'`);
  // Not-null constraints (contype 'n', PostgreSQL 18) are the columns' `not null` above.
  const constraints = await db.query(`
    select conrelid::regclass::text as t, conname as n, pg_get_constraintdef(co.oid) as def
    from pg_constraint co join pg_namespace n on n.oid = co.connamespace
    where co.contype <> 'n' and n.nspname = current_schema() and conrelid::regclass::text <> 'canon_migrations'`);
  const indexes = await db.query(`select indexname as n, indexdef as def from pg_indexes where schemaname = current_schema() and tablename <> 'canon_migrations'`);
  return [
    ...columns.map((r) => `column ${r.t}.${r.c} ${r.type}${r.nn ? " not null" : ""}${r.def ? ` default ${r.def}` : ""}${r.ident ? " identity" : ""}`),
    ...constraints.map((r) => `constraint ${r.t} ${r.n} ${r.def}`),
    ...indexes.map((r) => `index ${r.n} ${r.def}`),
  ].sort();
}

/** Asserts that `db` has the schema a fresh PGlite database migrated with the files in `sql` has. */
export async function assertSameAsFresh(db: SqlDriver, sql: string): Promise<void> {
  const fresh = await openDriver("pglite:memory://");
  try {
    await migrate(fresh, readMigrations(sql));
    assert.deepEqual(await catalog(db), await catalog(fresh));
  } finally {
    await fresh.close();
  }
}
