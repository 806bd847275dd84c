/**
 * The store interface the default CRUD service runs on. A store keeps records by collection;
 * `values` holds the resource's fields under their storage names (the latest version's names).
 * The store's own bookkeeping (`revision`, and in SQL an integer `row_id`) never reaches a response:
 * each version's handlers pick the fields they return one by one.
 *
 * A store also keeps the events of writes and the keys that sign cursors, so that every
 * instance over one database shows the same feed and accepts the same cursors:
 *  - each write method takes `publish`, which makes the write's event from the record the store
 *    wrote (for a delete, the record as it was). The store keeps that event with the write, in
 *    one transaction on a SQL store: a write that fails has no event, a write that succeeds
 *    always has it. Events committed with a write are then handed to the sinks of `subscribe`.
 *    A SQL store that writes more records in the same transaction (a delete that cascades to
 *    its children) keeps their events in that transaction too: `insertEvents(tx, events)` of
 *    `sql-events.ts` inside `SqlStore.transaction`.
 *  - `listEvents`/`getEvent` read the feed in id order, as a principal may see it (`EventScope`).
 *  - `cursorKeys` gives the keys cursors are signed with (see cursor-keys.ts).
 */
import type { EventFeed, EventOf } from "./events.ts";
import type { IdempotencyKeyStore } from "./idempotency.ts";

export type Values = Record<string, unknown>;

export interface StoredRecord<V extends Values = Values> {
  id: string;
  created_at: string;
  updated_at: string;
  /** Incremented on every write; the ETag is derived from it. Never returned. */
  revision: number;
  values: V;
}

/**
 * How a field's values compare, for sorting and range conditions (SPEC §12.1, §12.2):
 *  - `text`: by code point (PostgreSQL `collate "C"`);
 *  - `number`: integers and numbers;
 *  - `decimal`: exact decimals, kept as their canonical text (`-12.50`), never through a float;
 *  - `rank`: an enum, in the order of its `values` (`SortKey.rank`);
 *  - `date`: `YYYY-MM-DD`;
 *  - `instant`: a date-time with a time zone, compared as the instant it names (created_at,
 *    updated_at, and `datetime` fields, which keep the text as sent);
 *  - `boolean`: false before true.
 */
export type Ordering = "text" | "number" | "decimal" | "rank" | "date" | "instant" | "boolean";

/** One key of a sorted list: a storage field, or `created_at`/`updated_at`. */
export interface SortKey {
  field: string;
  descending: boolean;
  ordering: Ordering;
  /** With `rank`: the enum's values, lowest first. */
  rank?: readonly string[];
}

/** An operator condition of a list (SPEC §12.2), combined with the others by AND. */
export type Condition =
  | { field: string; op: "in"; ordering: Ordering; values: unknown[] }
  | { field: string; op: "gt" | "gte" | "lt" | "lte"; ordering: Ordering; value: unknown }
  /** `true`: the field is null or absent; `false`: it has a value. */
  | { field: string; op: "null"; value: boolean };

export interface Match {
  /**
   * Exact matches on storage fields (filters, the parent field of a child list, and a tenant
   * principal's tenant field, SPEC §12.4); `id` matches the record's id (the tenant collection's
   * key: a tenant principal sees its own record only).
   */
  where: Values;
  /** Operator conditions on storage fields or `created_at`/`updated_at`, all combined with AND. */
  conditions?: Condition[];
  /** The records whose array `field` holds `id` (a list under an array of ids, SPEC §12.3). */
  contains?: { field: string; id: string };
  /** Case-insensitive substring match of `text` on any of `fields`. */
  search?: { fields: string[]; text: string };
  /**
   * The storage fields the caller reads from the records (a version's view): a store may leave
   * the others out of a list's records (the SQL store then neither reads nor aggregates them,
   * e.g. an array kept in a link table). The sort's fields are always read. Absent: every field.
   */
  fields?: readonly string[];
}

/**
 * Whether `record` matches the exact matches of `where` (`Match.where`; `id`: the record's id):
 * what a store in the process, and the store handle of hooks for the records it staged, compare.
 */
export function matchesWhere(record: StoredRecord, where: Values): boolean {
  for (const [field, value] of Object.entries(where)) {
    if ((field === "id" ? record.id : record.values[field]) !== value) return false;
  }
  return true;
}

/**
 * Where a sorted cursor list continues: after the record whose sort values (one per key of
 * `sort`, null for a missing value) and id are these.
 */
export interface SortPosition {
  values: unknown[];
  id: string;
}

export interface CursorQuery extends Match {
  /**
   * The order: up to 3 keys, then `id` in the direction of the last key. Absent or empty:
   * ascending id. Nulls (and absent values) come last in either direction.
   */
  sort?: readonly SortKey[];
  /** Unsorted: records with an id greater than this one. */
  after?: string;
  /** Sorted: records after this position in the order of `sort` (keyset pagination). */
  afterPosition?: SortPosition;
  limit: number;
  /**
   * A `list_under` list's parent (SPEC §12.3): a store that can reads it with the page, in the
   * same statement, and gives it as the page's `parent` (null when no record has this id or the
   * record does not match `where`, a tenant's scope). A store that does not leaves `parent` out.
   */
  parent?: { collection: string; id: string; where?: Values | undefined };
}

/** A cursor page: records in the list's order, whether more follow, and the parent when `CursorQuery.parent` asked for it. */
export interface ListPage<V extends Values = Values> {
  records: StoredRecord<V>[];
  hasMore: boolean;
  parent?: StoredRecord | null;
}

export interface OffsetQuery extends Match {
  /** The order, as for CursorQuery. */
  sort?: readonly SortKey[];
  offset: number;
  limit: number;
}

export interface WriteConstraints {
  /**
   * Storage fields whose values are unique in the collection. Text compares by its normalized
   * key (trimmed, NFC; runtime/unique.ts); the value kept is the value sent.
   */
  unique: string[];
  /**
   * Composite unique constraints (SPEC §12.3): storage fields unique together, each text
   * compared as in `unique`. A record with one of a list's fields null or absent is not held by
   * that list (as a PostgreSQL unique index treats NULLs as distinct).
   */
  uniqueTogether?: string[][];
  /** Of the fields of `unique` and `uniqueTogether`, the `format: email` ones: compared also without regard to ASCII case. */
  emails?: string[];
  /** Of the fields of `unique` and `uniqueTogether`, the `datetime` ones: compared by the instant they name. */
  instants?: string[];
  /**
   * The tenant field of a tenant-scoped collection, which joins every list of `uniqueTogether`
   * (unique within the tenant, SPEC §12.4): the scope of a conflict, not named in its 409.
   */
  tenantKey?: string;
}

/** What `Store.insert` writes: `record` into `collection`. */
export interface InsertArgs {
  collection: string;
  record: StoredRecord;
  constraints: WriteConstraints;
  /** Makes the write's event from the inserted record; it is kept with the write. */
  publish?: EventOf<StoredRecord> | undefined;
}

/** What `Store.update` writes: `values` as the new values of record `id`, if it is still at `expectedRevision`. */
export interface UpdateArgs {
  collection: string;
  id: string;
  values: Values;
  expectedRevision: number;
  constraints: WriteConstraints;
  /** Makes the write's event from the updated record. */
  publish?: EventOf<StoredRecord> | undefined;
  /** The record as read at `expectedRevision`: a hint (a SQL store then keeps the write and its event in one statement). */
  current?: StoredRecord | undefined;
  /** Exact matches (as `Match.where`: a tenant principal's tenant, SPEC §12.4) the record must meet, in the write's statement. */
  where?: Values | undefined;
}

/** What `Store.delete` deletes: record `id`, if it is still at `expectedRevision`. */
export interface DeleteArgs {
  collection: string;
  id: string;
  expectedRevision: number;
  /** Makes the write's event from the record as it was (and those of the records it takes along). */
  publish?: EventOf<StoredRecord> | undefined;
  /** As for `UpdateArgs.current`. */
  current?: StoredRecord | undefined;
  /** As for `UpdateArgs.where`. */
  where?: Values | undefined;
  /**
   * The tenant of the principal that deletes (SPEC §12.4), when it has one: a delete that would
   * take along or change a record of another tenant (a shared record that another tenant's
   * records refer to, `on_delete: cascade`) is refused with 422 and deletes nothing, on every store.
   */
  tenant?: string | undefined;
}

/** What an `expect` of `Store.writeAll` requires: record `id` still at `revision` (and meeting `where`) when the others are written. */
export interface ExpectArgs {
  collection: string;
  id: string;
  revision: number;
  /** As for `UpdateArgs.where`. */
  where?: Values | undefined;
}

/**
 * One write of `Store.writeAll`: an insert, an update, a delete (with the records it takes
 * along through `cascade`, as `Store.delete`), or `expect`, which writes nothing but requires
 * the record to be still at `revision` when the others are written.
 */
export type Write =
  { insert: InsertArgs } | { update: UpdateArgs } | { delete: DeleteArgs } | { expect: ExpectArgs };

export interface Store extends EventFeed, CursorKeyStore {
  /**
   * Where the idempotency keys of POSTs are kept (SPEC §12.7, idempotency.ts): shared by every
   * instance over the store. A store without it gets keys in the process of the app.
   */
  readonly idempotency?: IdempotencyKeyStore;
  /** Records in the order of `query.sort` (ascending id without), at most `limit`, and whether more follow. */
  list(collection: string, query: CursorQuery): Promise<ListPage>;
  /** One page in the order of `query.sort` (ascending id without), and how many records match in all. */
  page(collection: string, query: OffsetQuery): Promise<{ records: StoredRecord[]; total: number }>;
  /**
   * The record, or null; with `where` (exact matches as in `Match.where`: a tenant principal's
   * tenant, SPEC §12.4), null too when the record does not match, in the same statement.
   */
  get(collection: string, id: string, where?: Values): Promise<StoredRecord | null>;
  /**
   * Inserts; throws ConflictError naming the field (every field of a composite constraint) when a unique value is taken. `publish`
   * makes the write's event from the inserted record; it is kept with the write.
   */
  insert(args: InsertArgs): Promise<StoredRecord>;
  /**
   * Replaces the values of a record atomically when its revision is still `expectedRevision`.
   * Returns null when the record is gone; throws ConflictError on a revision or unique conflict.
   * `publish` makes the write's event from the updated record. `current`, the record as read at
   * `expectedRevision`, is a hint: a SQL store then keeps the write and its event in one statement.
   * `where` (exact matches as for `get`: a tenant principal's tenant, SPEC §12.4) is part of the
   * write's statement: a record that does not match it is not written, and null is returned as
   * for a record that is gone.
   */
  update(args: UpdateArgs): Promise<StoredRecord | null>;
  /**
   * Deletes when the revision is still `expectedRevision`; false when the record is gone.
   * `publish` makes the write's event from the record as it was; `current` is a hint as for `update`;
   * `where` as for `update` (false when the record does not match it).
   */
  delete(args: DeleteArgs): Promise<boolean>;
  /**
   * Several writes on different records as one (an action that changes the record it acts on,
   * SPEC §12.5): in one transaction on a SQL store, with no await in between in memory. Every
   * write and its event is kept (the events in the order of the writes), or none: a conflict
   * (revision or unique) throws ConflictError, a record to update or expect that is gone gives
   * null, as does one that does not match its `where` (as for `update`). Returns the record of each write (for `expect`, the record as it is; for
   * `delete`, the record as it was). (A SQL store answering a repeat of an idempotent request
   * whose first answer was never kept returns only the last write's record, the one the first
   * request created: sql-store.ts `adopted`.)
   */
  writeAll(writes: readonly Write[]): Promise<StoredRecord[] | null>;
  close(): Promise<void>;
}

/** A key that signs cursors (cursor-keys.ts). */
export interface CursorKey {
  secret: string;
  /** When the key was made, ISO 8601. */
  created_at: string;
}

export interface CursorKeyStore {
  /** The keys, newest (the one that signs) first; the first call on an empty store creates one. */
  cursorKeys(): Promise<CursorKey[]>;
  /** Makes a new key the one that signs; the previous one still verifies for the grace period. */
  rotateCursorKey(): Promise<void>;
}
