/**
 * The default service of an action that acts on its record (SPEC §12.5): `requires` values of
 * the record, and `sets` some of its fields. The action record is created and the record changed
 * as one write (`Store.writeAll`), each with its event, the record's `.updated` first.
 */
import { CrudService, type ResourceSpec } from "./crud-service.ts";
import { NotFoundError, RecordChangedError } from "./errors.ts";
import { adoptedOr } from "./idempotency.ts";
import type { EventOf } from "./events.ts";
import {
  hookWrittenValues,
  type HookStore,
  type HookSupport,
  type ServiceHook,
  type WriteContext,
} from "./hooks.ts";
import { checkChange, checkRequires, type Requirements } from "./rules.ts";
import type { Store, StoredRecord, Values, Write } from "./store.ts";
import { writeScope } from "./tenancy.ts";
import { newId } from "./uuid.ts";

/** A field an action sets: to a value, or to the value of one of the action's fields (`from`). */
export type ActionSet = { value: unknown } | { from: string };

/** What an action does to the record it acts on (storage names). */
export interface ActionEffect {
  /** The action record's field that names the record (`ticket_id`). */
  targetField: string;
  /** The values the record's fields must have; else 422 naming the field, and nothing is written. */
  requires?: Requirements;
  /**
   * The record's fields the action changes (a `from` whose action field has no value leaves the
   * field as it is); the record's transitions are checked.
   */
  sets?: Readonly<Record<string, ActionSet>>;
  /**
   * The first API version whose requests `requires` and `sets` apply to (`rules_added`): a
   * request of an earlier version (`WriteContext.version`) only records the action, as that
   * version was published. A write without a version (a hook's, a direct call) applies them.
   */
  since?: number;
}

export class ActingService<V extends Values, T extends Values = Values> extends CrudService<V> {
  private readonly effect: ActionEffect;
  private readonly target: ResourceSpec;
  private readonly hook: ServiceHook<V, T> | undefined;

  /**
   * `spec` is the action records', `target` the spec of the collection they act on; `hook`, the
   * action's hook (hooks.ts), given the record acted on as `current`.
   */
  constructor(
    store: Store,
    spec: ResourceSpec,
    effect: ActionEffect,
    target: ResourceSpec,
    hook?: ServiceHook<V, T>,
    support?: HookSupport,
  ) {
    super(store, spec, undefined, support);
    this.effect = effect;
    this.target = target;
    this.hook = hook;
  }

  /**
   * Creates the action record on the record its target field names, which must still be as read
   * here when both are written (else 409). `publish` makes the event of each write, by its
   * collection (the generated handlers pass `eventsOf`): the record's, then the action record's.
   */
  override async create(
    values: V,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<StoredRecord<V>> {
    try {
      return await this.act(values, publish, context);
    } catch (error) {
      // A repeat of an idempotent request refused here because the first one acted (its
      // `requires` no longer hold) whose answer was never kept: the first's record (idempotency.ts).
      return (await adoptedOr(this.store, this.spec.collection, error)) as StoredRecord<V>;
    }
  }

  private async act(
    values: V,
    publish?: EventOf<StoredRecord<V>>,
    context?: WriteContext,
  ): Promise<StoredRecord<V>> {
    const { targetField, since } = this.effect;
    const acts = since === undefined || context?.version === undefined || context.version >= since;
    // A version before the rules, without a hook: the plain create that version was published with.
    if (!acts && !this.hook && this.target.tenantKey === undefined)
      return super.create(values, publish, context);
    const requires = acts ? this.effect.requires : undefined;
    const sets = acts ? this.effect.sets : undefined;
    const id = values[targetField];
    // The record acted on, within a tenant principal's tenant (SPEC §12.4), here and in the writes.
    const scope = writeScope(this.target, context);
    const current = typeof id === "string" ? await this.store.get(this.target.collection, id, scope) : null;
    if (!current) throw new NotFoundError("The record this action acts on does not exist.");
    // With If-Match, the revision the request named (runtime/hooks.ts actionContext): changed since, 409.
    if (context?.revision !== undefined && current.revision !== context.revision)
      throw new RecordChangedError();
    checkRequires(
      requires,
      current.values,
      this.spec.collection.slice(this.spec.collection.indexOf("/") + 1),
    );
    // The action's hook, with the record acted on; its writes go first (hooks.ts).
    const staged = this.hook && context ? this.staging(context) : null;
    if (staged)
      await this.hook!({
        principal: context!.principal,
        requestId: context!.requestId,
        current: current as StoredRecord<T>,
        values,
        store: staged as HookStore as HookStore<never>,
      });
    if (staged) hookWrittenValues(this.spec, values);
    let changed: Values | null = null;
    // A hook that updated the record acted on (a computed field): its values are the record's
    // update, with the action's `sets` on top; one write, one `.updated` event.
    const hooked = staged?.takeUpdate(this.target.collection, current.id);
    if (sets || hooked) {
      changed = { ...(hooked ?? current.values) };
      for (const [field, set] of Object.entries(sets ?? {})) {
        if ("value" in set) changed[field] = set.value;
        else if (values[set.from] !== undefined) changed[field] = values[set.from];
      }
      checkChange(this.target, current.values, changed);
    }
    const reader = staged?.reader ?? this.store;
    // The action's own references within the tenant of the record acted on.
    const key = this.target.tenantKey;
    const tenant = key === undefined ? undefined : key === "id" ? current.id : current.values[key];
    await this.checkReferences(values, null, this.spec, reader, context, tenant);
    if (changed) await this.checkReferences(changed, current.values, this.target, reader, context, tenant);
    const now = new Date().toISOString();
    const record: StoredRecord<V> = { id: newId(), created_at: now, updated_at: now, revision: 1, values };
    const writes: Write[] = [
      ...(staged ? staged.commit([this.target.collection, current.id]) : []),
      changed
        ? {
            update: {
              collection: this.target.collection,
              id: current.id,
              values: changed,
              expectedRevision: current.revision,
              constraints: this.target,
              publish: publish as EventOf<StoredRecord> | undefined,
              current,
              where: scope,
            },
          }
        : {
            expect: {
              collection: this.target.collection,
              id: current.id,
              revision: current.revision,
              where: scope,
            },
          },
      { insert: this.inserting(record, publish) },
    ];
    const written = await this.store.writeAll(writes);
    if (!written) throw new NotFoundError("The record this action acts on does not exist.");
    return written[written.length - 1] as StoredRecord<V>;
  }
}
