/**
 * The SQL store's deletes (sql-store.ts), and what a delete takes along: the records its foreign
 * keys delete with it (`on delete cascade`) and the records whose arrays of ids lose it, read and
 * locked level by level in its transaction (one statement per level and reference) so that their
 * events are kept with the delete's, counted against the cascade limit (422 beyond it) before
 * any is read; and, for a tenant principal's delete (SPEC §12.4), each of those statements holds
 * the records it takes along to the tenant.
 */
import type { StoredEvent } from "./events.ts";
import { BusinessRuleError } from "./errors.ts";
import { cascadeTooLargeError, otherTenantsError, referencedError, updatedKey } from "./references.ts";
import { quoteIdentifier as q } from "./sql-codec.ts";
import type { Row, SqlQueryable } from "./sql-driver.ts";
import { insertEvents } from "./sql-events.ts";
import { LINK_COLUMNS } from "./sql-schema.ts";
import { compareCodePoints } from "./sorting.ts";
import { arrayLiteral } from "./sql-sort.ts";
import { recordOf, translated, type Prepared, type SqlContext } from "./sql-tables.ts";
import { missingOrChanged, writeOne } from "./sql-writes.ts";
import type { DeleteArgs, StoredRecord, Values } from "./store.ts";

/**
 * `Store.delete`. `current`, the record as read at `expectedRevision`, lets the delete and its
 * event go as one statement. Refused by a `restrict` reference (a foreign key), the 422 names the
 * first collection whose records still name it in the order the memory store checks them
 * (`firstReferrer`), not the one whose foreign key the database happened to check first. A
 * record named from inside a field kept whole (`StoreReference.path`), which no foreign key
 * holds, is looked for in the delete's transaction after its statement (`holdNone`).
 */
export async function deleteRecord(sql: SqlContext, args: DeleteArgs): Promise<boolean> {
  try {
    return await deleteOne(sql, args);
  } catch (error) {
    if (
      !(error instanceof BusinessRuleError) ||
      !REFERRED.test(error.message) ||
      !sql.cascades.restricts.has(args.collection)
    )
      throw error;
    const referrer = await firstReferrer(sql, args.collection, args.id);
    throw referrer === undefined ? error : referencedError(referrer);
  }
}

/** The message of `referencedError`, and of a foreign key's refusal of a delete (sql-errors.ts). */
const REFERRED = /^Records of .* still refer to this record\.$/;

/**
 * The first collection, in the generated order of `restrict` references to `collection`, with a
 * record that names `id` through one; undefined when none does.
 */
function firstReferrer(sql: SqlContext, collection: string, id: string): Promise<string | undefined> {
  return firstHolder(sql, sql.db, collection, [id]);
}

/**
 * The first collection, in the generated order of `restrict` references to `collection` (the
 * order the memory store checks them in), with a record that names one of `ids` through one;
 * undefined when none does.
 */
async function firstHolder(
  sql: SqlContext,
  db: SqlQueryable,
  collection: string,
  ids: readonly string[],
): Promise<string | undefined> {
  for (const reference of sql.cascades.restricts.get(collection) ?? []) {
    const holder = sql.tables.collection(reference.collection);
    const column = holder.columns.get(reference.field);
    if (!column) continue;
    const { owner, target } = LINK_COLUMNS;
    const c = q(column.column);
    let named: string;
    let params: unknown[];
    if (reference.path && ids.length === 1) {
      // One record (a delete's own): by containment, which the column's GIN index serves.
      named = `${c} @> $1::jsonb`;
      params = [JSON.stringify(containing(reference.path, ids[0]!))];
    } else if (reference.path) {
      // The records a cascade took along: one walk of the column's values for all of them.
      named = `exists (select 1 from jsonb_path_query(${c}, $2::jsonpath) as "canon__id" where "canon__id" #>> '{}' = any($1::text[]))`;
      params = [arrayLiteral(ids), jsonPath(reference.path)];
    } else {
      named = column.link
        ? `"row_id" in (select ${q(owner)} from ${q(column.link.table)} where ${q(target)} in (select "row_id" from ${q(column.link.target)} where "id" = any($1::uuid[])))`
        : `${c} = any($1::uuid[])`;
      params = [arrayLiteral(ids)];
    }
    const text = `select 1 from ${holder.table} where ${named} limit 1`;
    if ((await db.query(sql.tables.statement(text), params)).length) return reference.collection;
  }
  return undefined;
}

/** The least JSON value that holds `id` at `path`, for containment (`@>`): `["*", "person_id"]` gives `[{"person_id": id}]`. */
function containing(path: readonly string[], id: string): unknown {
  return path.reduceRight<unknown>((inner, part) => (part === "*" ? [inner] : { [part]: inner }), id);
}

/** A `StoreReference.path` as an SQL/JSON path from the field's value: `["*", "person_id"]` is `$[*]."person_id"`. */
function jsonPath(path: readonly string[]): string {
  return `$${path.map((part) => (part === "*" ? "[*]" : `."${part.replace(/["\\]/g, (c) => `\\${c}`)}"`)).join("")}`;
}

/**
 * Run in a delete's transaction once its statement has deleted the record (`id` of `collection`)
 * and the records its cascade took along (`cascaded`): 422 when a record that is still there
 * names one of them from inside a field kept whole (`StoreReference.path`), which no foreign key
 * holds, naming the first referring collection in the generated order, as the memory store does;
 * the transaction then rolls back. After the statement, so that a delete that matched no record
 * (another revision, another tenant) answers as it would without such references, and the records
 * deleted with it are gone already. It takes no lock on the referring rows (docs/store.md).
 */
export async function holdNone(
  sql: SqlContext,
  db: SqlQueryable,
  collection: string,
  id: string,
  cascaded: ReadonlyArray<[string, StoredRecord]>,
): Promise<void> {
  if (!sql.cascades.nested.size) return;
  for (const [name, ids] of deletedIds(collection, id, cascaded)) {
    if (!sql.cascades.nested.has(name)) continue;
    const referrer = await firstHolder(sql, db, name, ids);
    if (referrer !== undefined) throw referencedError(referrer);
  }
}

/** The ids a delete takes, by collection: `id` of `collection`, and the records its cascade takes along. */
function deletedIds(
  collection: string,
  id: string,
  cascaded: ReadonlyArray<[string, StoredRecord]>,
): Map<string, string[]> {
  const deleted = new Map<string, string[]>([[collection, [id]]]);
  for (const [name, record] of cascaded) deleted.set(name, [...(deleted.get(name) ?? []), record.id]);
  return deleted;
}

async function deleteOne(
  sql: SqlContext,
  { collection, id, expectedRevision, publish, current, where, tenant: writer }: DeleteArgs,
): Promise<boolean> {
  const p = sql.tables.collection(collection);
  const params: unknown[] = [id, expectedRevision];
  const statement = sql.tables.scoped(p, p.delete, where, params);
  // Without records to take along, arrays to update or records named from inside a field kept
  // whole to look for (`holdNone`), the delete is one statement.
  const { byReferenced, arrays, nested } = sql.cascades;
  // A principal of a tenant: what the cascade would take along is looked at first (`takenAlong`
  // refuses a record of another tenant), never left to the foreign keys.
  const tenant = tenantOf(sql, collection, where) ?? writer;
  if (
    !nested.has(collection) &&
    (!byReferenced.has(collection) ||
      (tenant === undefined && (!publish || !sql.schema.events) && !arrays && !nested.size))
  ) {
    const image = current?.revision === expectedRevision ? current : undefined;
    const deleted = await writeOne(sql, collection, "delete", p, statement, params, publish, image);
    return deleted ? true : missingOrChanged(sql, p, id, false, where);
  }
  // A delete that takes records along keeps all their events: one transaction.
  let events: StoredEvent[] = [];
  const deleted = await translated(sql, collection, "delete", () =>
    sql.db.transaction(async (tx) => {
      // The records the foreign keys delete with it, locked until the commit (so that none is
      // added or changed in between): their events are kept with the delete's.
      const { cascaded, unlinked } = await takenAlong(sql, tx, collection, id, where, tenant);
      const rows = await tx.query(statement, params);
      if (!rows[0]) return false;
      await holdNone(sql, tx, collection, id, cascaded);
      const now = new Date().toISOString();
      if (!publish) {
        for (const [name, ids] of unlinked) await touch(sql, tx, name, ids, tenant, now);
        return true;
      }
      const made = [publish(recordOf(p, rows[0]), collection)];
      for (const [name, record] of cascaded) made.push(publish(record, name));
      // The records whose arrays lost ids: a new revision, and their `.updated` events.
      for (const [name, ids] of unlinked) {
        const holder = sql.tables.collection(name);
        for (const row of await touch(sql, tx, name, ids, tenant, now))
          made.push(publish(recordOf(holder, row), updatedKey(name)));
      }
      events = sql.schema.events ? await insertEvents(tx, made) : made;
      return true;
    }),
  );
  if (!deleted) return missingOrChanged(sql, p, id, false, where);
  await sql.sinks.publish(events);
  return true;
}

/**
 * The records that deleting `id` of `collection` deletes through `on delete cascade`, level by
 * level (one statement per level and reference, whatever the number of records), read `for
 * update`; and (`unlinked`) the ids of the records whose arrays lose an id through a `cascade`
 * on an array's items, by collection, locked too. The record itself is locked first: a record
 * referring to it cannot be inserted until the delete has committed (and then its foreign key
 * refuses it). More than `cascadeLimit` records deleted or changed: 422, the deleted ones
 * counted first (ids only, at most the limit + 1 of them) before any is read. The transaction
 * gives up waiting for a lock after 2 s (409).
 */
export async function takenAlong(
  sql: SqlContext,
  db: SqlQueryable,
  collection: string,
  id: string,
  where?: Values,
  tenant?: string,
): Promise<{ cascaded: Array<[string, StoredRecord]>; unlinked: Map<string, string[]> }> {
  const unlinked = new Map<string, string[]>();
  if (!sql.cascades.byReferenced.has(collection)) return { cascaded: [], unlinked };
  const p = sql.tables.collection(collection);
  // Waiting for another request's locks gives up after 2 s (409); left idle, the transaction
  // ends after `statement_timeout` (the session's idle_in_transaction_session_timeout).
  if (sql.db.kind === "postgres") await db.exec("set local lock_timeout = 2000");
  // The record of another tenant (`where`, SPEC §12.4) is neither locked nor walked.
  const params: unknown[] = [id];
  const lock = `select "id" from ${p.table} where "id" = $1${sql.tables.andWhere(p, where, params)} for update`;
  if (!(await db.query(sql.tables.statement(lock), params)).length) return { cascaded: [], unlinked };
  const limit = sql.cascades.limit;
  // The bounded count: ids only, no locks, at most limit + 1 of them over all levels.
  let counted = 0;
  await cascadeLevels(sql, collection, id, async (child, column, parents, name) => {
    // A principal of a tenant takes nothing of another tenant along (SPEC §12.4): 422.
    await refuseOtherTenants(sql, db, name, tenant, `${child.table} where ${column} = any($1::uuid[])`, [
      arrayLiteral(parents),
    ]);
    const params: unknown[] = [arrayLiteral(parents), limit - counted + 1];
    const statement = sql.tables.statement(
      `select "id" from ${child.table} where ${column} = any($1::uuid[])${tenantMatch(sql, name, tenant, params)} limit $2`,
    );
    const ids = (await db.query(statement, params)).map((r) => String(r.id));
    counted += ids.length;
    if (counted > limit) throw cascadeTooLargeError(limit);
    return ids;
  });
  // The records themselves, locked level by level (a level locked, none can be added under it).
  const found: Array<[string, StoredRecord]> = [];
  const taken = new Set<string>();
  await cascadeLevels(sql, collection, id, async (child, column, parents, name) => {
    const params: unknown[] = [arrayLiteral(parents)];
    const statement = sql.tables.statement(
      `select ${child.select} from ${child.table} where ${column} = any($1::uuid[])${tenantMatch(sql, name, tenant, params)} order by "id" for update`,
    );
    const ids: string[] = [];
    for (const row of await db.query(statement, params)) {
      const record = recordOf(child, row);
      ids.push(record.id);
      if (taken.has(`${name}\0${record.id}`)) continue;
      taken.add(`${name}\0${record.id}`);
      found.push([name, record]);
    }
    if (found.length > limit) throw cascadeTooLargeError(limit);
    return ids;
  });
  // The records whose arrays hold a deleted id (a link table's rows): one statement per deleted
  // collection and `many` reference, locked, and counted against the same limit.
  const deleted = deletedIds(collection, id, found);
  let changed = 0;
  for (const [name, ids] of deleted) {
    for (const reference of sql.cascades.byReferenced.get(name) ?? []) {
      if (!reference.many) continue;
      const child = sql.tables.collection(reference.collection);
      const link = sql.tables.column(child, reference.field).link;
      if (!link) continue;
      const { owner, target } = LINK_COLUMNS;
      const holding =
        `${child.table} where "row_id" in (select ${q(owner)} from ${q(link.table)} ` +
        `where ${q(target)} in (select "row_id" from ${sql.tables.collection(name).table} where "id" = any($1::uuid[])))`;
      // Nor does it change another tenant's arrays.
      await refuseOtherTenants(sql, db, reference.collection, tenant, holding, [arrayLiteral(ids)]);
      const params: unknown[] = [arrayLiteral(ids), limit - found.length - changed + 1];
      const statement = sql.tables.statement(
        `select "id" from ${holding}` +
          `${tenantMatch(sql, reference.collection, tenant, params)} order by "id" limit $2 for update`,
      );
      const holders = unlinked.get(reference.collection) ?? [];
      const rows = await db.query(statement, params);
      for (const row of rows) holders.push(String(row.id));
      changed += rows.length;
      if (found.length + changed > limit) throw cascadeTooLargeError(limit);
      if (holders.length) unlinked.set(reference.collection, holders);
    }
  }
  // A record deleted with it is not updated. By collection name, each collection's in id order:
  // the order of their `.updated` events, as the memory store makes them.
  const updated = new Map<string, string[]>();
  for (const name of [...unlinked.keys()].sort()) {
    const gone = new Set(found.filter(([c]) => c === name).map(([, r]) => r.id));
    const kept = [...new Set(unlinked.get(name))].filter((holder) => !gone.has(holder)).sort();
    if (kept.length) updated.set(name, kept);
  }
  return { cascaded: found, unlinked: updated };
}

/**
 * Walks the cascade from `id` of `collection` level by level: `step` gets, for each `cascade`
 * reference to a collection of the level, the ids there, and answers the ids it found in the
 * referring collection (each id is walked once, a record reached twice is taken once).
 */
async function cascadeLevels(
  sql: SqlContext,
  collection: string,
  id: string,
  step: (child: Prepared, column: string, parents: string[], name: string) => Promise<string[]>,
): Promise<void> {
  const seen = new Set([`${collection}\0${id}`]);
  let level = new Map([[collection, [id]]]);
  while (level.size) {
    const next = new Map<string, string[]>();
    for (const [name, parents] of level) {
      for (const reference of sql.cascades.byReferenced.get(name) ?? []) {
        // An array's items (`many`) lose the id: their records stay (`unlinked`).
        if (reference.many) continue;
        const child = sql.tables.collection(reference.collection);
        const column = sql.tables.column(child, reference.field);
        const found = await step(child, `${q(column.column)}`, parents, reference.collection);
        const ids = next.get(reference.collection) ?? [];
        for (const childId of found) {
          if (seen.has(`${reference.collection}\0${childId}`)) continue;
          seen.add(`${reference.collection}\0${childId}`);
          ids.push(childId);
        }
        if (ids.length) next.set(reference.collection, ids);
      }
    }
    level = next;
  }
}

/**
 * Gives the records `ids` of `collection` a new revision (an array of theirs lost an id), within
 * `tenant`; the rows written. Their `updated_at` is `now`, the delete's one time for every record
 * it changes (as on the memory store), or a millisecond after a record's own when that is later.
 */
export async function touch(
  sql: SqlContext,
  db: SqlQueryable,
  collection: string,
  ids: string[],
  tenant: string | undefined,
  now: string,
): Promise<Row[]> {
  const p = sql.tables.collection(collection);
  const params: unknown[] = [arrayLiteral(ids), now];
  const statement = sql.tables.statement(
    `update ${p.table} set "_revision" = "_revision" + 1, ` +
      `"updated_at" = greatest($2::timestamptz, "updated_at" + interval '1 millisecond') ` +
      `where "id" = any($1::uuid[])${tenantMatch(sql, collection, tenant, params)} returning ${p.select}`,
  );
  // In id order (the order records were created in), as the memory store takes them: their
  // `.updated` events come in the same order on every store.
  return (await db.query(statement, params)).sort((a, b) => compareCodePoints(String(a.id), String(b.id)));
}

/**
 * The tenant a delete's `where` names (SPEC §12.4): the value of the collection's tenant field,
 * or in the tenant collection (`where` on `id`) the record's id; undefined without one.
 */
export function tenantOf(sql: SqlContext, collection: string, where: Values | undefined): string | undefined {
  if (!where) return undefined;
  const field = sql.schema.collections[collection]?.tenant;
  const value = field === undefined ? where.id : where[field];
  return typeof value === "string" ? value : undefined;
}

/**
 * 422 (`otherTenantsError`) when `from` (`<table> where …`, its parameters `params`) holds a record
 * of `collection` of another tenant than `tenant`; nothing to look at without a tenant, or in a
 * collection that is not tenant-scoped.
 */
async function refuseOtherTenants(
  sql: SqlContext,
  db: SqlQueryable,
  collection: string,
  tenant: string | undefined,
  from: string,
  params: unknown[],
): Promise<void> {
  const field = sql.schema.collections[collection]?.tenant;
  if (tenant === undefined || field === undefined) return;
  const column = sql.tables.column(sql.tables.collection(collection), field).column;
  const text = `select 1 from ${from} and ${q(column)} <> $${params.length + 1}::uuid limit 1`;
  if ((await db.query(sql.tables.statement(text), [...params, tenant])).length)
    throw otherTenantsError(collection);
}

/**
 * ` and "<tenant column>" = $n::uuid` for the records of `collection` a delete of `tenant` takes
 * along, when `collection` is tenant-scoped (its parameter appended to `params`); else "".
 */
function tenantMatch(
  sql: SqlContext,
  collection: string,
  tenant: string | undefined,
  params: unknown[],
): string {
  const field = sql.schema.collections[collection]?.tenant;
  if (tenant === undefined || field === undefined) return "";
  params.push(tenant);
  return ` and ${q(sql.tables.column(sql.tables.collection(collection), field).column)} = $${params.length}::uuid`;
}
