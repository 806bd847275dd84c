/**
 * An in-process store: records per collection in ascending id order (binary search for
 * cursors), with an index per unique field and per composite unique constraint. A sorted list
 * (`sort`) sorts the matching records on every call, in the order sorting.ts defines. Each method
 * runs without awaiting in between, so every write is atomic within the process.
 *
 * Stored records are immutable snapshots: a write replaces a record instead of changing it, and
 * copies the values it is given (each object's keys in the order of json-order.ts), so reads hand out the stored snapshot itself without copying.
 * Callers must treat records they read as read-only (the generated handlers and the CRUD
 * service only ever spread them into new objects).
 *
 * References between collections (`options.references`, the generated `storeReferences`) behave
 * as the SQL store's foreign keys: deleting a record deletes the records that refer to it with
 * `cascade`, and is refused (422 naming the collection) while a record that is not deleted with
 * it refers to it with `restrict`. A store made without them checks no references on delete.
 * A delete with a tenant's `where` (SPEC §12.4) takes along, with their events, only the records
 * of that tenant (`StoreReference.tenant`), as the SQL store's statements do.
 *
 * Events go to a `MemoryEventLog` bounded by count and bytes (`new MemoryStore({ events: {
 * maxEvents, maxBytes } })`); cursors are signed with a key made for this process.
 */
import { newCursorSecret, type CursorKey } from "./cursor-keys.ts";
import { changedAt, rescaledDecimal, valuesAt } from "./decimal.ts";
import { ConflictError, RecordChangedError } from "./errors.ts";
import { MemoryIdempotencyKeys } from "./idempotency.ts";
import { orderedValues } from "./json-order.ts";
import {
  EventSinks,
  MemoryEventLog,
  type ApiEvent,
  type EventOf,
  type EventScope,
  type EventSink,
  type MemoryEventLogOptions,
  type StoredEvent,
} from "./events.ts";
import {
  cascadeTooLargeError,
  DEFAULT_CASCADE_LIMIT,
  namesAt,
  otherTenantsError,
  referencedError,
  referencesTo,
  updatedKey,
  type StoreReference,
} from "./references.ts";
import type { SqlCollection, SqlSchema } from "./sql-schema.ts";
import { comparePositions, meetsCondition, sortRecords, sortValues } from "./sorting.ts";
import { uniqueConflict, uniqueKey } from "./unique.ts";
import {
  matchesWhere,
  type CursorQuery,
  type DeleteArgs,
  type InsertArgs,
  type Match,
  type OffsetQuery,
  type SortKey,
  type Store,
  type StoredRecord,
  type UpdateArgs,
  type Values,
  type Write,
  type WriteConstraints,
} from "./store.ts";

interface Collection {
  ordered: StoredRecord[];
  byId: Map<string, StoredRecord>;
  /**
   * Unique field → its values' keys (`uniqueKey`) → id of the record that has it; and for a
   * composite constraint, its fields joined by commas → the JSON of its values' keys → id.
   */
  unique: Map<string, Map<unknown, string>>;
  /** The constraints `unique` was built for (their JSON): other ones (a `canon dev` save added one) rebuild it from the records. */
  uniqueFor?: string;
  /** The constraints object `uniqueFor` was last compared for. */
  uniqueBy?: WriteConstraints;
}

export interface MemoryStoreOptions {
  /** References between collections and their delete behaviour: the generated `storeReferences`. */
  references?: readonly StoreReference[];
  /** Bounds of the event log. */
  events?: MemoryEventLogOptions;
  /** Most records one delete takes along through `cascade` references (default 10,000); more: 422. */
  cascadeLimit?: number;
}

/**
 * What the deletes of one `writeAll` before the next one took along (`gone`, by collection) and
 * left changed (`changed`: records whose arrays lost ids), so that the next starts from them, as
 * the SQL store's statements do one after the other (a hook's deletes through its handle).
 */
interface EarlierDeletes {
  gone: Map<string, Set<string>>;
  changed: Map<string, Map<string, StoredRecord>>;
}

export class MemoryStore implements Store {
  private readonly collections = new Map<string, Collection>();
  private readonly log: MemoryEventLog;
  private readonly sinks = new EventSinks();
  private keys: CursorKey[] = [{ secret: newCursorSecret(), created_at: new Date().toISOString() }];
  /** By referenced collection: the references to it. */
  private referrers = new Map<string, StoreReference[]>();
  /** By tenant-scoped collection: its tenant field (`StoreReference.tenant`). */
  private tenants = new Map<string, string>();
  private readonly cascadeLimit: number;
  /**
   * By collection: its arrays of referencing ids (`many` references). Such an array is never
   * absent, as in SQL, where it is the record's links: a record without one has `[]`.
   */
  private arrays = new Map<string, string[]>();
  /** By collection: its optional and nullable references (`nullable`), which a record lacking keeps as `null`, as in SQL. */
  private nulls = new Map<string, string[]>();
  /** The schema the records were last carried to (`carryTo`, `canon dev`); null before the first. */
  private schema: SqlSchema | null = null;
  /** The idempotency keys of POSTs, in the process as the records are. */
  readonly idempotency = new MemoryIdempotencyKeys();

  constructor(options: MemoryStoreOptions = {}) {
    this.log = new MemoryEventLog(options.events);
    this.cascadeLimit = options.cascadeLimit ?? DEFAULT_CASCADE_LIMIT;
    this.useReferences(options.references ?? []);
  }

  /**
   * The references between its collections from now on (the generated `storeReferences`):
   * `canon dev` hands the store it keeps across saves each new generation's, so that a save that
   * adds a reference, a `cascade` or a tenant field holds at once. The records stay as they are.
   */
  useReferences(references: readonly StoreReference[]): void {
    this.referrers = referencesTo(references);
    this.tenants = new Map();
    this.arrays = new Map();
    this.nulls = new Map();
    for (const reference of references) {
      if (reference.tenant !== undefined) this.tenants.set(reference.collection, reference.tenant);
      if (reference.many)
        this.arrays.set(reference.collection, [
          ...(this.arrays.get(reference.collection) ?? []),
          reference.field,
        ]);
      if (reference.nullable)
        this.nulls.set(reference.collection, [
          ...(this.nulls.get(reference.collection) ?? []),
          reference.field,
        ]);
    }
  }

  /**
   * What `schema` (a new generation's `sqlSchema`, in `canon dev`) asks of the records stored
   * before it, as its migration asks of a SQL store's rows: per collection and field that is
   * required (not null), how many records have no value that a rename or a default of a field new
   * to them would give them (`carryTo`). None: the records can be carried over.
   */
  lacking(schema: SqlSchema): Array<{ collection: string; field: string; records: number }> {
    const lacking: Array<{ collection: string; field: string; records: number }> = [];
    for (const [name, collection] of Object.entries(schema.collections)) {
      const records = this.collections.get(name)?.ordered ?? [];
      if (records.length === 0) continue;
      const carry = this.carrying(name, collection);
      for (const column of collection.columns) {
        if (!column.required || column.link) continue;
        const count = records.filter((record) => {
          const value = carry(record.values)[column.field];
          return value === undefined || value === null;
        }).length;
        if (count > 0) lacking.push({ collection: name, field: column.field, records: count });
      }
    }
    return lacking;
  }

  /**
   * The first id stored before `references` (a new generation's `storeReferences`, in `canon dev`)
   * that names no record of the collection a reference now points to (an array of ids made a
   * relation, a uuid given `references`), as a SQL migration's foreign key refuses it: the
   * collection, the record, the field and the id. Undefined: every reference holds.
   */
  dangling(
    references: readonly StoreReference[],
  ): { collection: string; id: string; field: string; value: unknown; references: string } | undefined {
    for (const reference of references) {
      const records = this.collections.get(reference.collection)?.ordered ?? [];
      const targets = this.collections.get(reference.references)?.byId;
      for (const record of records) {
        const value = record.values[reference.field];
        const ids = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
        for (const id of ids)
          if (typeof id !== "string" || !targets?.has(id))
            return {
              collection: reference.collection,
              id: record.id,
              field: reference.field,
              value: id,
              references: reference.references,
            };
      }
    }
    return undefined;
  }

  /**
   * The first two records stored before `schema` (a new generation's `sqlSchema`, in `canon dev`)
   * that repeat the values of one of its unique constraints (a composite `unique` added, a field
   * made `unique: true`), as the SQL migration's unique index refuses them: the collection, the
   * fields, the two records and the values (text compared trimmed and NFC-normalized). Undefined:
   * every constraint holds.
   */
  repeated(
    schema: SqlSchema,
  ): { collection: string; fields: string[]; ids: [string, string]; values: unknown[] } | undefined {
    for (const constraint of Object.values(schema.constraints)) {
      if (constraint.kind !== "unique" || constraint.field === "id") continue;
      const collection = schema.collections[constraint.collection];
      const fields = constraint.fields ?? [constraint.field];
      if (!collection || fields.some((f) => collection.columns.find((c) => c.field === f)?.link)) continue;
      const records = this.collections.get(constraint.collection)?.ordered ?? [];
      if (records.length < 2) continue;
      const carry = this.carrying(constraint.collection, collection);
      const seen = new Map<string, string>();
      for (const record of records) {
        const values = carry(record.values);
        const tuple = fields.map((f) => values[f]);
        if (tuple.some((v) => v === undefined || v === null)) continue;
        const key = JSON.stringify(tuple.map((v) => uniqueKey(v, "text")));
        const other = seen.get(key);
        if (other !== undefined)
          return { collection: constraint.collection, fields, ids: [other, record.id], values: tuple };
        seen.set(key, record.id);
      }
    }
    return undefined;
  }

  /**
   * Brings the records to `schema` as its migration brings a SQL store's rows (`canon dev`, once
   * the app of `schema` serves): a field new to them that was renamed takes the value of its old
   * name (when of the same kind), else, with a default, the default. The first schema is taken as
   * the records' own.
   */
  carryTo(schema: SqlSchema): void {
    for (const [name, collection] of Object.entries(schema.collections)) {
      const c = this.collections.get(name);
      if (!c || c.ordered.length === 0 || this.schema === null) continue;
      const carry = this.carrying(name, collection);
      let changed = false;
      c.ordered = c.ordered.map((record) => {
        const values = carry(record.values);
        if (values === record.values) return record;
        changed = true;
        const carried: StoredRecord = { ...record, values: this.kept(name, values) };
        c.byId.set(record.id, carried);
        return carried;
      });
      // A renamed unique field: its index is built again under the new name.
      if (changed) {
        c.uniqueFor = undefined;
        c.uniqueBy = undefined;
      }
    }
    this.schema = schema;
  }

  /**
   * The first value stored before `schema` (a new generation's `sqlSchema`, in `canon dev`) that a
   * decimal of another precision or scale cannot keep exactly (`"1.25"` at scale 1), as its SQL
   * migration refuses one: the collection, the record, where the value is (`lines.0.unit_price`),
   * the value and the type. Undefined: every decimal can be carried over (`carryTo`).
   */
  unkept(
    schema: SqlSchema,
  ): { collection: string; id: string; at: string; value: unknown; type: string } | undefined {
    for (const [name, collection] of Object.entries(schema.collections)) {
      const records = this.collections.get(name)?.ordered ?? [];
      if (records.length === 0 || this.schema === null) continue;
      for (const decimal of this.rescaled(name, collection))
        for (const record of records)
          for (const { at, value } of valuesAt(record.values[decimal.from], decimal.path, decimal.field)) {
            const text = typeof value === "string" || typeof value === "number" ? value : null;
            if (text !== null && rescaledDecimal(text, decimal.precision, decimal.scale) === undefined)
              return {
                collection: name,
                id: record.id,
                at,
                value,
                type: `numeric(${decimal.precision}, ${decimal.scale})`,
              };
          }
    }
    return undefined;
  }

  /**
   * The decimals of `collection` whose precision or scale the records were not stored with
   * (changed since the schema before, or of another type then): each field (`from`: its name in
   * the records, the old one of a field renamed and new to them) and the path in it.
   */
  private rescaled(
    name: string,
    collection: SqlCollection,
  ): Array<{ field: string; from: string; path: readonly string[]; precision: number; scale: number }> {
    const before = this.schema?.collections[name]?.columns;
    if (!before) return [];
    const had = new Map(before.map((column) => [column.field, column]));
    return collection.columns.flatMap((column) => {
      // A field new to the records that was renamed: its values are the old name's when of one kind.
      const renamed = column.renamedFrom === undefined ? undefined : had.get(column.renamedFrom);
      const previous = had.get(column.field) ?? (renamed?.kind === column.kind ? renamed : undefined);
      if (!previous || !column.decimals) return [];
      return column.decimals
        .filter((decimal) => {
          const path = JSON.stringify(decimal.path ?? []);
          const old = previous.decimals?.find((d) => JSON.stringify(d.path ?? []) === path);
          return !old || old.precision !== decimal.precision || old.scale !== decimal.scale;
        })
        .map((decimal) => ({
          field: column.field,
          from: previous.field,
          path: decimal.path ?? [],
          precision: decimal.precision,
          scale: decimal.scale,
        }));
    });
  }

  /** The values a record of `name` has once carried to `collection` (see `carryTo`); the same object when nothing changes. */
  private carrying(name: string, collection: SqlCollection): (values: Values) => Values {
    const before = this.schema?.collections[name]?.columns;
    if (!before) return (values) => values;
    const had = new Map(before.map((column) => [column.field, column]));
    // New to the records, or made required with a default (a released migration's `update … set
    // <default> where … is null`): a record without a value takes the default.
    const added = collection.columns.filter(
      (column) =>
        !column.link &&
        (!had.has(column.field) ||
          (column.required && column.default !== undefined && !had.get(column.field)!.required)),
    );
    // Decimals of another precision or scale: each value at its canonical text of the new scale
    // (one it cannot keep exactly was refused before, `unkept`; left as it is here).
    const rescaled = this.rescaled(name, collection);
    if (added.length === 0 && rescaled.length === 0) return (values) => values;
    const rescale = (values: Values): Values => {
      let carried: Values | null = null;
      for (const decimal of rescaled) {
        const value = (carried ?? values)[decimal.field];
        const next = changedAt(value, decimal.path, (v) =>
          typeof v === "string" || typeof v === "number"
            ? (rescaledDecimal(v, decimal.precision, decimal.scale) ?? v)
            : v,
        );
        if (next !== value) (carried ??= { ...values })[decimal.field] = next;
      }
      return carried ?? values;
    };
    if (added.length === 0) return rescale;
    const renamedOrDefault = (values: Values): Values => {
      let carried: Values | null = null;
      for (const column of added) {
        if (values[column.field] !== undefined && values[column.field] !== null) continue;
        const from = column.renamedFrom === undefined ? undefined : had.get(column.renamedFrom);
        const moved = from && from.kind === column.kind ? values[from.field] : undefined;
        if (moved !== undefined && moved !== null) {
          carried ??= { ...values };
          carried[column.field] = moved;
          delete carried[from!.field];
        } else if (column.default !== undefined) {
          carried ??= { ...values };
          carried[column.field] = column.default;
        }
      }
      return carried ?? values;
    };
    return (values) => rescale(renamedOrDefault(values));
  }

  /**
   * `values` as kept: its objects' keys in order, an absent array of referencing ids as `[]`, and
   * an absent optional and nullable reference as `null` (as the SQL store reads them back).
   */
  private kept(collection: string, values: Values): Values {
    const arrays = this.arrays.get(collection);
    const nulls = this.nulls.get(collection);
    const absent = (field: string) => values[field] === undefined;
    if (!arrays?.some(absent) && !nulls?.some(absent)) return orderedValues(values);
    const filled = { ...values };
    for (const field of arrays ?? []) filled[field] ??= [];
    for (const field of nulls ?? []) if (filled[field] === undefined) filled[field] = null;
    return orderedValues(filled);
  }

  /** The event log, to read its size. */
  get eventLog(): MemoryEventLog {
    return this.log;
  }

  private collection(name: string): Collection {
    let c = this.collections.get(name);
    if (!c) {
      c = { ordered: [], byId: new Map(), unique: new Map() };
      this.collections.set(name, c);
    }
    return c;
  }

  async list(collection: string, query: CursorQuery): Promise<{ records: StoredRecord[]; hasMore: boolean }> {
    const { ordered } = this.collection(collection);
    if (query.sort?.length) return sortedList(ordered, query, query.sort);
    const start = query.after === undefined ? 0 : firstIndex(ordered, query.after, true);
    const records: StoredRecord[] = [];
    for (let i = start; i < ordered.length; i++) {
      const record = ordered[i]!;
      if (!matches(record, query)) continue;
      if (records.length === query.limit) return { records, hasMore: true };
      records.push(record);
    }
    return { records, hasMore: false };
  }

  async page(collection: string, query: OffsetQuery): Promise<{ records: StoredRecord[]; total: number }> {
    const all = this.collection(collection).ordered.filter((r) => matches(r, query));
    if (query.sort?.length) sortRecords(all, query.sort);
    return { records: all.slice(query.offset, query.offset + query.limit), total: all.length };
  }

  async get(collection: string, id: string, where?: Values): Promise<StoredRecord | null> {
    const record = this.collection(collection).byId.get(id) ?? null;
    return record && where && !matchesWhere(record, where) ? null : record;
  }

  async insert({ collection, record, constraints, publish }: InsertArgs): Promise<StoredRecord> {
    const c = this.collection(collection);
    if (c.byId.has(record.id))
      throw new ConflictError("A record with this id exists.", [{ field: "id", issue: "is taken" }]);
    this.checkUnique(c, record.values, constraints, null);
    const stored: StoredRecord = { ...record, values: this.kept(collection, record.values) };
    await this.put(collection, c, null, stored, constraints, publish);
    return stored;
  }

  async update({
    collection,
    id,
    values,
    expectedRevision,
    constraints,
    publish,
    where,
  }: UpdateArgs): Promise<StoredRecord | null> {
    const c = this.collection(collection);
    const current = this.current(c, id, expectedRevision, where);
    if (!current) return null;
    this.checkUnique(c, values, constraints, id);
    const next: StoredRecord = {
      ...current,
      values: this.kept(collection, values),
      revision: current.revision + 1,
      updated_at: laterTimestamp(current.updated_at),
    };
    await this.put(collection, c, current, next, constraints, publish);
    return next;
  }

  async delete({ collection, id, expectedRevision, publish, where, tenant }: DeleteArgs): Promise<boolean> {
    const current = this.current(this.collection(collection), id, expectedRevision, where);
    if (!current) return false;
    const planned = this.plannedDelete(collection, current, publish, where, tenant);
    const events = planned.events();
    planned.apply();
    if (events.length) await this.keep(...events);
    return true;
  }

  /**
   * The delete of `current` and of every record it takes along, checked (restricted references,
   * the cascade limit) and with its events made, before anything changes; `apply` then changes
   * the records without an await.
   *
   * With a tenant's `where` (SPEC §12.4), the records it takes along are held to that tenant
   * (`held`, walked only through records of the tenant, as the SQL store's statements match the
   * tenant column): only they count against the limit and have events. A record of another
   * tenant under one of them (the API never writes one: references are checked within the
   * tenant) goes as the foreign keys of the SQL store take it: deleted, or its array without the
   * deleted id, with no event and no new revision. A principal of a tenant (`writer`, or the
   * tenant of `where`) deletes nothing that would take along or change a record of another
   * tenant (a shared record that another tenant's records name through `cascade`): 422, as the
   * SQL store answers.
   */
  private plannedDelete(
    collection: string,
    current: StoredRecord,
    publish: EventOf<StoredRecord> | undefined,
    where: Values | undefined,
    writer?: string,
    earlier: EarlierDeletes = { gone: new Map(), changed: new Map() },
  ): { events: () => StoredEvent[]; apply: () => void } {
    const tenant = this.tenantOf(collection, where) ?? writer;
    const held = this.cascade(collection, current, tenant, this.cascadeLimit, earlier.gone);
    const doomed =
      tenant === undefined ? held : this.cascade(collection, current, undefined, Infinity, earlier.gone);
    this.checkRestricted(doomed, earlier.gone);
    const { unlinked, swept } = this.unlinked(doomed, held, tenant, earlier);
    // What the deletes after this one in the same `writeAll` start from (as SQL runs them one after the other).
    for (const [name, records] of doomed) {
      let set = earlier.gone.get(name);
      if (!set) earlier.gone.set(name, (set = new Set()));
      for (const id of records.keys()) set.add(id);
    }
    for (const [name, records] of [...unlinked, ...swept]) {
      let set = earlier.changed.get(name);
      if (!set) earlier.changed.set(name, (set = new Map()));
      for (const [id, record] of records) set.set(id, record);
    }
    if (tenant !== undefined) {
      for (const [name, records] of doomed)
        for (const id of records.keys()) if (!held.get(name)?.has(id)) throw otherTenantsError(name);
      const other = swept.keys().next();
      if (!other.done) throw otherTenantsError(other.value);
    }
    // The records changed count against the limit as the records deleted do (the record itself aside).
    let changed = -1;
    for (const records of [...held.values(), ...unlinked.values()]) changed += records.size;
    if (changed > this.cascadeLimit) throw cascadeTooLargeError(this.cascadeLimit);
    // The events (the record's, then those of the records deleted with it, then those of the
    // records whose arrays lose ids) are made before anything changes (`events`, called before
    // `apply`): a producer that throws leaves the records as they were.
    const events = (): StoredEvent[] => {
      const made: StoredEvent[] = [];
      if (!publish) return made;
      for (const [name, records] of held) {
        for (const record of records.values()) made.push(publish(record, name));
      }
      for (const [name, records] of unlinked) {
        for (const record of records.values()) made.push(publish(record, updatedKey(name)));
      }
      return made;
    };
    const apply = () => {
      for (const [name, records] of doomed) {
        for (const record of records.values()) this.remove(this.collection(name), record);
      }
      for (const [name, records] of [...unlinked, ...swept]) {
        const c = this.collection(name);
        for (const record of records.values()) {
          c.ordered[firstIndex(c.ordered, record.id)] = record;
          c.byId.set(record.id, record);
        }
      }
    };
    return { events, apply };
  }

  /**
   * Every write is checked and every event made before anything changes; then the records are
   * written one after the other without an await, so that no other write comes in between.
   */
  async writeAll(writes: readonly Write[]): Promise<StoredRecord[] | null> {
    const planned: Array<{
      collection: string;
      c: Collection;
      before: StoredRecord | null;
      record: StoredRecord;
      constraints: WriteConstraints;
      publish?: EventOf<StoredRecord>;
    }> = [];
    const records: StoredRecord[] = [];
    /** Deletes, applied after the inserts and updates: each with its events, at its place among them. */
    const deletes: Array<{ at: number; apply: () => void; events: () => StoredEvent[] }> = [];
    // The records the deletes so far take along or change: each delete starts from them, as on SQL.
    const earlier: EarlierDeletes = { gone: new Map(), changed: new Map() };
    for (const write of writes) {
      if ("delete" in write) {
        const { collection, id, expectedRevision, publish, where, tenant } = write.delete;
        const current = this.current(this.collection(collection), id, expectedRevision, where);
        if (!current || earlier.gone.get(collection)?.has(id)) return null;
        deletes.push({
          at: planned.length,
          ...this.plannedDelete(collection, current, publish, where, tenant, earlier),
        });
        records.push(current);
      } else if ("expect" in write) {
        const { collection, id, revision, where } = write.expect;
        const current = this.current(this.collection(collection), id, revision, where);
        if (!current) return null;
        records.push(current);
      } else if ("insert" in write) {
        const { collection, record, constraints, publish } = write.insert;
        const c = this.collection(collection);
        if (c.byId.has(record.id))
          throw new ConflictError("A record with this id exists.", [{ field: "id", issue: "is taken" }]);
        this.checkUnique(c, record.values, constraints, null);
        const stored: StoredRecord = { ...record, values: this.kept(collection, record.values) };
        planned.push({ collection, c, before: null, record: stored, constraints, publish });
        records.push(stored);
      } else {
        const { collection, id, values, expectedRevision, constraints, publish, where } = write.update;
        const c = this.collection(collection);
        const current = this.current(c, id, expectedRevision, where);
        if (!current) return null;
        this.checkUnique(c, values, constraints, id);
        const next: StoredRecord = {
          ...current,
          values: this.kept(collection, values),
          revision: current.revision + 1,
          updated_at: laterTimestamp(current.updated_at),
        };
        planned.push({ collection, c, before: current, record: next, constraints, publish });
        records.push(next);
      }
    }
    const events: StoredEvent[] = [];
    planned.forEach(({ collection, record, publish }, i) => {
      for (const d of deletes) if (d.at === i) events.push(...d.events());
      if (publish) events.push(publish(record, collection));
    });
    for (const d of deletes) if (d.at === planned.length) events.push(...d.events());
    for (const { c, before, record, constraints } of planned) {
      c.ordered.splice(firstIndex(c.ordered, record.id), before ? 1 : 0, record);
      c.byId.set(record.id, record);
      this.index(c, before, record, constraints);
    }
    for (const d of deletes) d.apply();
    if (events.length) await this.keep(...events);
    return records;
  }

  /**
   * The record a write of revision `expectedRevision` changes: none when it is gone or does not
   * match `where` (another tenant's, SPEC §12.4); ConflictError when it has moved on.
   */
  private current(
    c: Collection,
    id: string,
    expectedRevision: number,
    where?: Values,
  ): StoredRecord | undefined {
    const current = c.byId.get(id);
    if (current && where && !matchesWhere(current, where)) return undefined;
    if (current && current.revision !== expectedRevision) throw new RecordChangedError();
    return current;
  }

  /**
   * Writes `record` in place of `before` (null: a new record) and keeps its event. The event is
   * made before anything changes: a producer that throws leaves no write behind.
   */
  private async put(
    collection: string,
    c: Collection,
    before: StoredRecord | null,
    record: StoredRecord,
    constraints: WriteConstraints,
    publish?: EventOf<StoredRecord>,
  ): Promise<void> {
    const event = publish?.(record, collection);
    c.ordered.splice(firstIndex(c.ordered, record.id), before ? 1 : 0, record);
    c.byId.set(record.id, record);
    this.index(c, before, record, constraints);
    if (event) await this.keep(event);
  }

  /**
   * The record and every record that goes with it through `cascade` references, by collection;
   * with `tenant`, only through records of that tenant. More than `limit` of them: 422.
   */
  private cascade(
    collection: string,
    record: StoredRecord,
    tenant: string | undefined,
    limit: number,
    gone?: ReadonlyMap<string, ReadonlySet<string>>,
  ): Map<string, Map<string, StoredRecord>> {
    const doomed = new Map<string, Map<string, StoredRecord>>([[collection, new Map([[record.id, record]])]]);
    const queue: Array<[string, StoredRecord]> = [[collection, record]];
    let taken = 0;
    for (let next = queue.pop(); next; next = queue.pop()) {
      const [name, parent] = next;
      for (const reference of this.referrers.get(name) ?? []) {
        if (reference.onDelete !== "cascade" || reference.many) continue;
        for (const child of this.referring(reference, parent.id)) {
          if (!this.inTenant(reference.collection, child, tenant)) continue;
          if (gone?.get(reference.collection)?.has(child.id)) continue;
          let set = doomed.get(reference.collection);
          if (!set) doomed.set(reference.collection, (set = new Map()));
          if (set.has(child.id)) continue;
          if (++taken > limit) throw cascadeTooLargeError(limit);
          set.set(child.id, child);
          queue.push([reference.collection, child]);
        }
      }
    }
    return doomed;
  }

  /**
   * The records that are not deleted but whose arrays name deleted records through a `cascade`
   * reference (SPEC §12.3), by collection: each without those ids. `unlinked`: those that lose an
   * id of `held` and are of `tenant`, at their next revision (with an event); `swept`: the others
   * (records of another tenant), as they were but for their arrays.
   */
  private unlinked(
    doomed: Map<string, Map<string, StoredRecord>>,
    held: Map<string, Map<string, StoredRecord>>,
    tenant: string | undefined,
    earlier?: EarlierDeletes,
  ): { unlinked: Map<string, Map<string, StoredRecord>>; swept: Map<string, Map<string, StoredRecord>> } {
    const changed = new Map<string, Map<string, StoredRecord>>();
    /** `collection id` of the holders that change with an event. */
    const touched = new Set<string>();
    for (const [name, records] of doomed) {
      for (const reference of this.referrers.get(name) ?? []) {
        if (reference.onDelete !== "cascade" || !reference.many) continue;
        for (const id of records.keys()) {
          for (const holder of this.referring(reference, id)) {
            if (doomed.get(reference.collection)?.has(holder.id)) continue;
            if (earlier?.gone.get(reference.collection)?.has(holder.id)) continue;
            let set = changed.get(reference.collection);
            if (!set) changed.set(reference.collection, (set = new Map()));
            const before =
              set.get(holder.id) ?? earlier?.changed.get(reference.collection)?.get(holder.id) ?? holder;
            const items = before.values[reference.field] as unknown[];
            const values = { ...before.values, [reference.field]: items.filter((item) => item !== id) };
            set.set(holder.id, { ...before, values: orderedValues(values) });
            if (held.get(name)?.has(id) && this.inTenant(reference.collection, holder, tenant))
              touched.add(`${reference.collection} ${holder.id}`);
          }
        }
      }
    }
    const unlinked = new Map<string, Map<string, StoredRecord>>();
    const swept = new Map<string, Map<string, StoredRecord>>();
    // One time for every record the delete changes, as the SQL stores give them.
    const now = Date.now();
    // By collection name, each collection's in id order: the order of their `.updated` events, as
    // the SQL store makes them.
    for (const name of [...changed.keys()].sort()) {
      const records = changed.get(name)!;
      for (const id of [...records.keys()].sort()) {
        const record = records.get(id)!;
        // As an earlier delete of the same `writeAll` left it, if one changed it.
        const holder = earlier?.changed.get(name)?.get(id) ?? this.collection(name).byId.get(id)!;
        const withEvent = touched.has(`${name} ${id}`);
        const into = withEvent ? unlinked : swept;
        let set = into.get(name);
        if (!set) into.set(name, (set = new Map()));
        set.set(
          id,
          withEvent
            ? { ...record, revision: holder.revision + 1, updated_at: laterTimestamp(holder.updated_at, now) }
            : record,
        );
      }
    }
    return { unlinked, swept };
  }

  /**
   * The tenant a delete's `where` names (SPEC §12.4): the value of the collection's tenant field,
   * or in the tenant collection (`where` on `id`) the record's id; undefined without one.
   */
  private tenantOf(collection: string, where: Values | undefined): string | undefined {
    if (!where) return undefined;
    const field = this.tenants.get(collection);
    const value = field === undefined ? where.id : where[field];
    return typeof value === "string" ? value : undefined;
  }

  /** Whether `record` of `collection` is of `tenant`: always without one, or in a collection that is not tenant-scoped. */
  private inTenant(collection: string, record: StoredRecord, tenant: string | undefined): boolean {
    const field = this.tenants.get(collection);
    return tenant === undefined || field === undefined || record.values[field] === tenant;
  }

  /** 422 when a record that is not deleted refers to a deleted one through a `restrict` reference. */
  private checkRestricted(
    doomed: Map<string, Map<string, StoredRecord>>,
    gone?: ReadonlyMap<string, ReadonlySet<string>>,
  ): void {
    for (const [name, records] of doomed) {
      for (const reference of this.referrers.get(name) ?? []) {
        if (reference.onDelete !== "restrict") continue;
        for (const id of records.keys()) {
          for (const holder of this.referring(reference, id)) {
            if (
              !doomed.get(reference.collection)?.has(holder.id) &&
              !gone?.get(reference.collection)?.has(holder.id)
            )
              throw referencedError(reference.collection);
          }
        }
      }
    }
  }

  /** The records whose `reference.field` names `id` (an array of ids: holds it; a `path`: names it there). */
  private referring(reference: StoreReference, id: string): StoredRecord[] {
    const { field } = reference;
    if (reference.path)
      return this.collection(reference.collection).ordered.filter((r) => namesAt(r.values, reference, id));
    if (reference.many) {
      return this.collection(reference.collection).ordered.filter((r) => {
        const items = r.values[field];
        return Array.isArray(items) && items.includes(id);
      });
    }
    return this.collection(reference.collection).ordered.filter((r) => r.values[field] === id);
  }

  private remove(c: Collection, record: StoredRecord): void {
    c.byId.delete(record.id);
    c.ordered.splice(firstIndex(c.ordered, record.id), 1);
    // A delete is given no constraints (which fields are emails), so the record's keys are found by id.
    for (const index of c.unique.values()) {
      for (const [key, id] of index) if (id === record.id) index.delete(key);
    }
  }

  async close(): Promise<void> {
    this.collections.clear();
  }

  async listEvents(
    scope: EventScope,
    after: string | undefined,
    limit: number,
  ): Promise<{ events: ApiEvent[]; hasMore: boolean }> {
    return this.log.list(scope, after, limit);
  }

  async getEvent(scope: EventScope, id: string): Promise<ApiEvent | null> {
    return this.log.get(scope, id);
  }

  async appendEvents(events: StoredEvent[]): Promise<void> {
    this.log.append(events);
    await this.sinks.publish(events);
  }

  subscribe(sink: EventSink): () => void {
    return this.sinks.add(sink);
  }

  async cursorKeys(): Promise<CursorKey[]> {
    return this.keys;
  }

  async rotateCursorKey(): Promise<void> {
    this.keys = [{ secret: newCursorSecret(), created_at: new Date().toISOString() }, ...this.keys];
  }

  /** Keeps a write's events (the write is already done: nothing can fail in between) and hands them to the sinks. */
  private keep(...events: StoredEvent[]): Promise<void> {
    return this.appendEvents(events);
  }

  /**
   * Builds the collection's unique indexes again from its records when the constraints are not the
   * ones they were built for: a `canon dev` save that adds a `unique` (or changes one) holds the
   * records stored before it too, as the SQL store's new index does.
   */
  private uniqueIndexes(c: Collection, constraints: WriteConstraints): void {
    // The generated services pass one constraints object per collection: the same one, nothing to compare.
    if (c.uniqueBy === constraints) return;
    c.uniqueBy = constraints;
    const signature = JSON.stringify([
      constraints.unique,
      constraints.uniqueTogether ?? [],
      constraints.emails ?? [],
      constraints.instants ?? [],
    ]);
    if (c.uniqueFor === signature) return;
    c.uniqueFor = signature;
    c.unique = new Map();
    for (const record of c.ordered) this.indexRecord(c, null, record, constraints);
  }

  private checkUnique(
    c: Collection,
    values: Values,
    constraints: WriteConstraints,
    self: string | null,
  ): void {
    this.uniqueIndexes(c, constraints);
    for (const field of constraints.unique) {
      const value = values[field];
      if (value === undefined || value === null) continue;
      const holder = c.unique.get(field)?.get(keyOf(field, value, constraints));
      if (holder !== undefined && holder !== self) throw uniqueConflict([field], constraints.tenantKey);
    }
    for (const fields of constraints.uniqueTogether ?? []) {
      const key = tupleKeyOf(fields, values, constraints);
      if (key === null) continue;
      const holder = c.unique.get(fields.join(","))?.get(key);
      if (holder !== undefined && holder !== self) throw uniqueConflict(fields, constraints.tenantKey);
    }
  }

  /** Moves a record's unique values in the indexes from `before` to `after`. */
  private index(
    c: Collection,
    before: StoredRecord | null,
    after: StoredRecord,
    constraints: WriteConstraints,
  ): void {
    this.uniqueIndexes(c, constraints);
    this.indexRecord(c, before, after, constraints);
  }

  private indexRecord(
    c: Collection,
    before: StoredRecord | null,
    after: StoredRecord,
    constraints: WriteConstraints,
  ): void {
    for (const field of constraints.unique) {
      let index = c.unique.get(field);
      if (!index) {
        index = new Map();
        c.unique.set(field, index);
      }
      const old = before?.values[field];
      if (old !== undefined && old !== null) {
        const key = keyOf(field, old, constraints);
        if (index.get(key) === after.id) index.delete(key);
      }
      const value = after.values[field];
      if (value !== undefined && value !== null) index.set(keyOf(field, value, constraints), after.id);
    }
    for (const fields of constraints.uniqueTogether ?? []) {
      const name = fields.join(",");
      let index = c.unique.get(name);
      if (!index) {
        index = new Map();
        c.unique.set(name, index);
      }
      const old = before && tupleKeyOf(fields, before.values, constraints);
      if (old && index.get(old) === after.id) index.delete(old);
      const key = tupleKeyOf(fields, after.values, constraints);
      if (key !== null) index.set(key, after.id);
    }
  }
}

/**
 * The key a composite constraint indexes a record by: the JSON of its fields' keys; null when one
 * of them is null or absent (such a record is held by nothing, as NULLs are distinct in SQL).
 */
function tupleKeyOf(fields: readonly string[], values: Values, constraints: WriteConstraints): string | null {
  const keys: unknown[] = [];
  for (const field of fields) {
    const value = values[field];
    if (value === undefined || value === null) return null;
    keys.push(keyOf(field, value, constraints));
  }
  return JSON.stringify(keys);
}

/** The key a unique value is indexed by. */
function keyOf(field: string, value: unknown, constraints: WriteConstraints): unknown {
  const kind = constraints.emails?.includes(field)
    ? "email"
    : constraints.instants?.includes(field)
      ? "instant"
      : "text";
  return uniqueKey(value, kind);
}

function matches(record: StoredRecord, match: Match): boolean {
  if (!matchesWhere(record, match.where)) return false;
  if (match.conditions) {
    for (const condition of match.conditions) if (!meetsCondition(record, condition)) return false;
  }
  if (match.contains) {
    const items = record.values[match.contains.field];
    if (!Array.isArray(items) || !items.includes(match.contains.id)) return false;
  }
  if (match.search) {
    const needle = searchFold(match.search.text);
    return match.search.fields.some((f) => {
      const value = record.values[f];
      return typeof value === "string" && searchFold(value).includes(needle);
    });
  }
  return true;
}

/**
 * Text as `?q=` compares it: each character lower-cased on its own, as PostgreSQL's `ILIKE` does
 * in a UTF-8 database (`lower()`, character by character): `Σ` is `σ` wherever it stands (not
 * `ς` at a word's end, as JavaScript's `toLowerCase` of a whole text has it) and `İ` is `i` (not
 * `i` with a combining dot). Those are the only two characters whose lower case JavaScript makes
 * otherwise than one at a time.
 */
function searchFold(text: string): string {
  return (
    SEARCH_FOLD_APART.test(text)
      ? text.replace(SEARCH_FOLD_APART_ALL, (c) => (c === "\u03a3" ? "\u03c3" : "i"))
      : text
  ).toLowerCase();
}

const SEARCH_FOLD_APART = /[\u03a3\u0130]/;
const SEARCH_FOLD_APART_ALL = /[\u03a3\u0130]/g;

/**
 * A sorted cursor page: the matching records after `query.afterPosition` in the order of
 * `sort`, at most `limit`, and whether more follow. Every call sorts what matches.
 */
function sortedList(
  ordered: StoredRecord[],
  query: CursorQuery,
  sort: readonly SortKey[],
): { records: StoredRecord[]; hasMore: boolean } {
  const position = query.afterPosition;
  const found = ordered.filter(
    (record) =>
      matches(record, query) &&
      (!position ||
        comparePositions(sort, sortValues(record, sort), record.id, position.values, position.id) > 0),
  );
  sortRecords(found, sort);
  return { records: found.slice(0, query.limit), hasMore: found.length > query.limit };
}

/** First index whose id is not less than `id` (with `after`: greater than `id`), by binary search. */
function firstIndex(ordered: StoredRecord[], id: string, after = false): number {
  let lo = 0;
  let hi = ordered.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = ordered[mid]!.id;
    if (at < id || (after && at === id)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Now (or `now`), or a millisecond after `previous` when the clock has not moved on. */
export function laterTimestamp(previous: string, now = Date.now()): string {
  const before = Date.parse(previous);
  return new Date(now > before ? now : before + 1).toISOString();
}
