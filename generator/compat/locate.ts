import type { SourceLocation } from "../diagnostics/diagnostic.ts";
import type { ActionDef, ApiModel, Definitions, FieldDef, Locator, ResourceDef } from "../model/types.ts";
import { filterFieldOf } from "./paths.ts";
import type { Change } from "./types.ts";

/**
 * The definition line behind a change of a version's document: the field's key (or the option
 * that changed), the resource's `operations`, `pagination` or `resource:` line, or the version in
 * api.yaml when nothing closer exists (a change that comes from canon itself, or from a file
 * that was deleted).
 */
export function locateChange(defs: Definitions, model: ApiModel, version: string, change: Change): SourceLocation {
  const fallback = defs.versions.find((v) => v.name === version)?.at() ?? defs.at("versions");
  if (change.kind === "servers-changed") return defs.at("base_url");
  if (!change.operation) return fallback;
  const owner = routeOwner(defs, model, version, change.operation) ?? ownerOf(defs, change.operation.path);
  if (!owner) {
    const exported = exportOwner(defs, model, version, change);
    if (exported) return exported;
    // A resource's export gone from the body's union: the resource, whose `export` key is gone too.
    const gone = removedExportOf(model, version, change);
    const resource = gone && defs.resources.find((r) => r.collection === gone);
    if (resource) return written(resource, "export") ?? resource.at("resource");
    return /^\/v[0-9]+\/events(\/|$)/.test(change.operation.path) && defs.events ? defs.at("events") : fallback;
  }
  const { resource, action } = owner;
  const key = (name: string) => written(resource, name) ?? resource.at("resource");
  switch (change.kind) {
    case "operation-removed":
    case "path-removed":
    case "list-under-changed": {
      const under = listUnderField(resource, change.operation.path, change.listUnderField);
      if (under) return written(under, "list_under") ?? under.at();
      return resource.removed !== undefined ? resource.at("removed") : key("operations");
    }
    case "action-removed":
      return key("actions");
    case "pagination-changed":
      return key("pagination");
    case "unique-added":
    case "unique-widened":
    case "unique-removed": {
      const field = change.uniqueField ? topField(model, version, resource, change.uniqueField) : undefined;
      return field ? (written(field, "unique") ?? field.at()) : key("unique");
    }
    case "tenant-added":
    case "tenant-removed":
      return resource.fields.find((f) => f.tenant)?.at("tenant") ?? key("fields");
    case "requires-added":
    case "requires-removed":
      return action ? (written(action, "requires") ?? action.at()) : key("actions");
    case "sets-added":
    case "sets-changed":
    case "sets-removed":
      return action ? (written(action, "sets") ?? action.at()) : key("actions");
    case "status-removed":
    case "response-body-removed":
      return action ? written(action, "response") ?? action.at() : key("operations");
  }
  if (change.part.in === "parameter") {
    const { location, name } = change.part;
    if (location !== "query") return resource.at("resource");
    if (name === "q") return key("search");
    if (["limit", "cursor", "page", "per_page"].includes(name)) return key("pagination");
    if (change.kind === "sort-order-changed") {
      const sorted = change.sortKey ? topField(model, version, resource, change.sortKey) : undefined;
      return sorted ? optionAt(sorted, "enum") : key("sort");
    }
    if (name === "sort") return key("sort");
    if (change.kind === "parameter-removed" || change.kind === "parameter-added") return key("filters");
    // An operator's parameter (`price[gte]`) is its field's: a limit of the field that changed is the field's option.
    const field = topField(model, version, resource, filterFieldOf(name));
    return field ? optionAt(field, change.keyword) : key("filters");
  }
  if (change.part.in === "operation" || !change.schema) return action ? action.at() : resource.at("resource");
  const container = action ? action.at() : key("fields");
  const path = change.schema.field;
  if (!path) return container;
  const segments = path.split(".");
  if (change.kind === "field-renamed" && change.renamedTo) segments[segments.length - 1] = change.renamedTo.split(".").pop()!;
  const field = findField(model, version, resource, action, segments);
  return field ? optionAt(field, change.keyword) : container;
}

/**
 * The export whose body's schema `change` is in (`POST /vN/exports`), by the schema names the
 * model gives them: its `filters` (the list's filters) or the rest of its body. Null otherwise.
 */
function exportSchemaOf(model: ApiModel, version: string, change: Change): { collection: string; part: "filters" | "body" } | null {
  const name = change.schema?.name;
  if (!name) return null;
  for (const e of model.versions.find((v) => v.name === version)?.exports ?? []) {
    if (name === e.symbols.exportFilters) return { collection: e.collection, part: "filters" };
    if (name === e.symbols.exportCreate) return { collection: e.collection, part: "body" };
  }
  return null;
}

/**
 * The collection whose export `change` took from the body of `POST /vN/exports` (its member of the
 * union, `TicketExportCreate`, no longer taken: `export` removed from the resource), else undefined.
 */
function removedExportOf(model: ApiModel, version: string, change: Change): string | undefined {
  if (change.kind !== "schema-changed" || !/^\/v[0-9]+\/exports$/.test(change.operation?.path ?? "")) return undefined;
  const member = /^no longer takes ([A-Za-z0-9_]+) /.exec(change.detail)?.[1];
  return model.versions.find((v) => v.name === version)?.resources.find((r) => r.symbols.exportCreate === member)?.collection;
}

/**
 * The collection whose export a change is of, for the fix: its own body's schemas (the `format`
 * it offers), or its member of the body's union gone. Its `filters` are the list's, said apart.
 */
export function exportOf(model: ApiModel, version: string, change: Change): string | undefined {
  const own = exportSchemaOf(model, version, change);
  return own ? (own.part === "body" ? own.collection : undefined) : removedExportOf(model, version, change);
}

/** Whether `change` is inside one resource's export body (its own schemas), not the exports' shared ones. */
export function isOneExport(model: ApiModel, version: string, change: Change): boolean {
  return exportSchemaOf(model, version, change) !== null;
}

/** Whether `change` is of a resource's export filters (the `filters` of `POST /vN/exports`), whose fields are the list's filters. */
export function isExportFilters(model: ApiModel, version: string, change: Change): boolean {
  return exportSchemaOf(model, version, change)?.part === "filters";
}

/**
 * Where a change of an export's body comes from: its filters, the resource's `filters` key; its
 * `sort` and `q`, the `sort` and `search` keys; anything else, the `export` key. Null for any
 * other change.
 */
function exportOwner(defs: Definitions, model: ApiModel, version: string, change: Change): SourceLocation | null {
  const exported = exportSchemaOf(model, version, change);
  const resource = exported && defs.resources.find((r) => r.collection === exported.collection);
  if (!exported || !resource) return null;
  const key = (option: string) => written(resource, option) ?? written(resource, "export") ?? resource.at("resource");
  if (exported.part === "filters") return key("filters");
  const field = change.schema!.field.split(".")[0];
  return field === "sort" ? key("sort") : field === "q" ? key("search") : key("export");
}

/**
 * The resource (and action) whose route record in `version` has this path and method: an
 * operation the new document still has.
 */
function routeOwner(defs: Definitions, model: ApiModel, version: string, operation: { method: string; path: string }): { resource: ResourceDef; action?: ActionDef } | null {
  for (const shown of model.versions.find((v) => v.name === version)?.resources ?? []) {
    const route = shown.routes.find((r) => r.path === operation.path && r.method === operation.method);
    if (!route) continue;
    const resource = defs.resources.find((r) => r.collection === shown.collection);
    if (!resource) return null;
    const action = route.kind === "action" ? resource.actions.find((a) => a.name === route.of) : undefined;
    return action ? { resource, action } : { resource };
  }
  return null;
}

/**
 * The resource (and action) a path belongs to, read from the path, for an operation the new
 * document no longer has (no route record): `/v1/users/{id}/orders` → orders;
 * `/v1/orders/{id}/cancellations` → orders' action.
 */
function ownerOf(defs: Definitions, path: string): { resource: ResourceDef; action?: ActionDef } | null {
  const segments = path.split("/").filter((s) => s && !s.startsWith("{"));
  if (/^v[0-9]+$/.test(segments[0] ?? "")) segments.shift();
  const find = (collection: string | undefined) => defs.resources.find((r) => r.collection === collection);
  const last = find(segments[segments.length - 1]);
  if (last) return { resource: last };
  const first = find(segments[0]);
  if (!first) return null;
  const action = first.actions.find((a) => a.name === segments[segments.length - 1]);
  return action ? { resource: first, action } : { resource: first };
}

/**
 * Where a change of a field is versioned when the field itself cannot be (docs/rules.md,
 * version-ref: only a resource's own fields take `added`, `removed`, `renamed`): an action's field
 * by its action (a new action, `added: vN`), a field inside an object or a map's values by the
 * resource's top-level field that holds it. Undefined for a top-level field, or a change of no field.
 */
export function versionedOwner(defs: Definitions, model: ApiModel, version: string, change: Change): { action: string } | { top: string; field: string } | undefined {
  if (!change.operation || (change.part.in !== "request" && change.part.in !== "response") || !change.schema?.field) return undefined;
  const owner = routeOwner(defs, model, version, change.operation) ?? ownerOf(defs, change.operation.path);
  if (!owner) return undefined;
  if (owner.action) return { action: owner.action.name };
  const segments = change.schema.field.split(".");
  if (segments.length < 2) return undefined;
  const top = segments[0]!.replace(/\[\]$/g, "");
  return topField(model, version, owner.resource, top) ? { top, field: change.schema.field.replace(/\[\]/g, "") } : undefined;
}

/** The field whose `list_under` made the removed list path of `change`, by name; undefined for any other change. */
export function listUnderOf(defs: Definitions, model: ApiModel, version: string, change: Change): string | undefined {
  if ((change.kind !== "path-removed" && change.kind !== "operation-removed" && change.kind !== "list-under-changed") || !change.operation) return undefined;
  const owner = routeOwner(defs, model, version, change.operation) ?? ownerOf(defs, change.operation.path);
  return owner && !owner.action ? listUnderField(owner.resource, change.operation.path, change.listUnderField)?.name : undefined;
}

/**
 * The field of `resource` whose \`list_under\` made a list path `/vN/<collection>/{id}/<resource>`
 * (SPEC §12.3): one referencing that collection (the ids of an array included), not the parent
 * field; the one the old document named (`named`, as a version showed it), else the one with
 * `list_under`, else the only one. Undefined for any other path, or when
 * several fields reference the collection and none can be told apart.
 */
export function listUnderField(resource: ResourceDef, path: string, named?: string): FieldDef | undefined {
  const m = /^\/v[0-9]+\/([^/]+)\/\{[^}]+\}\/([^/]+)$/.exec(path);
  if (!m || m[2] !== resource.collection || m[1] === resource.parent) return undefined;
  const candidates = resource.fields.filter((f) => (f.references ?? f.items?.references) === m[1]);
  return (
    (named === undefined ? undefined : candidates.find((f) => f.name === named || f.renamed?.from === named)) ??
    candidates.find((f) => f.listUnder) ??
    (candidates.length === 1 ? candidates[0] : undefined)
  );
}

/** The location of a key when the file writes it, else undefined (a missing key locates at its parent). */
function written(owner: { at: Locator }, key: string): SourceLocation | undefined {
  const at = owner.at(key);
  const none = owner.at("\u0000");
  return at.line === none.line && at.column === none.column ? undefined : at;
}

/** A top-level field by the name a version shows, through renames: the storage name is the definition's key. */
function topField(model: ApiModel, version: string, resource: ResourceDef, name: string): FieldDef | undefined {
  const shown = model.versions.find((v) => v.name === version)?.resources.find((r) => r.collection === resource.collection);
  const storage = shown?.fields.find((f) => f.name === name)?.storageName ?? name;
  return resource.fields.find((f) => f.name === storage) ?? resource.fields.find((f) => f.renamed?.from === name);
}

function findField(model: ApiModel, version: string, resource: ResourceDef, action: ActionDef | undefined, segments: string[]): FieldDef | undefined {
  const [first, ...rest] = segments;
  const name = first!.replace(/\[\]$/g, "");
  let field = action ? action.fields.find((f) => f.name === name) : topField(model, version, resource, name);
  let current = first!;
  for (;;) {
    if (!field) return undefined;
    for (let items = current.match(/\[\]/g)?.length ?? 0; items > 0 && field; items--) field = field.items;
    const next = rest.shift();
    if (next === undefined || !field) return field;
    current = next;
    // A map's values are its `items` (`metadata.*`).
    field = next === "*" ? field.items : field.fields?.find((f) => f.name === next.replace(/\[\]$/g, ""));
  }
}

const yamlKeys: Record<string, string> = { maxLength: "max_length", minLength: "min_length", maxItems: "max_items", maxProperties: "max_items", enum: "values", required: "optional", "x-canon-transitions": "transitions", "x-canon-references": "references", "x-canon-on-delete": "on_delete", "x-scale": "scale", "x-precision": "precision", "x-minimum": "minimum", "x-maximum": "maximum" };

/** The option that changed, when the definition writes it; else the field's key. */
function optionAt(field: FieldDef, keyword: string | undefined): SourceLocation {
  return (keyword && written(field, yamlKeys[keyword] ?? keyword)) || field.at();
}
