/**
 * A schema model of the migrations: their statements replayed, in order, from an empty database,
 * without a database. canon's migrations hold only the statements diff.ts writes (and the ones
 * older canon releases wrote, such as `on delete restrict`), so each is read back into its effect
 * on tables, columns, constraints, indexes, statistics and extensions, with PostgreSQL's rules for
 * `if not exists` and `if exists`. A statement that would fail on PostgreSQL (a table no migration
 * before creates, a constraint added twice) fails the replay at that migration.
 *
 * `snapshotFrom` turns the replayed model back into a snapshot (taking the snapshot's own entries
 * where they have exactly the same effect), so that the schema the migrations really create can be
 * compared with `schema.json` — `migrationBetween(replayed, snapshot) === null` — and be the base
 * of the next migration when it is not.
 */
import type { OnDelete } from "../../../runtime/references.ts";
import { GUARD_BLOCK } from "../../../runtime/sql-migrations.ts";
import { memoByText } from "../../engine.ts";
import type { SchemaSnapshot, SnapshotColumn, SnapshotIndex, SnapshotStatistics, SnapshotTable } from "./snapshot.ts";

interface ModelColumn {
  name: string;
  type: string;
  identity?: boolean;
  notNull: boolean;
  default?: string;
  unique?: string;
  check?: { name: string; expression: string };
  /**
   * Added to a table that existed (`add column`): a required column without a default is added
   * nullable, since rows exist that have no value for it (diff.ts); the snapshot still says not null.
   */
  addedLater?: boolean;
  /** `column`: the referenced column when it is not `id` (a link table's `row_id`). */
  references?: { name: string; table: string; onDelete: OnDelete; column?: string };
}

interface ModelIndex {
  name: string;
  table: string;
  unique: boolean;
  definition: string;
}

interface ModelStatistics {
  name: string;
  table: string;
  columns: string[];
}

export interface SchemaModel {
  extensions: string[];
  /** Tables by name, in the order they were created. */
  tables: Map<string, { name: string; columns: ModelColumn[] }>;
  /** Indexes by name. */
  indexes: Map<string, ModelIndex>;
  /** Extended statistics by name. */
  statistics: Map<string, ModelStatistics>;
}

/** A statement of a migration that canon cannot read: not one canon writes. */
export class UnreadableStatement extends Error {}

/** Why a migration would fail on a database that has applied the migrations before it. */
export class ReplayFailure extends Error {}

export interface Replay {
  model: SchemaModel;
  /** How many migrations applied; fewer than given when one failed. */
  applied: number;
  /** The failure of migration `applied`, when one failed. */
  failure?: { name: string; message: string };
}

const NAME = String.raw`"((?:[^"]|"")+)"`;
const COLUMN = new RegExp(
  String.raw`^${NAME} (.+?)( generated always as identity primary key)?( not null)?(?: default (.+?))?` +
    String.raw`(?: constraint ${NAME} unique)?(?: constraint ${NAME} references ${NAME} \("(id|row_id)"\) on delete (cascade|restrict|no action))?` +
    String.raw`(?: constraint ${NAME} check \((.*)\))?$`,
);
const CREATE_TABLE = new RegExp(String.raw`^create table if not exists ${NAME} \(\n([\s\S]*)\n\);$`);
const CREATE_INDEX = new RegExp(String.raw`^create (unique )?index if not exists ${NAME} on ${NAME} (.+);$`);
const DROP_INDEX = new RegExp(String.raw`^drop index if exists ${NAME};$`);
const CREATE_STATISTICS = new RegExp(String.raw`^create statistics if not exists ${NAME} \(dependencies\) on ((?:${NAME}, )+${NAME}) from ${NAME};$`);
const DROP_STATISTICS = new RegExp(String.raw`^drop statistics if exists ${NAME};$`);
const ANALYZE = new RegExp(String.raw`^analyze ${NAME};$`);
const EXTENSION = /^create extension if not exists ([a-z0-9_]+);$/;
const ALTER = new RegExp(String.raw`^alter table ${NAME} (.+);$`);
const ADD_COLUMN = /^add column if not exists (.+)$/;
const ALTER_COLUMN = new RegExp(String.raw`^alter column ${NAME} (.+)$`);
const DROP_CONSTRAINT = new RegExp(String.raw`^drop constraint if exists ${NAME}$`);
const ADD_CONSTRAINT = new RegExp(String.raw`^add constraint ${NAME} (.+)$`);
const UPDATE = /^update "(?:[^"]|"")+" set .+;$/;
/** Links to records that are gone, deleted before a link table's foreign key comes back (diff.ts): no change to the schema. */
const DELETE = /^delete from "(?:[^"]|"")+" where not exists \(select 1 from .+\);$/;
/** The values of a renamed field's old column moved into its new one (diff.ts `copyRenamed`): no change to the schema. */
const RENAME_BLOCK = /^do \$\$ begin\n  if exists \(select 1 from information_schema\.columns "o" join [^\n]*\) then\n    update "(?:[^"]|"")+" set [^\n]* = null where [^\n]* is not null;\n(?:    if not exists \(select 1 from "(?:[^"]|"")+" where "(?:[^"]|"")+" is null\) then\n      alter table "(?:[^"]|"")+" alter column "(?:[^"]|"")+" set not null;\n    end if;\n)?  end if;\nend \$\$;$/;
/** The rows of a renamed array's old link table moved into its new one (diff.ts `moveRenamedLinks`): no change to the schema. */
const LINKS_BLOCK = /^do \$\$ begin\n  if exists \(select 1 from "pg_constraint" [^\n]*\) then\n    insert into "(?:[^"]|"")+" \([^\n]*\) select [^\n]* on conflict do nothing;\n    delete from "(?:[^"]|"")+";\n  end if;\nend \$\$;$/;
/** The ids of a relation made a plain array copied back from its link table (diff.ts `moveFromLinkTable`): no change to the schema. */
const UNLINK_BLOCK = /^do \$\$ declare "canon__target" regclass; begin\n  select "confrelid"::regclass into "canon__target" from "pg_constraint" [^\n]*;\n  if "canon__target" is not null then\n    execute format\([^\n]*\);\n    delete from "(?:[^"]|"")+";\n  end if;\nend \$\$;$/;
/** The one id of each record copied from a relation's link table into a single reference's column (diff.ts `moveLinksToColumn`): no change to the schema. */
const LINKS_TO_COLUMN_BLOCK = /^do \$\$ declare "canon__r" record; begin\n  if to_regclass\('(?:[^']|'')+'\) is not null then\n[\s\S]*\n    delete from "(?:[^"]|"")+";\n  end if;\nend \$\$;$/;
const MOVE_BLOCK = /^do \$\$ (?:declare "canon__r" record; )?begin\n  if exists \(select 1 from information_schema\.columns where [^\n]*\) then\n[\s\S]*\nend \$\$;$/;

const unquote = (name: string) => name.replace(/""/g, '"');

function onDeleteOf(sql: string): OnDelete {
  // `on delete no action` is how canon writes restrict (diff.ts); older migrations wrote `restrict`.
  return sql === "cascade" ? "cascade" : "restrict";
}

function readColumn(text: string, where: string): ModelColumn {
  const m = COLUMN.exec(text);
  if (!m) throw new UnreadableStatement(`${where}: canon cannot read the column \`${text}\``);
  const column: ModelColumn = { name: unquote(m[1]!), type: m[2]!, notNull: Boolean(m[3] || m[4]) };
  if (m[3]) column.identity = true;
  if (m[5] !== undefined) column.default = m[5];
  if (m[6] !== undefined) column.unique = unquote(m[6]);
  if (m[7] !== undefined) {
    column.references = { name: unquote(m[7]), table: unquote(m[8]!), onDelete: onDeleteOf(m[10]!) };
    if (m[9] !== "id") column.references.column = m[9]!;
  }
  if (m[11] !== undefined) column.check = { name: unquote(m[11]), expression: m[12]! };
  return column;
}

/**
 * The statements of a migration file: comments and blank lines left out, a statement ends with `;`
 * at a line's end; a `do $$` block (diff.ts moves an array's ids into its link table in one) ends
 * with `end $$;`.
 */
const statementsOf = memoByText("sql statements", (text: string): Array<{ line: number; sql: string }> => {
  const out: Array<{ line: number; sql: string }> = [];
  let current: string[] = [];
  let start = 0;
  // Lines as a checkout may give them (CRLF under autocrlf), comments indented or not.
  text.split(/\r?\n/).forEach((line, i) => {
    if (!current.length && (line.trim() === "" || line.trimStart().startsWith("--"))) return;
    if (!current.length) start = i + 1;
    current.push(line);
    const block = current[0]!.trimStart().startsWith("do $$");
    if (block ? line.trim() === "end $$;" : line.trimEnd().endsWith(";")) {
      out.push({ line: start, sql: current.join("\n") });
      current = [];
    }
  });
  if (current.length) out.push({ line: start, sql: current.join("\n") });
  return out;
}, 64);

function cloneModel(model: SchemaModel): SchemaModel {
  return {
    extensions: [...model.extensions],
    tables: new Map([...model.tables].map(([k, t]) => [k, { name: t.name, columns: t.columns.map((c) => structuredClone(c)) }])),
    indexes: new Map([...model.indexes].map(([k, i]) => [k, { ...i }])),
    statistics: new Map([...model.statistics].map(([k, x]) => [k, { ...x, columns: [...x.columns] }])),
  };
}

export function emptyModel(): SchemaModel {
  return { extensions: [], tables: new Map(), indexes: new Map(), statistics: new Map() };
}

/** Applies one migration's text to `model` (changed in place). */
export function applyMigration(model: SchemaModel, file: string, text: string): void {
  for (const { line, sql } of statementsOf(text)) {
    const where = `${file} line ${line}`;
    applyStatement(model, sql, where);
  }
}

/** A reference needs its table: created before, or the table itself. */
function referenced(model: SchemaModel, target: string | undefined, table: string, where: string): void {
  if (target !== undefined && target !== table && !model.tables.has(target)) {
    throw new ReplayFailure(`${where}: ${table} references table ${target}, which no migration before it creates`);
  }
}

function applyStatement(model: SchemaModel, sql: string, where: string): void {
  let m: RegExpExecArray | null;
  if ((m = EXTENSION.exec(sql))) {
    if (!model.extensions.includes(m[1]!)) model.extensions.push(m[1]!);
    return;
  }
  if ((m = CREATE_TABLE.exec(sql))) {
    const name = unquote(m[1]!);
    if (model.tables.has(name)) return;
    const columns = m[2]!.split("\n").map((l) => readColumn(l.trim().replace(/,$/, ""), where));
    for (const c of columns) referenced(model, c.references?.table, name, where);
    model.tables.set(name, { name, columns });
    return;
  }
  if ((m = CREATE_INDEX.exec(sql))) {
    const name = unquote(m[2]!);
    const table = unquote(m[3]!);
    if (!model.tables.has(table)) throw new ReplayFailure(`${where}: index ${name} is on table ${table}, which no migration before it creates`);
    if (!model.indexes.has(name)) model.indexes.set(name, { name, table, unique: Boolean(m[1]), definition: m[4]! });
    return;
  }
  if ((m = DROP_INDEX.exec(sql))) {
    model.indexes.delete(unquote(m[1]!));
    return;
  }
  if ((m = CREATE_STATISTICS.exec(sql))) {
    const name = unquote(m[1]!);
    const table = unquote(m[m.length - 1]!);
    if (!model.tables.has(table)) throw new ReplayFailure(`${where}: statistics ${name} are on table ${table}, which no migration before it creates`);
    const columns = [...m[2]!.matchAll(new RegExp(NAME, "g"))].map((c) => unquote(c[1]!));
    if (!model.statistics.has(name)) model.statistics.set(name, { name, table, columns });
    return;
  }
  if ((m = DROP_STATISTICS.exec(sql))) {
    model.statistics.delete(unquote(m[1]!));
    return;
  }
  if ((m = ANALYZE.exec(sql))) {
    const table = unquote(m[1]!);
    if (!model.tables.has(table)) throw new ReplayFailure(`${where}: it analyzes table ${table}, which no migration before it creates`);
    return;
  }
  if (UPDATE.test(sql) || DELETE.test(sql) || RENAME_BLOCK.test(sql) || LINKS_BLOCK.test(sql) || UNLINK_BLOCK.test(sql) || LINKS_TO_COLUMN_BLOCK.test(sql) || GUARD_BLOCK.test(sql)) return;
  if (MOVE_BLOCK.test(sql)) {
    // Copies an array's ids into its link table, then drops the array's column, when it is there.
    const drop = new RegExp(String.raw`\n    alter table ${NAME} drop column ${NAME};\n`).exec(sql);
    if (!drop) throw new UnreadableStatement(`${where}: canon cannot read \`${sql.split("\n")[0]}\``);
    const table = model.tables.get(unquote(drop[1]!));
    if (table) table.columns = table.columns.filter((c) => c.name !== unquote(drop[2]!));
    return;
  }
  if ((m = ALTER.exec(sql))) {
    const tableName = unquote(m[1]!);
    const table = model.tables.get(tableName);
    if (!table) throw new ReplayFailure(`${where}: it alters table ${tableName}, which no migration before it creates`);
    const action = m[2]!;
    let a: RegExpExecArray | null;
    if ((a = ADD_COLUMN.exec(action))) {
      const column = readColumn(a[1]!, where);
      column.addedLater = true;
      referenced(model, column.references?.table, tableName, where);
      if (!table.columns.some((c) => c.name === column.name)) table.columns.push(column);
      return;
    }
    if ((a = ALTER_COLUMN.exec(action))) {
      const column = table.columns.find((c) => c.name === unquote(a![1]!));
      if (!column) throw new ReplayFailure(`${where}: it alters column ${a[1]} of ${tableName}, which no migration before it adds`);
      const change = a[2]!;
      let t: RegExpExecArray | null;
      if (change === "drop default") delete column.default;
      else if (change === "drop not null") column.notNull = false;
      else if (change === "set not null") column.notNull = true;
      else if ((t = /^set default (.+)$/.exec(change))) column.default = t[1]!;
      else if ((t = /^type (.+?) using .+$/.exec(change))) column.type = t[1]!;
      else throw new UnreadableStatement(`${where}: canon cannot read \`${sql}\``);
      return;
    }
    if ((a = DROP_CONSTRAINT.exec(action))) {
      const name = unquote(a[1]!);
      for (const c of table.columns) {
        if (c.unique === name) delete c.unique;
        if (c.check?.name === name) delete c.check;
        if (c.references?.name === name) delete c.references;
      }
      return;
    }
    if ((a = ADD_CONSTRAINT.exec(action))) {
      const name = unquote(a[1]!);
      if (table.columns.some((c) => c.unique === name || c.check?.name === name || c.references?.name === name)) {
        throw new ReplayFailure(`${where}: constraint ${name} of ${tableName} already exists`);
      }
      const definition = a[2]!;
      const columnNamed = (quoted: string) => {
        const column = table.columns.find((c) => c.name === unquote(quoted));
        if (!column) throw new ReplayFailure(`${where}: constraint ${name} names column ${quoted} of ${tableName}, which no migration before it adds`);
        return column;
      };
      let d: RegExpExecArray | null;
      if ((d = new RegExp(String.raw`^unique \(${NAME}\)$`).exec(definition))) columnNamed(d[1]!).unique = name;
      else if ((d = new RegExp(String.raw`^foreign key \(${NAME}\) references ${NAME} \("(id|row_id)"\) on delete (cascade|restrict|no action)$`).exec(definition))) {
        referenced(model, unquote(d[2]!), tableName, where);
        // A link table's target references the other table's `row_id` (diff.ts), as in its `create table`.
        const column = columnNamed(d[1]!);
        column.references = { name, table: unquote(d[2]!), onDelete: onDeleteOf(d[4]!) };
        if (d[3] !== "id") column.references.column = d[3]!;
      } else if ((d = /^check \((.*)\)$/.exec(definition))) {
        // A column's check names the column; the first column it names is the one it belongs to.
        const first = [...d[1]!.matchAll(/"((?:[^"]|"")+)"/g)].map((x) => x[1]!).find((n) => table.columns.some((c) => c.name === unquote(n)));
        if (!first) throw new UnreadableStatement(`${where}: canon cannot tell which column the check ${name} belongs to`);
        columnNamed(first).check = { name, expression: d[1]! };
      } else throw new UnreadableStatement(`${where}: canon cannot read \`${sql}\``);
      return;
    }
  }
  throw new UnreadableStatement(`${where}: canon cannot read \`${sql.split("\n")[0]}\``);
}

/**
 * Replays `files` (name and text, in order) from an empty database. A failing migration stops the
 * replay: the model is the one the migrations before it create. A statement canon cannot read throws.
 */
export function replayMigrations(files: Array<{ name: string; text: string }>): Replay {
  const model = emptyModel();
  let applied = 0;
  for (const file of files) {
    const attempt = cloneModel(model);
    try {
      applyMigration(attempt, `sql/${file.name}`, file.text);
    } catch (error) {
      if (error instanceof ReplayFailure) return { model, applied, failure: { name: file.name, message: error.message } };
      throw error;
    }
    model.extensions = attempt.extensions;
    model.tables = attempt.tables;
    model.indexes = attempt.indexes;
    model.statistics = attempt.statistics;
    applied++;
  }
  return { model, applied };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** What a column is to the database: every property a migration writes, the order fixed. */
function columnEffect(c: ModelColumn | SnapshotColumn): unknown {
  const check = c.check ? [c.check.name, c.check.expression] : null;
  const references = c.references ? [c.references.name, c.references.table, c.references.onDelete, c.references.column ?? "id"] : null;
  return [c.name, c.type, Boolean(c.identity), c.notNull, c.default ?? null, c.unique ?? null, check, references];
}

/**
 * The model as a snapshot. Each table, column and index that `hints` (snapshots, first match
 * wins) hold with exactly the same effect is taken from there, so that the snapshot differs from
 * them only where the database does. What a snapshot leaves out once it leaves the definitions is
 * left out here too: a table no hint holds, and a column no hint holds that is already nullable and
 * has no constraint (diff.ts lifts both from a column that leaves: one that keeps them, as an older
 * canon left it, is kept, so that the next migration lifts them).
 */
export function snapshotFrom(model: SchemaModel, format: number, hints: Array<SchemaSnapshot | null>): SchemaSnapshot {
  // The hints' tables, and the model's indexes and statistics, by table: each looked up once per table.
  const hintTables = groupBy(hints.flatMap((h) => h?.tables ?? []), (t) => t.name);
  const indexesOf = groupBy(model.indexes.values(), (i) => i.table);
  const statisticsOf = groupBy(model.statistics.values(), (x) => x.table);
  const tables: SnapshotTable[] = [];
  for (const table of model.tables.values()) {
    const known = hintTables.get(table.name) ?? [];
    if (!known.length) continue;
    const columns: SnapshotColumn[] = [];
    for (const column of table.columns) {
      // A required column added to a table that had rows is nullable on purpose (diff.ts): the same.
      const deferred = column.addedLater && !column.notNull && column.default === undefined ? { ...column, notNull: true } : null;
      const same = known
        .flatMap((t) => t.columns)
        .find(
          (c) =>
            c.name === column.name &&
            (sameJson(columnEffect(c), columnEffect(column)) || (deferred !== null && sameJson(columnEffect(c), columnEffect(deferred)))),
        );
      if (same) columns.push(same);
      else if (known.some((t) => t.columns.some((c) => c.name === column.name)) || column.notNull || column.check || column.unique || column.references) {
        const { addedLater: _, ...kept } = structuredClone(column);
        columns.push(kept as SnapshotColumn);
      }
    }
    const indexes: SnapshotIndex[] = [];
    for (const index of indexesOf.get(table.name) ?? []) {
      const same = known
        .flatMap((t) => t.indexes)
        .find((i) => i.name === index.name && i.definition === index.definition && Boolean(i.unique || i.together) === index.unique);
      indexes.push(same ?? { name: index.name, ...(index.unique ? { unique: "?" } : {}), definition: index.definition });
    }
    const statistics: SnapshotStatistics[] = (statisticsOf.get(table.name) ?? []).map((x) => ({ name: x.name, columns: [...x.columns] }));
    const link = known.find((t) => t.link)?.link;
    tables.push({
      name: table.name,
      collection: known[0]!.collection,
      columns,
      indexes,
      ...(statistics.length ? { statistics } : {}),
      ...(link ? { link: { ...link } } : {}),
    });
  }
  return { format, extensions: [...model.extensions], tables };
}

/** The items by `key`, each group in the items' order. */
function groupBy<T>(items: Iterable<T>, key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}
