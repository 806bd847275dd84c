/**
 * The generated migrations (`sql/NNNN_<name>.sql`): reading them from their folder, and applying
 * the pending ones in order, once, recorded in `canon_migrations`.
 *
 * A released migration never changes once applied. The pending migration (`NNNN_pending.sql`,
 * which `canon generate` writes again on every change until `canon release` freezes it) may: a
 * database that applied an earlier text of it is brought to the new text (`bringUpToDate`).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SqlDriver, SqlQueryable } from "./sql-driver.ts";
import { arrayIdsSql, LINK_ITEM_UUID } from "./sql-schema.ts";

export interface MigrationFile {
  /** `0002_add_orders_priority`. */
  name: string;
  sql: string;
  checksum: string;
}

/** The name of a migration file in an output's `sql/` folder: `NNNN_<name>.sql`. */
export const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;
/** The pending migration's name: `0011_pending`. */
const PENDING = /^(\d{4})_pending$/;

/** The migrations of a folder, in order. */
export function readMigrations(folder: URL | string): MigrationFile[] {
  const dir = typeof folder === "string" ? folder : fileURLToPath(folder);
  return readdirSync(dir)
    .filter((n) => MIGRATION_FILE.test(n))
    .sort()
    .map((file) => {
      // Read as canon wrote it: a checkout with CRLF line endings (git's autocrlf) is the same migration.
      const sql = readFileSync(`${dir}/${file}`, "utf8").replace(/\r\n/g, "\n");
      return { name: file.slice(0, -4), sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * The one command that starts a dev store afresh, for the store `target` names (for the message
 * when a pending migration cannot be brought up to date).
 */
export function resetCommand(target?: string): string {
  if (target === undefined) return "rm -rf .canon-data for the default store, or recreate the database";
  if (/^pglite:memory:\/\//.test(target)) return "restart the process: the store is in memory";
  if (target.startsWith("pglite:")) return `rm -rf ${target.slice("pglite:".length)}`;
  return "recreate the database (or its schema) of --store";
}

export interface MigrateOptions {
  /** The store's target (`pglite:.canon-data`), for the reset command a refusal names. */
  target?: string;
}

/**
 * Applies the migrations not yet applied, in order, in one transaction, and records each in
 * `canon_migrations`; returns their names. An advisory lock keeps two instances starting at
 * once from both applying. A recorded released migration whose file changed is refused:
 * released migrations never change once applied. A recorded pending migration whose text
 * changed, was released under its name or was taken back is brought up to date
 * (`bringUpToDate`), or refused in one line naming the command that resets the store.
 */
export async function migrate(
  db: SqlDriver,
  folder: URL | string | MigrationFile[],
  options: MigrateOptions = {},
): Promise<string[]> {
  const files = Array.isArray(folder) ? folder : readMigrations(folder);
  // Whether the schema changed: statements prepared before may then read columns of another type.
  let changed = false;
  const done = await db.transaction(async (tx) => {
    await tx.query(
      "select pg_advisory_xact_lock(hashtext(coalesce(current_schema(), '') || '.canon_migrations'))",
    );
    await tx.exec(
      "create table if not exists canon_migrations (name text primary key, checksum text not null, applied_at timestamptz not null default now())",
    );
    // The text a pending migration was applied with: what bringing it up to date compares with.
    await tx.exec("alter table canon_migrations add column if not exists sql text");
    const rows = await tx.query("select name, checksum, sql from canon_migrations");
    const applied = new Map(rows.map((r) => [String(r.name), String(r.checksum)]));
    const appliedText = new Map(rows.map((r) => [String(r.name), r.sql == null ? null : String(r.sql)]));
    const pendingApplied = new Map<string, string>();
    for (const name of applied.keys()) {
      const m = PENDING.exec(name);
      if (m) pendingApplied.set(m[1]!, name);
    }
    const record = (file: MigrationFile) =>
      tx.query("insert into canon_migrations (name, checksum, sql) values ($1, $2, $3)", [
        file.name,
        file.checksum,
        PENDING.test(file.name) ? file.sql : null,
      ]);
    // Only for the files this run applies: a database with every one applied found its extensions.
    await placeExtensions(
      tx,
      files.filter((file) => applied.get(file.name) !== file.checksum),
    );
    const done: string[] = [];
    for (const file of files) {
      const number = file.name.slice(0, 4);
      const checksum = applied.get(file.name);
      if (checksum !== undefined) {
        if (checksum === file.checksum) continue;
        if (!PENDING.test(file.name)) {
          throw new Error(
            `migration ${file.name} was applied with other content: applied migrations never change (restore sql/${file.name}.sql from version control)`,
          );
        }
        await bringUpToDate(tx, file.name, appliedText.get(file.name) ?? null, file, options);
        await tx.query(
          "update canon_migrations set checksum = $2, sql = $3, applied_at = now() where name = $1",
          [file.name, file.checksum, file.sql],
        );
        done.push(file.name);
        continue;
      }
      const earlier = pendingApplied.get(number);
      if (earlier !== undefined && earlier !== file.name) {
        // The pending migration this database applied, released under its name (or replaced).
        await bringUpToDate(tx, earlier, appliedText.get(earlier) ?? null, file, options);
        await tx.query("delete from canon_migrations where name = $1", [earlier]);
        pendingApplied.delete(number);
        await record(file);
        done.push(file.name);
        continue;
      }
      await applyMigration(tx, file);
      await record(file);
      done.push(file.name);
    }
    // A pending migration taken back (its change undone in the definitions): its statements go.
    for (const [number, name] of pendingApplied) {
      if (files.some((f) => f.name.startsWith(`${number}_`))) continue;
      await bringUpToDate(tx, name, appliedText.get(name) ?? null, null, options);
      await tx.query("delete from canon_migrations where name = $1", [name]);
      changed = true;
    }
    changed ||= done.length > 0;
    return done;
  });
  if (changed) await db.forgetStatements?.();
  return done;
}

/**
 * The extensions the migrations create (`create extension if not exists pg_trgm;`), put where
 * every schema finds them: an extension is one per database, and created from a connection whose
 * search path starts with a service's schema (`?schema=a`) it would land in that schema, where
 * the service of another schema (`?schema=b`) does not see its operator classes (its migration
 * then fails on `gin_trgm_ops`), and dropping schema `a` would drop it. So a missing one is
 * created in `public`, and one in a schema this connection does not search (an earlier canon's
 * placement) is moved there; its objects keep working, as they refer to it by identity. The
 * migrations' own statements then find it created. Without a `public` schema this role may create
 * in, nothing is done.
 */
async function placeExtensions(tx: SqlQueryable, files: MigrationFile[]): Promise<void> {
  const names = new Set<string>();
  for (const file of files) for (const m of file.sql.matchAll(EXTENSION)) names.add(m[1]!);
  if (names.size === 0) return;
  // Only where this role may create in `public` (PostgreSQL 15 and later grant that to its owner
  // alone): elsewhere the migration's own statement creates it, in the role's schema, as before.
  const [publicSchema] = await tx.query(
    "select has_schema_privilege('public', 'CREATE') as writable from pg_namespace where nspname = 'public'",
  );
  if (!publicSchema?.writable) return;
  for (const name of names) {
    const [found] = await tx.query(
      "select n.nspname as schema, n.nspname = any(current_schemas(true)) as visible from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = $1",
      [name],
    );
    if (!found) await tx.exec(`create extension if not exists ${name} with schema public`);
    else if (!found.visible) await tx.exec(`alter extension ${name} set schema public`);
  }
}

/** A migration's statement that creates an extension (generator/emit/sql/diff.ts writes it so). */
const EXTENSION = /^create extension if not exists ([a-z0-9_]+);$/gm;

/**
 * Runs a migration's statements; a failure names the migration and says what the database
 * said of the rows it met (a unique index over rows that repeat its key: `Key (code, n)=(A-1,
 * 2) is duplicated.`), and that nothing of it was applied (the caller's transaction rolls back).
 */
async function applyMigration(tx: SqlQueryable, file: MigrationFile): Promise<void> {
  try {
    await tx.exec(file.sql);
  } catch (error) {
    const { message, detail, code } = error as { message?: string; detail?: string; code?: string };
    const failure = new Error(
      `migration ${file.name} failed, and nothing of it was applied: ${message ?? String(error)}${detail ? ` (${keyColumns(detail).replace(/\.$/, "")})` : ""}${HINTS[code ?? ""] ?? ""}`,
      { cause: error },
    );
    throw Object.assign(failure, code === undefined ? {} : { code });
  }
}

/** What to do about a migration that failed on the rows it met, by PostgreSQL's error code. */
const HINTS: Record<string, string> = {
  // A unique index over rows that repeat its key.
  "23505": ": remove or change the records that repeat it, then start again",
  // `set not null` (a field made required, a tenant field) over rows that lack a value.
  "23502": ": give the records that lack a value one (or give the field a default), then start again",
  // A check (a limit, an enum's values) added over rows that break it.
  "23514": ": change the records that break it, then start again",
};

/**
 * PostgreSQL's detail of a repeated key with canon's unique-key expressions (`uniqueKeySql`)
 * shown as their columns: `Key (NORMALIZE(btrim(name, '<25 white space characters, line breaks
 * among them>'::text), NFC), code)=(Ann, 7)` is `Key (name, code)=(Ann, 7)`, on one line.
 */
function keyColumns(detail: string): string {
  return detail
    .replace(
      /translate\(NORMALIZE\(btrim\(([^,()]+), '[^']*'::text\), NFC\), '[^']*'::text, '[^']*'::text\)/g,
      "$1",
    )
    .replace(/NORMALIZE\(btrim\(([^,()]+), '[^']*'::text\), NFC\)/g, "$1");
}

/** The statements of a migration's text: its blocks between blank lines, comments left out. */
function statements(sql: string): string[] {
  return sql
    .split(/\n[ \t]*\n/)
    .map((block) =>
      block
        .split("\n")
        .filter((line) => !/^\s*--/.test(line))
        .join("\n")
        .trim(),
    )
    .filter((s) => s.length > 0);
}

type Tx = SqlQueryable;

/**
 * Brings a database that applied `oldText` of a pending migration (`name`) to `next` (its new
 * text, its released form, or null when it was taken back), inside migrate's transaction.
 *
 * Canon's statements are idempotent (`if not exists`), so the new text is applied as it is: what
 * it adds is added, what both texts create stays with its rows. What only the earlier text did is
 * undone when no row loses a value by it: an index, statistics or a constraint it created are
 * dropped (its `analyze` changed nothing); a column it added is dropped when no row holds a value
 * in it other than null or the column's default; a table it created is dropped when it has no
 * rows. Anything else (a column or table holding values, a statement that dropped, altered or
 * moved data) cannot be undone safely: one line, naming the command that resets the store, and
 * nothing is changed (the transaction rolls back).
 *
 * The statements both texts hold were applied with the earlier text and are still in effect,
 * unless undoing dropped a column or a table (which takes along the indexes, statistics and
 * constraints on it): only then is the whole new text applied again, else only its statements
 * the earlier text did not hold (in `canon dev`, where the pending migration is the whole
 * schema of a new project, a save's few statements instead of all of them).
 */
async function bringUpToDate(
  tx: Tx,
  name: string,
  oldText: string | null,
  next: MigrationFile | null,
  options: MigrateOptions,
): Promise<void> {
  const target = next ? `sql/${next.name}.sql` : "the definitions (the pending migration was taken back)";
  const refuse = (why: string): never => {
    const separator = why.endsWith("; or") || why.endsWith(";") ? " " : "; ";
    throw new Error(
      `the store applied an earlier text of migration ${name} and cannot be brought to ${target}: ${why}${separator}reset the dev store (${resetCommand(options.target)}) and start again`,
    );
  };
  if (oldText === null) refuse("its earlier text was not recorded");
  const nextStatements = statements(next?.sql ?? "");
  const kept = new Set(nextStatements);
  const oldStatements = statements(oldText!);
  const gone = oldStatements.filter((s) => !kept.has(s)).reverse();
  // A table both texts create with other columns: `create table if not exists` would leave it as
  // it is, so its columns are compared, and those that differ are dropped (when they hold only
  // null or their default) and added as the new text writes them.
  const createdNext = new Map(
    nextStatements.flatMap((s) => {
      const m = CREATE_TABLE.exec(s);
      return m ? [[m[1]!, s] as const] : [];
    }),
  );
  const adds: string[] = [];
  // Whether undoing dropped a column or a table, and with it what other statements created on it.
  let dropped = false;
  // A jsonb array of ids made a relation: its values move to the link table the new text creates
  // (`<table>__<column>`), once that table is there, as a released migration moves them.
  const moves: Array<{ table: string; column: string; link: string; statement: string }> = [];
  // A relation made a plain array again: its link table's ids go back into the column the new
  // text adds, once it is there, and the link table goes.
  const backs: LinkMadePlain[] = [];
  const dropColumn = async (table: string, column: string) => {
    const link = `"${unquote(table).replace(/"/g, '""')}__${unquote(column).replace(/"/g, '""')}"`;
    const linkStatement = createdNext.get(link);
    if (linkStatement !== undefined && !oldStatements.some((s) => CREATE_TABLE.exec(s)?.[1] === link)) {
      moves.push({ table, column, link, statement: linkStatement });
      dropped = true;
      return;
    }
    const [info] = await tx.query(
      "select column_default as d from information_schema.columns where table_schema = current_schema() and table_name = $1 and column_name = $2",
      [unquote(table), unquote(column)],
    );
    if (!info) return;
    const other = info.d == null ? "" : ` and ${column} is distinct from (${String(info.d)})`;
    const held = await tx.query(`select 1 as x from ${table} where ${column} is not null${other} limit 1`);
    if (held.length) refuse(`${table}.${column} holds values the new text does not keep`);
    await tx.exec(`alter table ${table} drop column if exists ${column};`);
    dropped = true;
  };
  // A column whose new definition only widens its decimal type or changes its check (an enum's
  // values, a length, a bound) keeps its values: altered in place; a check its rows break refuses.
  const alterInPlace = async (
    table: string,
    column: string,
    before: string,
    after: string | undefined,
  ): Promise<boolean> => {
    const changes = after === undefined ? null : changedInPlace(before, after);
    if (changes === null) return false;
    for (const change of changes) {
      const statement = `alter table ${table} ${change};`;
      try {
        await tx.exec(statement);
      } catch (error) {
        refuse(`\`${statement}\` failed (${(error as Error).message.split("\n")[0]})`);
      }
    }
    return true;
  };
  const addedColumns = new Map(
    nextStatements.flatMap((s) => {
      const m = ADD_COLUMN.exec(s);
      return m ? [[`${m[1]} ${m[3]}`, m[2]!] as const] : [];
    }),
  );
  for (const statement of gone) {
    const created = CREATE_TABLE.exec(statement);
    const again = created ? createdNext.get(created[1]!) : undefined;
    if (created && again !== undefined) {
      const table = created[1]!;
      const before = tableColumns(statement);
      const after = tableColumns(again);
      if (!before || !after) refuse(`the columns of table ${table} cannot be compared`);
      if (!(await tableExists(tx, table))) continue;
      const altered = new Set<string>();
      for (const [column, definition] of before!) {
        if (after!.get(column) === definition) continue;
        if (await alterInPlace(table, column, definition, after!.get(column))) altered.add(column);
        else await dropColumn(table, column);
      }
      for (const [column, definition] of after!) {
        if (before!.get(column) !== definition && !altered.has(column))
          adds.push(`alter table ${table} add column if not exists ${definition};`);
      }
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^create (?:unique )?index if not exists ("(?:[^"]|"")+")/.exec(statement))) {
      await tx.exec(`drop index if exists ${m[1]};`);
    } else if ((m = /^create statistics if not exists ("(?:[^"]|"")+")/.exec(statement))) {
      await tx.exec(`drop statistics if exists ${m[1]};`);
    } else if (/^analyze "(?:[^"]|"")+";$/.test(statement)) {
      // Gathering statistics changed no row: nothing to undo.
    } else if ((m = /^alter table ("(?:[^"]|"")+") add constraint ("(?:[^"]|"")+")/.exec(statement))) {
      if (await tableExists(tx, m[1]!))
        await tx.exec(`alter table ${m[1]} drop constraint if exists ${m[2]};`);
    } else if ((m = ADD_COLUMN.exec(statement))) {
      if (
        (await tableExists(tx, m[1]!)) &&
        !(await alterInPlace(m[1]!, m[3]!, m[2]!, addedColumns.get(`${m[1]} ${m[3]}`)))
      )
        await dropColumn(m[1]!, m[3]!);
    } else if ((m = CREATE_TABLE.exec(statement))) {
      if (!(await tableExists(tx, m[1]!))) continue;
      const back = linkMadePlain(m[1]!, statement, createdNext);
      if (back) {
        backs.push(back);
        continue;
      }
      if ((await tx.query(`select 1 as x from ${m[1]} limit 1`)).length)
        refuse(`table ${m[1]} holds rows the new text does not keep`);
      await tx.exec(`drop table if exists ${m[1]};`);
      dropped = true;
    } else if (GUARD_BLOCK.test(statement)) {
      // A refusal of values a column's new type would not keep (its alter is undone, or refused, apart).
    } else if (/^create extension if not exists /.test(statement)) {
      // An extension stays: it holds no rows and the schema does not depend on its absence.
    } else {
      refuse(`its statement \`${statement.split("\n")[0]}\` cannot be undone`);
    }
  }
  const before = new Set(oldStatements);
  const added = nextStatements.filter((s) => !before.has(s));
  // The tables only the new text creates come first: a column added to a table both texts create
  // may reference one of them (a new resource, and a reference to it on an existing one).
  const tables = added.filter((s) => CREATE_TABLE.test(s));
  if (tables.length) await tx.exec(tables.join("\n\n"));
  for (const move of moves) await moveToLinkTable(tx, move, name, target);
  for (const add of adds) {
    try {
      await tx.exec(add);
    } catch (error) {
      // A required column (a tenant field) its rows have no value for: what to change comes
      // first, the reset, which loses every row, last.
      const lacking =
        (error as { code?: string }).code === "23502"
          ? ": give those records a value first (add the field optional, or with a default; a tenant field without tenant: true, give every record its tenant, then add tenant: true) or delete them, then save again; or"
          : ";";
      refuse(`\`${add}\` failed (${(error as Error).message.split("\n")[0]})${lacking}`);
    }
  }
  for (const { link, table, column, owner, position, linked, referenced } of backs) {
    await tx.exec(
      `update ${table} "o" set ${column} = (select jsonb_agg("t"."id" order by "l".${position}) from ${link} "l" join ${referenced} "t" on "t"."row_id" = "l".${linked} where "l".${owner} = "o"."row_id") where exists (select 1 from ${link} "l" where "l".${owner} = "o"."row_id");`,
    );
    await tx.exec(`drop table if exists ${link};`);
    dropped = true;
  }
  if (!next) return;
  // Its statements fail as a migration's do: naming it, with what the database said of the rows.
  if (dropped) {
    await applyMigration(tx, next);
    return;
  }
  const rest = added.filter((s) => !CREATE_TABLE.test(s));
  if (rest.length) await applyMigration(tx, { ...next, sql: rest.join("\n\n") });
}

/**
 * A link table canon writes, as its `create table` statement says: its three columns (the owner's
 * row, the position, the named record's row) and the tables the first and the last reference;
 * undefined for any other table.
 */
function linkTableOf(
  statement: string,
): { owner: string; position: string; linked: string; ownerTable: string; referenced: string } | undefined {
  const columns = [...(tableColumns(statement)?.entries() ?? [])];
  if (columns.length !== 3) return undefined;
  const ownerTable = /references ("(?:[^"]|"")+") \("row_id"\) on delete cascade/.exec(columns[0]![1])?.[1];
  const referenced = /references ("(?:[^"]|"")+") \("row_id"\)/.exec(columns[2]![1])?.[1];
  if (ownerTable === undefined || referenced === undefined) return undefined;
  const [owner, position, linked] = columns.map(([c]) => c) as [string, string, string];
  return { owner, position, linked, ownerTable, referenced };
}

/** A link table whose relation the new text makes a plain array again, and the column its ids go back to. */
interface LinkMadePlain {
  link: string;
  table: string;
  column: string;
  owner: string;
  position: string;
  linked: string;
  referenced: string;
}

/**
 * A link table (`"tickets__tag_ids"`, created by `statement` of the earlier text) whose relation
 * the new text makes a plain array again: the owner's table, created by the new text with the
 * column (`"tag_ids"`), and the link table's columns; undefined for any other table.
 */
function linkMadePlain(
  link: string,
  statement: string,
  createdNext: ReadonlyMap<string, string>,
): LinkMadePlain | undefined {
  const found = linkTableOf(statement);
  if (!found) return undefined;
  const { ownerTable: table, owner, position, linked, referenced } = found;
  const prefix = `${table.slice(0, -1)}__`;
  if (!link.startsWith(prefix)) return undefined;
  const column = `"${link.slice(prefix.length)}`;
  const again = createdNext.get(table);
  if (again === undefined || !tableColumns(again)?.get(column)?.includes(" jsonb")) return undefined;
  return { link, table, column, owner, position, linked, referenced };
}

/**
 * A pending migration's jsonb array of ids (`tickets.tag_ids`) that its new text makes a relation
 * (the link table `tickets__tag_ids`, created just before): the ids are copied into the link
 * table in order (a repeated id once), then the column is dropped, as a released migration's
 * `link_` block does. An id that names no record refuses it, naming the record and the id and
 * what to change: resetting the store is not the fix, the record is (nothing is changed: the
 * transaction rolls back).
 */
async function moveToLinkTable(
  tx: Tx,
  move: { table: string; column: string; link: string; statement: string },
  name: string,
  target: string,
): Promise<void> {
  const { table, column, link } = move;
  const found = linkTableOf(move.statement);
  if (!found)
    throw new Error(
      `the store applied an earlier text of migration ${name} and cannot be brought to ${target}: the link table ${link} is not one canon writes`,
    );
  const { owner, position, linked, referenced } = found;
  const ids = arrayIdsSql(column);
  const uuid = LINK_ITEM_UUID;
  const [dangling] = await tx.query(
    `select "o"."id"::text as "record", "i"."id" as "value" from ${table} "o" cross join lateral jsonb_array_elements_text(${ids}) with ordinality as "i" ("id", "n") where not exists (select 1 from ${referenced} "t" where "t"."id" = ${uuid}) order by "o"."row_id", "i"."n" limit 1`,
  );
  if (dangling) {
    const field = `${unquote(table)}.${unquote(column)}`;
    throw new Error(
      `the store applied an earlier text of migration ${name} and cannot be brought to ${target}: ${field} becomes a relation to ${unquote(referenced)}, and record ${String(dangling.record)} names ${String(dangling.value ?? "null")}, which is no record of ${unquote(referenced)}: remove that id from the records that hold it (or create the record it names), then save or start again`,
    );
  }
  await tx.exec(
    `insert into ${link} (${owner}, ${position}, ${linked}) select distinct on ("o"."row_id", "t"."row_id") "o"."row_id", "i"."n", "t"."row_id" from ${table} "o" cross join lateral jsonb_array_elements_text(${ids}) with ordinality as "i" ("id", "n") join ${referenced} "t" on "t"."id" = ${uuid} order by "o"."row_id", "t"."row_id", "i"."n";`,
  );
  await tx.exec(`alter table ${table} drop column if exists ${column};`);
}

/**
 * A refusal of values a column's new type would not keep exactly (the generator's `exactnessGuard`):
 * it changes nothing. The generator's replay of released migrations reads it too (emit/sql/replay.ts).
 */
export const GUARD_BLOCK =
  /^do \$\$ declare "canon__r" record; begin\n  select [^\n]* limit 1;\n  if found then\n    raise exception [^\n]*;\n  end if;\nend \$\$;$/;

const CREATE_TABLE = /^create table if not exists ("(?:[^"]|"")+") \(\n/;

/** The column definitions of a `create table` canon wrote, by quoted name; null when a line is not a column. */
function tableColumns(statement: string): Map<string, string> | null {
  const body = statement.slice(statement.indexOf("(\n") + 2, statement.lastIndexOf("\n)"));
  const columns = new Map<string, string>();
  for (const line of body.split(",\n")) {
    const m = /^\s*("(?:[^"]|"")+") /.exec(line);
    if (!m) return null;
    columns.set(m[1]!, line.trim());
  }
  return columns;
}

/** `alter table "t" add column if not exists "c" <definition>;`: the table, the column, and its definition (`"c" numeric(5, 2) not null`). */
const ADD_COLUMN = /^alter table ("(?:[^"]|"")+") add column if not exists (("(?:[^"]|"")+") [^;]*);$/;

/** A column's definition: its name, its type, the rest without its check, and its check (name and expression). */
const COLUMN =
  /^("(?:[^"]|"")+") (numeric\(\d+, \d+\)|double precision|[a-z]+)(.*?)(?: constraint ("(?:[^"]|"")+") check \((.*)\))?$/s;

/** The rest of a column's definition that `changedInPlace` alters: whether it is `not null`, and its default. */
const NULLS_AND_DEFAULT = /^( not null)?(?: default (.+))?$/s;

/**
 * What brings a column from definition `before` to `after` in place (each an `alter table`'s
 * clause), when they differ only in a wider decimal type (`numeric(5, 2)` → `numeric(6, 2)` or
 * `numeric(6, 3)`: no fewer digits before the point or after it, so every value fits) and in their
 * check (an enum's values, a length, a bound: the new one is added, and refuses rows it does not
 * hold); null for any other change (a column dropped and added again).
 */
export function changedInPlace(before: string, after: string): string[] | null {
  const a = COLUMN.exec(before);
  const b = COLUMN.exec(after);
  if (!a || !b || a[1] !== b[1]) return null;
  const column = a[1]!;
  const changes: string[] = [];
  // Made required or optional, a default given or taken: as a released migration does it, a row
  // without a value takes the new default (`using coalesce`), then the column is made `not null`.
  const [x, y] = [NULLS_AND_DEFAULT.exec(a[3]!), NULLS_AND_DEFAULT.exec(b[3]!)];
  if (a[3] !== b[3]) {
    if (!x || !y) return null;
    if (!x[1] && y[1] && y[2] !== undefined)
      changes.push(`alter column ${column} type ${b[2]} using coalesce(${column}, ${y[2]})`);
  }
  if (a[2] !== b[2]) {
    const [x, y] = [/^numeric\((\d+), (\d+)\)$/.exec(a[2]!), /^numeric\((\d+), (\d+)\)$/.exec(b[2]!)];
    if (!x || !y) return null;
    const [p1, s1, p2, s2] = [Number(x[1]), Number(x[2]), Number(y[1]), Number(y[2])];
    if (p2 - s2 < p1 - s1 || s2 < s1) return null;
    changes.push(`alter column ${column} type ${b[2]}`);
  }
  if (a[4] !== b[4] || a[5] !== b[5]) {
    if (a[4] !== undefined) changes.push(`drop constraint if exists ${a[4]}`);
    if (b[4] !== undefined) changes.push(`add constraint ${b[4]} check (${b[5]})`);
  }
  if (a[3] !== b[3]) {
    if (x![2] !== y![2])
      changes.push(
        y![2] === undefined
          ? `alter column ${column} drop default`
          : `alter column ${column} set default ${y![2]}`,
      );
    if (x![1] !== y![1]) changes.push(`alter column ${column} ${y![1] ? "set" : "drop"} not null`);
  }
  return changes;
}

function unquote(name: string): string {
  return name.slice(1, -1).replace(/""/g, '"');
}

async function tableExists(tx: Tx, quoted: string): Promise<boolean> {
  const [row] = await tx.query("select to_regclass($1) is not null as e", [quoted]);
  return row?.e === true;
}
