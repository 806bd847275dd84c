import type { OnDelete, StoreReference } from "../../runtime/references.ts";
import type { ExportFormat } from "../../runtime/exports-job.ts";
import type { Ordering } from "../../runtime/store.ts";
import type { SourceLocation } from "../diagnostics/diagnostic.ts";
import type { Names } from "./names.ts";
import type { RecordSymbols, ResourceSymbols } from "./symbols.ts";

export type { Names } from "./names.ts";
export type { RecordSymbols, ResourceSymbols } from "./symbols.ts";

/**
 * The model: the one checked, normalized description of an API that every lint rule and
 * every emitter reads. Two layers:
 *  - `Definitions`: the definitions as written, normalized, with source locations (lint).
 *  - `ApiModel`: what emitters read. One `VersionModel` snapshot per version with every
 *    added/removed/renamed field and every default already settled, plus the
 *    version-independent `storage` view that the store and the CRUD service use.
 */

export type FieldType = "string" | "integer" | "number" | "boolean" | "uuid" | "date" | "datetime" | "enum" | "array" | "object" | "decimal" | "map";

export type Locator = (...path: PropertyKey[]) => SourceLocation;

/**
 * What a field is, as the definitions write it (`FieldDef`) and as each version shows it
 * (`VersionField`): its type, constraints and flags. `Nested` is the kind of its items and
 * sub-fields.
 */
interface FieldShape<Nested> {
  name: string;
  type: FieldType;
  description?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: "email" | "uri";
  /** With format uri: the URL schemes accepted. */
  schemes?: string[];
  minimum?: number;
  maximum?: number;
  references?: string;
  values?: string[];
  /** enum: value → the values it may change to, as written (SPEC §12.5); a value that is not a key is final. */
  transitions?: Record<string, string[]>;
  items?: Nested;
  /** array: most items; map: most keys. */
  maxItems?: number;
  fields?: Nested[];
  /** decimal: most significant digits, and how many of them follow the point. */
  precision?: number;
  scale?: number;
  /** decimal: bounds as decimal strings (canonical, `scale` fraction digits, in a `VersionField`). */
  decimalMinimum?: string;
  decimalMaximum?: string;
  optional: boolean;
  nullable: boolean;
  hasDefault: boolean;
  default?: unknown;
  readOnly: boolean;
  writeOnly: boolean;
  unique: boolean;
}

export interface FieldDef extends FieldShape<FieldDef> {
  /** With format uri: the URL schemes accepted, as the definition gives them. */
  schemes?: string[];
  /** With `references`: what deleting the referenced record does; undefined: the default (cascade for a parent field, else restrict). */
  onDelete?: OnDelete;
  /** With references: the resource is also listed under the referenced record (SPEC §12.3). */
  listUnder?: boolean;
  /** With references: the field names the record's tenant, making the resource tenant-scoped (SPEC §12.4). */
  tenant?: boolean;
  added?: string;
  removed?: string;
  renamed?: { in: string; from: string };
  /** Location of the field's key, or of one of its options. */
  at: Locator;
}

/** What an action requires of its record, and what it sets on it (SPEC §12.5), in the order written. */
export interface ActionRules {
  /** Field of the resource → the values it must have for the action to be taken. */
  requires: Array<{ field: string; values: unknown[] }>;
  /** Field of the resource → a value, or `from` an action field. */
  sets: Array<{ field: string; value?: unknown; from?: string }>;
}

export interface ActionDef extends ActionRules {
  name: string;
  description?: string;
  /** First version that has the action; absent: the resource's first. */
  added?: string;
  /** First version whose requests the rules (`requires`, `sets`) apply to; absent: every version. */
  rulesAdded?: string;
  fields: FieldDef[];
  response: 201 | 204;
  at: Locator;
}

export type Operation = "list" | "read" | "create" | "update" | "replace" | "delete";

/** File format of an export: `ndjson` (one JSON record per line) or `csv` (a header row, then one row per record). */
export type { ExportFormat };

export interface ResourceDef {
  file: string;
  collection: string;
  singular: string;
  description?: string;
  added?: string;
  removed?: string;
  parent?: string;
  operations: Operation[];
  /** How many entries `operations` has as written (repeats included; 0 when it is not written). */
  operationsWritten?: number;
  pagination: "cursor" | "offset";
  search: string[];
  /** `search: []` as written: no field named, so `?q=` matches every returned string field, as without it. */
  searchEmpty?: boolean;
  /** Fields (or `created_at`/`updated_at`) a list filters on, with the operators their types take. */
  filters: string[];
  /** Fields (or `created_at`/`updated_at`) a list may be sorted by. */
  sort: string[];
  /** Composite unique constraints (`unique: [[a, b], …]` at the resource level): field names unique together, as written. */
  uniqueTogether: string[][];
  exportable: boolean;
  /** First version that offers the export (`export: { added }`); absent: every version of the resource. */
  exportAdded?: string;
  /** Formats an export offers, the default first (absent: NDJSON only). */
  exportFormats?: ExportFormat[];
  fields: FieldDef[];
  actions: ActionDef[];
  at: Locator;
}

export interface VersionDef {
  name: string;
  deprecated?: string;
  sunset?: string;
  /** Gone: listed so that numbering and references hold, but not generated or served. */
  retired: boolean;
  /** Not published yet: generated and served, but not held to an earlier document by the gate. */
  draft: boolean;
  at: Locator;
}

export interface Definitions {
  title: string;
  description?: string;
  baseUrl: string;
  versions: VersionDef[];
  rateLimit: { requests: number; perSeconds: number } | null;
  events: boolean;
  bodyLimit: number;
  /** Fewest characters of `?q=` (surrounding spaces not counted); default 3. */
  searchMinLength: number;
  resources: ResourceDef[];
  at: Locator;
}

/* ---------- what emitters read ---------- */

/* ---------- the route record (built by routes.ts) ---------- */

export type RouteMethod = "get" | "post" | "put" | "patch" | "delete";

export type RouteKind = Operation | "list-under" | "action";

export interface Route {
  kind: RouteKind;
  method: RouteMethod;
  /** `/v2/orders/{id}`: the path with its version, as OpenAPI and the client write it. */
  path: string;
  /** `/v2/orders/:id`: the same path as the server (Fastify) registers it. */
  serverPath: string;
  /** `getOrder`, `listUserOrders`, `createOrderCancellation`. */
  operationId: string;
  /** `Get an order`, `List the orders of a user`: the operation in prose. */
  summary: string;
  /** The schema of its request body, which is also its TypeScript type: `OrderCreate`; null without a body. */
  body: string | null;
  /** The record its answer holds (a list: each item of the page), schema and type: `Order`; null for a 204. */
  record: string | null;
  /** The status of a success: 200, 201, or 204. */
  status: 200 | 201 | 204;
  /** The error statuses it may answer, lowest first. */
  errors: readonly number[];
  /** The event types a success publishes, in order (a delete's cascade adds those of the records it takes along). */
  events: readonly string[];
  /** A list under a record: the collection of that record; an action: the action's name. */
  of?: string;
}

/** The event types of a resource's own records: `order.created`, `.updated`, `.deleted`. */
export interface RecordEvents {
  created: string;
  updated: string;
  deleted: string;
}

/** A field as one version shows it. `name` is this version's name; `storageName` the store's. */
export interface VersionField extends FieldShape<VersionField> {
  storageName: string;
  /** With format uri: the URL schemes accepted (http and https unless the definition says otherwise). */
  schemes?: string[];
  /*
   * `optional` (above) on a resource's top-level field means "a record may lack it": declared
   * optional, read-only without a default, or missing from some version. Inputs use `requiredInput`.
   */
  /** Accepted in create/replace bodies (not read-only). */
  input: boolean;
  /** Required in create/replace bodies: input, not optional, no default. */
  requiredInput: boolean;
  /** Returned in responses (not write-only). */
  output: boolean;
  /**
   * The tenant field of a tenant-scoped resource (SPEC §12.4): optional in create and replace
   * bodies (filled from the principal's tenant), required in the record.
   */
  tenant?: true;
  /** With `references` (a uuid, or an array's uuid items): what deleting the referenced record does, the default resolved. */
  onDelete?: OnDelete;
}

export interface VersionAction {
  name: string;
  singular: string;
  names: Names;
  /** Names of its records across the generated files (`OrderCancellation`, `orderCancellationCreate`). */
  symbols: RecordSymbols;
  description?: string;
  fields: VersionField[];
  response: 201 | 204;
  /** Its records' event types: `order.cancellation.created`, and `.deleted` when a delete of its target takes them along. */
  events: Pick<RecordEvents, "created" | "deleted">;
  /** Name of the field that holds the target's id in the action record, `order_id`. */
  targetField: string;
  /** `/v2/orders/{id}/cancellations` (OpenAPI's form of a path parameter). */
  path: string;
  /** Its `requires` and `sets`, each field by this version's name (its storage name when the version does not show it). */
  rules: ActionRules;
  /** The first version whose requests the rules apply to (`rules_added`), or null: every version. */
  rulesSince: number | null;
}

/** An operator of a list filter (SPEC §12.2); equality is the bare `?field=value` (`VersionResource.filters`). */
export type FilterOperator = "in" | "gt" | "gte" | "lt" | "lte" | "null";

/**
 * One operator filter of a list: the query parameter `status[in]`, `due_at[gte]` or
 * `assignee_id[null]`. `field` is the field as this version shows it; for `created_at` and
 * `updated_at` a `datetime` field of that name (storage name the same).
 */
export interface ListCondition {
  /** The query parameter, as a client sends it: `due_at[gte]`. */
  param: string;
  op: FilterOperator;
  field: VersionField;
  /** How values compare (`in` and the ranges); null for `null`. */
  ordering: Ordering | null;
}

/** One key `?sort=` takes: `priority` (and `-priority`). */
export interface ListSortKey {
  /** This version's name of the field, as `?sort=` spells it. */
  name: string;
  storageName: string;
  ordering: Ordering;
  /** An enum's values, lowest first. */
  rank?: string[];
}

/** A list of a resource under one record of another collection: its parent's, or a `list_under` field's. */
export interface ListUnder {
  /** The collection of the record the list hangs under. */
  collection: string;
  names: Names;
  symbols: ResourceSymbols;
  /** The field that names that record. */
  field: VersionField;
  /** `/v2/users/{id}/orders`. */
  path: string;
  /** The tenant key of the record's collection (VersionResource.tenantKey). */
  tenantKey: string | null;
}

export interface VersionResource {
  collection: string;
  names: Names;
  /** Names that cross generated files (types, validators, mapper, service, routes, page). */
  symbols: ResourceSymbols;
  description?: string;
  operations: Record<Operation, boolean>;
  pagination: "cursor" | "offset";
  fields: VersionField[];
  search: VersionField[];
  /** Exact-match filters: `?status=open`. */
  filters: VersionField[];
  /** Operator filters (SPEC §12.2), in the order of `filters` in the definition, each field's operators in a fixed order. */
  conditions: ListCondition[];
  /** The keys `?sort=` takes (SPEC §12.1), in the order the definition lists them. */
  sort: ListSortKey[];
  /**
   * Composite unique constraints (SPEC §12.3) whose fields this version all shows, by this
   * version's names: a write that would repeat one answers 409.
   */
  uniqueTogether: string[][];
  /** Fields unique on their own (`unique: true`) that this version shows, by this version's names: a write repeating a value answers 409. */
  uniqueFields: string[];
  /** Its parent, and its list under it: `path` is `/v2/users/{id}/orders`. */
  parent: ListUnder | null;
  /**
   * Its other lists under a referenced record (`list_under: true` on a referencing field, SPEC
   * §12.3): `/v2/agents/{id}/tickets`, the records whose field names that record. In the order of
   * the fields.
   */
  listsUnder: ListUnder[];
  /**
   * Tenancy (SPEC §12.4): the key a principal's tenant is matched on, `organization_id` (its
   * tenant field) for a tenant-scoped resource, `id` for the tenant collection itself; null otherwise.
   */
  tenantKey: string | null;
  actions: VersionAction[];
  /** `/v2/orders` and `/v2/orders/{id}` (OpenAPI's form of a path parameter). */
  paths: { collection: string; item: string };
  /** The event types of its records: `order.created`, `order.updated`, `order.deleted`. */
  events: RecordEvents;
  /**
   * Its operations, one record each (model/routes.ts): method, path, operation id, summary,
   * statuses and events, in the order the documents list them. Emitters read routes here.
   */
  routes: Route[];
  /** Link header value on a deprecated version, null otherwise. */
  successorLink: string | null;
  /**
   * Values a create through this version sets without input: read-only fields with a default,
   * and fields this version does not show that have a default (storage names).
   */
  serverDefaults: Array<{ storageName: string; value: unknown }>;
}

/**
 * One resource a version can export (`export: true`): `POST /vN/exports` with `{ resource }`
 * makes a background job that writes every record the list would show (with the same filters
 * and `q`) to a file, in id order, as this version shows it.
 */
export interface VersionExport {
  collection: string;
  names: Names;
  /** The exported resource's symbols (its mapper and service). */
  symbols: ResourceSymbols;
  /** Offered formats; the first is the default. */
  formats: ExportFormat[];
  /** The list's exact-match filters (this version's names), accepted in `filters`. */
  filters: VersionField[];
  /** The list's operator filters, accepted in `filters` under their parameter names (`"status[in]": [...]`). */
  conditions: ListCondition[];
  /** The list's sort keys, accepted in `sort` as on the list. */
  sort: ListSortKey[];
  /** Fields `q` matches, as on the list. */
  search: VersionField[];
  /** Field names of a record in the file, in order: the CSV header (id, returned fields, created_at, updated_at). */
  columns: string[];
  /** The columns that hold decimals: a number's text, written to CSV as it is (no formula guard, SPEC §12.6). */
  decimals: string[];
}

export interface VersionModel {
  name: string;
  number: number;
  title: string;
  baseUrl: string;
  deprecation: { deprecated: string; sunset: string; sunsetHttpDate: string; successor: string } | null;
  /** A draft (`draft: true`): served and documented, not published; its document says so. */
  draft: boolean;
  events: boolean;
  /** `/v2/events` when events are on (`/v2/events/{id}` reads one), else null. */
  eventsPath: string | null;
  /** `/v2/exports` when some resource of the version can be exported, else null. */
  exportsPath: string | null;
  /** Fewest characters of `?q=` on every list and export of the version. */
  searchMinLength: number;
  resources: VersionResource[];
  /** The exportable resources of this version, by collection; null when none is (no `/vN/exports`). */
  exports: VersionExport[] | null;
  /**
   * The names the version's published OpenAPI document gave canon's own schemas and operations
   * (`Error`, `Health`, `getHealth`…, by their usual name), where they may differ from what this
   * version's names alone would give (emit/openapi/names.ts): read from the output folder by
   * `generate` (generate.ts, `withPublishedNames`), absent otherwise.
   */
  publishedNames?: Record<string, string>;
}

/**
 * A version's own settings, without its resources: all that a part of the output built for one
 * resource may read of its version (so that it depends on no other resource).
 */
export type VersionSettings = Omit<VersionModel, "resources" | "exports" | "publishedNames">;

/** A resource as the store holds it: every field any version has, by its latest name. */
export interface StorageResource {
  collection: string;
  names: Names;
  /** Its service and stored-values type. */
  symbols: RecordSymbols;
  /** Every field any version has, named by storage name; `optional` when some record may lack it. */
  fields: VersionField[];
  /** The records of its actions, with the references of their fields (their target's is `targetField`). */
  actionRecords: Array<{
    name: string;
    collection: string;
    names: Names;
    symbols: RecordSymbols;
    targetField: string;
    fields: VersionField[];
    references: Array<{ field: string; collection: string; onDelete: OnDelete }>;
    nestedReferences: Array<{ path: string; collection: string }>;
    /** Its `requires` and `sets` by storage names; both empty for an action that only records. */
    rules: ActionRules;
    /** The number of the first version whose requests the rules apply to (`rules_added`), or null: every version. */
    rulesSince: number | null;
  }>;
  /** Storage fields unique on their own (`unique: true`); on a tenant-scoped resource, none: see `uniqueTogether`. */
  unique: string[];
  /**
   * Composite unique constraints: storage fields unique together, each list in the order written.
   * On a tenant-scoped resource (SPEC §12.4) each field unique on its own is here as
   * `[tenant field, field]`, and each list without the tenant field starts with it: unique within the tenant.
   */
  uniqueTogether: string[][];
  /** Its tenant field (SPEC §12.4), or `id` in the tenant collection; null otherwise. */
  tenantKey: string | null;
  references: Array<{ field: string; collection: string; onDelete: OnDelete }>;
  /**
   * The arrays of referencing ids among its fields (SPEC §12.3, many-to-many): each a relation,
   * kept in SQL in a link table with foreign keys, `onDelete` as declared on the items.
   */
  links: Array<{ field: string; collection: string; onDelete: OnDelete }>;
  /**
   * Fields renamed in some version (`renamed: { in, from }`), as [the name the versions before
   * stored it under, its storage name now]: a store that kept it under the old name copies it over.
   */
  renames: Array<[from: string, to: string]>;
  /**
   * References inside arrays and objects, by path (`tag_ids.*`, `address.country_id`): each id
   * must name a record on every write (422 naming `tag_ids.0`); not kept as foreign keys.
   */
  nestedReferences: Array<{ path: string; collection: string }>;
  parentField: string | null;
  /** Its single references with `list_under: true` (SPEC §12.3), other than the parent field: each leads a list. */
  listedUnder: string[];
  search: string[];
  filters: string[];
  /** Storage fields (or `created_at`/`updated_at`) a list may be sorted by: each is served by an index. */
  sort: string[];
}

export interface ApiModel {
  title: string;
  description?: string;
  baseUrl: string;
  rateLimit: { requests: number; perSeconds: number } | null;
  events: boolean;
  bodyLimit: number;
  /** Fewest characters of `?q=`. */
  searchMinLength: number;
  storage: StorageResource[];
  /** Every reference between stored collections (resources' and action records'), with its delete behaviour. */
  references: StoreReference[];
  /**
   * Where export jobs are kept when some version has exports: a store collection of canon's own
   * (`canon/exports`, never a resource's name), null otherwise. Not a resource: no service, no types.
   */
  exportJobs: StorageResource | null;
  /**
   * The collections whose writes publish events, sorted: every resource, every action's
   * records (`orders/cancellations`) and, with exports, `exports`. The feed asks `authorize`
   * for `read` on each to know which events a principal sees.
   */
  eventCollections: string[];
  /** The tenant collection (SPEC §12.4), the collection every tenant field references; null without tenancy. */
  tenantCollection: string | null;
  versions: VersionModel[];
  /**
   * The retired version just before the first live one (`retired: true`), as it was: nothing is
   * generated or served for it, but the first live version's CHANGES.md still compares with it
   * (what a late client of the retired version changes). Null when no version is retired.
   */
  retiredPredecessor?: VersionModel | null;
}
