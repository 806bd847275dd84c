/**
 * The generated migrations (`sql/NNNN_<name>.sql`): reading them from their folder, and applying
 * the pending ones in order, once, recorded in `canon_migrations`.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SqlDriver } from "./sql-driver.ts";

export interface MigrationFile {
  /** `0002_add_orders_priority`. */
  name: string;
  sql: string;
  checksum: string;
}

const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;

/** The migrations of a folder, in order. */
export function readMigrations(folder: URL | string): MigrationFile[] {
  const dir = typeof folder === "string" ? folder : fileURLToPath(folder);
  return readdirSync(dir)
    .filter((n) => MIGRATION_FILE.test(n))
    .sort()
    .map((file) => {
      const sql = readFileSync(`${dir}/${file}`, "utf8");
      return { name: file.slice(0, -4), sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Applies the migrations not yet applied, in order, in one transaction, and records each in
 * `canon_migrations`; returns their names. An advisory lock keeps two instances starting at
 * once from both applying. A recorded migration whose file changed is refused: migrations
 * never change once applied.
 */
export async function migrate(db: SqlDriver, folder: URL | string | MigrationFile[]): Promise<string[]> {
  const files = Array.isArray(folder) ? folder : readMigrations(folder);
  return db.transaction(async (tx) => {
    await tx.query(
      "select pg_advisory_xact_lock(hashtext(coalesce(current_schema(), '') || '.canon_migrations'))",
    );
    await tx.exec(
      "create table if not exists canon_migrations (name text primary key, checksum text not null, applied_at timestamptz not null default now())",
    );
    const rows = await tx.query("select name, checksum from canon_migrations");
    const applied = new Map(rows.map((r) => [String(r.name), String(r.checksum)]));
    const done: string[] = [];
    for (const file of files) {
      const checksum = applied.get(file.name);
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          throw new Error(
            `migration ${file.name} was applied with other content: applied migrations never change (restore sql/${file.name}.sql from version control)`,
          );
        }
        continue;
      }
      await tx.exec(file.sql);
      await tx.query("insert into canon_migrations (name, checksum) values ($1, $2)", [
        file.name,
        file.checksum,
      ]);
      done.push(file.name);
    }
    return done;
  });
}
