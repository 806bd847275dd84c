import type { SourceFile } from "../load/load.ts";
import type { ApiDefinition, FieldDefinition, ResourceDefinition } from "../validate/schema.ts";
import { singularOf } from "../util/names.ts";
import type { ActionDef, Definitions, FieldDef, Locator, Operation, ResourceDef } from "./types.ts";

/** The shortest `?q=` by default: the shortest text a trigram index serves. */
export const DEFAULT_SEARCH_MIN_LENGTH = 3;

const defaultOperations: Operation[] = ["list", "read", "create", "update", "delete"];
const operationOrder: Operation[] = ["list", "read", "create", "update", "replace", "delete"];

/** Validated definitions → the normalized `Definitions` model, every element located in its file. */
export function normalize(
  api: { source: SourceFile; value: ApiDefinition },
  resources: Array<{ source: SourceFile; value: ResourceDefinition }>,
): Definitions {
  const a = api.value;
  const locateApi: Locator = (...path) => api.source.locate(path);
  return {
    title: a.title,
    description: a.description,
    baseUrl: a.base_url,
    versions: Object.entries(a.versions).map(([name, v]) => ({
      name,
      deprecated: v?.deprecated,
      sunset: v?.sunset,
      retired: v?.retired ?? false,
      draft: v?.draft ?? false,
      at: (...path) => api.source.locate(["versions", name, ...path], path.length ? "value" : "key"),
    })),
    rateLimit: a.rate_limit ? { requests: a.rate_limit.requests, perSeconds: a.rate_limit.per_seconds } : null,
    events: a.events ?? false,
    bodyLimit: a.body_limit ?? 65_536,
    searchMinLength: a.search_min_length ?? DEFAULT_SEARCH_MIN_LENGTH,
    resources: resources.map(({ source, value }) => normalizeResource(source, value)),
    at: locateApi,
  };
}

function normalizeResource(source: SourceFile, r: ResourceDefinition): ResourceDef {
  const ops = new Set(r.operations ?? defaultOperations);
  return {
    file: source.file,
    collection: r.resource,
    singular: r.singular ?? singularOf(r.resource),
    description: r.description,
    added: r.added,
    removed: r.removed,
    parent: r.parent,
    operations: operationOrder.filter((o) => ops.has(o)),
    operationsWritten: r.operations?.length ?? 0,
    pagination: r.pagination ?? "cursor",
    search: r.search ?? [],
    ...(r.search !== undefined && r.search.length === 0 ? { searchEmpty: true } : {}),
    filters: r.filters ?? [],
    sort: r.sort ?? [],
    uniqueTogether: r.unique ?? [],
    exportable: r.export !== undefined && r.export !== false,
    exportFormats: typeof r.export === "object" && r.export.formats ? [...new Set(r.export.formats)] : ["ndjson"],
    ...(typeof r.export === "object" && r.export.added !== undefined ? { exportAdded: r.export.added } : {}),
    fields: normalizeFields(source, ["fields"], r.fields),
    actions: Object.entries(r.actions ?? {}).map(
      ([name, action]): ActionDef => ({
        name,
        description: action.description,
        fields: normalizeFields(source, ["actions", name, "fields"], action.fields ?? {}),
        response: action.response ?? 201,
        added: action.added,
        rulesAdded: action.rules_added,
        requires: Object.entries(action.requires ?? {}).map(([field, values]) => ({ field, values })),
        sets: Object.entries(action.sets ?? {}).map(([field, set]) =>
          set !== null && typeof set === "object" ? { field, from: set.from } : { field, value: set },
        ),
        at: (...path) => source.locate(["actions", name, ...path], path.length ? "value" : "key"),
      }),
    ),
    at: (...path) => source.locate(path),
  };
}

function normalizeFields(source: SourceFile, base: PropertyKey[], fields: Record<string, FieldDefinition>): FieldDef[] {
  return Object.entries(fields).map(([name, f]) => normalizeField(source, [...base, name], name, f));
}

function normalizeField(source: SourceFile, at: PropertyKey[], name: string, f: FieldDefinition): FieldDef {
  return {
    name,
    type: f.type,
    description: f.description,
    minLength: f.min_length,
    maxLength: f.max_length,
    pattern: f.pattern,
    format: f.format,
    schemes: f.schemes,
    // A decimal's bounds are strings (a number is kept as `minimum` for lint to refuse).
    minimum: typeof f.minimum === "number" ? f.minimum : undefined,
    maximum: typeof f.maximum === "number" ? f.maximum : undefined,
    decimalMinimum: typeof f.minimum === "string" ? f.minimum : undefined,
    decimalMaximum: typeof f.maximum === "string" ? f.maximum : undefined,
    precision: f.precision,
    scale: f.scale,
    references: f.references,
    onDelete: f.on_delete,
    listUnder: f.list_under,
    tenant: f.tenant,
    values: f.values,
    transitions: f.transitions,
    items: f.items ? normalizeField(source, [...at, "items"], "items", f.items) : undefined,
    maxItems: f.type === "array" || f.type === "map" ? (f.max_items ?? 100) : f.max_items,
    fields: f.fields ? normalizeFields(source, [...at, "fields"], f.fields) : undefined,
    optional: f.optional ?? false,
    nullable: f.nullable ?? false,
    hasDefault: f.default !== undefined,
    default: f.default,
    readOnly: f.read_only ?? false,
    writeOnly: f.write_only ?? false,
    unique: f.unique ?? false,
    added: f.added,
    removed: f.removed,
    renamed: f.renamed,
    at: (...path) => source.locate([...at, ...path], path.length ? "value" : "key"),
  };
}
