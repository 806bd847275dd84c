/**
 * The store over PostgreSQL (a server through `pg`, or PGlite in the process), with the same
 * behaviour as the memory store: ascending-id keyset lists, counted pages, case-insensitive
 * search, unique values (409), references that must exist (422), and writes that are atomic
 * compare-and-set on a revision. Every query is parameterized; every query names the columns
 * it reads, and `row_id` is never among them.
 *
 * The tables come from the generated migrations (sql-migrations.ts applies them);
 * `sql/schema.ts` tells the store which column holds which field and how (sql-schema.ts).
 *
 * A write given `publish` runs in one transaction with its event (the `canon__events` table,
 * see sql-events.ts): both commit or neither does. `transaction(fn)` runs more statements in
 * one; a write that changes more records (a cascade) keeps their events with
 * `insertEvents(tx, events)` there, and hands the events it returns (with the ids and times the
 * database gave them) to `published(events)` after the commit.
 *
 * `SqlStore` is the one class the rest of the runtime and the generated code use. It holds what
 * its parts share (`SqlContext`, sql-tables.ts) and hands each operation to the file of its
 * subject: sql-tables.ts (the prepared tables, the SQL of a match and of a sort), sql-reads.ts
 * (`get`, `list`, `page`), sql-writes.ts (`insert`, `update`, one write and its event, link
 * tables, constraint errors), sql-deletes.ts (`delete` and what it takes along), sql-write-all.ts
 * (`writeAll`); the events feed and the cursor keys are sql-events.ts's, the idempotency keys
 * sql-idempotency.ts's. This file keeps the store's own: its transactions, the sinks of its
 * events and its life.
 */
import type { CursorKey } from "./cursor-keys.ts";
import { EventSinks, type ApiEvent, type EventScope, type EventSink, type StoredEvent } from "./events.ts";
import { DEFAULT_CASCADE_LIMIT, referencesTo, type StoreReference } from "./references.ts";
import { deleteRecord } from "./sql-deletes.ts";
import type { SqlDriver, SqlQueryable } from "./sql-driver.ts";
import { cursorKeys, getEvent, insertEvents, listEvents, rotateCursorKey } from "./sql-events.ts";
import { SqlIdempotencyKeys } from "./sql-idempotency.ts";
import { getRecord, listRecords, pageOf } from "./sql-reads.ts";
import type { SqlSchema } from "./sql-schema.ts";
import { SqlTables, type SqlContext } from "./sql-tables.ts";
import { writeAll } from "./sql-write-all.ts";
import { insertRecord, updateRecord } from "./sql-writes.ts";
import type {
  CursorQuery,
  DeleteArgs,
  InsertArgs,
  ListPage,
  OffsetQuery,
  Store,
  StoredRecord,
  UpdateArgs,
  Values,
  Write,
} from "./store.ts";

export { openDriver, type SqlDriver, type SqlQueryable, type SqlStoreOptions } from "./sql-driver.ts";
export { migrate, readMigrations, type MigrationFile } from "./sql-migrations.ts";
export type { ColumnKind, SqlCollection, SqlColumn, SqlConstraint, SqlSchema } from "./sql-schema.ts";

export class SqlStore implements Store {
  /** What the store's parts share; inside `exclusive`, the same over its transaction. */
  private readonly sql: SqlContext;
  private closing: Promise<void> | undefined;
  /** The idempotency keys of POSTs (the table `canon__idempotency_keys`, sql-idempotency.ts). */
  readonly idempotency: SqlIdempotencyKeys;

  /**
   * `references` (the generated `storeReferences`) tells a delete which records its foreign keys
   * delete with it, so that their `.deleted` events are kept in its transaction too, and which
   * records name it from inside a field kept whole, which it looks for (`holdNone`).
   * `options.cascadeLimit` (default 10,000) bounds how many.
   */
  constructor(
    db: SqlDriver,
    schema: SqlSchema,
    references: readonly StoreReference[] = [],
    options: { cascadeLimit?: number } = {},
  ) {
    this.idempotency = new SqlIdempotencyKeys(db);
    this.sql = {
      db,
      schema,
      tables: new SqlTables(schema),
      sinks: new EventSinks(),
      idempotency: this.idempotency,
      cascades: {
        byReferenced: referencesTo(references.filter((reference) => reference.onDelete === "cascade")),
        arrays: references.some((reference) => reference.onDelete === "cascade" && reference.many),
        limit: options.cascadeLimit ?? DEFAULT_CASCADE_LIMIT,
        restricts: referencesTo(references.filter((reference) => reference.onDelete === "restrict")),
        nested: new Set(
          references.filter((reference) => reference.path).map((reference) => reference.references),
        ),
      },
    };
  }

  /** The driver, for queries of your own (reports, health checks). */
  get driver(): SqlDriver {
    return this.sql.db;
  }

  // Each operation hands the promise of its part on as it is: no promise of its own (one less
  // turn of the microtask queue on every request).
  list(collection: string, query: CursorQuery): Promise<ListPage> {
    return listRecords(this.sql, collection, query);
  }

  page(collection: string, query: OffsetQuery): Promise<{ records: StoredRecord[]; total: number }> {
    return pageOf(this.sql, collection, query);
  }

  get(collection: string, id: string, where?: Values): Promise<StoredRecord | null> {
    return getRecord(this.sql, collection, id, where);
  }

  insert(args: InsertArgs): Promise<StoredRecord> {
    return insertRecord(this.sql, args);
  }

  update(args: UpdateArgs): Promise<StoredRecord | null> {
    return updateRecord(this.sql, args);
  }

  delete(args: DeleteArgs): Promise<boolean> {
    return deleteRecord(this.sql, args);
  }

  writeAll(writes: readonly Write[]): Promise<StoredRecord[] | null> {
    return writeAll(this.sql, writes);
  }

  /**
   * Runs `fn` with this store as seen from inside one transaction that first takes PostgreSQL's
   * transaction-scoped advisory lock of `key` (`pg_advisory_xact_lock`): every process over the
   * same database that runs `exclusive` with that key waits until the one before it has committed
   * or rolled back, so a check and a write made through the store `fn` is given are one step on
   * every instance (the export cap, exports-limits.ts). Committed when `fn` resolves, rolled back
   * when it throws. For records without events: an event of a write there would be published
   * before the commit.
   */
  exclusive<T>(key: string, fn: (store: SqlStore) => Promise<T>): Promise<T> {
    const { db, tables } = this.sql;
    return db.transaction(async (tx) => {
      await tx.query(tables.statement("select pg_advisory_xact_lock(hashtextextended($1, 0))"), [key]);
      const inside: SqlDriver = {
        kind: db.kind,
        query: (statement, params) => tx.query(statement, params),
        exec: (text) => tx.exec(text),
        transaction: (work) => work(tx),
        close: async () => {},
      };
      // No adoption of a first request's record in here (sql-writes.ts `adopted`): its key's state is
      // read on the store's own connections, which on PGlite is the one this transaction holds (a
      // keyed repeat would wait for itself). The claim lost stands; the answer then comes from the key.
      return fn(
        Object.create(this, {
          sql: { value: { ...this.sql, db: inside, idempotency: undefined } },
        }) as SqlStore,
      );
    });
  }

  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. Events
   * kept there with `insertEvents(tx, events)` go to `published(events)` once it has committed.
   */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T> {
    return this.sql.db.transaction(fn);
  }

  /** Hands events that have committed to the sinks of `subscribe`. */
  published(events: StoredEvent[]): Promise<void> {
    return this.sql.sinks.publish(events);
  }

  listEvents(
    scope: EventScope,
    after: string | undefined,
    limit: number,
  ): Promise<{ events: ApiEvent[]; hasMore: boolean }> {
    const { db } = this.sql;
    return listEvents(db, scope, after, limit, db.kind === "postgres");
  }

  getEvent(scope: EventScope, id: string): Promise<ApiEvent | null> {
    return getEvent(this.sql.db, scope, id);
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    const { db, schema, sinks } = this.sql;
    await sinks.publish(schema.events ? await insertEvents(db, events) : events);
  }

  subscribe(sink: EventSink): () => void {
    return this.sql.sinks.add(sink);
  }

  cursorKeys(): Promise<CursorKey[]> {
    return cursorKeys(this.sql.db);
  }

  rotateCursorKey(): Promise<void> {
    return rotateCursorKey(this.sql.db);
  }

  /** Closes the driver; closing again does nothing. */
  async close(): Promise<void> {
    // Answers of idempotent requests still being kept are kept first.
    this.closing ??= this.idempotency.settled().then(() => this.sql.db.close());
    await this.closing;
  }
}
