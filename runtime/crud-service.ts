/**
 * The default service of a resource: create, read, update, delete and list over a `Store`,
 * with unique fields (409) and references to records that must exist (422). Handlers call a
 * service after validating input and authorizing; a user replaces a resource's service to
 * add business rules without touching generated files.
 */
import type { DecimalField } from "./decimal.ts";
import type { MapField } from "./map.ts";
import { BusinessRuleError, ConflictError } from "./errors.ts";
import type { EventOf } from "./events.ts";
import {
  hookWrittenValues,
  StagedHookStore,
  type HookStore,
  type HookSupport,
  type ReadContext,
  type ServiceCreateHook,
  type ServiceHook,
  type WriteContext,
  type WriteHooks,
} from "./hooks.ts";
import { idsAt } from "./references.ts";
import { checkChange, type Transitions } from "./rules.ts";
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
} from "./store.ts";
import { principalTenantValues, writeScope, writerTenant } from "./tenancy.ts";
import { newId } from "./uuid.ts";

export interface ResourceSpec {
  /** Store collection: `orders`, or `orders/cancellations` for an action's records. */
  collection: string;
  /** Storage fields whose values are unique (text compared normalized: runtime/unique.ts). */
  unique: string[];
  /** Composite unique constraints: storage fields unique together (SPEC §12.3). */
  uniqueTogether?: string[][];
  /** Of the fields of `unique` and `uniqueTogether`, the `format: email` ones (also compared without regard to ASCII case). */
  emails?: string[];
  /** Of the fields of `unique` and `uniqueTogether`, the `datetime` ones (compared by the instant they name). */
  instants?: string[];
  /**
   * uuid fields that must name an existing record of another collection: a field, or a path into
   * arrays and objects (`tag_ids.*` for each item, `address.country_id`, `lines.*.product_id`).
   */
  references: Array<{ field: string; collection: string; tenantKey?: string }>;
  /**
   * Its tenant field, on a tenant-scoped resource (SPEC §12.4): a reference whose `tenantKey` is
   * set (to a tenant-scoped collection, or the tenant collection's `id`) must name a record of
   * the record's own tenant, else 422 as if it did not exist.
   */
  tenant?: string;
  /**
   * Where a tenant principal's tenant is in this collection's records (SPEC §12.4): the tenant
   * field (as `tenant`), or `id` in the tenant collection. A write by id of a tenant principal
   * carries it in its statement (`Store.update`'s `where`): another tenant's record is not written.
   */
  tenantKey?: string;
  /** The state machines of enum fields (SPEC §12.5): an update or replace that breaks one answers 422. */
  transitions?: Transitions;
  /** Its decimal fields (SPEC §12.6): what a hook sets is written in canonical form (`decimalValues`). */
  decimals?: DecimalField[];
  /** Its map fields (SPEC §12.6): what a hook sets is checked against the rules of every map (`mapValues`). */
  maps?: MapField[];
}

/**
 * What the handlers of a resource call. Each write is given `publish`, which makes the write's
 * event from the record written (for `remove`, the record as it was): a service hands it to the
 * store's write (`store.insert({ …, publish })`), which keeps the event with the write, in one
 * transaction on a SQL store. A service of your own that writes elsewhere, or writes several
 * records, must still publish exactly one event per successful write and none for a failed
 * one: pass `publish` to the store write that makes the change, or call it yourself and keep
 * its result with `store.appendEvents([event])` once your write has succeeded.
 *
 * Every method's last argument says who asks (SPEC §12.5): the principal (tenant included) and the
 * request id, a `ReadContext` on the reads, a `WriteContext` (the same and more) on the writes. The
 * generated handlers always give it; the default service reads without it (a tenant principal's
 * reads are already scoped by `query.where` and `where`), so a service of your own may hide records
 * by the principal's scopes, or log who read what.
 */
export interface ResourceService<V extends Values = Values> {
  /** With `query.parent`, the store may give the parent with the page (store.ts `CursorQuery.parent`). */
  list(query: CursorQuery, context?: ReadContext): Promise<ListPage<V>>;
  page(query: OffsetQuery, context?: ReadContext): Promise<{ records: StoredRecord<V>[]; total: number }>;
  /**
   * With `where`, null too when the record does not match it (a tenant principal's tenant, SPEC §12.4).
   * Also the read of the record a PATCH, PUT, DELETE or action acts on: then `context` is the write's.
   */
  get(id: string, where?: Values, context?: ReadContext): Promise<StoredRecord<V> | null>;
  /** `context`: who writes (the handlers always give it; hooks.ts). */
  create(values: V, publish?: EventOf<StoredRecord<V>>, context?: WriteContext): Promise<StoredRecord<V>>;
  /** Writes `values` as the record's new values, if it is still at `current.revision`. */
  update(
    current: StoredRecord<V>,
    values: V,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<StoredRecord<V> | null>;
  remove(
    current: StoredRecord<V>,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<boolean>;
}

export class CrudService<V extends Values> implements ResourceService<V> {
  protected readonly store: Store;
  protected readonly spec: ResourceSpec;
  /** The hooks of this resource's writes (hooks.ts), and what their store handle needs. */
  protected readonly hooks: WriteHooks<V, never> | undefined;
  protected readonly support: HookSupport | undefined;

  constructor(store: Store, spec: ResourceSpec, hooks?: WriteHooks<V, never>, support?: HookSupport) {
    this.store = store;
    this.spec = spec;
    this.hooks = hooks;
    this.support = support;
  }

  // Reads hand the store's promise on as it is: no promise of their own (one less turn of the
  // microtask queue on every read). They do not need who asks (`ReadContext`): a tenant's scope
  // is in the query and `where` already.
  list(query: CursorQuery, _context?: ReadContext): Promise<ListPage<V>> {
    return this.store.list(this.spec.collection, query) as Promise<ListPage<V>>;
  }

  page(query: OffsetQuery, _context?: ReadContext): Promise<{ records: StoredRecord<V>[]; total: number }> {
    return this.store.page(this.spec.collection, query) as Promise<{
      records: StoredRecord<V>[];
      total: number;
    }>;
  }

  get(id: string, where?: Values, _context?: ReadContext): Promise<StoredRecord<V> | null> {
    return this.store.get(this.spec.collection, id, where) as Promise<StoredRecord<V> | null>;
  }

  async create(
    values: V,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<StoredRecord<V>> {
    const hook = this.hooks?.create;
    if (hook && context) return this.hookedCreate(hook, values, publish, context);
    await this.checkReferences(values, null, this.spec, this.store, context);
    const now = new Date().toISOString();
    const record: StoredRecord<V> = { id: newId(), created_at: now, updated_at: now, revision: 1, values };
    return (await this.store.insert(this.inserting(record, publish))) as StoredRecord<V>;
  }

  async update(
    current: StoredRecord<V>,
    values: V,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<StoredRecord<V> | null> {
    const hooks = this.hooks;
    if (hooks && context) {
      const hook = context.replace ? hooks.replace : hooks.update;
      if (hook) return this.hookedUpdate(hook, current, values, publish, context);
    }
    // Checked against the record the write replaces: the store writes only at `current.revision`.
    checkChange(this.spec, current.values, values);
    await this.checkReferences(values, current.values, this.spec, this.store, context);
    return (await this.store.update(
      this.updating(current, values, publish, context),
    )) as StoredRecord<V> | null;
  }

  async remove(
    current: StoredRecord<V>,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<boolean> {
    const hook = this.hooks?.delete;
    if (hook && context) {
      const staged = this.staging(context);
      await hook({
        ...context,
        current,
        values: { ...current.values },
        store: staged as HookStore as HookStore<never>,
      });
      // The hook's writes, then the delete, as one `writeAll` (without any: the delete alone, below).
      const before = staged.commit([this.spec.collection, current.id]);
      if (before.length) {
        const deleted = await this.store.writeAll([
          ...before,
          { delete: this.deleting(current, publish, context) },
        ]);
        return deleted !== null;
      }
    }
    return this.store.delete(this.deleting(current, publish, context));
  }

  /** The store's insert of `record` into this collection. */
  protected inserting(record: StoredRecord<V>, publish: EventOf<StoredRecord<V>> | undefined): InsertArgs {
    return {
      collection: this.spec.collection,
      record,
      constraints: this.spec,
      publish: publish as EventOf<StoredRecord> | undefined,
    };
  }

  /** The store's update of `current` to `values`, at its revision and within the principal's tenant. */
  private updating(
    current: StoredRecord<V>,
    values: V,
    publish: EventOf<StoredRecord<V>> | undefined,
    context: WriteContext | undefined,
  ): UpdateArgs {
    return {
      collection: this.spec.collection,
      id: current.id,
      values,
      expectedRevision: current.revision,
      constraints: this.spec,
      publish: publish as EventOf<StoredRecord> | undefined,
      current,
      where: writeScope(this.spec, context),
    };
  }

  /** The store's delete of `current`, at its revision and within the principal's tenant. */
  private deleting(
    current: StoredRecord<V>,
    publish: EventOf<StoredRecord<V>> | undefined,
    context: WriteContext | undefined,
  ): DeleteArgs {
    return {
      collection: this.spec.collection,
      id: current.id,
      expectedRevision: current.revision,
      publish: publish as EventOf<StoredRecord> | undefined,
      current,
      where: writeScope(this.spec, context),
      tenant: writerTenant(context),
    };
  }

  /** The store handle of one hook call (hooks.ts), acting for the principal of `context`. */
  protected staging(context: WriteContext): StagedHookStore {
    if (!this.support) throw new Error("Hooks need the generated hookSupport (buildApp passes it).");
    return new StagedHookStore(
      this.store,
      this.support,
      (values, previous, spec, reader) => this.checkReferences(values, previous, spec, reader),
      context.principal,
      context.version,
    );
  }

  /** A create through its hook: the hook's staged writes, then the record, as one `writeAll`. */
  private async hookedCreate(
    hook: ServiceCreateHook<V>,
    values: V,
    publish: EventOf<StoredRecord<V>> | undefined,
    context: WriteContext,
  ): Promise<StoredRecord<V>> {
    const staged = this.staging(context);
    await hook({
      principal: context.principal,
      requestId: context.requestId,
      current: null,
      values,
      store: staged as HookStore as HookStore<never>,
    });
    hookWrittenValues(this.spec, values);
    // The hook may have changed the tenant field: still the principal's tenant (else 403).
    if (this.spec.tenantKey !== undefined)
      principalTenantValues(context.principal, this.spec.tenantKey, values);
    await this.checkReferences(values, null, this.spec, staged.reader, context);
    const now = new Date().toISOString();
    const record: StoredRecord<V> = { id: newId(), created_at: now, updated_at: now, revision: 1, values };
    const before = staged.commit();
    // A hook that wrote and read nothing: the write as without a hook (one statement on SQL).
    if (!before.length) return (await this.store.insert(this.inserting(record, publish))) as StoredRecord<V>;
    const written = await this.store.writeAll([...before, { insert: this.inserting(record, publish) }]);
    if (!written) throw new ConflictError("A record the hook changed was deleted by another request.");
    return written[written.length - 1] as StoredRecord<V>;
  }

  /** An update or replace through its hook: the hook's staged writes, then the record's, as one `writeAll`. */
  private async hookedUpdate(
    hook: ServiceHook<V>,
    current: StoredRecord<V>,
    values: V,
    publish: EventOf<StoredRecord<V>> | undefined,
    context: WriteContext,
  ): Promise<StoredRecord<V> | null> {
    const staged = this.staging(context);
    await hook({
      principal: context.principal,
      requestId: context.requestId,
      current,
      values,
      store: staged as HookStore as HookStore<never>,
    });
    hookWrittenValues(this.spec, values);
    if (this.spec.tenantKey !== undefined)
      principalTenantValues(context.principal, this.spec.tenantKey, values, false);
    checkChange(this.spec, current.values, values);
    await this.checkReferences(values, current.values, this.spec, staged.reader, context);
    const before = staged.commit([this.spec.collection, current.id]);
    // A hook that wrote and read nothing: the write as without a hook (one statement on SQL).
    if (!before.length)
      return (await this.store.update(
        this.updating(current, values, publish, context),
      )) as StoredRecord<V> | null;
    const written = await this.store.writeAll([
      ...before,
      { update: this.updating(current, values, publish, context) },
    ]);
    return written ? (written[written.length - 1] as StoredRecord<V>) : null;
  }

  /**
   * 422 when a reference of `spec` (the spec of the collection `values` are written in) names no
   * record, with a detail for each such reference (`tag_ids.2`); references the record already
   * had are not looked up again. With `context.authorize`, a record its principal may not `read`
   * is answered as missing: the 422 does not tell them apart. A reference with a `tenantKey` is
   * looked up within the record's tenant (SPEC §12.4): its tenant field; for a collection without
   * one (an action's records), `tenant` (the tenant of the record acted on) or else the principal's.
   */
  protected async checkReferences(
    values: Values,
    previous: Values | null,
    spec: Pick<ResourceSpec, "references" | "tenant">,
    reader: Pick<Store, "get">,
    context?: WriteContext,
    tenant: unknown = spec.tenant === undefined ? context?.principal.tenant : values[spec.tenant],
  ): Promise<void> {
    const authorize = context?.authorize;
    const exists = async (collection: string, id: string, where?: Values): Promise<boolean> => {
      const record = await reader.get(collection, id, where);
      if (!record || !authorize) return record !== null;
      return authorize({ principal: context!.principal, action: "read", collection, record });
    };
    const missing: Array<{ field: string; collection: string }> = [];
    for (const { field, collection, tenantKey } of spec.references) {
      // A reference into a tenant's records is looked up within the record's tenant.
      const where = tenantKey !== undefined && tenant !== undefined ? { [tenantKey]: tenant } : undefined;
      if (!field.includes(".")) {
        const id = values[field];
        if (
          typeof id !== "string" ||
          (previous && previous[field] === id && previous[spec.tenant!] === tenant)
        )
          continue;
        if (!(await exists(collection, id, where))) missing.push({ field, collection });
        continue;
      }
      const known = new Set(
        previous && (where === undefined || previous[spec.tenant!] === tenant)
          ? idsAt(previous, field).map(([, id]) => id)
          : [],
      );
      const checked = new Map<string, boolean>();
      for (const [at, id] of idsAt(values, field)) {
        if (known.has(id)) continue;
        let found = checked.get(id);
        if (found === undefined) {
          found = await exists(collection, id, where);
          checked.set(id, found);
        }
        if (!found) missing.push({ field: at, collection });
      }
    }
    if (missing.length) {
      const first = missing[0]!;
      throw new BusinessRuleError(
        missing.length === 1
          ? `${first.field} names no existing record of ${first.collection}.`
          : `${missing.length} references name no existing record.`,
        missing.map(({ field, collection }) => ({
          field,
          issue: `must name an existing record of ${collection}`,
        })),
      );
    }
  }
}
