/**
 * Hooks in code (SPEC §12.5): `buildApp({ hooks: { tickets: { create, update, replace, delete,
 * <action> } } })`. A hook runs inside the write it belongs to, before anything is written, with
 * the principal, the request id, the current record (null on create), the proposed values and a
 * store handle. It may:
 *  - set values: `values` is the object about to be written; change it in place (a `read_only`
 *    field is set only this way). What the hook returns is ignored;
 *  - refuse: throw `BusinessRuleError` (422 with its details); any other throw is a 500. Either
 *    way nothing is written, neither the write nor what the hook wrote through the handle;
 *  - write other records through `store` (the handle): its writes are staged and go to the store
 *    with the write itself, as one `Store.writeAll` (one transaction on SQL, no await in between
 *    in memory), the hook's writes first in the order made, then the write; each with its event,
 *    in that order. A record the hook updates must still be at the revision it read when all is
 *    written (else 409, nothing written).
 *
 * The handle reads the store as committed, plus the hook's own staged writes (`get`); a record
 * `get` read from the store is held to its revision until the write commits (an `expect` of the
 * `writeAll`: read `for share` in the write's transaction on SQL; else 409, nothing written).
 * `list` sees committed records only and holds nothing. A delete hook's writes go with the delete
 * (`writeAll` takes deletes too). After the hook, the write's own checks (transitions, references)
 * run on the values as the hook left them.
 *
 * The handle acts for the principal of the write (SPEC §12.4): for a tenant principal, its reads
 * (`get`'s `where`, `list`'s `Match.where`) and its staged writes and `expect`s (their `where`)
 * carry the tenant in the store's statements, as the services' do (`writeScope`). Another
 * tenant's record is not found: `get` gives null, and a staged update of it writes nothing (its
 * statement finds no record, as for one deleted meanwhile). The values the handle writes carry
 * the principal's tenant: filled when absent; another tenant's answers 403, as a create does
 * (`principalTenantValues`).
 */
import type { FastifyRequest } from "fastify";
import type { Authorize, Principal } from "./auth.ts";
import { decimalValues, type DecimalField } from "./decimal.ts";
import { mapValues, type MapField } from "./map.ts";
import { eventsOf, withTenant, type EventOf } from "./events.ts";
import { updatedKey } from "./references.ts";
import { checkChange, type Transitions } from "./rules.ts";
import {
  matchesWhere,
  type CursorQuery,
  type DeleteArgs,
  type ExpectArgs,
  type InsertArgs,
  type Store,
  type StoredRecord,
  type UpdateArgs,
  type Values,
  type Write,
  type WriteConstraints,
} from "./store.ts";
import { principalTenantValues, writeScope, writerTenant } from "./tenancy.ts";
import { newId } from "./uuid.ts";

/**
 * Who asks, as the handlers give it to every method of a service (SPEC §12.5): services (the
 * default ones and yours) receive the principal (tenant included) and the request id on their
 * reads (`list`, `page`, `get`) as on their writes. An export's job reads with the principal
 * and request id of the POST that made it.
 */
export interface ReadContext {
  principal: Principal;
  requestId: string;
}

/**
 * Who writes, as the handlers give it to every write of a service: a `ReadContext`, and what the
 * write needs besides. The handlers pass the same object to the read of the record before it.
 */
export interface WriteContext extends ReadContext {
  /** A PUT: the service's `update` runs the `replace` hook instead of `update`. */
  replace?: boolean;
  /** The app's `authorize`: a reference to a record the principal may not `read` answers as one to no record (422). */
  authorize?: Authorize;
  /**
   * The API version of the request (2 for /v2/…): the events of a hook's writes show records as it
   * does, and an action whose rules apply from a version on (`ActionEffect.since`) is told it.
   */
  version?: number;
  /**
   * An action with `If-Match` (runtime/http.ts `actionContext`): the revision of the record acted
   * on that the request named. The action is written only while the record is still at it; a
   * change in between answers 409, as a PATCH with `If-Match` does.
   */
  revision?: number;
}

/** The read context of a request: its principal and request id (one small object, nothing else). */
export function readContext(request: FastifyRequest): ReadContext {
  return { principal: request.principal!, requestId: request.id };
}

/** The write context of a request (`replace` for a PUT; `version`, the request's API version). */
export function writeContext(request: FastifyRequest, replace?: boolean, version?: number): WriteContext {
  const context: WriteContext = { principal: request.principal!, requestId: request.id };
  if (replace) context.replace = true;
  if (version !== undefined) context.version = version;
  if (request.server.authorizer) context.authorize = request.server.authorizer;
  return context;
}

/**
 * The write context of an action on `record` (the record acted on, as the request read it): with
 * `If-Match`, which the handler checked against that record, its revision too, so that the action
 * is written only while the record is still at it (`WriteContext.revision`; ActingService).
 */
export function actionContext(request: FastifyRequest, record: StoredRecord, version?: number): WriteContext {
  const context = writeContext(request, false, version);
  if (request.headers["if-match"] !== undefined) context.revision = record.revision;
  return context;
}

/** The stored values of each collection a hook may read and write, by collection name. */
export type Collections = Record<string, Values>;

/** What a hook's handle inserts in each collection: by default, the collection's stored values. */
export type Inserts<C extends Collections> = { [K in keyof C]: Values };

/**
 * The values of a tenant-scoped collection as a hook inserts them: its tenant field `T` may be
 * left out, the handle fills it with the principal's tenant (SPEC §12.4).
 */
export type TenantFilled<V extends Values, T extends keyof V & string> = Omit<V, T> & Partial<Pick<V, T>>;

/** The store handle of a hook: reads, and writes staged to go with the hook's write. */
export interface HookStore<C extends Collections = Collections, I extends Inserts<C> = C> {
  /** The record, as the hook's own staged writes leave it, or as committed. */
  get<K extends keyof C & string>(collection: K, id: string): Promise<StoredRecord<C[K]> | null>;
  /** Committed records only (not those the hook has staged). */
  list<K extends keyof C & string>(
    collection: K,
    query: CursorQuery,
  ): Promise<{ records: StoredRecord<C[K]>[]; hasMore: boolean }>;
  /**
   * Stages the delete of `current` (as read through this handle), with the records it takes along
   * (`on_delete: cascade`, its children, its action records) and their events; a record that still
   * refers to it through `restrict` refuses it when everything is written (422). The record must
   * still be at `current.revision` then.
   */
  delete<K extends keyof C & string>(collection: K, current: StoredRecord<C[K]>): Promise<void>;
  /** Stages a new record (references checked now); returns it as it will be written. */
  insert<K extends keyof C & string>(collection: K, values: I[K]): Promise<StoredRecord<C[K]>>;
  /**
   * Stages new values of `current` (as read through this handle): transitions and references are
   * checked now; the record must still be at `current.revision` when everything is written.
   */
  update<K extends keyof C & string>(
    collection: K,
    current: StoredRecord<C[K]>,
    values: C[K],
  ): Promise<StoredRecord<C[K]>>;
}

/** What every hook is given but the record as it is (`current`: see `HookArgs` and `CreateHookArgs`). */
export interface HookBaseArgs<
  V extends Values,
  C extends Collections = Collections,
  I extends Inserts<C> = C,
> {
  principal: Principal;
  requestId: string;
  /** The values about to be written (on delete: the record's values; changes are ignored). Change them in place. */
  values: V;
  store: HookStore<C, I>;
}

/**
 * What a hook of an update, replace, delete or action is given: `current`, the record as it is
 * (for an action, the record acted on, and `values` the action record's).
 */
export interface HookArgs<
  V extends Values,
  C extends Collections = Collections,
  R extends Values = V,
  I extends Inserts<C> = C,
> extends HookBaseArgs<V, C, I> {
  /** The record as it is: the one updated, replaced or deleted; for an action, the one it acts on. */
  current: StoredRecord<R>;
}

/** What a create hook is given: no record yet (`current` is null). */
export interface CreateHookArgs<
  V extends Values,
  C extends Collections = Collections,
  I extends Inserts<C> = C,
> extends HookBaseArgs<V, C, I> {
  current: null;
}

export type Hook<
  V extends Values,
  C extends Collections = Collections,
  R extends Values = V,
  I extends Inserts<C> = C,
> = (args: HookArgs<V, C, R, I>) => void | Promise<void>;

/** A create's hook: `current` is null. */
export type CreateHook<V extends Values, C extends Collections = Collections, I extends Inserts<C> = C> = (
  args: CreateHookArgs<V, C, I>,
) => void | Promise<void>;

/**
 * A hook as the services hold it: of any collections' types (the generated `Hooks` type types
 * each with the API's `HookCollections`), called with the handle as `HookStore<never>`.
 */
export type ServiceHook<V extends Values, R extends Values = V> = Hook<V, never, R>;

/** A create's hook as the services hold it (as `ServiceHook`). */
export type ServiceCreateHook<V extends Values> = CreateHook<V, never>;

/** The hooks of a resource's own writes. */
export interface WriteHooks<V extends Values, C extends Collections = Collections, I extends Inserts<C> = C> {
  create?: CreateHook<V, C, I>;
  update?: Hook<V, C, V, I>;
  replace?: Hook<V, C, V, I>;
  delete?: Hook<V, C, V, I>;
}

/**
 * The hooks of a resource: its writes, and each action by name (`A`: action name → its record's
 * values; `I`: what the handle inserts in each collection, `HookInserts` where one is tenant-scoped).
 */
export type ResourceHooks<
  V extends Values,
  A extends Record<string, Values>,
  C extends Collections = Collections,
  I extends Inserts<C> = C,
> = WriteHooks<V, C, I> & { [K in keyof A]?: Hook<A[K], C, V, I> };

/**
 * What a store handle needs of a collection it reads or writes: its constraints, references and
 * transitions, and where its records' tenant is (the services' `ResourceSpec`).
 */
export type HookSpec = WriteConstraints & {
  references: Array<{ field: string; collection: string; tenantKey?: string }>;
  /** Its decimal fields: what the handle writes is put in canonical form (`decimalValues`). */
  decimals?: DecimalField[];
  /** Its map fields: what the handle writes is checked against the rules of every map (`mapValues`). */
  maps?: MapField[];
  transitions?: Transitions;
  /** Its tenant field, on a tenant-scoped collection (`ResourceSpec.tenant`). */
  tenant?: string;
  /** Where a tenant principal's tenant is in its records (`ResourceSpec.tenantKey`). */
  tenantKey?: string;
};

/**
 * The events of the writes of each collection, by collection: of an insert, an update and a
 * delete. An action's records (`tickets/escalations`) have their `deleted` only: a delete through
 * the handle takes them along with the record they act on (as it takes a child along, `cascade`).
 */
export type HookEvents = Readonly<
  Record<
    string,
    {
      created?: EventOf<StoredRecord<never>>;
      updated?: EventOf<StoredRecord<never>>;
      deleted?: EventOf<StoredRecord<never>>;
    }
  >
>;

/** What a store handle needs of every collection it writes (generated: `hookSupport` in hooks.ts). */
export interface HookSupport {
  /** Each collection's spec, by collection. */
  specs: Readonly<Record<string, HookSpec>>;
  /** The events of each collection's writes as the newest version that has it shows them. */
  events: HookEvents;
  /**
   * By API version (1 for /v1/…), the events of the collections that version has, as it shows
   * them: a hook's writes in a request of that version publish these (SPEC §5: the record as the
   * version that served the write shows it); a collection the version lacks falls back to `events`.
   */
  versions?: Readonly<Record<number, HookEvents>>;
}

/**
 * Values a hook set on its write or wrote through its store handle, which no request validator
 * read, held to the rules of their types (SPEC §12.6): decimals put in canonical form
 * (`decimalValues`), maps checked against the rules of every map (`mapValues`). A value that
 * breaks them is the hook's fault: it throws, and the request answers 500.
 */
export function hookWrittenValues(
  spec: { decimals?: readonly DecimalField[]; maps?: readonly MapField[] },
  values: Values,
): void {
  decimalValues(spec.decimals, values);
  mapValues(spec.maps, values);
}

/** One staged write of a hook, as `Store.writeAll` takes it (an update always with its `current`). */
export type StagedWrite = { insert: InsertArgs } | { update: StagedUpdate } | { delete: DeleteArgs };

type StagedUpdate = UpdateArgs & { current: StoredRecord };

/**
 * 422 for references in `values` (to be written in the collection of `spec`) that name no record
 * (`CrudService.checkReferences`: within the record's tenant), looked up through `reader`.
 */
export type ReferenceCheck = (
  values: Values,
  previous: Values | null,
  spec: HookSpec,
  reader: Pick<Store, "get">,
) => Promise<void>;

/**
 * The handle of one hook call: stages writes, checked as the default services check them
 * (`checkReferences`: 422 for a reference that names no record, looked up through the handle).
 */
export class StagedHookStore implements HookStore {
  readonly writes: StagedWrite[] = [];
  /** Staged records by `collection id`: the index of their write. */
  private readonly staged = new Map<string, number>();
  /** The records read through `get` (not staged), by `collection id`: at the revision read, within the scope read. */
  private readonly read = new Map<string, ExpectArgs>();
  /** The indexes of writes taken out by `takeUpdate`: not committed. */
  private readonly taken = new Set<number>();

  private readonly store: Store;
  private readonly support: HookSupport;
  private readonly checkReferences: ReferenceCheck;
  /** Who writes: the principal of the hook's write, whose tenant scopes every read and write. */
  private readonly principal: Principal;
  /** The API version of the request (`WriteContext.version`): its events show records as it does. */
  private readonly version: number | undefined;

  constructor(
    store: Store,
    support: HookSupport,
    checkReferences: ReferenceCheck,
    principal: Principal,
    version?: number,
  ) {
    this.store = store;
    this.support = support;
    this.checkReferences = checkReferences;
    this.principal = principal;
    this.version = version;
  }

  /** The events of a write in `collection`: as the request's version shows it, else as the newest that has it. */
  private events(collection: string): HookEvents[string] {
    const shown =
      this.version === undefined ? undefined : this.support.versions?.[this.version]?.[collection];
    return shown ?? this.support.events[collection]!;
  }

  /**
   * What a delete in `collection` publishes: the `.deleted` event of each record it takes along,
   * by its collection, and the `.updated` event of each record whose array of ids loses it (the
   * keys the stores call `publish` with, `updatedKey`), each as the request's version shows it.
   */
  private deleteEvents(collection: string): EventOf<StoredRecord> {
    const of = this.events(collection).deleted;
    if (!of)
      throw new Error(
        `A hook cannot delete records of ${collection}: hooks.ts gives no event for it (generate again).`,
      );
    const byCollection: Record<string, EventOf<never>> = {};
    for (const name of Object.keys(this.support.events)) {
      const events = this.events(name);
      if (events.deleted) byCollection[name] = events.deleted;
      if (events.updated) byCollection[updatedKey(name)] = events.updated;
    }
    return eventsOf(byCollection);
  }

  async get(collection: string, id: string): Promise<StoredRecord | null> {
    const key = `${collection} ${id}`;
    if (this.staged.has(key)) return this.peek(collection, id);
    const where = this.scope(collection);
    const record = await this.store.get(collection, id, where);
    if (record && !this.read.has(key))
      this.read.set(key, { collection, id, revision: record.revision, where });
    return record;
  }

  /**
   * Reads as `get` does, without holding the record to its revision: the reference checks of
   * the writes (a reference that names no record answers 422 now; the database's foreign keys,
   * or the memory store's checks, keep it named until the commit).
   */
  readonly reader: Pick<Store, "get"> = {
    get: (collection, id, where) => this.peek(collection, id, where),
  };

  private async peek(collection: string, id: string, where?: Values): Promise<StoredRecord | null> {
    const at = this.staged.get(`${collection} ${id}`);
    if (at === undefined) return this.store.get(collection, id, where);
    const write = this.writes[at]!;
    if ("delete" in write) return null;
    const record = "insert" in write ? write.insert.record : recordAfter(write.update);
    return !where || matchesWhere(record, where) ? record : null;
  }

  /** The `where` of the principal's reads and writes by id in `collection` (its tenant's, SPEC §12.4). */
  private scope(collection: string): Values | undefined {
    return writeScope(this.spec(collection), { principal: this.principal });
  }

  /**
   * What goes to `Store.writeAll` before the hook's own write: an `expect` for each record read
   * through `get` and not written (it must still be at the revision read when all is written:
   * the reads hold in the write's transaction), then the staged writes in the order made.
   * `except`: the record of the hook's own write (its write checks its revision).
   */
  commit(except?: [collection: string, id: string]): Write[] {
    const skip = except ? `${except[0]} ${except[1]}` : undefined;
    const expects: Write[] = [];
    for (const [key, expect] of this.read)
      if (key !== skip && !this.staged.has(key)) expects.push({ expect });
    const writes = this.taken.size ? this.writes.filter((_, at) => !this.taken.has(at)) : this.writes;
    return expects.length ? [...expects, ...writes] : writes;
  }

  /**
   * The values of the update the hook staged of record `id` of `collection`, taken out of its
   * writes (undefined when it staged none): the caller writes them in its own update of that
   * record, at the revision the hook read (an action's `sets` on top). Two updates of one record
   * at one revision would otherwise conflict with each other (409), or the second undo the first.
   */
  takeUpdate(collection: string, id: string): Values | undefined {
    const at = this.staged.get(`${collection} ${id}`);
    const write = at === undefined ? undefined : this.writes[at];
    if (at === undefined || !write || !("update" in write) || this.taken.has(at)) return undefined;
    this.taken.add(at);
    return write.update.values;
  }

  /**
   * A tenant principal's list holds its tenant's records only (its `Match.where`, and the `where`
   * of the record a `list_under` list hangs under); one that asks for another tenant's is empty.
   */
  async list(collection: string, query: CursorQuery): Promise<{ records: StoredRecord[]; hasMore: boolean }> {
    const scope = this.scope(collection);
    const parent = query.parent;
    const parentScope = parent && this.scope(parent.collection);
    if (!scope && !parentScope) return this.store.list(collection, query);
    const where = within(query.where, scope);
    const parentWhere = parent && within(parent.where ?? {}, parentScope);
    if (!where || parentWhere === null) return { records: [], hasMore: false };
    return this.store.list(collection, {
      ...query,
      where,
      ...(parent ? { parent: { ...parent, where: parentWhere } } : {}),
    });
  }

  async insert(collection: string, values: Values): Promise<StoredRecord> {
    const spec = this.spec(collection);
    hookWrittenValues(spec, values);
    if (spec.tenantKey !== undefined) this.tenantValues(collection, spec.tenantKey, values, true);
    await this.checkReferences(values, null, spec, this.reader);
    const now = new Date().toISOString();
    const record: StoredRecord = { id: newId(), created_at: now, updated_at: now, revision: 1, values };
    this.staged.set(`${collection} ${record.id}`, this.writes.length);
    this.writes.push({
      insert: {
        collection,
        record,
        constraints: spec,
        publish: this.events(collection).created! as EventOf<StoredRecord>,
      },
    });
    return record;
  }

  async update(collection: string, current: StoredRecord, values: Values): Promise<StoredRecord> {
    const spec = this.spec(collection);
    hookWrittenValues(spec, values);
    const key = `${collection} ${current.id}`;
    const at = this.staged.get(key);
    if (spec.tenantKey !== undefined) this.tenantValues(collection, spec.tenantKey, values, false);
    const staged = at === undefined ? undefined : this.writes[at]!;
    if (staged && "delete" in staged)
      throw new Error(`A hook updates the record ${current.id} of ${collection} it deleted.`);
    const before = at === undefined ? current : (await this.peek(collection, current.id))!;
    checkChange(spec, before.values, values);
    await this.checkReferences(values, before.values, spec, this.reader);
    if (at !== undefined) {
      // A record the hook staged already: its one write takes the new values.
      const write = this.writes[at]!;
      if ("insert" in write) {
        write.insert.record = { ...write.insert.record, values };
        return write.insert.record;
      }
      if ("update" in write) {
        write.update.values = values;
        return recordAfter(write.update);
      }
    }
    this.staged.set(key, this.writes.length);
    const update: StagedUpdate = {
      collection,
      id: current.id,
      values,
      expectedRevision: current.revision,
      constraints: spec,
      publish: this.events(collection).updated! as EventOf<StoredRecord>,
      current,
      where: this.scope(collection),
    };
    this.writes.push({ update });
    return recordAfter(update);
  }

  async delete(collection: string, current: StoredRecord): Promise<void> {
    this.spec(collection);
    const publish = this.deleteEvents(collection);
    const key = `${collection} ${current.id}`;
    const at = this.staged.get(key);
    const staged = at === undefined ? undefined : this.writes[at]!;
    if (staged && "delete" in staged) return;
    if (staged && "insert" in staged) {
      // A record the hook inserted: neither written nor deleted, no event.
      this.taken.add(at!);
      this.staged.delete(key);
      return;
    }
    const scope = this.scope(collection);
    const spec = this.spec(collection);
    const tenant = writerTenant({ principal: this.principal });
    // The events are kept with the record's tenant, as a request's delete keeps them (SPEC §12.4).
    const recordTenant =
      spec.tenantKey === undefined
        ? undefined
        : spec.tenantKey === "id"
          ? current.id
          : current.values[spec.tenantKey];
    const deleting: DeleteArgs = {
      collection,
      id: current.id,
      // A record the hook updated: its delete, at the revision the hook read, instead.
      expectedRevision: staged && "update" in staged ? staged.update.expectedRevision : current.revision,
      publish: recordTenant === undefined ? publish : withTenant(publish, recordTenant),
      current: staged && "update" in staged ? staged.update.current : current,
      where: scope,
      tenant,
    };
    if (at !== undefined) this.writes[at] = { delete: deleting };
    else {
      this.staged.set(key, this.writes.length);
      this.writes.push({ delete: deleting });
    }
  }

  /**
   * `principalTenantValues` for a write of the hook's: filled from a tenant principal, 403 naming
   * another tenant. A principal of the platform has no tenant to fill: values without their tenant
   * field are the hook's fault (500, the log says which), not the client's, whose request may not
   * even hold that field (before: 400 naming it).
   */
  private tenantValues(collection: string, key: string, values: Values, creating: boolean): void {
    // The tenant collection's key is its id, which no insert gives.
    if (
      key !== "id" &&
      values[key] === undefined &&
      writerTenant({ principal: this.principal }) === undefined
    )
      throw new Error(
        `A hook's ${creating ? "insert into" : "update of"} ${collection} gives no ${key}: a principal of the platform has no tenant to fill it with; set ${key} (the tenant of the record the hook acts on, current.values)`,
      );
    principalTenantValues(this.principal, key, values, creating);
  }

  private spec(collection: string): HookSpec {
    const spec = this.support.specs[collection];
    if (!spec || !this.support.events[collection])
      throw new Error(`A hook cannot use ${collection}: no such collection.`);
    return spec;
  }
}

/** `where` and `scope` (a tenant's) together; null when they cannot both hold (`where` names another tenant). */
function within(where: Values, scope: Values | undefined): Values | null {
  if (!scope) return where;
  for (const [field, value] of Object.entries(scope)) {
    if (where[field] !== undefined && where[field] !== value) return null;
  }
  return { ...where, ...scope };
}

/** The record an update will write, as far as known before it is written. */
function recordAfter(update: StagedUpdate): StoredRecord {
  return {
    ...update.current,
    revision: update.expectedRevision + 1,
    updated_at: new Date().toISOString(),
    values: update.values,
  };
}
