/**
 * The SQL store's part of the output, under `sql/`:
 *  - `NNNN_<name>.sql`: numbered migrations. Each run diffs the schema the definitions want
 *    against `schema.json` (what the migrations so far create) and adds one migration when they
 *    differ. The migrations that `schema.json` lists are carried over byte for byte: once
 *    written, a migration never changes. Any other `NNNN_*.sql` in `sql/` is not carried, so
 *    the writer sees it as stale (it has canon's notice: generate removes it, check lists it)
 *    or as foreign (it has not: generate refuses to run).
 *  - `schema.json`: the snapshot of the schema the migrations create, and the names of those
 *    migrations, committed with them.
 *  - `schema.ts`: what the runtime SQL store needs per collection (tables, columns, constraints).
 *  - `index.ts`: `openStore(target)` for `memory`, `pglite:<dir>` and `postgres://…`.
 */
import type { ApiModel, StorageResource } from "../../model/types.ts";
import { GENERATED_MARK } from "../../util/generated.ts";
import { defineUnit, memoByText } from "../../engine.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter, type UnitContext } from "../emitter.ts";
import { IMPORTS, runtimeSource, source } from "../shared/imports.ts";
import { renderedFile } from "../shared/rendered.ts";
import { literal, propertyKey } from "../shared/code.ts";
import { migrationBetween } from "./diff.ts";
import { replayMigrations, snapshotFrom, UnreadableStatement, type Replay } from "./replay.ts";
import { collectionPlans, snapshotOf, SNAPSHOT_FORMAT, storagePlans, systemTables, type CollectionPlan, type SchemaSnapshot } from "./snapshot.ts";

export const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;
/** The newest migration while its changes are not released: `generate` writes it again on every run. */
export const PENDING_FILE = /^(\d{4})_pending\.sql$/;
const PENDING_HEADER =
  /^-- Pending migration (\d{4}) of the (.*), to be released as (\d{4}_[a-z0-9_]+)\.sql: canon generate\n-- rewrites it until canon release freezes it\. Every statement is idempotent; canon's migrate\(\) applies\n/m;

/**
 * The pending migration's text, frozen (`canon release`): its released name, and the text with the
 * header of a released migration; the statements stay byte for byte. Null: not a pending migration's text.
 */
export function releasedMigration(text: string): { name: string; text: string } | null {
  const m = PENDING_HEADER.exec(text);
  if (!m) return null;
  const header =
    `-- Migration ${m[1]} of the ${m[2]}: written once, never rewritten. A later change to the\n` +
    "-- definitions adds a later migration. Every statement is idempotent; canon's migrate() applies\n";
  return { name: `${m[3]}.sql`, text: text.replace(PENDING_HEADER, header) };
}
const SNAPSHOT_PATH = "sql/schema.json";
const SNAPSHOT_NOTICE = `${GENERATED_MARK}: the schema the migrations beside it create, which the next canon generate builds on.`;

export const sqlEmitter: Emitter = {
  name: "sql",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    const plans = collectionPlans(model, (resource, tenantReferenced) => context.unit(storageUnit, { resource, tenantReferenced }));
    // A field renamed in some version was stored under its old name before: its values are copied
    // over (diff.ts). The snapshot records each table's renames, so that a rename pointed at another
    // field later moves the values from the column the earlier one moved them to.
    const tables = new Map(plans.map((p) => [p.collection, p.table.name]));
    const renames = model.storage.flatMap((r) => r.renames.map(([from, to]): [string, string, string] => [tables.get(r.collection) ?? r.collection, from, to]));
    const next = withRenames(snapshotOf(plans, systemTables(model)), renames);
    const present = (context.previous?.list("sql") ?? []).filter((n) => MIGRATION_FILE.test(n)).sort();
    const before = present.length ? previousSnapshot(context) : null;
    // A snapshot written before canon listed its migrations: every migration present is carried.
    const listed = before?.migrations;
    const candidates = listed ? present.filter((n) => listed.includes(n)) : present;
    // What the migrations create, replayed from an empty database (replay.ts): the migrations that
    // apply in order are carried, and the next migration builds on what they really create.
    // The newest migration while it is pending (not released): written again from the released ones.
    const pending = candidates.length && PENDING_FILE.test(candidates[candidates.length - 1]!) ? candidates[candidates.length - 1]! : null;
    const released = pending ? candidates.slice(0, -1) : candidates;
    // Nothing released yet (a `canon dev` session's usual case): nothing to replay, and no key to
    // hash both snapshots for.
    const replay = released.length
      ? context.unit(releasedSchema, { files: released.map((name) => ({ name, text: context.previous!.read(`sql/${name}`) ?? "" })), hints: [before, next] })
      : NOTHING_RELEASED;
    const existing = released.slice(0, replay.applied);
    const carried: EmittedFile[] = existing.map((name) => ({ path: `sql/${name}`, content: context.previous!.read(`sql/${name}`) ?? "", parser: null }));
    // Without migrations there is nothing to build on: start from an empty database.
    let previous: SchemaSnapshot | null = null;
    const repairs: string[] = [];
    if (replay.created) {
      const created = replay.created;
      if (before && !pending && !replay.failure && context.unit(migrationUnit, { previous: created, next: before, renames: [] }) === null) {
        previous = withReturning(before, created, next);
      }
      else {
        previous = created;
        const deleted = (listed ?? []).filter((n) => !present.includes(n) && !PENDING_FILE.test(n));
        if (deleted.length) repairs.push(`${deleted.join(", ")} ${deleted.length === 1 ? "was" : "were"} deleted`);
        if (replay.failure) {
          const left = released.slice(replay.applied);
          repairs.push(`${left.join(", ")} could not apply after the migrations before (${replay.failure.message}) and ${left.length === 1 ? "was" : "were"} left out`);
        }
        if (!repairs.length && !pending) repairs.push(`they did not create the schema ${SNAPSHOT_PATH} described`);
      }
    }
    const earlier = (before?.tables ?? []).flatMap((t) => (t.renames ?? []).map(([from, to]): [string, string, string] => [t.name, from, to]));
    const migration = context.unit(migrationUnit, { previous, next, renames, earlier });
    const files = [...carried];
    if (migration) {
      const number = existing.length ? Number(MIGRATION_FILE.exec(existing[existing.length - 1]!)![1]) + 1 : 1;
      const id = String(number).padStart(4, "0");
      files.push({
        path: `sql/${id}_pending.sql`,
        content: [
          GENERATED_HEADER.replace(/^\/\//, "--"),
          `-- Pending migration ${id} of the ${model.title}, to be released as ${id}_${migration.name}.sql: canon generate`,
          "-- rewrites it until canon release freezes it. Every statement is idempotent; canon's migrate() applies",
          "-- pending migrations in order, in one transaction, and records them in canon_migrations.",
          ...(repairs.length
            ? [`-- It also repairs the migrations before it, so that together they create the schema ${SNAPSHOT_PATH} describes:`, `-- ${repairs.join("; ")}.`]
            : []),
          "",
          ...migration.statements.map((s) => `${s}\n`),
        ].join("\n"),
        parser: null,
      });
    }
    const migrations = files.map((f) => f.path.slice("sql/".length));
    // What the migrations written now create is exactly the schema the snapshot describes.
    const problem = context.verify ? context.unit(writtenSchemaProblem, { files: files.map((f) => ({ name: f.path.slice("sql/".length), text: f.content })), next }) : null;
    if (problem !== null) throw new Error(`canon wrote migrations that do not create the schema of the definitions (a bug in canon): ${problem}`);
    files.push(
      // Canonical `JSON.stringify` output, like the OpenAPI documents: no prettier pass on a file this large.
      {
        path: SNAPSHOT_PATH,
        content: `${JSON.stringify({ "x-generated": SNAPSHOT_NOTICE, ...next, migrations }, null, 2)}\n`,
        parser: null,
      },
      context.unit(schemaFile, {
        title: model.title,
        events: model.events,
        // The tenant field of each tenant-scoped collection (SPEC §12.4): a cascading delete's statements match it too.
        tenants: model.storage.flatMap((r): Array<[string, string]> => (r.tenantKey && r.tenantKey !== "id" ? [[r.collection, r.tenantKey]] : [])),
        // Each rename (old storage name, new one) by collection: `canon dev` moves a memory store's values over, as the migration does.
        renames: model.storage.flatMap((r) => r.renames.map(([from, to]): [string, string, string] => [r.collection, from, to])),
        plans,
      }),
      renderedFile(context, "sql/index.ts", "sql-index", { header: GENERATED_HEADER, imports: IMPORTS, title: model.title, exports: model.exportJobs !== null }, [
        runtimeSource(context, "index.ts", 1),
        runtimeSource(context, "sql-driver.ts", 1),
        runtimeSource(context, "sql-migrations.ts", 1),
        runtimeSource(context, "sql-store.ts", 1),
        source("../services.ts", { storeReferences: "value" }),
        source("./schema.ts", { sqlSchema: "value" }),
        runtimeSource(context, "exports.ts", 1),
      ]),
    );
    return files;
  },
};

/** The collections one stored resource keeps (snapshot.ts `storagePlans`): a function of the resource and of which collections it references are a tenant's. */
const storageUnit = defineUnit(
  "sql storage plans",
  ({ resource, tenantReferenced }: { resource: StorageResource; tenantReferenced: readonly string[] }) => storagePlans(resource, tenantReferenced),
);

/** The migration from one schema to another (diff.ts), null when they are the same: a function of the two snapshots. */
const migrationUnit = defineUnit(
  "sql migration",
  ({ previous, next, renames, earlier }: { previous: SchemaSnapshot | null; next: SchemaSnapshot; renames: Renames; earlier?: Renames }) =>
    migrationBetween(previous, next, renames, earlier),
);

type Renames = Array<[table: string, from: string, to: string]>;

/** `snapshot` with each table's renames (old name, new name), in order; none where it has none. */
function withRenames(snapshot: SchemaSnapshot, renames: Renames): SchemaSnapshot {
  if (!renames.length) return snapshot;
  return {
    ...snapshot,
    tables: snapshot.tables.map((t) => {
      const own = renames
        .filter(([table]) => table === t.name)
        .map(([, from, to]): [string, string] => [from, to])
        .sort((a, b) => (a.join() < b.join() ? -1 : a.join() > b.join() ? 1 : 0));
      return own.length ? { ...t, renames: own } : t;
    }),
  };
}

interface ReleasedSchema {
  applied: number;
  failure?: { name: string; message: string };
  created: SchemaSnapshot | null;
}

/** `releasedSchema` of no migration. */
const NOTHING_RELEASED: ReleasedSchema = { applied: 0, created: null };

/**
 * What the released migrations create, replayed from an empty database (replay.ts): how many
 * apply in order, the failure of the first that does not, and the snapshot of what those create
 * (named after `hints`: the snapshot in the output folder and the one the definitions want;
 * null when none applies). A function of the migrations' texts and the hints.
 */
const releasedSchema = defineUnit(
  "sql released schema",
  ({ files, hints }: { files: Array<{ name: string; text: string }>; hints: Array<SchemaSnapshot | null> }): ReleasedSchema => {
    const replay = replayed(files);
    return {
      applied: replay.applied,
      ...(replay.failure ? { failure: replay.failure } : {}),
      created: replay.applied > 0 ? snapshotFrom(replay.model, SNAPSHOT_FORMAT, hints) : null,
    };
  },
);

/**
 * Why the migrations written now do not create exactly the schema `next` describes (a bug in
 * canon), or null: a function of their texts and of `next`.
 */
const writtenSchemaProblem = defineUnit("sql written schema", ({ files, next }: { files: Array<{ name: string; text: string }>; next: SchemaSnapshot }): string | null => {
  const result = replayed(files);
  if (result.failure) return result.failure.message;
  const residue = files.length ? migrationBetween(snapshotFrom(result.model, SNAPSHOT_FORMAT, [next]), next) : null;
  return residue ? `the replayed schema differs: it still needs ${residue.statements.join(" ")}` : null;
});

/** `replayMigrations`, a statement canon cannot read said with its fix. */
function replayed(files: Array<{ name: string; text: string }>): Replay {
  try {
    return replayMigrations(files);
  } catch (error) {
    if (!(error instanceof UnreadableStatement)) throw error;
    throw new Error(
      `${error.message}: canon's migrations hold only the statements canon writes. Restore the file from version control (git checkout -- <out>/${error.message.split(" ")[0]}), and put SQL of your own in a migration outside the output folder`,
    );
  }
}

/**
 * `before` (the snapshot written last) with what it leaves out and the database still has, where
 * the definitions name it again: a table or column that left the definitions stays in the
 * database (diff.ts) and leaves the snapshot, so a field or resource of the same name that comes
 * back is altered from what the migrations made (its data kept, its type changed where it
 * differs), not added "if not exists" over it.
 */
function withReturning(before: SchemaSnapshot, created: SchemaSnapshot, next: SchemaSnapshot): SchemaSnapshot {
  const wanted = new Map(next.tables.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
  const made = new Map(created.tables.map((t) => [t.name, t]));
  let changed = false;
  const tables = before.tables.map((table) => {
    const names = wanted.get(table.name);
    const have = new Set(table.columns.map((c) => c.name));
    const back = (made.get(table.name)?.columns ?? []).filter((c) => !have.has(c.name) && names?.has(c.name));
    if (!back.length) return table;
    changed = true;
    return { ...table, columns: [...table.columns, ...back] };
  });
  const listed = new Set(before.tables.map((t) => t.name));
  const returning = created.tables.filter((t) => !listed.has(t.name) && wanted.has(t.name));
  if (!changed && !returning.length) return before;
  return { ...before, tables: [...tables, ...returning] };
}

function previousSnapshot(context: EmitContext): SchemaSnapshot | null {
  const text = context.previous?.read(SNAPSHOT_PATH);
  if (text === undefined) return null;
  const snapshot = parsedSnapshot(text) as SchemaSnapshot | null;
  if (!snapshot || snapshot.format !== SNAPSHOT_FORMAT || !Array.isArray(snapshot.tables)) {
    throw new Error(`${SNAPSHOT_PATH} in the output folder is not a canon schema snapshot (format ${SNAPSHOT_FORMAT}): restore it from version control`);
  }
  return snapshot;
}

/**
 * The snapshot's JSON, parsed; null when it is not JSON. Remembered by the text: in a dev session
 * the snapshot a save reads is the one the save before wrote. Only read, never modified.
 */
const parsedSnapshot = memoByText("parsed schema snapshot", (text): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}, 4);

/** `sql/schema.ts`: a function of the collections' plans, the API's title, whether events are on, and the tenant fields. */
const schemaFile = defineUnit(
  "sql schema file",
  (slice: { title: string; events: boolean; tenants: Array<[string, string]>; renames: Array<[string, string, string]>; plans: CollectionPlan[] }, context: UnitContext) =>
    styledTs("sql/schema.ts", context.render("sql-schema", schemaView(slice))),
);

function schemaView({
  title,
  events,
  tenants: tenantKeys,
  renames,
  plans,
}: {
  title: string;
  events: boolean;
  tenants: Array<[string, string]>;
  renames: Array<[string, string, string]>;
  plans: CollectionPlan[];
}): object {
  const tableToCollection = new Map(plans.map((p) => [p.table.name, p.collection]));
  const constraints: Array<{ name: string; value: string }> = [];
  for (const plan of plans) {
    for (const index of plan.table.indexes) {
      if (index.unique) constraints.push({ name: index.name, value: literal({ collection: plan.collection, field: index.unique, kind: "unique" }) });
      if (index.together) {
        const value = { collection: plan.collection, field: index.together[0], fields: index.together, kind: "unique" };
        constraints.push({ name: index.name, value: literal(value) });
      }
    }
    for (const column of plan.table.columns) {
      if (column.unique) {
        constraints.push({ name: column.unique, value: literal({ collection: plan.collection, field: column.name, kind: "unique" }) });
      }
      if (column.references) {
        const target = tableToCollection.get(column.references.table) ?? column.references.table;
        constraints.push({
          name: column.references.name,
          value: literal({ collection: plan.collection, field: column.name, kind: "references", references: target }),
        });
      }
    }    // A link table's constraints name the array of the owner's collection: a delete its target's
    // foreign key holds is refused naming the collection whose arrays name the record (422).
    for (const link of plan.links) {
      const field = link.link!.column;
      const target = tableToCollection.get(link.link!.target) ?? link.link!.target;
      for (const index of link.indexes) {
        if (index.together) constraints.push({ name: index.name, value: literal({ collection: plan.collection, field, kind: "unique" }) });
      }
      for (const column of link.columns) {
        if (!column.references) continue;
        const references = column.references.table === plan.table.name ? plan.collection : target;
        constraints.push({ name: column.references.name, value: literal({ collection: plan.collection, field, kind: "references", references }) });
      }
    }
  }
  const tenants = new Map(tenantKeys);
  return {
    header: GENERATED_HEADER,
    title,
    collections: plans.map((p) => {
      const columns = p.fields.map((f) => {
        const from = renames.find(([collection, , to]) => collection === p.collection && to === f.field)?.[1];
        return literal(from === undefined ? f : { ...f, renamedFrom: from });
      });
      const tenant = tenants.get(p.collection);
      return {
        key: propertyKey(p.collection),
        table: JSON.stringify(p.table.name),
        columns,
        // prettier always breaks an array of two or more objects; one fits on the line.
        columnsInline: columns.length < 2 ? `[${columns.join("")}]` : null,
        search: literal(p.search),
        tenant: tenant ? JSON.stringify(tenant) : null,
      };
    }),
    constraints: constraints.map((c) => ({ key: propertyKey(c.name), value: c.value })),
    events,
  };
}
