/**
 * Events: every write publishes `{ id (UUID v7), type, occurred_at, data }`. The store keeps
 * them with the write (in one transaction on a SQL store), and `/vN/events` reads them back,
 * showing a principal only the events of the collections it may read.
 *
 * This file is the one definition of the event's shape: the runtime and the generator (the
 * OpenAPI document's `Event` schema) both read it.
 */
import { principalKey, type AccessRequest, type Authorize, type Principal } from "./auth.ts";
import { newId } from "./uuid.ts";

/** An event as the API shows it. */
export interface ApiEvent {
  id: string;
  type: string;
  occurred_at: string;
  data: object;
}

/** The keys of an `ApiEvent`, in the order the API shows them. */
export const API_EVENT_KEYS = ["id", "type", "occurred_at", "data"] as const satisfies ReadonlyArray<
  keyof ApiEvent
>;

/** The collection of export jobs' events (`export.created`): each is seen by its owner alone. */
export const EXPORT_EVENTS = "exports";

/**
 * An event as the store keeps it: the event, and what the feed needs to decide who sees it
 * (never shown).
 */
export interface StoredEvent {
  event: ApiEvent;
  /** A principal sees the event when `authorize` allows `read` on this collection (`orders`, `orders/cancellations`). */
  collection: string;
  /** When set, only this principal sees the event (an export job's events). */
  owner: string | null;
  /**
   * The tenant of the record written (SPEC §12.4): when set, a principal of another tenant does
   * not see the event. Absent or null: every tenant may (a shared collection's events).
   */
  tenant?: string | null;
}

/**
 * An event of a write. `data` is the record exactly as the response shows it: a JSON copy,
 * so that fields without a value are absent (not `undefined`) and later changes to the
 * view do not reach the event.
 */
export function createEvent(
  type: string,
  collection: string,
  data: object,
  owner: string | null = null,
  tenant: string | null = null,
): StoredEvent {
  const text = JSON.stringify(data);
  const copy = JSON.parse(text) as object;
  texts.set(copy, text);
  return {
    event: { id: newId(), type, occurred_at: new Date().toISOString(), data: copy },
    collection,
    owner,
    ...(tenant === null ? {} : { tenant }),
  };
}

/** The JSON text of each event's data that `createEvent` made, so that a store does not print it again. */
const texts = new WeakMap<object, string>();

/** An event's data as JSON text. */
export function dataText(event: ApiEvent): string {
  return texts.get(event.data) ?? JSON.stringify(event.data);
}

/**
 * What a write publishes, made from the record the store wrote (for a delete, the record as it
 * was): the store calls it inside the write, so the event commits with the write or not at all.
 * `collection` is the collection of `record`.
 */
export type EventOf<R> = (record: R, collection: string) => StoredEvent;

/**
 * The event of a write through one version: `type`, on `collection`, with the record as `view`
 * shows it. `tenantKey` (a tenant-scoped collection's tenant field, or `id` in the tenant
 * collection, SPEC §12.4) names where the record's tenant is: the event is kept with it.
 */
export function eventOf<R>(
  type: string,
  collection: string,
  view: (record: R) => object,
  tenantKey?: string,
): EventOf<R> {
  if (tenantKey === undefined) return (record) => createEvent(type, collection, view(record));
  return (record) => {
    const r = record as { id: string; values: Record<string, unknown> };
    const tenant = tenantKey === "id" ? r.id : r.values[tenantKey];
    return createEvent(type, collection, view(record), null, typeof tenant === "string" ? tenant : null);
  };
}

/**
 * Events kept with `tenant` (SPEC §12.4): the events of an action on a tenant's record, and of a
 * delete that cascades within one tenant, belong to the tenant of the record acted on.
 */
export function withTenant<R>(of: EventOf<R>, tenant: unknown): EventOf<R> {
  return (record, collection) => {
    const stored = of(record, collection);
    return typeof tenant === "string" ? { ...stored, tenant } : stored;
  };
}

/** Receives every event after its write commits (buildApp's `events` option). */
export interface EventSink {
  publish(event: ApiEvent): void | Promise<void>;
}

/** Whose feed is read: the collections the principal may read, and the principal (for owned events). */
export interface EventScope {
  collections: readonly string[];
  /** The principal as owned events name it (`principalKey`: its id, with its tenant when it has one). */
  principal: string;
  /** A tenant principal's tenant (SPEC §12.4): it sees the events of its tenant and of shared collections only. */
  tenant?: string;
}

/** The events a store keeps, in id order, as a principal may see them. */
export interface EventFeed {
  /** At most `limit` events after `after` (exclusive) that `scope` may see, and whether more follow. */
  listEvents(
    scope: EventScope,
    after: string | undefined,
    limit: number,
  ): Promise<{ events: ApiEvent[]; hasMore: boolean }>;
  /** The event, or null when there is none or `scope` may not see it. */
  getEvent(scope: EventScope, id: string): Promise<ApiEvent | null>;
  /** Keeps events outside any write (a write's own events go with the write). */
  appendEvents(events: StoredEvent[]): Promise<void>;
  /** Hands every event to `sink` once its write has committed; returns what stops it. */
  subscribe(sink: EventSink): () => void;
}

/** The scope of a principal's feed: asks `authorize` for `read` on each collection that has events, without a record. */
export async function eventScope(
  authorize: Authorize,
  principal: Principal,
  collections: readonly string[],
): Promise<EventScope> {
  const readable: string[] = [];
  for (const collection of collections) {
    const access: AccessRequest = { principal, action: "read", collection };
    if (await authorize(access)) readable.push(collection);
  }
  return {
    collections: readable,
    principal: principalKey(principal),
    ...(principal.tenant === undefined ? {} : { tenant: principal.tenant }),
  };
}

/** May `scope` see this event? */
export function inScope(scope: EventScope, stored: StoredEvent): boolean {
  return (
    (stored.owner === null || stored.owner === scope.principal) &&
    (scope.tenant === undefined || stored.tenant == null || stored.tenant === scope.tenant) &&
    scope.collections.includes(stored.collection)
  );
}

/** The sinks of a store: each committed event is handed to every one, in order. */
export class EventSinks {
  private readonly sinks = new Set<EventSink>();

  add(sink: EventSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  async publish(events: StoredEvent[]): Promise<void> {
    if (!this.sinks.size) return;
    for (const { event } of events) for (const sink of this.sinks) await sink.publish(event);
  }
}

export interface MemoryEventLogOptions {
  /** Most events kept (default 100,000); the oldest go first. */
  maxEvents?: number;
  /** Most bytes of events kept, counted as their JSON (default 32 MiB); the oldest go first. */
  maxBytes?: number;
}

interface Entry {
  stored: StoredEvent;
  bytes: number;
}

/**
 * The memory store's events: the most recent ones in id order, bounded by count and by bytes
 * (each event counted as the length of its JSON), so a loop of large writes cannot exhaust the
 * heap. What it forgets is gone from the feed: the memory store is a single-process default.
 */
export class MemoryEventLog {
  private entries: Entry[] = [];
  /** Index of the first kept entry: dropping from the front is a counter, not a splice per write. */
  private start = 0;
  private bytes = 0;
  private readonly maxEvents: number;
  private readonly maxBytes: number;

  constructor(options: MemoryEventLogOptions = {}) {
    this.maxEvents = options.maxEvents ?? 100_000;
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  }

  /** How many events, and bytes of them, are kept. */
  get size(): { events: number; bytes: number } {
    return { events: this.entries.length - this.start, bytes: this.bytes };
  }

  append(events: StoredEvent[]): void {
    for (const stored of events) {
      const bytes =
        JSON.stringify(stored.event).length + stored.collection.length + (stored.owner?.length ?? 0);
      // Ids are time-ordered: an event made earlier but kept later goes to its place.
      let at = this.entries.length;
      while (at > this.start && this.entries[at - 1]!.stored.event.id > stored.event.id) at -= 1;
      this.entries.splice(at, 0, { stored, bytes });
      this.bytes += bytes;
    }
    while (
      this.entries.length - this.start > this.maxEvents ||
      (this.bytes > this.maxBytes && this.start < this.entries.length)
    ) {
      this.bytes -= this.entries[this.start]!.bytes;
      this.entries[this.start] = undefined as unknown as Entry;
      this.start += 1;
    }
    // Compact once the dropped front outgrows the kept part.
    if (this.start > 1024 && this.start * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.start);
      this.start = 0;
    }
  }

  list(
    scope: EventScope,
    after: string | undefined,
    limit: number,
  ): { events: ApiEvent[]; hasMore: boolean } {
    const events: ApiEvent[] = [];
    for (let i = after === undefined ? this.start : this.firstAfter(after); i < this.entries.length; i++) {
      const { stored } = this.entries[i]!;
      if (!inScope(scope, stored)) continue;
      if (events.length === limit) return { events, hasMore: true };
      events.push(stored.event);
    }
    return { events, hasMore: false };
  }

  get(scope: EventScope, id: string): ApiEvent | null {
    const i = this.firstAfter(id) - 1;
    const entry = i >= this.start ? this.entries[i] : undefined;
    return entry && entry.stored.event.id === id && inScope(scope, entry.stored) ? entry.stored.event : null;
  }

  /** Index of the first kept entry whose id is greater than `id`. */
  private firstAfter(id: string): number {
    let lo = this.start;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.stored.event.id <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A sink whose failures go to `onError` instead of the write that published: the write has committed. */
export function guardedSink(sink: EventSink, onError: (error: unknown, event: ApiEvent) => void): EventSink {
  return {
    async publish(event) {
      try {
        await sink.publish(event);
      } catch (error) {
        onError(error, event);
      }
    },
  };
}

/**
 * The events of a delete that takes other records along (`on_delete: cascade`): the store calls it
 * for the deleted record and for every record deleted with it, each with its collection, and it
 * makes that record's event with `events[collection]` (each collection as one version shows it).
 */
export function eventsOf<R>(events: Readonly<Record<string, EventOf<never>>>): EventOf<R> {
  return (record, collection) => {
    const of = events[collection] as EventOf<R> | undefined;
    if (!of) throw new Error(`no event is made for a deleted record of ${collection}`);
    return of(record, collection);
  };
}
