/**
 * The SQL store's events and cursor keys: two tables of canon's own, created by the generated
 * migrations like every other table (the generator reads the table and column names here).
 *
 *  - `canon__events`: one row per event, written in the transaction of its write
 *    (`insertEvents(tx, events)`), read in id order by `/vN/events`, filtered in SQL to the
 *    collections the reader may read and to the events it owns or nobody owns.
 *  - `canon__cursor_keys`: the keys that sign cursors, one row per generation; the newest signs.
 *
 * `insertEvents` also marks the request's idempotency claim, when it has one, in the same
 * transaction (sql-idempotency.ts): a write kept with its event is a write whose key never runs again.
 */
import type { CursorKey } from "./cursor-keys.ts";
import { newCursorSecret } from "./cursor-keys.ts";
import { dataText, type ApiEvent, type EventScope, type StoredEvent } from "./events.ts";
import type { Row, SqlQueryable } from "./sql-driver.ts";
import { ROW_ID_COLUMN, uniqueConstraintName } from "./sql-schema.ts";
import { activeClaim } from "./idempotency.ts";
import { claimMark, markClaim } from "./sql-idempotency.ts";
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
  // The tenant of the record written (SPEC §12.4): a principal of another tenant never sees the event.
  { name: "tenant", type: "text", notNull: false },
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
const VISIBLE = `$1::jsonb ? "collection" and ("owner" is null or "owner" = $2) and ("tenant" is null or $3::text is null or "tenant" = $3::text)`;
const EVENT_COLUMNS = `"id", "type", "collection", "owner", "occurred_at", "data", "tenant"`;

/**
 * An event's id and time are the database's, taken when the row is inserted (`clock_timestamp()`,
 * inside the transaction that keeps it): a UUID v7 of that millisecond whose 12 bits after the
 * version hold the microsecond within it, the variant nibble fixed at 8, 16 bits counting the
 * events of one statement (`seq`, from 0), then 44 random bits. Ids therefore sort in the order
 * events are kept, to the microsecond, which `FEED_HORIZON` turns into the order in which they
 * can be seen.
 */
function eventId(at: string, seq: string): string {
  const hex = (value: string, digits: number) => `lpad(to_hex(${value}), ${digits}, '0')`;
  const us = `floor(extract(epoch from ${at}) * 1000000)::bigint`;
  return (
    `(${hex(`${us} / 1000`, 12)} || '7' || ${hex(`(${us} % 1000)::int`, 3)} || '8' || ${hex(seq, 4)} || ` +
    `substr(replace(gen_random_uuid()::text, '-', ''), 1, 11))::uuid`
  );
}

/** The smallest event id of a microsecond (as `eventId` makes them): ids kept earlier sort before it. */
function firstEventIdAt(us: number): string {
  const ms = Math.floor(us / 1000)
    .toString(16)
    .padStart(12, "0");
  const within = (us % 1000).toString(16).padStart(3, "0");
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${within}-8000-000000000000`;
}

/** What an insert of events returns: the id and time each event was kept with. */
const KEPT = `returning "id", to_char("occurred_at" at time zone 'UTC', ${TIMESTAMP}) as "occurred_at"`;
/** The clock of one statement's events. */
const CLOCK = `(select clock_timestamp() as "at") as "clock"`;
/** The most events one insert statement holds (4 parameters each, far below PostgreSQL's 65,535). */
const EVENTS_PER_STATEMENT = 1000;

/**
 * Where the feed of a PostgreSQL server stops: the start of the oldest transaction that has the
 * event table open for writing (it may still keep an event with an id from then on), or now. Every
 * event with an id before that microsecond is committed or never will be: a page never shows an
 * event after one that is yet to appear. Read in a statement of its own, before the page's, so
 * that an event committed in between is in the page's snapshot. (Transactions of other roles
 * show no start without `pg_read_all_stats`; run every instance as one role.)
 */
const FEED_HORIZON = namedStatement(
  `select floor(extract(epoch from least(min(a."xact_start"), clock_timestamp())) * 1000000)::bigint as "us" ` +
    `from pg_locks l join pg_stat_activity a on a."pid" = l."pid" where l."locktype" = 'relation' ` +
    `and l."relation" = to_regclass('"${EVENT_TABLE}"') and l."mode" = 'RowExclusiveLock' and l."pid" <> pg_backend_pid()`,
);

// The statements of the feed, prepared once per connection like the store's own.
const INSERT_ONE = namedStatement(
  `insert into "${EVENT_TABLE}" (${EVENT_COLUMNS}) select ${eventId(`"clock"."at"`, "0")}, $1::text, $2::text, $3::text, "clock"."at", $4::json, $5::text from ${CLOCK} ${KEPT}`,
);
const SET_DATA = namedStatement(`update "${EVENT_TABLE}" set "data" = $2::json where "id" = $1`);
const LIST_FIRST = namedStatement(`${SELECT_EVENT} where ${VISIBLE} order by "id" limit $4`);
const LIST_AFTER = namedStatement(`${SELECT_EVENT} where ${VISIBLE} and "id" > $4 order by "id" limit $5`);
const LIST_FIRST_BEFORE = namedStatement(
  `${SELECT_EVENT} where ${VISIBLE} and "id" < $4 order by "id" limit $5`,
);
const LIST_AFTER_BEFORE = namedStatement(
  `${SELECT_EVENT} where ${VISIBLE} and "id" > $4 and "id" < $5 order by "id" limit $6`,
);
const GET = namedStatement(`${SELECT_EVENT} where ${VISIBLE} and "id" = $4`);

/** The parameters of one event row but its id and time: type, collection, owner, data, tenant. */
function eventRow({ event, collection, owner, tenant }: StoredEvent): unknown[] {
  return [event.type, collection, owner, dataText(event), tenant ?? null];
}

/** The event as kept: its id and time are the row's. */
function kept(stored: StoredEvent, row: Row): StoredEvent {
  return { ...stored, event: { ...stored.event, id: String(row.id), occurred_at: String(row.occurred_at) } };
}

/**
 * Keeps events, in their order; call it with the transaction of their write (`record`: the record
 * a create made, for the request's idempotency claim). Returns them as kept: with the id and time
 * the database gave them (hand these to the sinks).
 */
export async function insertEvents(
  db: SqlQueryable,
  events: readonly StoredEvent[],
  record?: { collection: string; id: string },
): Promise<StoredEvent[]> {
  // The request's idempotency claim, if it has one, is marked with the write (sql-idempotency.ts).
  await markClaim(db, record);
  if (events.length === 1) return [kept(events[0]!, (await db.query(INSERT_ONE, eventRow(events[0]!)))[0]!)];
  const out: StoredEvent[] = [];
  for (let start = 0; start < events.length; start += EVENTS_PER_STATEMENT) {
    const chunk = events.slice(start, start + EVENTS_PER_STATEMENT);
    const params: unknown[] = [];
    const rows = chunk.map((stored, i) => {
      params.push(...eventRow(stored));
      const n = params.length;
      return `(${i}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}::json, $${n}::text)`;
    });
    const returned = await db.query(
      `insert into "${EVENT_TABLE}" (${EVENT_COLUMNS}) select ${eventId(`"clock"."at"`, `"e"."seq"`)}, "e"."type", "e"."collection", "e"."owner", "clock"."at", "e"."data", "e"."tenant" ` +
        `from (values ${rows.join(", ")}) as "e" ("seq", "type", "collection", "owner", "data", "tenant"), ${CLOCK} ${KEPT}`,
      params,
    );
    // Within a statement the ids count up in the events' order: sorted, the rows match them.
    returned.sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1));
    chunk.forEach((stored, i) => out.push(kept(stored, returned[i]!)));
  }
  return out;
}

/**
 * One statement that runs `write` (an insert, update or delete `returning` the record, with
 * `count` parameters) and keeps `event` for each row it returns: the write and its event commit
 * together, or not at all, in one round trip and without a transaction of statements. A write
 * that matches no row keeps no event. The statement returns the rows of `write`, each with the
 * kept event's id and time as `canon__event_id` and `canon__event_at` (see `keptEvent`). With the
 * request's idempotency key, the statement claims it too, naming the record of `collection`.
 */
export function writeWithEvent(
  write: string,
  count: number,
  event: StoredEvent,
  collection = event.collection,
): { text: string; params: unknown[] } {
  const n = (i: number) => `$${count + i}`;
  const claim = activeClaim();
  // With the request's idempotency key, the statement claims it too (sql-idempotency.ts).
  const marked = claim ? claimMark(`"written"`, n(6), n(7), n(8), n(9), n(10)) : null;
  return {
    text:
      `with "written" as (${write}), ${marked ? `${marked.cte}, ` : ""}"event" as (insert into "${EVENT_TABLE}" (${EVENT_COLUMNS}) ` +
      `select ${eventId(`"clock"."at"`, "0")}, ${n(1)}::text, ${n(2)}::text, ${n(3)}::text, "clock"."at", ${n(4)}::json, ${n(5)}::text from "written", ${CLOCK} ${KEPT}) ` +
      `select "written".*, "event"."id" as "canon__event_id", "event"."occurred_at" as "canon__event_at"${marked ? `, ${marked.fence}` : ""} from "written", "event"`,
    params: claim
      ? [...eventRow(event), claim.principal, claim.key, claim.token, claim.fingerprint ?? "", collection]
      : eventRow(event),
  };
}

/** The event as kept by `writeWithEvent`, from the row it returned. */
export function keptEvent(stored: StoredEvent, row: Row): StoredEvent {
  return kept(stored, { id: row.canon__event_id, occurred_at: row.canon__event_at });
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

/**
 * A page of the feed. On a PostgreSQL server (`horizon`), only events before `FEED_HORIZON`: one
 * more round trip, so that a reader that has seen an event never later finds one before it.
 * PGlite runs one statement at a time, so its events become visible in id order anyway.
 */
export async function listEvents(
  db: SqlQueryable,
  scope: EventScope,
  after: string | undefined,
  limit: number,
  horizon = false,
): Promise<{ events: ApiEvent[]; hasMore: boolean }> {
  if (!scope.collections.length) return { events: [], hasMore: false };
  const visible = [JSON.stringify(scope.collections), scope.principal, scope.tenant ?? null];
  let rows: Row[];
  if (horizon) {
    const before = firstEventIdAt(Number((await db.query(FEED_HORIZON))[0]!.us));
    rows =
      after === undefined
        ? await db.query(LIST_FIRST_BEFORE, [...visible, before, limit + 1])
        : await db.query(LIST_AFTER_BEFORE, [...visible, after, before, limit + 1]);
  } else {
    rows =
      after === undefined
        ? await db.query(LIST_FIRST, [...visible, limit + 1])
        : await db.query(LIST_AFTER, [...visible, after, limit + 1]);
  }
  return { events: rows.slice(0, limit).map(toEvent), hasMore: rows.length > limit };
}

export async function getEvent(db: SqlQueryable, scope: EventScope, id: string): Promise<ApiEvent | null> {
  if (!UUID.test(id) || !scope.collections.length) return null;
  const rows = await db.query(GET, [
    JSON.stringify(scope.collections),
    scope.principal,
    scope.tenant ?? null,
    id,
  ]);
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
