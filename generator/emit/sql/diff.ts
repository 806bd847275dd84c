/**
 * A migration is the difference between the schema the last migration left (the committed
 * `sql/schema.json`) and the schema the definitions want now. Every statement is idempotent,
 * so a migration file may be applied twice: `create … if not exists`, `add column if not
 * exists` (whose inline constraints come and go with the column), and for a changed
 * constraint a `drop constraint if exists` followed by its `add constraint`.
 *
 * Nothing is ever dropped with its data: a column that leaves the definitions stays, only its
 * NOT NULL is lifted so that new rows may lack it; a table that leaves stays as it is. The one
 * column dropped is an array's jsonb column once its ids are copied into the link table that
 * replaces it (`moveToLinkTable`, SPEC §12.3).
 */
import type { OnDelete } from "../../../runtime/references.ts";
import { arrayIdsSql, decimalColumnType, LINK_COLUMNS, LINK_ITEM_UUID as uuid } from "../../../runtime/sql-schema.ts";
import { decimalPattern, identifier, nestedPath, pathString, quote, type SchemaSnapshot, type SnapshotColumn, type SnapshotIndex, type SnapshotStatistics, type SnapshotTable } from "./snapshot.ts";

export interface Migration {
  /** `initial`, `create_reviews_and_add_orders_priority`. */
  name: string;
  statements: string[];
}

interface Change {
  words: string;
  statements: string[];
}

function columnDefinition(column: SnapshotColumn, options: { inlineReference: boolean; forceNullable: boolean }): string {
  const parts = [quote(column.name), column.type];
  if (column.identity) parts.push("generated always as identity primary key");
  else {
    if (column.notNull && !options.forceNullable) parts.push("not null");
    if (column.default !== undefined) parts.push(`default ${column.default}`);
  }
  if (column.unique) parts.push(`constraint ${quote(column.unique)} unique`);
  if (column.references && options.inlineReference) parts.push(referenceClause(column.references));
  if (column.check) parts.push(`constraint ${quote(column.check.name)} check (${column.check.expression})`);
  return parts.join(" ");
}

function referenceClause(reference: NonNullable<SnapshotColumn["references"]>): string {
  return `constraint ${quote(reference.name)} references ${quote(reference.table)} (${quote(reference.column ?? "id")}) ${onDeleteAction(reference.onDelete)}`;
}

/**
 * `restrict` is written `on delete no action`: checked once the statement is done, so a record
 * deleted by the same cascade does not hold its referenced record, as in the memory store.
 * (Migrations written before this kept `on delete restrict`; the answers differ only when one
 * delete's cascade both removes a record and a record referring to it.)
 */
function onDeleteAction(onDelete: OnDelete): string {
  return onDelete === "cascade" ? "on delete cascade" : "on delete no action";
}

function createIndex(table: string, index: SnapshotIndex): string {
  return `create ${index.unique || index.together ? "unique " : ""}index if not exists ${quote(index.name)} on ${quote(table)} ${index.definition};`;
}

function createStatistics(table: string, statistics: SnapshotStatistics): string {
  return `create statistics if not exists ${quote(statistics.name)} (dependencies) on ${statistics.columns.map(quote).join(", ")} from ${quote(table)};`;
}

/** Drop-then-add: idempotent as a pair. */
function replaceConstraint(table: string, name: string, definition: string | null, previousName?: string): string[] {
  const t = quote(table);
  const out = [`alter table ${t} drop constraint if exists ${quote(previousName ?? name)};`];
  if (previousName && previousName !== name) out.push(`alter table ${t} drop constraint if exists ${quote(name)};`);
  if (definition) out.push(`alter table ${t} add constraint ${quote(name)} ${definition};`);
  return out;
}

function foreignKey(column: SnapshotColumn): string {
  const r = column.references!;
  return `foreign key (${quote(column.name)}) references ${quote(r.table)} (${quote(r.column ?? "id")}) ${onDeleteAction(r.onDelete)}`;
}

/**
 * New tables in an order where each one's references exist before it; references that would
 * need a later table (a cycle) are added after all tables exist.
 */
function createTables(tables: SnapshotTable[], existing: Set<string>): Change[] {
  const pending = [...tables];
  const available = new Set(existing);
  const ordered: SnapshotTable[] = [];
  while (pending.length) {
    const ready = pending.findIndex((t) =>
      t.columns.every((c) => !c.references || c.references.table === t.name || available.has(c.references.table) || !pending.some((p) => p.name === c.references!.table)),
    );
    const next = pending.splice(ready === -1 ? 0 : ready, 1)[0]!;
    ordered.push(next);
    available.add(next.name);
  }
  const created = new Set<string>();
  const changes: Change[] = [];
  const deferred: string[] = [];
  for (const table of ordered) {
    const lines = table.columns.map((c) => {
      const inline = !c.references || c.references.table === table.name || existing.has(c.references.table) || created.has(c.references.table);
      if (!inline) deferred.push(...replaceConstraint(table.name, c.references!.name, foreignKey(c)));
      return `  ${columnDefinition(c, { inlineReference: inline, forceNullable: false })}`;
    });
    created.add(table.name);
    changes.push({
      words: `create_${table.name}`,
      statements: [
        `create table if not exists ${quote(table.name)} (\n${lines.join(",\n")}\n);`,
        ...table.indexes.map((i) => createIndex(table.name, i)),
        ...(table.statistics ?? []).map((x) => createStatistics(table.name, x)),
      ],
    });
  }
  if (deferred.length) changes.push({ words: "", statements: deferred });
  return changes;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * An array that was a jsonb column of its owner and is now kept in a link table: the ids are
 * copied over in order (a repeated id once, where it first stands), then the column is dropped.
 * An id that names no record (the plain array checked none) refuses the migration, naming the
 * record and the id, before anything is copied or dropped: dropping the column would lose it. One block that does it only while the column exists: applied twice, it does nothing.
 * `kept`: the link table was there before (a relation that became a plain array comes back), and
 * holds the links of then: the array's ids replace them.
 */
function moveToLinkTable(link: SnapshotTable, kept: boolean): Change {
  const { owner, column, target } = link.link!;
  const [ownerColumn, position, targetColumn] = link.columns.map((c) => quote(c.name));
  // The array's JSON, or a single id (a reference made an array of references) as an array of one.
  const ids = arrayIdsSql(quote(column));
  const field = `${owner}.${column}`;
  const refusal = `${field} becomes a relation to ${target}, and record % names %, which is no record of ${target}: remove that id from the records that hold it (or create the record it names), then start again`;
  return {
    words: `link_${owner}_${column}`,
    statements: [
      [
        `do $$ declare "canon__r" record; begin`,
        `  if exists (select 1 from information_schema.columns where table_schema = current_schema() and table_name = ${literal(owner)} and column_name = ${literal(column)}) then`,
        `    select "o"."id", "i"."id" as "value" into "canon__r" from ${quote(owner)} "o"`,
        `      cross join lateral jsonb_array_elements_text(${ids}) with ordinality as "i" ("id", "n")`,
        `      where not exists (select 1 from ${quote(target)} "t" where "t"."id" = ${uuid})`,
        `      order by "o"."row_id", "i"."n" limit 1;`,
        `    if found then`,
        `      raise exception ${literal(refusal)}, "canon__r"."id", coalesce("canon__r"."value", 'null');`,
        `    end if;`,
        // The links an earlier relation of that name left are older than the array's ids: they go.
        ...(kept ? [`    delete from ${quote(link.name)};`] : []),
        `    insert into ${quote(link.name)} (${ownerColumn}, ${position}, ${targetColumn})`,
        `      select "o"."row_id", "i"."n", "t"."row_id" from ${quote(owner)} "o"`,
        `      cross join lateral jsonb_array_elements_text(${ids}) with ordinality as "i" ("id", "n")`,
        `      join ${quote(target)} "t" on "t"."id" = ${uuid}`,
        `      order by "o"."row_id", "i"."n"`,
        `      on conflict do nothing;`,
        `    alter table ${quote(owner)} drop column ${quote(column)};`,
        `  end if;`,
        `end $$;`,
      ].join("\n"),
    ],
  };
}

/**
 * A relation (an array of ids in a link table, `<table>__<column>`) made a plain array, kept in a
 * jsonb column of its owner again (added above): each record's ids are copied from the link table
 * into it, in order, and the link table, which stays as a table that leaves does, keeps none, so
 * that no delete is held back by a link no one reads and applying the block again copies nothing.
 * Without it the column would keep its default (`[]`) and every record would lose its ids. The
 * linked table is the one the link table's foreign key names; no link table, nothing to do.
 */
function moveFromLinkTable(owner: string, column: string): Change {
  const { owner: ownerColumn, position, target: targetColumn } = LINK_COLUMNS;
  const link = quote(identifier(`${owner}__${column}`));
  const l = literal(link);
  const ids = `select jsonb_agg("t"."id" order by "l".${quote(position)}) from ${link} "l" join %s "t" on "t"."row_id" = "l".${quote(targetColumn)} where "l".${quote(ownerColumn)} = "o"."row_id"`;
  const update = `update ${quote(owner)} "o" set ${quote(column)} = (${ids}) where exists (select 1 from ${link} "l" where "l".${quote(ownerColumn)} = "o"."row_id")`;
  return {
    words: "",
    statements: [
      [
        `do $$ declare "canon__target" regclass; begin`,
        `  select "confrelid"::regclass into "canon__target" from "pg_constraint" where "contype" = 'f' and "conrelid" = to_regclass(${l}) and "conkey" = array[(select "attnum" from "pg_attribute" where "attrelid" = to_regclass(${l}) and "attname" = ${literal(targetColumn)})];`,
        `  if "canon__target" is not null then`,
        `    execute format(${literal(update)}, "canon__target");`,
        `    delete from ${link};`,
        `  end if;`,
        `end $$;`,
      ].join("\n"),
    ],
  };
}

/**
 * A relation (an array of ids in a link table, `<table>__<column>`) made a single reference again (a
 * `uuid` column of its owner, added above): each record's one id is copied from the link table into
 * it, and the link table, which stays as a table that leaves does, keeps none. A record that names
 * more than one would lose all but one: the migration refuses first, naming it, before anything of
 * it is applied. Applied again (the link table empty), it copies nothing.
 */
function moveLinksToColumn(owner: string, column: string, link: SnapshotTable): Change {
  const { owner: ownerColumn, target: targetColumn } = LINK_COLUMNS;
  const [o, l, c] = [quote(owner), quote(link.name), quote(column)];
  const target = link.link!.target;
  const message = `${owner}.${column} becomes a single reference to ${target}, and record % names % of them: keep one id in the ${column} of each record that names more (a PATCH through the version before does it), then start again`;
  return {
    words: `unlink_${owner}_${column}`,
    statements: [
      [
        `do $$ declare "canon__r" record; begin`,
        `  if to_regclass(${literal(l)}) is not null then`,
        `    select "o"."id", count(*) as "n" into "canon__r" from ${l} "l" join ${o} "o" on "o"."row_id" = "l".${quote(ownerColumn)} group by "o"."id" having count(*) > 1 order by "o"."id" limit 1;`,
        `    if found then`,
        `      raise exception ${literal(message)}, "canon__r"."id", "canon__r"."n";`,
        `    end if;`,
        `    update ${o} "o" set ${c} = "t"."id" from ${l} "l" join ${quote(target)} "t" on "t"."row_id" = "l".${quote(targetColumn)} where "l".${quote(ownerColumn)} = "o"."row_id";`,
        `    delete from ${l};`,
        `  end if;`,
        `end $$;`,
      ].join("\n"),
    ],
  };
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * A tenant field added to a table that holds rows (SPEC §12.4): its column, added nullable as every
 * column added to such a table, is filled from the tenant of the record a required reference of the
 * row names, where that record's table is tenant-scoped (a child's parent: references are checked
 * within the tenant, so it is the row's tenant too), then made `not null` as in a fresh database. A
 * record it cannot fill refuses the migration, naming it, before anything of it is applied: a
 * record without a tenant is no tenant's, and would read back without its required field.
 */
function newTenant(table: SnapshotTable, column: SnapshotColumn, tenants: ReadonlyMap<string, string>): string[] {
  const [t, c] = [quote(table.name), quote(column.name)];
  const source = table.columns.find((x) => x.notNull && x.references && x.name !== column.name && tenants.has(x.references.table) && x.references.table !== table.name);
  const statements: string[] = [];
  if (source) {
    const r = source.references!;
    statements.push(`update ${t} set ${c} = (select "p".${quote(tenants.get(r.table)!)} from ${quote(r.table)} "p" where "p".${quote(r.column ?? "id")} = ${t}.${quote(source.name)}) where ${c} is null;`);
  }
  const message = `${table.name}.${column.name} is the tenant field of ${table.name} now, and record % has no tenant${source ? ` (nor does the record its ${source.name} names)` : ""}: add the field as optional in a release of its own and give every record its tenant (or delete the records that have none), then start again`;
  statements.push(missingGuard(table.name, column.name, message), `alter table ${t} alter column ${c} set not null;`);
  return statements;
}

/**
 * A `do` block that refuses to make `column` of `table` required (`set not null`) while a record
 * lacks a value, naming one: it changes nothing, so applied again (every record has one) it passes.
 */
function requiredGuard(table: string, column: string, tenant: boolean): string {
  const what = tenant ? `is the tenant field of ${table} now` : "is required now";
  return missingGuard(table, column, `${table}.${column} ${what}, and record % has no value for it: give the records that lack a value one (or give the field a default${tenant ? "" : ", or keep it optional"}), then start again`);
}

/** A refusal naming the first record (by id) whose `column` of `table` is null, with `message` (its `%` the id). */
function missingGuard(table: string, column: string, message: string): string {
  return refusalBlock(`select "id" into "canon__r" from ${quote(table)} where ${quote(column)} is null order by "id" limit 1;`, message, ["id"]);
}

/**
 * A `do` block that refuses a migration before anything of it is applied: `select` (one line, as
 * GUARD_BLOCK of runtime/sql-migrations.ts reads every refusal) finds what breaks it into
 * `"canon__r"`, and `message` names its `fields` in order, one per `%`. It changes nothing, so
 * applied again (nothing to refuse) it passes.
 */
function refusalBlock(select: string, message: string, fields: readonly string[]): string {
  return [
    `do $$ declare "canon__r" record; begin`,
    `  ${select}`,
    `  if found then`,
    `    raise exception ${literal(message)}, ${fields.map((f) => `"canon__r".${quote(f)}`).join(", ")};`,
    `  end if;`,
    `end $$;`,
  ].join("\n");
}

function alterTable(before: SnapshotTable, after: SnapshotTable, moved: ReadonlySet<string> = new Set(), tenants: ReadonlyMap<string, string> = new Map()): Change[] {
  const t = quote(after.name);
  const changes: Change[] = [];
  const old = new Map(before.columns.map((c) => [c.name, c]));
  // Indexes dropped before a column's type changes: created again below, whatever their definition.
  const rebuilt = new Set<string>();
  for (const column of after.columns) {
    const previous = old.get(column.name);
    const c = quote(column.name);
    if (!previous) {
      // Rows that exist have no value for it: NOT NULL holds from the start only with a default.
      const forceNullable = column.notNull && column.default === undefined;
      changes.push({
        words: `add_${after.name}_${column.name}`,
        statements: [
          `alter table ${t} add column if not exists ${columnDefinition(column, { inlineReference: true, forceNullable })};`,
          ...(forceNullable && column.tenant ? newTenant(after, column, tenants) : []),
        ],
      });
      continue;
    }
    const statements: string[] = [];
    // Another type, not only another precision (`numeric(8, 2)` → `numeric(10, 2)` keeps all of it).
    const retyped = baseType(previous.type) !== baseType(column.type);
    if (retyped) {
      // What PostgreSQL would carry over to the new type, and cannot when it does not fit it
      // (`char_length("code")` of a bigint, `'x'::text` as a bigint's default, `btrim` in a unique
      // key's index, `gin_trgm_ops` on a number, a foreign key to `uuid` from `text`), goes first and
      // comes back below as the new definition says: the check, the default, the foreign key and
      // every index on the column.
      if (previous.check) statements.push(`alter table ${t} drop constraint if exists ${quote(previous.check.name)};`);
      if (previous.references) statements.push(`alter table ${t} drop constraint if exists ${quote(previous.references.name)};`);
      if (previous.default !== undefined) statements.push(`alter table ${t} alter column ${c} drop default;`);
      for (const index of indexesOn(before, column.name)) {
        rebuilt.add(index.name);
        statements.push(`drop index if exists ${quote(index.name)};`);
      }
    }
    // A value the new type could not keep exactly (a decimal with more fraction digits than the
    // new scale, a number as an integer) is refused, naming the record, before any type changes:
    // PostgreSQL's cast would round it.
    const guard = previous.type !== column.type ? exactnessGuard(after.name, column.name, previous.type, column.type) : null;
    if (guard) statements.unshift(guard);
    if (previous.type === "jsonb" && column.type !== "jsonb") {
      // A value kept wrapped in JSON (a field that may be absent and null) becomes a plain
      // column: the value is the JSON's text, JSON null is NULL (to_jsonb: the same on a second
      // run, the column being the new type then).
      statements.push(`alter table ${t} alter column ${c} type ${column.type} using (to_jsonb(${c}) #>> '{}')::${column.type};`);
    } else if (previous.type !== "jsonb" && column.type === "jsonb") {
      statements.push(`alter table ${t} alter column ${c} type jsonb using ${wrappedValue(c, column.check?.expression ?? "", previous.nullReads === "null")};`);
    } else if (previous.type === "date" && column.type === "text" && column.check?.expression.includes(DATETIME_CHECK)) {
      // A date made a datetime: the start of its day in UTC, which the datetime's check takes
      // (the date's own text, `2026-03-01`, it refuses). Applied again, the text keeps its time.
      statements.push(`alter table ${t} alter column ${c} type text using case when ${c}::text ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then ${c}::text || 'T00:00:00Z' else ${c}::text end;`);
    } else if (previous.type !== column.type) statements.push(`alter table ${t} alter column ${c} type ${column.type} using ${c}::${column.type};`);
    if (retyped && column.default !== undefined) statements.push(`alter table ${t} alter column ${c} set default ${column.default};`);
    else if (previous.default !== column.default) {
      statements.push(column.default === undefined ? `alter table ${t} alter column ${c} drop default;` : `alter table ${t} alter column ${c} set default ${column.default};`);
    }
    if (previous.notNull !== column.notNull) {
      if (!column.notNull) statements.push(`alter table ${t} alter column ${c} drop not null;`);
      else {
        if (column.default !== undefined) statements.push(`update ${t} set ${c} = ${column.default} where ${c} is null;`);
        // A record that lacks it is refused by name: PostgreSQL's own failure names none.
        else statements.push(requiredGuard(after.name, column.name, column.tenant === true));
        statements.push(`alter table ${t} alter column ${c} set not null;`);
      }
    }
    if (previous.unique !== column.unique) {
      statements.push(...replaceConstraint(after.name, column.unique ?? previous.unique!, column.unique ? `unique (${c})` : null, previous.unique));
    }
    if (retyped) {
      // Dropped above (the name of a field's check is the table's and the column's): added as it is now.
      if (column.check) statements.push(`alter table ${t} add constraint ${quote(column.check.name)} check (${column.check.expression});`);
    } else if (!sameJson(previous.check, column.check)) {
      const replaced = replaceConstraint(after.name, column.check?.name ?? previous.check!.name, column.check ? `check (${column.check.expression})` : null, previous.check?.name);
      // A value kept wrapped in JSON that changes its JSON form (a number made a decimal, kept as a
      // string in its canonical form; a decimal made a number or an integer): converted once the old
      // check is gone and before the new one is added, after a refusal of values it would change.
      const rewrap = previous.type === "jsonb" && column.type === "jsonb" ? (rewrapped(after.name, column, previous) ?? decimalItems(after.name, column, previous)) : null;
      // And the decimals deeper in it (an object's field, an array's objects…) of another scale.
      const rewraps = [...(rewrap ? [rewrap] : []), ...(previous.type === "jsonb" && column.type === "jsonb" ? nestedDecimalValues(after.name, column, previous) : [])];
      statements.unshift(...rewraps.flatMap((r) => (r.guard ? [r.guard] : [])));
      replaced.splice(replaced.length - (column.check ? 1 : 0), 0, ...rewraps.map((r) => r.update));
      // The rows that break the new check (a tightened length, bound, enum or map) are refused first,
      // naming one: PostgreSQL's own failure names no record.
      if (column.check && !(previous.check && loosens(previous.check.expression, column.check.expression))) replaced.splice(replaced.length - 1, 0, checkGuard(after.name, column.name, column.check.expression));
      statements.push(...replaced);
    }
    if (retyped && previous.references) {
      if (column.references) statements.push(`alter table ${t} add constraint ${quote(column.references.name)} ${foreignKey(column)};`);
    } else if (!sameJson(previous.references, column.references)) {
      // A column that had no foreign key may name records that are gone: it names none then.
      const r = column.references;
      if (r && !previous.references && !column.notNull)
        statements.push(`update ${t} set ${c} = null where ${c} is not null and not exists (select 1 from ${quote(r.table)} where ${quote(r.column ?? "id")} = ${t}.${c});`);
      // A link table that comes back (it lost the foreign key when it left): the links to records deleted since go.
      else if (r && !previous.references && after.link)
        statements.push(`delete from ${t} where not exists (select 1 from ${quote(r.table)} where ${quote(r.column ?? "id")} = ${t}.${c});`);
      statements.push(
        ...replaceConstraint(after.name, column.references?.name ?? previous.references!.name, column.references ? foreignKey(column) : null, previous.references?.name),
      );
    }
    if (statements.length) changes.push({ words: `alter_${after.name}_${column.name}`, statements });
  }
  const current = new Set(after.columns.map((c) => c.name));
  // In name order: the schema before may be the snapshot or the replayed migrations, whose columns
  // come in other orders (a column added later is last), and every run must write the same migration.
  for (const column of [...before.columns].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (current.has(column.name) || moved.has(column.name)) continue;
    // Its values stay; what held them (not null, its limits, its unique constraint, its foreign key)
    // goes with the field, so that no row, write or delete is held back by a column no API shows,
    // and the table is that of a database made from the definitions (beside the column).
    const statements: string[] = [];
    if (column.notNull) statements.push(`alter table ${t} alter column ${quote(column.name)} drop not null;`);
    for (const name of [column.check?.name, column.unique, column.references?.name]) if (name) statements.push(`alter table ${t} drop constraint if exists ${quote(name)};`);
    if (!statements.length) continue;
    changes.push({
      words: `retire_${after.name}_${column.name}`,
      statements: [`-- ${column.name} left the definitions; its data stays, and new rows may lack it.`, ...statements],
    });
  }
  const oldIndexes = new Map(before.indexes.map((i) => [i.name, i]));
  const newIndexes = new Map(after.indexes.map((i) => [i.name, i]));
  for (const index of after.indexes) {
    const previous = oldIndexes.get(index.name);
    const again = rebuilt.has(index.name);
    if (!again && previous && previous.definition === index.definition && previous.unique === index.unique && sameJson(previous.together, index.together)) continue;
    changes.push({
      words: `index_${index.name}`,
      statements: [...(previous && !again ? [`drop index if exists ${quote(index.name)};`] : []), createIndex(after.name, index)],
    });
  }
  // Dropped in name order: the schema before may be the snapshot or the replayed migrations, whose
  // indexes come in other orders, and every run must write the same migration.
  for (const index of [...before.indexes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!newIndexes.has(index.name) && !rebuilt.has(index.name)) changes.push({ words: `drop_${index.name}`, statements: [`drop index if exists ${quote(index.name)};`] });
  }
  const oldStatistics = new Map((before.statistics ?? []).map((x) => [x.name, x]));
  const newStatistics = new Set((after.statistics ?? []).map((x) => x.name));
  let created = false;
  for (const statistics of after.statistics ?? []) {
    const previous = oldStatistics.get(statistics.name);
    if (previous && sameJson(previous.columns, statistics.columns)) continue;
    created = true;
    changes.push({
      words: `statistics_${statistics.name}`,
      statements: [...(previous ? [`drop statistics if exists ${quote(statistics.name)};`] : []), createStatistics(after.name, statistics)],
    });
  }
  for (const statistics of [...(before.statistics ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!newStatistics.has(statistics.name)) changes.push({ words: `drop_${statistics.name}`, statements: [`drop statistics if exists ${quote(statistics.name)};`] });
  }
  // New statistics are empty until the table is analyzed, which autovacuum may not do for long on
  // a table whose rows change little: the migration gathers them over the rows the table holds.
  if (created) changes.push({ words: "", statements: [`analyze ${t};`] });
  return changes;
}

/** `numeric` of `numeric(10, 2)`. */
function baseType(type: string): string {
  return type.replace(/\(.*\)$/, "");
}

/** A decimal's text as PostgreSQL's `numeric` input reads it (no NaN, no infinity, no `_`). */
const DECIMAL_TEXT = String.raw`^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$`;
/** A date, or a datetime at midnight UTC: the texts a date keeps exactly. */
const DATE_TEXT = String.raw`^[0-9]{4}-[0-9]{2}-[0-9]{2}(T00:00(:00(\.0+)?)?(Z|[+-]00(:?00)?))?$`;
/** What the check of a datetime column holds (snapshot.ts `scalarChecks`). */
const DATETIME_CHECK = "~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T'";
/** An integer's text as PostgreSQL's `bigint` input reads it. */
const INTEGER_TEXT = String.raw`^\s*[-+]?[0-9]+\s*$`;

/**
 * A `do` block that refuses to change column `column` of `table` from type `from` to `to` when a
 * row holds a value the new type would not keep exactly: a decimal (`numeric(p, s)`) given more
 * fraction digits than its scale or more integer digits than its precision leaves (PostgreSQL's
 * cast rounds the first and fails on the second without naming the column), text that is no
 * number, an integer (`bigint`) given a fraction. It names the table, the column, one record and
 * its value, and what to do; null when every value of `from` fits `to` (a wider decimal, a
 * bigint in a decimal with 19 integer digits) or `to` is neither. It changes nothing, so applied
 * again (the column now of type `to`) it passes.
 */
function exactnessGuard(table: string, column: string, from: string, to: string): string | null {
  const c = quote(column);
  const decimal = /^numeric\((\d+), (\d+)\)$/.exec(to);
  const source = /^numeric\((\d+), (\d+)\)$/.exec(from);
  // The value as text, as the `using` of the type change reads it; also of the new type (the
  // migration applied again).
  const text =
    from === "text" ? `${c}::text` : from === "jsonb" ? `(to_jsonb(${c}) #>> '{}')` : from === "double precision" ? `${c}::numeric::text` : from === "bigint" || source ? `${c}::text` : null;
  if (text === null) return null;
  const value = `${text}::numeric`;
  let shape: string;
  let keeps: string;
  let what: string;
  if (decimal) {
    const [p, s] = [Number(decimal[1]), Number(decimal[2])];
    if (source && Number(source[2]) <= s && Number(source[1]) - Number(source[2]) <= p - s) return null;
    if (from === "bigint" && p - s >= 19) return null;
    shape = DECIMAL_TEXT;
    keeps = `round(${value}, ${s}) = ${value} and abs(${value}) < 1e${p - s}`;
    what = `${to} cannot keep exactly (it keeps ${s} digits after the point and ${p - s} before it)`;
  } else if (to === "bigint" && from !== "bigint") {
    shape = from === "text" || from === "jsonb" ? INTEGER_TEXT : DECIMAL_TEXT;
    keeps = `${value} = trunc(${value}) and ${value} between -9223372036854775808 and 9223372036854775807`;
    what = "is not an integer of 64 bits";
  } else if (to === "date" && (from === "text" || from === "jsonb")) {
    // A datetime (or a string) made a date: PostgreSQL's cast would drop a time of day and its offset.
    shape = DATE_TEXT;
    keeps = "true";
    what = "is not a date (a datetime becomes one only at midnight UTC)";
  } else if (to === "double precision" && (from === "text" || from === "jsonb")) {
    shape = DECIMAL_TEXT;
    keeps = "true";
    what = "is not a number";
  } else return null;
  const message = `${table}.${column} cannot become ${to}: record % holds %, which ${what}; change the records that hold such values (or give the field a type that keeps them), then start again`;
  return refusalBlock(`select "id", ${text} as "value" into "canon__r" from ${quote(table)} where ${text} is not null and not (case when ${text} ~ ${literal(shape)} then ${keeps} else false end) limit 1;`, message, ["id", "value"]);
}

/**
 * A `do` block that refuses a check on `column` of `table` that a row breaks, naming the record and
 * its value (its first 200 characters), before the check is added. It changes nothing, so applied
 * again (the check in place) it passes.
 */
function checkGuard(table: string, column: string, expression: string): string {
  const message = `${table}.${column} cannot take its new limits: record % holds %, which they refuse; change the records that hold such values (or loosen the limits), then start again`;
  return refusalBlock(`select "id", left(${quote(column)}::text, 200) as "value" into "canon__r" from ${quote(table)} where (${expression}) is false order by "id" limit 1;`, message, ["id", "value"]);
}

/** A bound (`<= 300`, `>= 1`) or a list of values (`in ('a', 'b')`) in a check. */
const LIMIT = /(<= |>= )(-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)\b|( in \()((?:'(?:[^']|'')*'(?:, )?)+)\)/g;

/**
 * Whether check `after` takes every value `before` takes, as far as can be told from their text:
 * the same but for upper bounds as high or higher, lower bounds as low or lower, lists of values
 * holding every value they held. Then no row can break it, and no refusal is written.
 */
function loosens(before: string, after: string): boolean {
  const skeleton = (e: string) => e.replace(LIMIT, (_m, op: string | undefined) => (op ? `${op}#` : " in (#)"));
  if (skeleton(before) !== skeleton(after)) return false;
  const values = (list: string) => new Set(list.match(/'(?:[^']|'')*'/g));
  const b = [...after.matchAll(LIMIT)];
  return [...before.matchAll(LIMIT)].every((x, i) => {
    const y = b[i]!;
    if (x[1]) return x[1] === "<= " ? Number(y[2]) >= Number(x[2]) : Number(y[2]) <= Number(x[2]);
    const wider = values(y[4]!);
    return [...values(x[4]!)].every((v) => wider.has(v));
  });
}

/** What a wrapped (jsonb, absent or null) scalar's check says its value is: null when it is none of these. */
function wrappedKind(check: SnapshotColumn["check"]): "integer" | "number" | "decimal" | "string" | null {
  const m = check ? / when jsonb_typeof\((?:"(?:[^"]|"")+")\) = '(number|string)' then (.*) else false end$/.exec(check.expression) : null;
  if (!m) return null;
  if (m[1] === "number") return m[2]!.includes(`#>> '{}') ~ '^-?[0-9]+$'`) ? "integer" : "number";
  // A decimal's pattern: of its precision and scale (decimalPattern), or, written before it held them, of any.
  return m[2]!.includes(`#>> '{}') ~ '^-?[0-9]`) ? "decimal" : "string";
}

/**
 * A wrapped scalar (`jsonb`: a field that may be absent and null) whose JSON form changes with its
 * type, where only the check would change: a number or an integer made a decimal (a JSON string
 * with `scale` fraction digits), a decimal of another precision or scale (`"1.20"` at scale 3 is
 * `"1.200"`), a decimal made a number or an integer (a JSON number), a number made a string.
 * `update` converts every value (a second run finds none left to convert, or converts a canonical
 * one to itself); `guard` refuses first, naming a record, when a value would not be kept exactly
 * (exactnessGuard: `"1.25"` at scale 1). Null when the form stays.
 */
function rewrapped(table: string, column: SnapshotColumn, previous: SnapshotColumn): { guard: string | null; update: string } | null {
  const from = wrappedKind(previous.check);
  const to = wrappedKind(column.check);
  if (from === null || to === null) return null;
  const c = quote(column.name);
  const t = quote(table);
  const text = `(${c} #>> '{}')`;
  if (to === "decimal") {
    if (!column.decimal) return null;
    const type = decimalColumnType(column.decimal.precision, column.decimal.scale);
    const pattern = literal(decimalPattern(column.decimal.precision, column.decimal.scale));
    // Of the same precision and scale: nothing to convert. Of others, only a value not of the new shape.
    if (from === "decimal" && previous.check!.expression.includes(`#>> '{}') ~ ${pattern}`)) return null;
    return {
      guard: exactnessGuard(table, column.name, "jsonb", type),
      update:
        from === "decimal"
          ? `update ${t} set ${c} = to_jsonb((${text}::${type})::text) where jsonb_typeof(${c}) = 'string' and ${text} !~ ${pattern};`
          : `update ${t} set ${c} = to_jsonb((${text}::${type})::text) where jsonb_typeof(${c}) in ('number', 'string');`,
    };
  }
  if (from === to) return null;
  if (from === "string") return null;
  if (to === "integer")
    return { guard: exactnessGuard(table, column.name, "jsonb", "bigint"), update: `update ${t} set ${c} = to_jsonb(${text}::numeric::bigint) where jsonb_typeof(${c}) in ('number', 'string');` };
  if (to === "number") return { guard: exactnessGuard(table, column.name, "jsonb", "double precision"), update: `update ${t} set ${c} = to_jsonb(${text}::numeric) where jsonb_typeof(${c}) = 'string';` };
  return { guard: null, update: `update ${t} set ${c} = to_jsonb(${text}) where jsonb_typeof(${c}) = 'number';` };
}

/**
 * A map's values or an array's items of type `decimal` (SPEC §12.6) whose precision or scale
 * changed, or that were of another type: each value a number or a string is converted to the
 * canonical text at the new scale (`"1.20"` at scale 3 is `"1.200"`, at scale 1 `"1.2"`), once the
 * old check is gone and before the new one is added. `guard` refuses first, naming the record, the
 * value and its key (its index), when a value would not be kept exactly (`"1.25"` at scale 1, more
 * digits before the point than the new precision leaves, text that is no number): the cast would
 * round it. A second run finds no value left to convert. Null when the items are decimals of the
 * same precision and scale, or not decimals.
 */
function decimalItems(table: string, column: SnapshotColumn, previous: SnapshotColumn): { guard: string; update: string } | null {
  const decimal = column.decimal;
  if (!decimal?.items || !previous.check) return null;
  const pattern = decimalPattern(decimal.precision, decimal.scale);
  const shape = `@ like_regex ${pathString(pattern)}`;
  if (previous.check.expression.includes(shape)) return null;
  const [p, s] = [decimal.precision, decimal.scale];
  const type = decimalColumnType(p, s);
  const map = decimal.items === "map";
  const [c, t] = [quote(column.name), quote(table)];
  const o = `"o".${c}`;
  const items = map
    ? `jsonb_each(case when jsonb_typeof(${o}) = 'object' then ${o} else '{}'::jsonb end) "e"`
    : `jsonb_array_elements(case when jsonb_typeof(${o}) = 'array' then ${o} else '[]'::jsonb end) with ordinality "e" ("value", "n")`;
  const text = `("e"."value" #>> '{}')`;
  const value = `${text}::numeric`;
  const keeps = `round(${value}, ${s}) = ${value} and abs(${value}) < 1e${p - s}`;
  const where = `${map ? "a map" : "an array"} of ${type}`;
  const message = `${table}.${column.name} cannot become ${where}: record % holds %${map ? " under key %" : " at index %"}, which ${type} cannot keep exactly (it keeps ${s} digits after the point and ${p - s} before it); change the records that hold such values (or give the field a type that keeps them), then start again`;
  const guard = refusalBlock(
    `select "o"."id", ${text} as "value", ${map ? `"e"."key"` : `"e"."n" - 1`} as "at" into "canon__r" from ${t} "o" cross join lateral ${items}` +
      ` where jsonb_typeof("e"."value") in ('number', 'string') and not (case when ${text} ~ ${literal(DECIMAL_TEXT)} then ${keeps} else false end)` +
      ` order by "o"."id", ${map ? `"e"."key"` : `"e"."n"`} limit 1;`,
    message,
    ["id", "value", "at"],
  );
  const converted = `case when jsonb_typeof("e"."value") in ('number', 'string') then to_jsonb((${text}::${type})::text) else "e"."value" end`;
  const rewritten = map
    ? `(select jsonb_object_agg("e"."key", ${converted}) from jsonb_each(${c}) "e")`
    : `(select jsonb_agg(${converted} order by "e"."n") from jsonb_array_elements(${c}) with ordinality "e" ("value", "n"))`;
  // The values to convert: a number, or a string not of the new shape.
  const stale = literal(`strict ${map ? "$.*" : "$[*]"} ? (@.type() == "number" || (@.type() == "string" && !(${shape})))`);
  return {
    guard,
    update: `update ${t} set ${c} = ${rewritten} where jsonb_typeof(${c}) = '${map ? "object" : "array"}' and jsonb_path_exists(${c}, ${stale});`,
  };
}

/**
 * The decimals deeper in a JSON column (snapshot.ts `nestedDecimals`: an object's field, the
 * objects of an array or a map, a map's maps…) whose precision or scale changed, or that were of
 * another type: as `decimalItems` does for a map's values, each value at the decimal's path that
 * is a number or a string is converted to its canonical text at the new scale (`"1.20"` at scale 3
 * is `"1.200"`), the rest of the value kept as it is; `guard` refuses first, naming the record, the
 * value and where it is (`lines.0.unit_price`), one the new type would not keep exactly. One pair
 * per such decimal, in the column's order; none when its shape in the check before is the same.
 */
function nestedDecimalValues(table: string, column: SnapshotColumn, previous: SnapshotColumn): Array<{ guard: string; update: string }> {
  const before = previous.check?.expression ?? "";
  return (column.nestedDecimals ?? []).flatMap(({ path, precision: p, scale: s }) => {
    const shape = `@ like_regex ${pathString(decimalPattern(p, s))}`;
    const reach = `${nestedPath(path)} ? (!(`;
    const at = before.indexOf(reach);
    // The same shape at the same path: nothing to convert (its bounds are the check's guard's).
    if (at !== -1 && before.slice(at, before.indexOf("'", at)).includes(shape)) return [];
    const type = decimalColumnType(p, s);
    const [c, t] = [quote(column.name), quote(table)];
    // The guard: every value at the path, with where it is, by a lateral join per array or map.
    const joins: string[] = [];
    const order: string[] = [`"o"."id"`];
    let value = `"o".${c}`;
    let where = literal(column.name);
    path.forEach((step, i) => {
      const e = `"e${i + 1}"`;
      if (step === "[]") {
        joins.push(`cross join lateral jsonb_array_elements(case when jsonb_typeof(${value}) = 'array' then ${value} else '[]'::jsonb end) with ordinality ${e} ("value", "n")`);
        where = `${where} || '.' || (${e}."n" - 1)`;
        order.push(`${e}."n"`);
        value = `${e}."value"`;
      } else if (step === "{}") {
        joins.push(`cross join lateral jsonb_each(case when jsonb_typeof(${value}) = 'object' then ${value} else '{}'::jsonb end) ${e}`);
        where = `${where} || '.' || ${e}."key"`;
        order.push(`${e}."key"`);
        value = `${e}."value"`;
      } else {
        where = `${where} || ${literal(`.${step}`)}`;
        value = `(${value} -> ${literal(step)})`;
      }
    });
    const text = `(${value} #>> '{}')`;
    const keeps = `round(${text}::numeric, ${s}) = ${text}::numeric and abs(${text}::numeric) < 1e${p - s}`;
    const named = `${column.name}${path.map((step) => (step === "[]" || step === "{}" ? step : `.${step}`)).join("")}`;
    const message = `${table}.${named} cannot become ${type}: record % holds % at %, which ${type} cannot keep exactly (it keeps ${s} digits after the point and ${p - s} before it); change the records that hold such values (or give the field a type that keeps them), then start again`;
    const guard = refusalBlock(
      `select "o"."id", ${text} as "value", ${where} as "at" into "canon__r" from ${t} "o" ${joins.join(" ")}` +
        ` where jsonb_typeof(${value}) in ('number', 'string') and not (case when ${text} ~ ${literal(DECIMAL_TEXT)} then ${keeps} else false end)` +
        ` order by ${order.join(", ")} limit 1;`,
      message,
      ["id", "value", "at"],
    );
    // The value rewritten: at each step into the arrays, maps and objects it holds, the rest kept.
    const rewrite = (v: string, rest: readonly string[], level: number): string => {
      if (rest.length === 0) return `case when jsonb_typeof(${v}) in ('number', 'string') then to_jsonb((${v} #>> '{}')::${type}::text) else ${v} end`;
      const [step, ...tail] = rest as [string, ...string[]];
      const e = `"e${level}"`;
      if (step === "[]")
        return `case when jsonb_typeof(${v}) = 'array' then coalesce((select jsonb_agg(${rewrite(`${e}."value"`, tail, level + 1)} order by ${e}."n") from jsonb_array_elements(${v}) with ordinality ${e} ("value", "n")), '[]'::jsonb) else ${v} end`;
      if (step === "{}")
        return `case when jsonb_typeof(${v}) = 'object' then coalesce((select jsonb_object_agg(${e}."key", ${rewrite(`${e}."value"`, tail, level + 1)}) from jsonb_each(${v}) ${e}), '{}'::jsonb) else ${v} end`;
      const key = literal(step);
      return `case when jsonb_typeof(${v}) = 'object' and (${v} -> ${key}) is not null then jsonb_set(${v}, array[${key}], ${rewrite(`(${v} -> ${key})`, tail, level + 1)}) else ${v} end`;
    };
    // The rows to convert: a number, or a string not of the new shape, at the path.
    const stale = literal(`${nestedPath(path)} ? (@.type() == "number" || (@.type() == "string" && !(${shape})))`);
    return [{ guard, update: `update ${t} set ${c} = ${rewrite(c, path, 1)} where jsonb_path_exists(${c}, ${stale});` }];
  });
}

/** The indexes of `table` whose definition names `column` (quoted, as canon writes every name). */
function indexesOn(table: SnapshotTable, column: string): SnapshotIndex[] {
  const name = quote(column);
  return [...table.indexes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).filter((i) => i.definition.includes(name));
}

/**
 * A plain column's value as the JSON a wrapped column keeps (a field made both optional and
 * nullable): the JSON type its check wants (a decimal is a JSON string, `"12.50"`). SQL NULL is
 * what it meant in the plain column (`nullIsNull`: the field was nullable and required, its NULL
 * read back `null`, and becomes JSON null; else it was absent, and stays SQL NULL). `c::jsonb`
 * would parse the text as JSON (`hello` fails) and has no cast from a number. The same on a second
 * run, the column being jsonb then (`pg_typeof`: its SQL NULLs are absent values by then).
 */
function wrappedValue(c: string, check: string, nullIsNull = false): string {
  const text = `(to_jsonb(${c}) #>> '{}')`;
  const json = check.includes(`= 'number' then`) ? `to_jsonb(${text}::numeric)` : check.includes(`= 'boolean' then`) ? `to_jsonb(${text}::boolean)` : `to_jsonb(${text})`;
  const orNull = nullIsNull ? `when ${c} is null and pg_typeof(${c}) <> 'jsonb'::regtype then 'null'::jsonb ` : "";
  return `case ${orNull}when jsonb_typeof(to_jsonb(${c})) = 'null' then 'null'::jsonb else ${json} end`;
}

/** The statements that take a database from `previous` (null: empty) to `next`; null when there is nothing to do. */
export function migrationBetween(
  previous: SchemaSnapshot | null,
  next: SchemaSnapshot,
  renames: ReadonlyArray<readonly [table: string, from: string, to: string]> = [],
  earlier: ReadonlyArray<readonly [table: string, from: string, to: string]> = [],
): Migration | null {
  const changes: Change[] = [];
  const oldExtensions = new Set(previous?.extensions ?? []);
  const extensions = next.extensions.filter((e) => !oldExtensions.has(e));
  if (extensions.length) changes.push({ words: "", statements: extensions.map((e) => `create extension if not exists ${e};`) });

  const before = new Map((previous?.tables ?? []).map((t) => [t.name, t]));
  const added = next.tables.filter((t) => !before.has(t.name));
  changes.push(...createTables(added, new Set(before.keys())));
  // Arrays that move from a jsonb column of a table that exists into a link table: a new one, or
  // one an earlier relation of that name left (a relation made a plain array, then a relation again).
  const moving = next.tables.filter(
    (t) =>
      t.link &&
      before.get(t.link.owner)?.columns.some((c) => c.name === t.link!.column) &&
      !next.tables.find((o) => o.name === t.link!.owner)?.columns.some((c) => c.name === t.link!.column),
  );
  // The tenant column of each tenant-scoped table: a new tenant field is filled from a parent's.
  const tenants = new Map(next.tables.flatMap((t) => t.columns.filter((c) => c.tenant).map((c): [string, string] => [t.name, c.name])));
  for (const table of next.tables) {
    const old = before.get(table.name);
    const moved = new Set(moving.filter((t) => t.link!.owner === table.name).map((t) => t.link!.column));
    if (old) changes.push(...alterTable(old, table, moved, tenants));
  }
  changes.push(...moving.map((t) => moveToLinkTable(t, before.has(t.name))));
  // An array added to a table that exists may be a relation made a plain array again: the ids of
  // the link table it leaves go back into its column. Asked of the database (the link table a
  // relation leaves is in no snapshot once it has left), so every array column added gets it.
  for (const table of next.tables) {
    const old = before.get(table.name);
    if (!old || table.link) continue;
    for (const column of table.columns)
      if (column.type === "jsonb" && !old.columns.some((c) => c.name === column.name) && column.check?.expression.includes(`jsonb_typeof(${quote(column.name)}) = 'array'`))
        changes.push(moveFromLinkTable(table.name, column.name));
  }
  // A relation made a single reference of the same name: its one id per record goes back into the column.
  for (const table of next.tables) {
    const old = before.get(table.name);
    if (!old || table.link) continue;
    for (const column of table.columns) {
      if (column.type !== "uuid" || !column.references || old.columns.some((c) => c.name === column.name)) continue;
      const link = [...before.values()].find((t) => t.link?.owner === table.name && t.link.column === column.name && t.link.target === column.references!.table);
      if (link && !next.tables.some((t) => t.name === link.name)) changes.push(moveLinksToColumn(table.name, column.name, link));
    }
  }
  changes.push(...renames.flatMap(([table, from, to]) => copyRenamed(before.get(table), next.tables.find((t) => t.name === table), from, to)));
  // A rename pointed at another field: the values an earlier rename of the same old name moved
  // into a column that now leaves are moved on (the old column holds nulls since that move).
  changes.push(
    ...renames.flatMap(([table, from, to]) =>
      earlier
        .filter(([t, f, x]) => t === table && f === from && x !== to && !next.tables.find((n) => n.name === table)?.columns.some((c) => c.name === x))
        .flatMap(([, , x]) => copyRenamed(before.get(table), next.tables.find((t) => t.name === table), x, to)),
    ),
  );
  changes.push(...renames.flatMap(([table, from, to]) => moveRenamedLinks(before, next, table, from, to)));
  const kept = new Set(next.tables.map((t) => t.name));
  for (const table of previous?.tables ?? []) {
    if (!kept.has(table.name)) {
      // Its foreign keys that restrict go: no version shows these rows (a removed resource's, a
      // removed relation's links), so none may hold back the delete of a record they name.
      const held = table.columns.filter((c) => c.references && c.references.onDelete !== "cascade").map((c) => `alter table ${quote(table.name)} drop constraint if exists ${quote(c.references!.name)};`);
      changes.push({ words: `retire_${table.name}`, statements: [`-- ${table.name} (${table.collection}) left the definitions; the table and its data stay.`, ...held] });
    }
  }
  if (!changes.some((c) => c.statements.some((s) => !s.startsWith("--")) || c.words.startsWith("retire_"))) return null;
  return { name: previous ? migrationName(changes.map((c) => c.words).filter(Boolean)) : "initial", statements: changes.flatMap((c) => c.statements) };
}

/**
 * A field renamed (`renamed: { in, from }`) is stored under its new name: the migration that adds
 * the new column to a table that exists moves the values of the old column into it, row by row,
 * when the old column is there and of the same type, or a decimal the new one holds every value
 * of (a rename that also changes the type otherwise starts empty, as a new field would). Moved, not copied: the old column keeps nulls (it stays, as every
 * column that leaves does, its NOT NULL lifted above), so that it holds no reference or unique
 * value back, and applying the statement again moves nothing. Asked of the database itself, not
 * of the schema before: a replayed schema lists an old nullable column no more (replay.ts).
 */
function copyRenamed(old: SnapshotTable | undefined, table: SnapshotTable | undefined, from: string, to: string): Change[] {
  if (!old || !table || !table.columns.some((c) => c.name === to) || old.columns.some((c) => c.name === to)) return [];
  const [t, f, n] = [quote(table.name), quote(from), quote(to)];
  const column = table.columns.find((c) => c.name === to)!;
  const required = column.notNull && column.default === undefined;
  // Of one type, a decimal no narrower (`numeric(8, 2)` into `numeric(10, 2)`: every value fits).
  const fits =
    `select 1 from information_schema.columns "o" join information_schema.columns "n" on "n"."table_schema" = "o"."table_schema" and "n"."table_name" = "o"."table_name"` +
    ` where "o"."table_schema" = current_schema() and "o"."table_name" = ${literal(table.name)} and "o"."column_name" = ${literal(from)} and "n"."column_name" = ${literal(to)}` +
    ` and "o"."data_type" = "n"."data_type" and ("o"."data_type" <> 'numeric' or ("n"."numeric_precision" - "n"."numeric_scale" >= "o"."numeric_precision" - "o"."numeric_scale" and "n"."numeric_scale" >= "o"."numeric_scale"))`;
  return [
    {
      words: `rename_${table.name}_${from}`,
      statements: [
        [
          `do $$ begin`,
          `  if exists (${fits}) then`,
          `    update ${t} set ${n} = ${f}, ${f} = null where ${f} is not null;`,
          // A required field: its column, added nullable (rows existed), is not null once every row has its value, as in a fresh database.
          ...(required ? [`    if not exists (select 1 from ${t} where ${n} is null) then`, `      alter table ${t} alter column ${n} set not null;`, `    end if;`] : []),
          `  end if;`,
          `end $$;`,
        ].join("\n"),
      ],
    },
  ];
}

/**
 * An array of ids renamed: its new link table (created above) takes the old one's rows, when the
 * old one is there and links to the same table, and the old one keeps none (it stays, as a table
 * that leaves does, and holds no delete back); applying it again moves nothing.
 */
function moveRenamedLinks(before: Map<string, SnapshotTable>, next: SchemaSnapshot, table: string, from: string, to: string): Change[] {
  const link = next.tables.find((t) => t.link?.owner === table && t.link.column === to);
  if (!link || before.has(link.name) || !before.has(table)) return [];
  const old = identifier(`${table}__${from}`);
  const columns = [LINK_COLUMNS.owner, LINK_COLUMNS.position, LINK_COLUMNS.target].map(quote).join(", ");
  const sameTarget =
    `select 1 from "pg_constraint" where "conrelid" = to_regclass(${literal(quote(old))}) and "contype" = 'f'` +
    ` and "confrelid" = ${literal(quote(link.link!.target))}::regclass and "conkey" = array[(select "attnum" from "pg_attribute" where "attrelid" = to_regclass(${literal(quote(old))}) and "attname" = ${literal(LINK_COLUMNS.target)})]`;
  return [
    {
      words: `rename_${table}_${from}`,
      statements: [
        [
          `do $$ begin`,
          `  if exists (${sameTarget}) then`,
          `    insert into ${quote(link.name)} (${columns}) select ${columns} from ${quote(old)} on conflict do nothing;`,
          `    delete from ${quote(old)};`,
          `  end if;`,
          `end $$;`,
        ].join("\n"),
      ],
    },
  ];
}

function migrationName(words: string[]): string {
  if (!words.length) return "update";
  let name = words.slice(0, 2).join("_and_");
  if (words.length > 2) name += "_and_more";
  if (name.length > 60) name = `${words[0]!.slice(0, 50)}_and_more`;
  return name.replace(/[^a-z0-9_]+/g, "_").replace(/_+/g, "_").replace(/^_|_$/g, "");
}
