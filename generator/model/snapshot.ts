import { engineState } from "../engine.ts";
import { EXPORT_EVENTS } from "../../runtime/events.ts";
import { canonicalDecimal } from "../../runtime/decimal.ts";
import type { OnDelete, StoreReference } from "../../runtime/references.ts";
import { EXPORT_JOB_FIELDS, EXPORT_JOB_FILTERS, EXPORT_JOBS, type ExportJobField } from "../../runtime/exports-job.ts";
import { compareText } from "../diagnostics/diagnostic.ts";
import { singularOf, snakeCase } from "../util/names.ts";
import { EQUALS_TYPES, operatorsOf, orderingOf, timestampField, TIMESTAMPS } from "./lists.ts";
import { namesOf } from "./names.ts";
import { recordEvents, resourceRoutes } from "./routes.ts";
import { actionSymbols, resourceSymbols } from "./symbols.ts";

export { namesOf } from "./names.ts";
import type {
  ActionDef,
  ApiModel,
  Definitions,
  FieldDef,
  ListCondition,
  ListSortKey,
  ListUnder,
  Operation,
  ResourceDef,
  StorageResource,
  VersionAction,
  VersionExport,
  VersionField,
  VersionModel,
  VersionResource,
} from "./types.ts";

/** Version number of `vN`, or NaN. */
export function versionNumber(name: string): number {
  return /^v[1-9]\d*$/.test(name) ? Number(name.slice(1)) : Number.NaN;
}

/** Is something added in `added` and removed in `removed` present in version `n`? */
export function presentIn(n: number, added: string | undefined, removed: string | undefined): boolean {
  return n >= versionNumber(added ?? "v1") && (removed === undefined || n < versionNumber(removed));
}

/**
 * Definitions (already linted, free of errors) → the model emitters read: one snapshot per
 * version in which added/removed/renamed are resolved, and the storage view.
 */
export function buildModel(defs: Definitions): ApiModel {
  const resources = [...defs.resources].sort((a, b) => compareText(a.collection, b.collection));
  const snapshotOf = (v: Definitions["versions"][number], index: number): VersionModel => {
    const n = versionNumber(v.name);
    const successor = defs.versions[index + 1]?.name;
    const deprecation =
      v.deprecated && v.sunset
        ? {
            deprecated: v.deprecated,
            sunset: v.sunset,
            sunsetHttpDate: new Date(`${v.sunset}T00:00:00Z`).toUTCString(),
            successor: successor ?? v.name,
          }
        : null;
    const present = resources.filter((r) => presentIn(n, r.added, r.removed));
    const versionResources = present.map((r) => versionResource(defs, r, v.name, deprecation ? `${defs.baseUrl}/${deprecation.successor}` : null));
    const exports = present.flatMap((r, i) => (r.exportable && presentIn(n, r.exportAdded, undefined) ? [versionExport(r, versionResources[i]!)] : []));
    return {
      name: v.name,
      number: n,
      title: defs.title,
      baseUrl: defs.baseUrl,
      deprecation,
      draft: v.draft,
      events: defs.events,
      eventsPath: defs.events ? `/${v.name}/events` : null,
      searchMinLength: defs.searchMinLength,
      resources: versionResources,
      exports: exports.length ? exports : null,
      exportsPath: exports.length ? `/${v.name}/exports` : null,
    };
  };
  const versions = defs.versions.flatMap((v, index) => (v.retired ? [] : [snapshotOf(v, index)]));
  // The retired version just before the first live one, still listed (docs/versioning.md): the
  // first live version's CHANGES.md tells its late clients how to move. Not generated or served.
  const firstLive = defs.versions.findIndex((v) => !v.retired);
  const retiredPredecessor = firstLive > 0 ? snapshotOf(defs.versions[firstLive - 1]!, firstLive - 1) : null;
  const storage = resources.map((r) => storageResource(r, versions, tenancyOf(defs).keyOf(r.collection)));
  const exportJobs = versions.some((v) => v.exports) ? exportJobStorage() : null;
  const eventCollections = [
    ...storage.flatMap((r) => [r.collection, ...r.actionRecords.map((a) => a.collection)]),
    ...(exportJobs ? [EXPORT_EVENTS] : []),
  ].sort(compareText);
  return {
    title: defs.title,
    description: defs.description,
    baseUrl: defs.baseUrl,
    rateLimit: defs.rateLimit,
    events: defs.events,
    bodyLimit: defs.bodyLimit,
    searchMinLength: defs.searchMinLength,
    storage,
    references: storeReferences(storage),
    exportJobs,
    eventCollections,
    tenantCollection: tenancyOf(defs).collection,
    versions,
    retiredPredecessor,
  };
}

function versionResource(defs: Definitions, r: ResourceDef, version: string, successorBase: string | null): VersionResource {
  const n = versionNumber(version);
  const collectionPath = `/${version}/${r.collection}`;
  const lifetime = defs.versions.map((v) => versionNumber(v.name)).filter((v) => presentIn(v, r.added, r.removed));
  const parentName = parentFieldOf(r);
  const fields = r.fields
    .filter((f) => presentIn(n, f.added, f.removed))
    .map((f) => ({
      ...versionField(f, n),
      optional: mayBeAbsent(f, lifetime),
      ...hiddenMachine(r, f, n),
      ...(f.type === "uuid" && f.references ? { onDelete: onDeleteOf(f, parentName) } : {}),
    }));
  const byStorage = new Map(fields.map((f) => [f.storageName, f]));
  const parentDef = r.parent ? defs.resources.find((p) => p.collection === r.parent) : undefined;
  const parentField = r.parent ? fields.find((f) => f.type === "uuid" && f.references === r.parent) : undefined;
  const operations = Object.fromEntries(
    (["list", "read", "create", "update", "replace", "delete"] as Operation[]).map((o) => [o, r.operations.includes(o)]),
  ) as Record<Operation, boolean>;
  const names = namesOf(r.singular, r.collection);
  const resource: Omit<VersionResource, "routes"> = {
    collection: r.collection,
    names,
    symbols: resourceSymbols(names, r.collection),
    description: r.description,
    operations,
    pagination: r.pagination,
    fields,
    // `?q=` works on every resource: on the declared search fields, else on every returned string field.
    search: r.search.length
      ? r.search.flatMap((s) => byStorage.get(s) ?? [])
      : fields.filter((f) => f.type === "string" && f.output),
    filters: r.filters.flatMap((s) => {
      const f = byStorage.get(s);
      return f && EQUALS_TYPES.has(f.type) ? [f] : [];
    }),
    conditions: r.filters.flatMap((s) => listConditions(TIMESTAMPS.has(s) ? timestampField(s) : byStorage.get(s))),
    sort: r.sort.flatMap((s) => sortKey(TIMESTAMPS.has(s) ? timestampField(s) : byStorage.get(s))),
    uniqueFields: r.fields.flatMap((f) => (f.unique ? (byStorage.get(f.name)?.name ?? []) : [])),
    // The composite unique constraints whose fields this version all shows, by this version's names.
    uniqueTogether: r.uniqueTogether.flatMap((list) => {
      const shown = list.map((s) => byStorage.get(s)?.name);
      return shown.every((name) => name !== undefined) ? [shown as string[]] : [];
    }),
    parent:
      parentDef && parentField
        ? {
            collection: parentDef.collection,
            names: namesOf(parentDef.singular, parentDef.collection),
            symbols: resourceSymbols(namesOf(parentDef.singular, parentDef.collection), parentDef.collection),
            field: parentField,
            path: `/${version}/${parentDef.collection}/{id}/${r.collection}`,
            tenantKey: tenancyOf(defs).keyOf(parentDef.collection),
          }
        : null,
    listsUnder: fields.flatMap((f): ListUnder[] => {
      // A uuid field, or an array of them (many-to-many): the records whose array holds the id.
      const target = f.type === "uuid" ? f.references : f.type === "array" && f.items?.type === "uuid" ? f.items.references : undefined;
      const under = target && r.fields.find((d) => d.name === f.storageName)?.listUnder;
      const owner = under ? defs.resources.find((o) => o.collection === target) : undefined;
      if (!owner || !presentIn(n, owner.added, owner.removed)) return [];
      const ownerNames = namesOf(owner.singular, owner.collection);
      return [
        {
          collection: owner.collection,
          names: ownerNames,
          symbols: resourceSymbols(ownerNames, owner.collection),
          field: f,
          path: `/${version}/${owner.collection}/{id}/${r.collection}`,
          tenantKey: tenancyOf(defs).keyOf(owner.collection),
        },
      ];
    }),
    tenantKey: tenancyOf(defs).keyOf(r.collection),
    actions: r.actions.filter((a) => presentIn(n, a.added, undefined)).map((a): VersionAction => {
      const singular = singularOf(a.name);
      return {
        name: a.name,
        singular,
        names: namesOf(singular, a.name),
        symbols: actionSymbols(r.singular, singular, a.name),
        description: a.description,
        fields: a.fields.map((f) => versionField(f, n)),
        response: a.response,
        events: { created: `${r.singular}.${singular}.created`, deleted: `${r.singular}.${singular}.deleted` },
        targetField: `${snakeCase(r.singular)}_id`,
        path: `${collectionPath}/{id}/${a.name}`,
        rulesSince: a.rulesAdded === undefined ? null : versionNumber(a.rulesAdded),
        // A version before `rules_added` keeps the action as it published it: it records itself only.
        rules:
          a.rulesAdded !== undefined && n < versionNumber(a.rulesAdded)
            ? { requires: [], sets: [] }
            : {
                requires: a.requires.map((x) => ({ ...x, field: shownName(r, x.field, n) })),
                sets: canonicalSets(r, a.sets).map((x) => ({ ...x, field: shownName(r, x.field, n) })),
              },
      };
    }),
    paths: { collection: collectionPath, item: `${collectionPath}/{id}` },
    events: recordEvents(r.singular),
    successorLink: successorBase ? `<${successorBase}/${r.collection}>; rel="successor-version"` : null,
    serverDefaults: r.fields
      .filter((f) => f.hasDefault && (f.readOnly || !presentIn(n, f.added, f.removed)))
      .map((f) => ({ storageName: f.name, value: canonicalDefault(f, f.default) })),
  };
  return { ...resource, routes: resourceRoutes(resource) };
}

/**
 * A `read_only` field's state machine is shown in the versions whose requests can change the
 * field: those in which an action sets it (`rules_added`, SPEC §12.5). A version before every
 * such action changes it by no request, so its machine refuses nothing there and is not shown
 * (nor compared by the breaking-change gate). A read-only field no action sets (a hook's) shows
 * it in every version.
 */
function hiddenMachine(r: ResourceDef, f: FieldDef, n: number): { transitions?: undefined } {
  if (!f.transitions || !f.readOnly) return {};
  const setters = r.actions.filter((a) => a.sets.some((s) => s.field === f.name));
  const acting = setters.some((a) => presentIn(n, a.added, undefined) && (a.rulesAdded === undefined || n >= versionNumber(a.rulesAdded)));
  return setters.length && !acting ? { transitions: undefined } : {};
}

/** A field of `r` by the name version `n` gives it (its storage name when it has no other). */
function shownName(r: ResourceDef, field: string, n: number): string {
  const f = r.fields.find((x) => x.name === field);
  return f?.renamed && n < versionNumber(f.renamed.in) ? f.renamed.from : field;
}

/** The operator filters of one filter field, as a version shows it (none when the version lacks it). */
function listConditions(field: VersionField | undefined): ListCondition[] {
  if (!field) return [];
  return operatorsOf(field.type, field.optional || field.nullable).map((op) => ({
    param: `${field.name}[${op}]`,
    op,
    field,
    ordering: op === "null" ? null : (orderingOf(field.type) ?? null),
  }));
}

/** The sort key of one field, as a version shows it (none when the version lacks it, or its type has no order). */
function sortKey(field: VersionField | undefined): ListSortKey[] {
  const ordering = field && orderingOf(field.type);
  if (!field || !ordering) return [];
  return [{ name: field.name, storageName: field.storageName, ordering, ...(field.type === "enum" ? { rank: field.values ?? [] } : {}) }];
}

/** The field of `r` that names its parent record (the first uuid referencing `parent`); null without a parent. */
function parentFieldOf(r: ResourceDef): string | null {
  return r.parent ? (r.fields.find((f) => f.type === "uuid" && f.references === r.parent)?.name ?? null) : null;
}

/** What deleting the record a reference names does, as declared or by default: cascade for the parent field, else restrict. */
function onDeleteOf(f: FieldDef, parentField: string | null): OnDelete {
  return f.onDelete ?? (f.name === parentField ? "cascade" : "restrict");
}

function versionField(f: FieldDef, n: number): VersionField {
  const name = f.renamed && n < versionNumber(f.renamed.in) ? f.renamed.from : f.name;
  const input = !f.readOnly;
  return {
    name,
    storageName: f.name,
    type: f.type,
    description: f.description,
    minLength: f.minLength,
    maxLength: f.maxLength,
    pattern: f.pattern,
    format: f.format,
    schemes: f.format === "uri" ? (f.schemes ?? ["http", "https"]) : undefined,
    minimum: f.minimum,
    maximum: f.maximum,
    references: f.references,
    // A top-level field's is set again by versionResource, which knows the parent field.
    ...(f.type === "uuid" && f.references ? { onDelete: onDeleteOf(f, null) } : {}),
    values: f.values,
    transitions: f.transitions,
    items: f.items ? versionField(f.items, n) : undefined,
    maxItems: f.maxItems,
    fields: f.fields?.map((sub) => versionField(sub, n)),
    ...decimalOptions(f),
    optional: f.optional,
    nullable: f.nullable,
    hasDefault: f.hasDefault,
    default: canonicalDefault(f, f.default),
    readOnly: f.readOnly,
    writeOnly: f.writeOnly,
    unique: f.unique,
    input,
    requiredInput: input && !f.optional && !f.hasDefault && !f.tenant,
    output: !f.writeOnly,
    ...(f.tenant ? { tenant: true as const } : {}),
  };
}

/**
 * A default in the form a request's value takes once validated (SPEC §12.6): every decimal in it
 * with exactly its scale's fraction digits (`"2.5"` at scale 2 is `"2.50"`, `"-0"` is `"0.00"`),
 * the field's own or one inside it (a map's values, an array's items, an object's fields).
 * zod's `.default()` returns its value without parsing it, and the SQL store keeps `jsonb` as
 * given, so a default written otherwise would be shown as written.
 */
function canonicalDefault(f: FieldDef, value: unknown): unknown {
  if (f.type === "decimal") return typeof value === "string" ? canonicalDecimal(value, f.scale ?? 0) : value;
  const items = f.items;
  if (f.type === "array" && items && Array.isArray(value)) return value.map((item) => canonicalDefault(items, item));
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (f.type === "map" && items) return Object.fromEntries(entries.map(([key, v]) => [key, canonicalDefault(items, v)]));
  if (f.type === "object" && f.fields) {
    const fields = f.fields;
    return Object.fromEntries(
      entries.map(([key, v]) => {
        const sub = fields.find((s) => s.name === key);
        return [key, sub ? canonicalDefault(sub, v) : v];
      }),
    );
  }
  return value;
}

/** A decimal's precision, scale and bounds, the bounds in canonical form (`"0"` at scale 2 is `"0.00"`). */
function decimalOptions(f: FieldDef): Pick<VersionField, "precision" | "scale" | "decimalMinimum" | "decimalMaximum"> {
  if (f.type !== "decimal") return {};
  const scale = f.scale ?? 0;
  return defined({
    precision: f.precision,
    scale,
    decimalMinimum: f.decimalMinimum === undefined ? undefined : canonicalDecimal(f.decimalMinimum, scale),
    decimalMaximum: f.decimalMaximum === undefined ? undefined : canonicalDecimal(f.decimalMaximum, scale),
  });
}

/** `value` without its undefined properties. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Whether a stored record may lack a field: when no input or default guarantees it in every
 * version that has the resource (optional, read-only without default, added or removed on the way).
 */
function mayBeAbsent(f: FieldDef, lifetime: number[]): boolean {
  const everywhere = lifetime.every((n) => presentIn(n, f.added, f.removed));
  return !(f.hasDefault || (!f.optional && !f.readOnly && everywhere));
}

/**
 * The references inside arrays and objects, by their path in the stored values: `tag_ids.*` (each
 * item of an array), `address.country_id`, `lines.*.product_id`.
 */
function nestedReferences(fields: FieldDef[]): Array<{ path: string; collection: string }> {
  const found: Array<{ path: string; collection: string }> = [];
  const visit = (f: FieldDef, path: string, nested: boolean) => {
    if (nested && f.type === "uuid" && f.references) found.push({ path, collection: f.references });
    if (f.items) visit(f.items, `${path}.*`, true);
    for (const sub of f.fields ?? []) visit(sub, `${path}.${sub.name}`, true);
  };
  for (const f of fields) visit(f, f.name, false);
  return found;
}

/** An action's `sets` with each decimal constant in its field's canonical form (`"1.5"` → `"1.50"` at scale 2), as a record holds it. */
function canonicalSets(r: ResourceDef, sets: ActionDef["sets"]): ActionDef["sets"] {
  return sets.map((set) => {
    const field = r.fields.find((f) => f.name === set.field);
    return field?.type === "decimal" && typeof set.value === "string" ? { ...set, value: canonicalDecimal(set.value, field.scale ?? 0) } : set;
  });
}

function storageResource(r: ResourceDef, versions: VersionModel[], tenantKey: string | null): StorageResource {
  // Unique within the tenant (SPEC §12.4): the tenant field joins every unique constraint.
  const tenantField = tenantKey !== null && tenantKey !== "id" ? tenantKey : null;
  const unique = r.fields.filter((f) => f.unique).map((f) => f.name);
  const names = namesOf(r.singular, r.collection);
  const parentField = parentFieldOf(r);
  const lifetime = versions.map((v) => v.number).filter((n) => presentIn(n, r.added, r.removed));
  return {
    collection: r.collection,
    names,
    symbols: resourceSymbols(names, r.collection),
    // On a tenant-scoped resource a unique field is unique with the tenant field (`uniqueTogether`), not alone.
    fields: r.fields.map((f) => ({
      ...versionField(f, Number.POSITIVE_INFINITY),
      optional: mayBeAbsent(f, lifetime),
      ...(tenantField && f.unique ? { unique: false } : {}),
    })),
    actionRecords: r.actions.map((a) => ({
      name: a.name,
      collection: `${r.collection}/${a.name}`,
      names: namesOf(`${r.singular}-${singularOf(a.name)}`, `${r.singular}-${a.name}`),
      symbols: actionSymbols(r.singular, singularOf(a.name), a.name),
      targetField: `${snakeCase(r.singular)}_id`,
      fields: a.fields.map((f) => versionField(f, Number.POSITIVE_INFINITY)),
      references: a.fields.flatMap((f) =>
        f.type === "uuid" && f.references ? [{ field: f.name, collection: f.references, onDelete: onDeleteOf(f, null) }] : [],
      ),
      nestedReferences: nestedReferences(a.fields),
      rules: { requires: a.requires, sets: canonicalSets(r, a.sets) },
      rulesSince: a.rulesAdded === undefined ? null : versionNumber(a.rulesAdded),
    })),
    unique: tenantField ? [] : unique,
    uniqueTogether: tenantField
      ? [
          ...unique.filter((f) => f !== tenantField).map((f) => [tenantField, f]),
          ...r.uniqueTogether.map((list) => (list.includes(tenantField) ? [...list] : [tenantField, ...list])),
        ]
      : r.uniqueTogether.map((list) => [...list]),
    tenantKey,
    references: r.fields.flatMap((f) =>
      f.type === "uuid" && f.references
        ? [{ field: f.name, collection: f.references, onDelete: onDeleteOf(f, parentField) }]
        : [],
    ),
    renames: r.fields.flatMap((f): Array<[string, string]> => (f.renamed ? [[f.renamed.from, f.name]] : [])),
    links: r.fields.flatMap((f) =>
      f.type === "array" && f.items?.type === "uuid" && f.items.references
        ? [{ field: f.name, collection: f.items.references, onDelete: onDeleteOf(f.items, null) }]
        : [],
    ),
    nestedReferences: nestedReferences(r.fields),
    parentField,
    listedUnder: r.fields.filter((f) => f.type === "uuid" && f.references && f.listUnder && f.name !== parentField).map((f) => f.name),
    search: r.search,
    filters: r.filters,
    sort: r.sort,
  };
}

/**
 * Every reference between stored collections: each resource's (a child's parent field cascades
 * by default, any other reference restricts), then each action record's target, which always
 * cascades: an action record is part of its target's history. A tenant-scoped resource's carry
 * its tenant field (SPEC §12.4). A reference inside a field kept whole (an object's field, an
 * array of objects, an action's array of ids) restricts, with its `path` (SPEC §12.3: every
 * `references` is enforced).
 */
function storeReferences(storage: StorageResource[]): StoreReference[] {
  return storage.flatMap((r) => {
    const tenant = r.tenantKey !== null && r.tenantKey !== "id" ? { tenant: r.tenantKey } : {};
    return [
      ...r.references.map((ref) => ({ collection: r.collection, field: ref.field, references: ref.collection, onDelete: ref.onDelete, ...nullable(r.fields, ref.field), ...tenant })),
      ...r.links.map((ref) => ({ collection: r.collection, field: ref.field, references: ref.collection, onDelete: ref.onDelete, many: true, ...tenant })),
      ...heldReferences(r.fields, r.nestedReferences, r.links).map((ref) => ({ collection: r.collection, field: ref.field, path: ref.path, references: ref.collection, onDelete: "restrict" as const, ...tenant })),
      ...r.actionRecords.flatMap((a) => [
        { collection: a.collection, field: a.targetField, references: r.collection, onDelete: "cascade" as const },
        ...a.references.map((ref) => ({ collection: a.collection, field: ref.field, references: ref.collection, onDelete: ref.onDelete, ...nullable(a.fields, ref.field) })),
        ...heldReferences(a.fields, a.nestedReferences).map((ref) => ({ collection: a.collection, field: ref.field, path: ref.path, references: ref.collection, onDelete: "restrict" as const })),
      ]),
    ];
  });
}

/**
 * The references of a resource's or an action's `fields` that sit inside a field kept whole as
 * JSON (`StoreReference.path`): an object's field, an array of objects, an action's array of ids
 * (`nested`, as `nestedReferences` finds them), each as the storage field that holds it and the
 * path inside (`contact.agent_id` is `contact` and `["agent_id"]`). A resource's own array of
 * ids is a relation (`links`, kept in a link table), not one of them. Read by `storeReferences`
 * and by the SQL emitter, which indexes each such field (emit/sql/snapshot.ts).
 */
export function heldReferences(
  fields: readonly VersionField[],
  nested: ReadonlyArray<{ path: string; collection: string }>,
  links: ReadonlyArray<{ field: string }> = [],
): Array<{ field: string; path: string[]; collection: string }> {
  const linked = new Set(links.map((link) => `${link.field}.*`));
  return nested
    .filter((ref) => !linked.has(ref.path))
    .map((ref) => {
      const [head, ...rest] = ref.path.split(".") as [string, ...string[]];
      return { field: fields.find((f) => f.name === head)?.storageName ?? head, path: rest, collection: ref.collection };
    });
}

/**
 * Whether a reference field (one id) is both optional and nullable: the SQL store keeps it in a
 * nullable uuid column (emit/sql/snapshot.ts), whose NULL reads back as `null`, and the memory
 * store keeps a record that lacks it with `null` too (`StoreReference.nullable`).
 */
export function isNullableReference(field: VersionField): boolean {
  return field.type === "uuid" && field.optional && field.nullable;
}

/** `{ nullable: true }` for the storage field `storageName` of `fields` when it is such a reference. */
function nullable(fields: readonly VersionField[], storageName: string): { nullable?: true } {
  const field = fields.find((f) => f.storageName === storageName);
  return field && isNullableReference(field) ? { nullable: true } : {};
}

function versionExport(r: ResourceDef, resource: VersionResource): VersionExport {
  return {
    collection: resource.collection,
    names: resource.names,
    symbols: resource.symbols,
    formats: r.exportFormats?.length ? r.exportFormats : ["ndjson"],
    filters: resource.filters,
    conditions: resource.conditions,
    sort: resource.sort,
    search: resource.search,
    columns: ["id", ...resource.fields.filter((f) => f.output).map((f) => f.name), "created_at", "updated_at"],
    decimals: resource.fields.filter((f) => f.output && f.type === "decimal").map((f) => f.name),
  };
}

/**
 * What the store keeps of an export job: the fields runtime/exports-job.ts defines, which the
 * runtime reads and writes. The owner, the version and the status are matched exactly (a
 * principal lists its own jobs of one version; a starting service finds the jobs to resume).
 */
/**
 * A field the server sets and shows, never a client: the fields of canon's own records (export
 * jobs) and the target field of an action record.
 */
export function serverField(name: string, type: VersionField["type"], optional = false): VersionField {
  return {
    name,
    storageName: name,
    type,
    optional,
    nullable: false,
    hasDefault: false,
    readOnly: true,
    writeOnly: false,
    unique: false,
    input: false,
    requiredInput: false,
    output: true,
  };
}

function exportJobStorage(): StorageResource {
  const fields = Object.entries(EXPORT_JOB_FIELDS).map(([name, spec]: [string, ExportJobField]): VersionField => ({
    ...serverField(name, spec.type, spec.optional ?? false),
    ...(spec.maxLength === undefined ? {} : { maxLength: spec.maxLength }),
    ...(spec.minimum === undefined ? {} : { minimum: spec.minimum }),
    ...(spec.values ? { values: [...spec.values] } : {}),
    ...(spec.type === "object" ? { fields: [] } : {}),
  }));
  return {
    collection: EXPORT_JOBS,
    names: namesOf("export", "exports"),
    symbols: resourceSymbols(namesOf("export", "exports"), EXPORT_JOBS),
    fields,
    tenantKey: null,
    actionRecords: [],
    nestedReferences: [],
    unique: [],
    uniqueTogether: [],
    references: [],
    links: [],
    renames: [],
    parentField: null,
    listedUnder: [],
    search: [],
    filters: [...EXPORT_JOB_FILTERS],
    sort: [],
  };
}

/** The tenant collection and each collection's tenant key (SPEC §12.4), once per definitions (in the run's engine). */
function tenancyOf(defs: Definitions): { collection: string | null; keyOf(collection: string): string | null } {
  const tenancies = engineState("tenancies", () => new WeakMap<Definitions, { collection: string | null; keyOf(collection: string): string | null }>());
  let tenancy = tenancies.get(defs);
  if (!tenancy) {
    const keys = new Map<string, string>();
    let collection: string | null = null;
    for (const r of defs.resources) {
      const field = r.fields.find((f) => f.tenant && f.type === "uuid" && f.references);
      if (!field) continue;
      collection ??= field.references!;
      keys.set(r.collection, field.name);
    }
    if (collection !== null && !keys.has(collection)) keys.set(collection, "id");
    tenancy = { collection, keyOf: (c) => keys.get(c) ?? null };
    tenancies.set(defs, tenancy);
  }
  return tenancy;
}
