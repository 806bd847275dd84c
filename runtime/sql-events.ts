/**
 * The SQL store's events and cursor keys: two tables of canon's own, created by the generated
 * migrations like every other table (the generator reads the table and column names here).
 *
 *  - `canon__events`: one row per event, written in the transaction of its write
 *    (`insertEvents(tx, events)`), read in id order by `/vN/events`, filtered in SQL to the
 *    collections the reader may read and to the events it owns or nobody owns.
 *  - `canon__cursor_keys`: the keys that sign cursors, one row per generation; the newest signs.
 */
import type { CursorKey } from "./cursor-keys.ts";
import { newCursorSecret } from "./cursor-keys.ts";
import type { ApiEvent, EventScope, StoredEvent } from "./events.ts";
import type { SqlQueryable } from "./sql-driver.ts";
import { ROW_ID_COLUMN, uniqueConstraintName } from "./sql-schema.ts";
import { namedStatement } from "./sql-statements.ts";

/** A table of canon's own, as the generated migrations create it (the generator's SQL emitter reads these). */
export interface SystemTable {
  name: string;
  /** What it keeps, for the schema snapshot. */
  collection: string;
  columns: SystemColumn[];
}

/** A column as the generated migrations create it (the generator's schema snapshot extends it). */
export interface SystemColumn {
  name: string;
  /** SQL type: uuid, text, bigint, double precision, boolean, date, timestamptz, integer, jsonb. */
  type: string;
  /** `row_id`: generated always as identity, the primary key. */
  identity?: boolean;
  notNull: boolean;
  /** SQL literal. */
  default?: string;
  /** Name of the column's unique constraint. */
  unique?: string;
}

/** A table of canon's own: its row key, then `columns`. */
function systemTable(name: string, collection: string, columns: SystemColumn[]): SystemTable {
  return { name, collection, columns: [{ ...ROW_ID_COLUMN }, ...columns] };
}

export const EVENT_TABLE = "canon__events";
export const CURSOR_KEY_TABLE = "canon__cursor_keys";

/**
 * The events: `data` is `json`, not `jsonb`, so that an event reads back with its keys in their
 * order; `owner` null means anyone who may read `collection` sees it.
 */
export const eventTable = systemTable(EVENT_TABLE, "canon/events", [
  { name: "id", type: "uuid", notNull: true, unique: uniqueConstraintName(EVENT_TABLE, "id") },
  { name: "type", type: "text", notNull: true },
  { name: "collection", type: "text", notNull: true },
  { name: "owner", type: "text", notNull: false },
  { name: "occurred_at", type: "timestamptz", notNull: true },
  { name: "data", type: "json", notNull: true },
]);

/** The cursor keys: one row per generation, the highest signs. */
export const cursorKeyTable = systemTable(CURSOR_KEY_TABLE, "canon/cursor-keys", [
  {
    name: "generation",
    type: "bigint",
    notNull: true,
    unique: uniqueConstraintName(CURSOR_KEY_TABLE, "generation"),
  },
  { name: "secret", type: "text", notNull: true },
  { name: "created_at", type: "timestamptz", notNull: true, default: "now()" },
]);

const TIMESTAMP = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SELECT_EVENT = `select "id", "type", to_char("occurred_at" at time zone 'UTC', ${TIMESTAMP}) as "occurred_at", "data"::text as "data" from "${EVENT_TABLE}"`;
/**
 * The events a scope may see: in the collections it may read (`$1`, a JSON array of names: a
 * string parameter reads the same through both drivers' prepared statements), nobody's or its own.
 */
const VISIBLE = `$1::jsonb ? "collection" and ("owner" is null or "owner" = $2)`;
const EVENT_COLUMNS = `"id", "type", "collection", "owner", "occurred_at", "data"`;
// The statements of the feed, prepared once per connection like the store's own.
const INSERT_ONE = namedStatement(
  `insert into "${EVENT_TABLE}" (${EVENT_COLUMNS}) values ($1, $2, $3, $4, $5::timestamptz, $6::json)`,
);
const SET_DATA = namedStatement(`update "${EVENT_TABLE}" set "data" = $2::json where "id" = $1`);
const LIST_FIRST = namedStatement(`${SELECT_EVENT} where ${VISIBLE} order by "id" limit $3`);
const LIST_AFTER = namedStatement(`${SELECT_EVENT} where ${VISIBLE} and "id" > $3 order by "id" limit $4`);
const GET = namedStatement(`${SELECT_EVENT} where ${VISIBLE} and "id" = $3`);

/** The parameters of one event row, in the order of `EVENT_COLUMNS`. */
function eventRow({ event, collection, owner }: StoredEvent): unknown[] {
  return [event.id, event.type, collection, owner, event.occurred_at, JSON.stringify(event.data)];
}

/** Keeps events; call it with the transaction of their write. */
export async function insertEvents(db: SqlQueryable, events: readonly StoredEvent[]): Promise<void> {
  if (!events.length) return;
  if (events.length === 1) {
    await db.query(INSERT_ONE, eventRow(events[0]!));
    return;
  }
  const params: unknown[] = [];
  const rows = events.map((stored) => {
    params.push(...eventRow(stored));
    const n = params.length;
    return `($${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}::timestamptz, $${n}::json)`;
  });
  await db.query(`insert into "${EVENT_TABLE}" (${EVENT_COLUMNS}) values ${rows.join(", ")}`, params);
}

/**
 * One statement that runs `write` (an insert, update or delete `returning` the record, with
 * `count` parameters) and keeps `event` for each row it returns: the write and its event commit
 * together, or not at all, in one round trip and without a transaction of statements. A write
 * that matches no row keeps no event. The statement returns the rows of `write`.
 */
export function writeWithEvent(
  write: string,
  count: number,
  event: StoredEvent,
): { text: string; params: unknown[] } {
  const n = (i: number) => `$${count + i}`;
  return {
    text:
      `with "written" as (${write}), "event" as (insert into "${EVENT_TABLE}" (${EVENT_COLUMNS}) ` +
      `select ${n(1)}::uuid, ${n(2)}::text, ${n(3)}::text, ${n(4)}::text, ${n(5)}::timestamptz, ${n(6)}::json from "written") ` +
      `select * from "written"`,
    params: eventRow(event),
  };
}

/** Replaces the data of a kept event (when the record read back differs from the one the event was made from). */
export async function setEventData(db: SqlQueryable, event: ApiEvent): Promise<void> {
  await db.query(SET_DATA, [event.id, JSON.stringify(event.data)]);
}

function toEvent(row: Record<string, unknown>): ApiEvent {
  return {
    id: String(row.id),
    type: String(row.type),
    occurred_at: String(row.occurred_at),
    data: JSON.parse(String(row.data)) as object,
  };
}

export async function listEvents(
  db: SqlQueryable,
  scope: EventScope,
  after: string | undefined,
  limit: number,
): Promise<{ events: ApiEvent[]; hasMore: boolean }> {
  if (!scope.collections.length) return { events: [], hasMore: false };
  const visible = [JSON.stringify(scope.collections), scope.principal];
  const rows =
    after === undefined
      ? await db.query(LIST_FIRST, [...visible, limit + 1])
      : await db.query(LIST_AFTER, [...visible, after, limit + 1]);
  return { events: rows.slice(0, limit).map(toEvent), hasMore: rows.length > limit };
}

export async function getEvent(db: SqlQueryable, scope: EventScope, id: string): Promise<ApiEvent | null> {
  if (!UUID.test(id) || !scope.collections.length) return null;
  const rows = await db.query(GET, [JSON.stringify(scope.collections), scope.principal, id]);
  return rows[0] ? toEvent(rows[0]) : null;
}

/** The cursor keys, newest first. On an empty table the first key is made: two instances starting at once make one. */
export async function cursorKeys(db: SqlQueryable): Promise<CursorKey[]> {
  const read = () =>
    db.query(
      `select "secret", to_char("created_at" at time zone 'UTC', ${TIMESTAMP}) as "created_at" from "${CURSOR_KEY_TABLE}" order by "generation" desc`,
    );
  let rows = await read();
  if (!rows.length) {
    await db.query(
      `insert into "${CURSOR_KEY_TABLE}" ("generation", "secret") values (1, $1) on conflict ("generation") do nothing`,
      [newCursorSecret()],
    );
    rows = await read();
  }
  return rows.map((r) => ({ secret: String(r.secret), created_at: String(r.created_at) }));
}

/** Makes a new key the newest; of two rotations at once, one makes it and the other does nothing. */
export async function rotateCursorKey(db: SqlQueryable): Promise<void> {
  await cursorKeys(db);
  await db.query(
    `insert into "${CURSOR_KEY_TABLE}" ("generation", "secret") select max("generation") + 1, $1 from "${CURSOR_KEY_TABLE}" on conflict ("generation") do nothing`,
    [newCursorSecret()],
  );
}
