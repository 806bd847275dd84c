/**
 * The SQL store's `writeAll` (sql-store.ts): several writes on different records as one (an
 * action and the record it changes, a hook's writes and the write they go with), in one
 * transaction, in order: inserts, updates, deletes (taking their records along, and refused by
 * a record that names them from inside a field kept whole, as `delete` does, sql-deletes.ts)
 * and `expect`s, which read the record `for share` so that it cannot change until the commit.
 * Then every write's event, in the same order, in the same transaction.
 */
import { RecordChangedError } from "./errors.ts";
import type { EventOf, StoredEvent } from "./events.ts";
import { activeClaim } from "./idempotency.ts";
import { updatedKey } from "./references.ts";
import { parameter } from "./sql-codec.ts";
import type { Row } from "./sql-driver.ts";
import { holdNone, takenAlong, tenantOf, touch } from "./sql-deletes.ts";
import { insertEvents } from "./sql-events.ts";
import { markClaim } from "./sql-idempotency.ts";
import { recordOf, translated, type SqlContext } from "./sql-tables.ts";
import { adopted, insertStatement, relinked, revisionOf } from "./sql-writes.ts";
import type { StoredRecord, Write } from "./store.ts";

/** Thrown inside `writeAll`'s transaction when a record to write is gone: rolls it back. */
class Gone extends Error {}

/**
 * The writes in one transaction, in order, then their events (in the same order) with them.
 * `expect` reads the record `for share`: it cannot change until the commit. A delete takes its
 * `cascade` records along as `delete` does. Writes that end with an insert and wrote nothing
 * because the request's idempotency key was taken by a first request whose answer was never
 * kept give that request's record alone (`adopted`).
 */
export async function writeAll(sql: SqlContext, writes: readonly Write[]): Promise<StoredRecord[] | null> {
  let events: StoredEvent[] = [];
  // Writes that end with a create (a create through its hook, an action) answer with that
  // record: the request's idempotency claim names it (sql-idempotency.ts).
  const last = writes[writes.length - 1];
  const created =
    last && "insert" in last ? { collection: last.insert.collection, id: last.insert.record.id } : undefined;
  try {
    const records = await sql.db.transaction(async (tx) => {
      const written: StoredRecord[] = [];
      const made: StoredEvent[] = [];
      for (const write of writes) {
        const collection = Object.values(write)[0]!.collection;
        const p = sql.tables.collection(collection);
        let rows: Row[];
        let publish: EventOf<StoredRecord> | undefined;
        let expected: number | undefined;
        if ("delete" in write) {
          // As `delete`: the records it takes along, locked, then the row, then their events.
          const { id, expectedRevision, publish: publishDelete, where, tenant: writer } = write.delete;
          const tenant = tenantOf(sql, collection, where) ?? writer;
          const { cascaded, unlinked } = await takenAlong(sql, tx, collection, id, where, tenant);
          const now = new Date().toISOString();
          const params: unknown[] = [id, expectedRevision];
          const statement = sql.tables.scoped(p, p.delete, where, params);
          rows = await translated(sql, collection, "delete", () => tx.query(statement, params));
          if (!rows[0] && (await revisionOf(sql, tx, p, id, where)).length) throw new RecordChangedError();
          if (!rows[0]) throw new Gone();
          await holdNone(sql, tx, collection, id, cascaded);
          const record = recordOf(p, rows[0]);
          written.push(record);
          if (publishDelete) made.push(publishDelete(record, collection));
          for (const [name, gone] of cascaded) if (publishDelete) made.push(publishDelete(gone, name));
          for (const [name, ids] of unlinked) {
            const holder = sql.tables.collection(name);
            for (const row of await touch(sql, tx, name, ids, tenant, now))
              if (publishDelete) made.push(publishDelete(recordOf(holder, row), updatedKey(name)));
          }
          continue;
        }
        if ("expect" in write) {
          const { id, revision, where } = write.expect;
          const params: unknown[] = [id];
          const lock = sql.tables.statement(
            `select ${p.select} from ${p.table} where "id" = $1${sql.tables.andWhere(p, where, params)} for share`,
          );
          rows = await translated(sql, collection, "read", () => tx.query(lock, params));
          expected = revision;
        } else if ("insert" in write) {
          const { record } = write.insert;
          publish = write.insert.publish;
          const { statement, params } = insertStatement(sql, p, record);
          rows = await translated(sql, collection, "write", () => tx.query(statement, params));
          if (rows[0] && p.links.length)
            rows = await relinked(sql, tx, collection, p, record.id, record.values);
        } else {
          const { id, values, expectedRevision, where } = write.update;
          publish = write.update.publish;
          for (const field of Object.keys(values)) sql.tables.column(p, field);
          const params: unknown[] = [id, expectedRevision, new Date().toISOString()];
          for (const column of p.stored) parameter(column, values[column.field], params);
          const update = sql.tables.scoped(p, p.update, where, params);
          rows = await translated(sql, collection, "write", () => tx.query(update, params));
          if (!rows[0] && (await revisionOf(sql, tx, p, id, where)).length) throw new RecordChangedError();
          if (rows[0] && p.links.length) rows = await relinked(sql, tx, collection, p, id, values);
        }
        if (!rows[0]) throw new Gone();
        const record = recordOf(p, rows[0]);
        if (expected !== undefined && record.revision !== expected) throw new RecordChangedError();
        written.push(record);
        if (publish) made.push(publish(record, collection));
      }
      if (sql.schema.events && made.length) events = await insertEvents(tx, made, created);
      else {
        // Without events kept, the request's idempotency key is claimed here (sql-idempotency.ts).
        await markClaim(tx, created);
        events = made;
      }
      return written;
    });
    if (events.length) await sql.sinks.publish(events);
    return records;
  } catch (error) {
    if (error instanceof Gone) return null;
    const claim = activeClaim();
    if (!created || !claim || claim.claimed) throw error;
    // A repeat whose first answer was never kept: the record the first created, alone (the
    // callers answer with the last record).
    return [await adopted(sql, created.collection, error)];
  }
}
