/**
 * Events: every write publishes `{ id (UUID v7), type, occurred_at, data }` to the event sink.
 * `MemoryEventLog` is the default sink; it also answers `GET /vN/events` when events are on.
 */
import { newId } from "./uuid.ts";

export interface ApiEvent {
  id: string;
  type: string;
  occurred_at: string;
  data: object;
}

export interface EventSink {
  publish(event: ApiEvent): void | Promise<void>;
}

/** An event sink that can also be read back, for `/vN/events`. */
export interface EventLog extends EventSink {
  list(after: string | undefined, limit: number): Promise<{ events: ApiEvent[]; hasMore: boolean }>;
  get(id: string): Promise<ApiEvent | null>;
}

/**
 * An event of a write. `data` is the record exactly as the response shows it: a JSON copy,
 * so that fields without a value are absent (not `undefined`) and later changes to the
 * view do not reach the event.
 */
export function createEvent(type: string, data: object): ApiEvent {
  return {
    id: newId(),
    type,
    occurred_at: new Date().toISOString(),
    data: JSON.parse(JSON.stringify(data)) as object,
  };
}

/** Keeps the most recent `capacity` events in memory, in id order. */
export class MemoryEventLog implements EventLog {
  private readonly events: ApiEvent[] = [];
  private readonly capacity: number;

  constructor(capacity = 100_000) {
    this.capacity = capacity;
  }

  publish(event: ApiEvent): void {
    this.events.push(event);
    if (this.events.length > this.capacity) this.events.splice(0, this.events.length - this.capacity);
  }

  async list(after: string | undefined, limit: number): Promise<{ events: ApiEvent[]; hasMore: boolean }> {
    const start = after === undefined ? 0 : this.events.findIndex((e) => e.id > after);
    const rest = start === -1 ? [] : this.events.slice(start, start + limit + 1);
    return { events: rest.slice(0, limit), hasMore: rest.length > limit };
  }

  async get(id: string): Promise<ApiEvent | null> {
    return this.events.find((e) => e.id === id) ?? null;
  }
}
