/**
 * The SQL store's inserts and updates (sql-store.ts), and what every write shares: one write
 * statement with its event (in the same statement when the record is known before it runs, else
 * in one transaction), arrays of ids kept in link tables (written after the row, in its
 * transaction), the revision check after a write that matched no row (gone, or 409), and the
 * adoption of a first request's record by a repeat whose answer was never kept (idempotency.ts).
 * Unique values and references are the tables' own constraints: a violation becomes the API's
 * error (409, 422) through `translated` (sql-errors.ts).
 */
import { BusinessRuleError, RecordChangedError } from "./errors.ts";
import type { EventOf, StoredEvent } from "./events.ts";
import { activeClaim, adoptedOr, ClaimLostError } from "./idempotency.ts";
import { parameter, quoteIdentifier as q, sameJson, storedImage } from "./sql-codec.ts";
import type { Row, SqlQueryable, Statement } from "./sql-driver.ts";
import type { SqlOperation } from "./sql-errors.ts";
import { insertEvents, keptEvent, setEventData, writeWithEvent } from "./sql-events.ts";
import { CLAIM_LOST_SQLSTATE, markClaim } from "./sql-idempotency.ts";
import { getRecord } from "./sql-reads.ts";
import { LINK_COLUMNS } from "./sql-schema.ts";
import { arrayLiteral } from "./sql-sort.ts";
import { recordOf, translated, type Prepared, type SqlContext } from "./sql-tables.ts";
import type { InsertArgs, StoredRecord, UpdateArgs, Values } from "./store.ts";

/** What a write kept: the record as read back, and its event when the store made it. */
interface Kept {
  record: StoredRecord;
  event?: StoredEvent;
}

/** `Store.insert`. Unique values are the table's constraints (see sql/schema.ts), so `constraints` is not needed here. */
export async function insertRecord(
  sql: SqlContext,
  { collection, record, publish }: InsertArgs,
): Promise<StoredRecord> {
  const p = sql.tables.collection(collection);
  const { statement, params } = insertStatement(sql, p, record);
  try {
    if (p.links.length)
      return (await writeLinked(sql, collection, p, statement, params, publish, record.values))!;
    return (await writeOne(sql, collection, "write", p, statement, params, publish, record))!;
  } catch (error) {
    const claim = activeClaim();
    if (!claim || claim.claimed) throw error;
    return adopted(sql, collection, error);
  }
}

/** The `insert … returning` of `record` into `p` (the arrays kept in link tables aside), and its parameters. */
export function insertStatement(
  sql: SqlContext,
  p: Prepared,
  record: StoredRecord,
): { statement: Statement | string; params: unknown[] } {
  const params: unknown[] = [record.id, record.created_at, record.updated_at, record.revision];
  const names = [`"id"`, `"created_at"`, `"updated_at"`, `"_revision"`];
  const slots = ["$1", "$2::timestamptz", "$3::timestamptz", "$4"];
  for (const [field, value] of Object.entries(record.values)) {
    if (value === undefined) continue;
    const column = sql.tables.column(p, field);
    if (column.link) continue;
    names.push(q(column.column));
    slots.push(parameter(column, value, params));
  }
  const text = `insert into ${p.table} (${names.join(", ")}) values (${slots.join(", ")}) returning ${p.select}`;
  return { statement: sql.tables.statement(text), params };
}

/**
 * A create that wrote nothing because its idempotency key is taken (the write's claim was lost,
 * or a unique value is taken by the first request's record): when the first request's answer
 * was never kept (its instance died between its commit and keeping it), the record it created,
 * as stored now, with no event: the handler answers with it, as the first would have, and
 * the answer is kept (sql-idempotency.ts, `adoptable`). Else `error` stands (the key's state
 * answers: replay, 409, 422).
 */
export function adopted(sql: SqlContext, collection: string, error: unknown): Promise<StoredRecord> {
  const store = { idempotency: sql.idempotency, get: (name: string, id: string) => getRecord(sql, name, id) };
  return adoptedOr(store, collection, error);
}

/** `Store.update`. `current`, the record as read at `expectedRevision`, lets the write and its event go as one statement. */
export async function updateRecord(
  sql: SqlContext,
  { collection, id, values, expectedRevision, publish, current, where }: UpdateArgs,
): Promise<StoredRecord | null> {
  const { tables } = sql;
  const p = tables.collection(collection);
  for (const field of Object.keys(values)) tables.column(p, field);
  // The statement keeps the later of this and the previous time + 1 ms: with `current` (whose
  // revision the statement requires) the result is known before it runs.
  let updatedAt = new Date().toISOString();
  if (current?.revision === expectedRevision && current.updated_at >= updatedAt)
    updatedAt = new Date(Date.parse(current.updated_at) + 1).toISOString();
  const params: unknown[] = [id, expectedRevision, updatedAt];
  for (const column of p.stored) parameter(column, values[column.field], params);
  const update = tables.scoped(p, p.update, where, params);
  if (p.links.length) {
    const linked = await writeLinked(sql, collection, p, update, params, publish, values);
    return linked ?? missingOrChanged(sql, p, id, null, where);
  }
  const image =
    current?.revision === expectedRevision
      ? {
          id,
          created_at: current.created_at,
          updated_at: updatedAt,
          revision: expectedRevision + 1,
          values,
        }
      : undefined;
  const written = await writeOne(sql, collection, "write", p, update, params, publish, image);
  return written ?? missingOrChanged(sql, p, id, null, where);
}

/**
 * One write statement (`returning` the record) and its event: the record, or null when the
 * statement matched no row. With `publish` and an event table, and `image` (the record as the
 * statement will write it), the event is made first and kept by the same statement
 * (`writeWithEvent`): one round trip. Should the row read back differ from `image` (a value the
 * column keeps otherwise than sent), the kept event's data is made again from the row. Without
 * `image`, the write and its event run in a transaction. Events go to the sinks after the commit.
 */
export async function writeOne(
  sql: SqlContext,
  collection: string,
  op: SqlOperation,
  p: Prepared,
  statement: Statement | string,
  params: unknown[],
  publish: EventOf<StoredRecord> | undefined,
  image: StoredRecord | undefined,
): Promise<StoredRecord | null> {
  const { db } = sql;
  const written = await translated(sql, collection, op, async (): Promise<Kept | null> => {
    // A request with an idempotency key claims it with the write (sql-idempotency.ts).
    const claim = activeClaim();
    const claimed = claim !== undefined;
    if (!publish || !sql.schema.events) {
      if (claimed) return db.transaction(async (tx) => markedWrite(tx, collection, p, statement, params));
      const rows = await db.query(statement, params);
      return rows[0] ? { record: recordOf(p, rows[0]) } : null;
    }
    if (!image) {
      return db.transaction(async (tx) => {
        const rows = await tx.query(statement, params);
        if (!rows[0]) return null;
        const record = recordOf(p, rows[0]);
        const [event] = await insertEvents(tx, [publish(record, collection)], {
          collection,
          id: record.id,
        });
        return { record, event };
      });
    }
    const expected = storedImage(p.list, image);
    const made = publish(expected, collection);
    const combined = writeWithEvent(
      typeof statement === "string" ? statement : statement.text,
      params.length,
      made,
      collection,
    );
    const rows = await db
      .query(sql.tables.statement(combined.text), [...params, ...combined.params])
      .catch((error: unknown) => {
        // The statement's fence: the request's idempotency claim was taken over, nothing written.
        throw claimed && (error as { code?: unknown }).code === CLAIM_LOST_SQLSTATE
          ? new ClaimLostError()
          : error;
      });
    if (!rows[0]) return null;
    // The statement claimed the request's key with the write (sql-idempotency.ts).
    if (claim) claim.claimed = true;
    const record = recordOf(p, rows[0]);
    let event = keptEvent(made, rows[0]);
    if (!sameJson(record, expected)) {
      const remade = publish(record, collection).event;
      event = { ...event, event: { ...event.event, data: remade.data } };
      await setEventData(db, event.event);
    }
    return { record, event };
  });
  if (!written) return null;
  if (publish) {
    const event = written.event ?? publish(written.record, collection);
    await sql.sinks.publish([event]);
  }
  return written.record;
}

/** A write without an event that marks the request's idempotency claim, in `tx`. */
async function markedWrite(
  tx: SqlQueryable,
  collection: string,
  p: Prepared,
  statement: Statement | string,
  params: unknown[],
): Promise<Kept | null> {
  const rows = await tx.query(statement, params);
  if (!rows[0]) return null;
  const record = recordOf(p, rows[0]);
  await markClaim(tx, { collection, id: record.id });
  return { record };
}

/**
 * A write of a record with arrays kept in link tables: the row, then its links (replaced), then
 * the record read back, and its event, in one transaction.
 */
async function writeLinked(
  sql: SqlContext,
  collection: string,
  p: Prepared,
  statement: Statement | string,
  params: unknown[],
  publish: EventOf<StoredRecord> | undefined,
  values: Values,
): Promise<StoredRecord | null> {
  let events: StoredEvent[] = [];
  const record = await translated(sql, collection, "write", () =>
    sql.db.transaction(async (tx) => {
      const rows = await tx.query(statement, params);
      if (!rows[0]) return null;
      const [row] = await relinked(sql, tx, collection, p, String(rows[0].id), values);
      const record = recordOf(p, row!);
      const made = publish ? [publish(record, collection)] : [];
      const created = { collection, id: record.id };
      if (sql.schema.events && made.length) events = await insertEvents(tx, made, created);
      else {
        events = made;
        await markClaim(tx, created);
      }
      return record;
    }),
  );
  if (events.length) await sql.sinks.publish(events);
  return record;
}

/**
 * Replaces the links of record `id` by the ids of `values` in their order, and reads the record
 * back. An id that names no record (deleted since it was checked) is a 422 naming its place.
 */
export async function relinked(
  sql: SqlContext,
  tx: SqlQueryable,
  collection: string,
  p: Prepared,
  id: string,
  values: Values,
): Promise<Row[]> {
  const { owner, position, target } = LINK_COLUMNS;
  for (const column of p.links) {
    const link = column.link!;
    const l = q(link.table);
    const value = values[column.field];
    const ids = Array.isArray(value) ? value.map(String) : [];
    await tx.query(
      sql.tables.statement(
        `delete from ${l} where ${q(owner)} = (select "row_id" from ${p.table} where "id" = $1)`,
      ),
      [id],
    );
    if (!ids.length) continue;
    const inserted = await tx.query(
      sql.tables.statement(
        `insert into ${l} (${q(owner)}, ${q(position)}, ${q(target)}) ` +
          `select "canon__o"."row_id", "canon__i"."n", "canon__t"."row_id" from ${p.table} "canon__o" ` +
          `cross join unnest($2::uuid[]) with ordinality as "canon__i" ("id", "n") ` +
          `join ${q(link.target)} "canon__t" on "canon__t"."id" = "canon__i"."id" ` +
          `where "canon__o"."id" = $1 returning ${q(position)}`,
      ),
      [id, arrayLiteral(ids)],
    );
    if (inserted.length !== ids.length) {
      const present = new Set(inserted.map((row) => Number(row[position])));
      const missing = ids.flatMap((_, i) => (present.has(i + 1) ? [] : [`${column.field}.${i}`]));
      throw new BusinessRuleError(`${missing[0]} names no existing record.`, [
        ...missing.map((field) => ({ field, issue: "must name an existing record" })),
      ]);
    }
  }
  return translated(sql, collection, "read", () => tx.query(p.get, [id]));
}

/**
 * After a write matched no row: `gone` when the record does not exist (or does not match
 * `where`: another tenant's), else a revision conflict.
 */
export async function missingOrChanged<T>(
  sql: SqlContext,
  p: Prepared,
  id: string,
  gone: T,
  where?: Values,
): Promise<T> {
  const rows = await revisionOf(sql, sql.db, p, id, where);
  if (!rows.length) return gone;
  throw new RecordChangedError();
}

/** The revision of record `id`, when it matches `where`. */
export function revisionOf(
  sql: SqlContext,
  db: SqlQueryable,
  p: Prepared,
  id: string,
  where: Values | undefined,
): Promise<Row[]> {
  if (!where) return db.query(p.revision, [id]);
  const params: unknown[] = [id];
  const text = `select "_revision" from ${p.table} where "id" = $1${sql.tables.andWhere(p, where, params)}`;
  return db.query(sql.tables.statement(text), params);
}
