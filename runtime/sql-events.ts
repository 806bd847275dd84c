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

export const EVENT_TABLE = "canon__events";
export const CURSOR_KEY_TABLE = "canon__cursor_keys";

/**
 * The events: `data` is `json`, not `jsonb`, so that an event reads back with its keys in their
 * order; `owner` null means anyone who may read `collection` sees it.
 */
export const eventTable: SystemTable = {
  name: EVENT_TABLE,
  collection: "canon/events",
  columns: [
    { name: "row_id", type: "bigint", identity: true, notNull: true },
    { name: "id", type: "uuid", notNull: true, unique: `${EVENT_TABLE}_id_key` },
    { name: "type", type: "text", notNull: true },
    { name: "collection", type: "text", notNull: true },
    { name: "owner", type: "text", notNull: false },
    { name: "occurred_at", type: "timestamptz", notNull: true },
    { name: "data", type: "json", notNull: true },
  ],
};

/** The cursor keys: one row per generation, the highest signs. */
export const cursorKeyTable: SystemTable = {
  name: CURSOR_KEY_TABLE,
  collection: "canon/cursor-keys",
  columns: [
    { name: "row_id", type: "bigint", identity: true, notNull: true },
    { name: "generation", type: "bigint", notNull: true, unique: `${CURSOR_KEY_TABLE}_generation_key` },
    { name: "secret", type: "text", notNull: true },
    { name: "created_at", type: "timestamptz", notNull: true, default: "now()" },
  ],
};

const TIMESTAMP = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SELECT_EVENT = `select "id", "type", to_char("occurred_at" at time zone 'UTC', ${TIMESTAMP}) as "occurred_at", "data"::text as "data" from "${EVENT_TABLE}"`;
/**
 * The events a scope may see: in the collections it may read (`$1`, a JSON array of names: a
 * string parameter reads the same through both drivers' prepared statements), nobody's or its own.
 */
const VISIBLE = `$1::jsonb ? "collection" and ("owner" is null or "owner" = $2)`;
// The statements of the feed, prepared once per connection like the store's own.
const INSERT_ONE = namedStatement(
  `insert into "${EVENT_TABLE}" ("id", "type", "collection", "owner", "occurred_at", "data") values ($1, $2, $3, $4, $5::timestamptz, $6::json)`,
);
const LIST_FIRST = namedStatement(`${SELECT_EVENT} where ${VISIBLE} order by "id" limit $3`);
const LIST_AFTER = namedStatement(`${SELECT_EVENT} where ${VISIBLE} and "id" > $3 order by "id" limit $4`);
const GET = namedStatement(`${SELECT_EVENT} where ${VISIBLE} and "id" = $3`);

/** Keeps events; call it with the transaction of their write. */
export async function insertEvents(db: SqlQueryable, events: readonly StoredEvent[]): Promise<void> {
  if (!events.length) return;
  if (events.length === 1) {
    const { event, collection, owner } = events[0]!;
    await db.query(INSERT_ONE, [
      event.id,
      event.type,
      collection,
      owner,
      event.occurred_at,
      JSON.stringify(event.data),
    ]);
    return;
  }
  const params: unknown[] = [];
  const rows = events.map(({ event, collection, owner }) => {
    params.push(event.id, event.type, collection, owner, event.occurred_at, JSON.stringify(event.data));
    const n = params.length;
    return `($${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}::timestamptz, $${n}::json)`;
  });
  await db.query(
    `insert into "${EVENT_TABLE}" ("id", "type", "collection", "owner", "occurred_at", "data") values ${rows.join(", ")}`,
    params,
  );
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
