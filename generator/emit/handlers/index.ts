import { MAP_MAX_KEYS } from "../../../runtime/map.ts";
import type {
  ApiModel,
  ListCondition,
  StorageResource,
  VersionExport,
  VersionField,
  VersionModel,
  VersionResource,
} from "../../model/types.ts";
import { routeOf } from "../../model/routes.ts";
import { versionNumber } from "../../model/snapshot.ts";
import { compareKindOf } from "../../model/unique.ts";
import type { UniqueKind } from "../../../runtime/unique.ts";
import { updatedKey } from "../../../runtime/references.ts";
import { EXPORT_EVENTS } from "../../../runtime/events.ts";
import {
  GENERATED_HEADER,
  styledTs,
  type EmitContext,
  type EmittedFile,
  type Emitter,
  type UnitContext,
} from "../emitter.ts";
import { literal, propertyKey } from "../shared/code.ts";
import { PRINT_WIDTH } from "../../format/prettier.ts";
import {
  IMPORTS,
  runtimeSource,
  source,
  specifierIn,
  usedIdentifiers,
  withImports,
  type ImportSource,
} from "../shared/imports.ts";
import { renderedFile } from "../shared/rendered.ts";
import { ROUTE_CONTEXT } from "../shared/route-context.ts";
import { conditionBodySchema, sortSchema, zodField } from "../shared/zod.ts";
import { defineUnit, Engine } from "../../engine.ts";
import type { SymbolKind } from "../shared/imports.ts";
import { declaredTypes, localSymbols, typeAliases, typesSource, type TypeAliases } from "../shared/local-names.ts";

/**
 * The code of each `routes.ts` below its imports: a function of the version's name, the resource
 * and what a delete of it publishes, rendered once per engine for both units that read it
 * (remembered by the resource object, which is never modified, and the other two).
 */
function routesCode(
  context: UnitContext,
  version: string,
  resource: VersionResource,
  deletes: string,
  aliases: Array<[string, string]>,
): string {
  const render = () => context.render("routes", routesView(version, resource, deletes, new Map(aliases)));
  const engine = Engine.current();
  if (!engine) return render();
  const codes = engine.byObject("routes code", resource, () => new Map<string, string>());
  const key = `${version}\0${deletes}\0${aliases.flat().join("\0")}`;
  let code = codes.get(key);
  if (code === undefined) codes.set(key, (code = render()));
  return code;
}

/**
 * The identifiers the code of a `routes.ts` uses below its imports, in the order they are first
 * used: what its imports are planned from (recorded alone, so that a cold run neither renders nor
 * scans an unchanged routes file).
 */
const routesIdentifiers = defineUnit(
  "routes identifiers",
  (
    { version, resource, deletes, aliases }: { version: string; resource: VersionResource; deletes: string; aliases: Array<[string, string]> },
    context: UnitContext,
  ) => {
    const code = routesCode(context, version, resource, deletes, aliases);
    return [...usedIdentifiers(code.slice(code.indexOf(IMPORTS)))];
  },
);

/** Each `routes.ts`: its code with its imports, of the resource and the other collections' view mappers it uses. */
const routesFile = defineUnit(
  "routes file",
  (
    {
      version,
      resource,
      deletes,
      aliases,
      others,
    }: {
      version: string;
      resource: VersionResource;
      deletes: string;
      aliases: Array<[string, string]>;
      others: Array<{ from: string; names: Array<[string, SymbolKind]> }>;
    },
    context: UnitContext,
  ) => {
    const sources = [
      ...routesSources(context, resource, new Map(aliases)),
      ...others.map((o) => ({ from: o.from, names: new Map(o.names) })),
    ];
    return styledTs(
      `${version}/${resource.collection}/routes.ts`,
      plannedRoutes(routesCode(context, version, resource, deletes, aliases), sources),
    );
  },
);

/**
 * Route handlers: per version and resource `vN/<collection>/routes.ts`, per version
 * `vN/index.ts` (the version's operations and documents) and `vN/events.ts` when events are
 * on, and the shared `services.ts` (the service of every resource over a store).
 */
export const handlersEmitter: Emitter = {
  name: "handlers",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    const files: EmittedFile[] = [];
    const owners = viewOwners(model);
    for (const version of model.versions) {
      const versionAliases = typeAliases(version, context.canonTypeNames());
      for (const resource of version.resources) {
        // The code is made of the resource, the version's name, what a delete publishes and the
        // aliases of its types that canon's code names too; its imports, of the identifiers it
        // uses and where each of another collection comes from.
        const deletes = deleteEvent(model, version, resource);
        const aliases = declaredTypes(resource).flatMap((n): Array<[string, string]> => (versionAliases.has(n) ? [[n, versionAliases.get(n)!]] : []));
        const used = context.unit(routesIdentifiers, { version: version.name, resource, deletes, aliases });
        const others = viewSources(model, version, resource, new Set(used), owners).map((o) => ({
          from: o.from,
          names: [...o.names],
        }));
        files.push(context.unit(routesFile, { version: version.name, resource, deletes, aliases, others }));
      }
      if (version.events) files.push(renderedFile(context, `${version.name}/events.ts`, "events", eventsView(model, version), eventsSources(context)));
      if (version.exports) {
        files.push(renderedFile(context, `${version.name}/exports.ts`, "exports", exportsView(version, version.exports), exportsSources(context, version.exports)));
      }
      files.push(renderedFile(context, `${version.name}/index.ts`, "version", versionView(version), versionSources(context, version)));
    }
    const services = servicesView(model);
    const servicesSources = [
      runtimeSource(context, "index.ts", 0),
      // services.ts only names the export service's type: imported with `type`, so the module
      // (and pg-boss behind it) is not loaded for it.
      source("./runtime/exports.ts", { ExportService: "type" }),
      source("./values.ts", Object.fromEntries(services.services.map((s) => [s.values, "type" as const]))),
      source("./hooks.ts", { Hooks: "type" }),
    ];
    files.push(renderedFile(context, "services.ts", "services", services, servicesSources));
    files.push(hooksFile(model, context));
    return files;
  },
};

/** `.name`, or `["name"]` when it is no identifier. */
const member = (name: string) =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;

const access = (name: string) =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `[${JSON.stringify(name)}]`;

function bodyValue(field: VersionField): string {
  // A tenant field left out is filled from the principal right after (`tenantValues`, SPEC §12.4).
  return `body.${access(field.name)}`.replace(".[", "[") + (field.tenant ? " as string" : "");
}

function routesView(v: string, r: VersionResource, deleteEvent: string, aliases: TypeAliases) {
  const pascal = r.names.pascal;
  const camel = r.names.camel;
  const inputs = r.fields.filter((f) => f.input);
  const ops = r.operations;
  // Fields this version shows under another name than the store's (renamed in a later version):
  // a 409 or 422 names them as this version does (runtime/errors.ts, `inVersionNames`).
  const renamed = (fields: VersionField[]) => fields.filter((f) => f.name !== f.storageName).map((f) => `${propertyKey(f.storageName)}: ${JSON.stringify(f.name)}`);
  const shown = renamed(r.fields);
  const routeConfig = shown.length ? "{ config: { names: shownNames } }, " : "";
  const actions = r.actions.map((a) => {
    const own = renamed(a.fields);
    return {
      routeConfig: own.length ? `{ config: { names: { ${[...(shown.length ? ["...shownNames"] : []), ...own].join(", ")} } } }, ` : routeConfig,
      path: routeOf(r, "action", a.name).serverPath,
      collection: `${r.collection}/${a.name}`,
      singular: `${r.names.singular} ${a.singular}`,
      symbols: localSymbols(aliases, a.symbols),
      targetField: a.targetField,
      view: a.fields
        .filter((f) => f.output)
        .map((f) => ({ key: propertyKey(f.name), source: access(f.storageName) })),
      createValues: a.fields
        .filter((f) => f.input)
        .map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
      // An action that changes its record publishes the record's `.updated` event too (SPEC §12.5).
      publish: withTenantOf(
        r.tenantKey,
        camel,
        a.rules.sets.length
          ? `eventsOf({ ${propertyKey(r.collection)}: eventOf("${r.events.updated}", "${r.collection}", ${r.symbols.view}), ${JSON.stringify(`${r.collection}/${a.name}`)}: eventOf("${a.events.created}", "${r.collection}/${a.name}", ${a.symbols.view}) })`
          : `eventOf("${a.events.created}", "${r.collection}/${a.name}", ${a.symbols.view})`,
      ),
      noContent: a.response === 204,
      // The request's version: the events of a hook's writes show records as it does, and an
      // action whose rules apply from a version on (`rules_added`) checks it.
      // With If-Match, the revision of the record acted on that it named (runtime/hooks.ts actionContext).
      context: `actionContext(request, ${camel}, ${versionNumber(v)})`,
    };
  });

  const where = r.filters.map((f) => `${propertyKey(f.storageName)}: query.${access(f.name)}`);
  // Tenancy (SPEC §12.4): a tenant principal's lists match its tenant, its reads by id too.
  const tenantWhere = r.tenantKey ? [`${propertyKey(r.tenantKey)}: tenantOf(request)`] : [];
  // The `where` of a read by id (`get(id, where, context)`): the tenant's scope, or none.
  const scopeOf = (key: string | null) => (key ? `, tenantScope(request, ${JSON.stringify(key)})` : ", undefined");
  // The operator filters given, as conditions of the match (declared once per file, read per
  // request by conditionsOf); the sort, then who asks (`context`), as the list's last arguments.
  const conditionsName = "listConditions";
  return {
    header: GENERATED_HEADER,
    version: v,
    versionNumber: versionNumber(v),
    collection: r.collection,
    singular: r.names.singular,
    pascal,
    pluralPascal: r.names.pluralPascal,
    symbols: localSymbols(aliases, r.symbols),
    camel,
    operations: ops,
    offset: r.pagination === "offset",
    imports: IMPORTS,
    contextNames: CONTEXT_NAMES,
    view: r.fields
      .filter((f) => f.output)
      .map((f) => ({ key: propertyKey(f.name), source: access(f.storageName) })),
    createValues: [
      ...inputs.map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
      ...r.serverDefaults.map((d) => ({ key: propertyKey(d.storageName), expr: literal(d.value) })),
    ],
    replaceValues: inputs.map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
    patchValues: inputs.map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
    where: objectLiteral([...tenantWhere, ...where]),
    readScope: scopeOf(r.tenantKey),
    tenantCreate: r.tenantKey ? `${tenantFromParent(r)}tenantValues(request, ${JSON.stringify(r.tenantKey)}, values);` : "",
    tenantChange:
      r.tenantKey && r.tenantKey !== "id"
        ? `tenantValues(request, ${JSON.stringify(r.tenantKey)}, values, false);`
        : "",
    conditions: r.conditions.length ? ", conditions" : "",
    conditionsName,
    conditionSpecs: conditionSpecs(r.conditions),
    listArgs: `, ${r.sort.length ? "query.sort" : "undefined"}, context`,
    // The stored fields the view shows: a list asks the store for these only (Match.fields).
    listFields: ops.list || r.parent || r.listsUnder.length ? listFieldsDeclaration(r) : null,
    searchFields: r.search.map((f) => JSON.stringify(f.storageName)).join(", "),
    // Each operation's path as the server registers it, from the model's route record.
    paths: {
      ...Object.fromEntries(
        r.routes.flatMap((route) =>
          route.kind === "list-under" || route.kind === "action" ? [] : [[route.kind, route.serverPath]],
        ),
      ),
      scope: `${v}/${r.collection}`,
      // The new record's own path: the item path with its id.
      location: r.paths.item.replace("{id}", "${record.id}"),
    },
    // The lists under one record: the parent's, then each `list_under` field's.
    unders: [...(r.parent ? [r.parent] : []), ...r.listsUnder].map((u) => ({
      path: routeOf(r, "list-under", u.collection).serverPath,
      scope: `${v}/${u.collection}/\${id}/${r.collection}${u === r.parent ? "" : `/${u.field.storageName}`}`,
      collection: u.collection,
      singular: u.names.singular,
      camel: u.names.camel,
      symbols: u.symbols,
      // An array of ids (many-to-many) holds the id: a `contains`, not an equality.
      where: objectLiteral([
        ...(u.field.type === "array" ? [] : [`${propertyKey(u.field.storageName)}: id`]),
        ...(u.field.storageName === r.tenantKey ? [] : tenantWhere),
        ...where,
      ]),
      readScope: scopeOf(u.tenantKey),
      parentWhere: u.tenantKey ? `, where: tenantScope(request, ${JSON.stringify(u.tenantKey)})` : "",
      contains: u.field.type === "array" ? `{ field: ${JSON.stringify(u.field.storageName)}, id }` : null,
    })),
    actions,
    routeConfig,
    shownNames: shown.length ? `const shownNames = ${objectLiteral(shown)};` : null,
    events: r.events,
    deleteEvent: withTenantOf(r.tenantKey, "current", deleteEvent),
    eventTenant: r.tenantKey ? `, ${JSON.stringify(r.tenantKey)}` : "",
  };
}

/**
 * `const listFields = [...]`: the stored fields the resource's view shows, on one line when it fits
 * in prettier's width, else one per line, as prettier prints it (canon's layout keeps either).
 */
function listFieldsDeclaration(r: VersionResource): string {
  const names = r.fields.filter((f) => f.output).map((f) => JSON.stringify(f.storageName));
  if (!names.length) return "const listFields: string[] = [];";
  const line = `const listFields = [${names.join(", ")}];`;
  return line.length <= PRINT_WIDTH
    ? line
    : ["const listFields = [", ...names.map((n) => `  ${n},`), "];"].join("\n");
}

/** `publish` kept with the tenant of the record `record` names (SPEC §12.4), on a tenant-scoped resource or the tenant collection. */
function withTenantOf(tenantKey: string | null, record: string, publish: string): string {
  if (!tenantKey) return publish;
  return `withTenant(${publish}, ${record}.${tenantKey === "id" ? "id" : `values.${access(tenantKey)}`})`;
}

/**
 * What a delete of `r` publishes: its `.deleted` event, and when its delete cascades to other
 * collections (`on_delete: cascade`, a child's parent field, an action record's target) the
 * event of each, through that collection's view mapper in this version (in the newest version
 * that has it when this one does not: see `viewVersions`).
 */
function deleteEvent(model: ApiModel, version: VersionModel, r: VersionResource): string {
  const reached = [r.collection];
  for (let i = 0; i < reached.length; i++) {
    for (const ref of model.references) {
      if (
        ref.references === reached[i] &&
        ref.onDelete === "cascade" &&
        !ref.many &&
        !reached.includes(ref.collection)
      )
        reached.push(ref.collection);
    }
  }
  // The collections whose arrays lose the ids of deleted records (`on_delete: cascade` on an array's items): `.updated` events.
  const unlinked = [
    ...new Set(
      model.references
        .filter((ref) => ref.many && ref.onDelete === "cascade" && reached.includes(ref.references))
        .map((ref) => ref.collection),
    ),
  ];
  if (reached.length === 1 && !unlinked.length)
    return `eventOf("${r.events.deleted}", "${r.collection}", ${r.symbols.view})`;
  const entries = reached.map((c) => `${propertyKey(c)}: ${shownEvent(model, version, c)}`);
  for (const c of unlinked)
    entries.push(`${propertyKey(updatedKey(c))}: ${shownEvent(model, version, c, "updated")}`);
  return `eventsOf({ ${entries.join(", ")} })`;
}

/** The event of a delete in `collection` (a collection, or `<collection>/<action>`), shown by the first of `viewVersions` that has it. */
function shownEvent(
  model: ApiModel,
  version: VersionModel,
  collection: string,
  change: "deleted" | "updated" = "deleted",
): string | undefined {
  for (const v of viewVersions(model, version)) {
    for (const resource of v.resources) {
      // Each record's event is kept with its own tenant (SPEC §12.4): a delete of a shared record reaches tenants' records too.
      if (resource.collection === collection)
        return `eventOf("${resource.events[change]}", "${resource.collection}", ${resource.symbols.view}${resource.tenantKey ? `, ${JSON.stringify(resource.tenantKey)}` : ""})`;
      for (const a of resource.actions) {
        if (`${resource.collection}/${a.name}` === collection)
          return `eventOf("${a.events.deleted}", "${collection}", ${a.symbols.view})`;
      }
    }
  }
  return undefined;
}

/** Where a version's handlers find a collection's view: the version itself, then the others, newest first. */
function viewVersions(model: ApiModel, version: VersionModel): VersionModel[] {
  return [version, ...model.versions.filter((v) => v !== version).sort((a, b) => b.number - a.number)];
}

/** An object literal of `key: value` entries on one line, as prettier prints it. */
function objectLiteral(entries: string[]): string {
  return entries.length ? `{ ${entries.join(", ")} }` : "{}";
}

/** What `vN/<collection>/routes.ts` may import: the runtime, and the names of its resource and actions. */
function routesSources(context: UnitContext, r: VersionResource, aliases: TypeAliases): ImportSource[] {
  const records = [r.symbols, ...r.actions.map((a) => a.symbols)];
  const schemas = [
    r.symbols.idParams,
    r.symbols.listQuery,
    r.symbols.readOnly,
    r.symbols.updateSchema,
    r.symbols.replaceSchema,
  ];
  return [
    source("fastify", { FastifyInstance: "type" }),
    source("zod", { z: "type" }),
    runtimeSource(context, "index.ts", 2),
    source("../../services.ts", { RouteContext: "type" }),
    source("../../values.ts", Object.fromEntries(records.map((s) => [s.values, "type" as const]))),
    typesSource(
      specifierIn(`${r.collection}/routes.ts`, r.symbols.typesModule),
      records.map((s) => s.type),
      aliases,
    ),
    source(
      "./validators.ts",
      Object.fromEntries(
        [...schemas, ...records.map((s) => s.createSchema)].map((n) => [n, "value" as const]),
      ),
    ),
  ];
}

/** A resource of a version, and where it stands among the version's resources. */
interface ViewOwner {
  version: VersionModel;
  resource: VersionResource;
  position: number;
}

/** Every resource of every version, by the names of the view mappers it defines (its own and its actions'). */
function viewOwners(model: ApiModel): Map<string, ViewOwner[]> {
  const owners = new Map<string, ViewOwner[]>();
  for (const version of model.versions) {
    version.resources.forEach((resource, position) => {
      for (const symbols of [resource.symbols, ...resource.actions.map((a) => a.symbols)]) {
        owners.set(symbols.view, [...(owners.get(symbols.view) ?? []), { version, resource, position }]);
      }
    });
  }
  return owners;
}

/**
 * The view mappers of other collections that a `routes.ts` uses (`used`, the identifiers of its
 * code: those a delete cascades to, see `deleteEvent`), from the first of `viewVersions` on. Only
 * those, found by name: offering every collection to every file made emitting quadratic.
 */
function viewSources(
  model: ApiModel,
  version: VersionModel,
  r: VersionResource,
  used: ReadonlySet<string>,
  owners: Map<string, ViewOwner[]>,
): ImportSource[] {
  const found = new Set<ViewOwner>();
  for (const name of used)
    for (const owner of owners.get(name) ?? []) if (owner.resource !== r) found.add(owner);
  if (found.size === 0) return [];
  const order = viewVersions(model, version);
  const distinct = new Map([...found].map((o) => [o.resource, o]));
  return [...distinct.values()]
    .sort((a, b) => order.indexOf(a.version) - order.indexOf(b.version) || a.position - b.position)
    .map(({ version: v, resource: other }) =>
      source(
        v === version ? `../${other.collection}/routes.ts` : `../../${v.name}/${other.collection}/routes.ts`,
        Object.fromEntries(
          [other.symbols, ...other.actions.map((a) => a.symbols)].map((s) => [s.view, "value" as const]),
        ),
      ),
    );
}

/** Where the template writes the route context's members its handlers use. */
const CONTEXT_NAMES = "/*<canon:context>*/";

/**
 * The rendered routes with its imports planned from use, and the members of `RouteContext` it
 * destructures cut to those its handlers use (`ROUTE_CONTEXT`, in alphabetical order).
 */
function plannedRoutes(rendered: string, sources: ImportSource[]): string {
  const at = rendered.indexOf(CONTEXT_NAMES);
  const used = usedIdentifiers(rendered.slice(at + CONTEXT_NAMES.length));
  const members = ROUTE_CONTEXT.filter((m) => used.has(m)).sort();
  return withImports(rendered.replace(CONTEXT_NAMES, members.join(", ")), sources);
}

function versionView(version: VersionModel) {
  return {
    header: GENERATED_HEADER,
    imports: IMPORTS,
    version: version.name,
    deprecation: version.deprecation,
    events: version.events,
    exports: version.exports !== null,
    resources: version.resources.map((r) => ({ register: r.symbols.register })),
  };
}

/** What `vN/index.ts` may import: the runtime, the route context, and every route registration. */
/**
 * The fields of `r` that a unique constraint holds (their own `unique`, or a composite list) and
 * that compare as `kind` (`email`, `instant`), as the service spec lists them.
 */
function comparedAs(r: StorageResource, kind: UniqueKind): string {
  return r.fields
    .filter(
      (f) =>
        compareKindOf(f) === kind && (f.unique || r.uniqueTogether.some((l) => l.includes(f.storageName))),
    )
    .map((f) => JSON.stringify(f.storageName))
    .join(", ");
}

/**
 * `vN/events.ts`: the feed, over the collections whose writes publish events (the model's list)
 * that this version has: its resources, their actions of this version, and its export jobs. A
 * resource or action added in a later version is not in an earlier version's feed.
 */
function eventsView(model: ApiModel, version: VersionModel) {
  const here = new Set([
    ...version.resources.flatMap((r) => [r.collection, ...r.actions.map((a) => `${r.collection}/${a.name}`)]),
    ...(version.exports ? [EXPORT_EVENTS] : []),
  ]);
  const collections = model.eventCollections.filter((c) => here.has(c));
  return {
    header: GENERATED_HEADER,
    imports: IMPORTS,
    version: version.name,
    collections: collections.map((c) => JSON.stringify(c)).join(", "),
    tenancy: model.tenantCollection !== null,
  };
}

function eventsSources(context: EmitContext): ImportSource[] {
  return [
    source("fastify", { FastifyInstance: "type" }),
    source("zod", { z: "value" }),
    runtimeSource(context, "index.ts", 1),
    source("../services.ts", { RouteContext: "type" }),
  ];
}

function versionSources(context: EmitContext, version: VersionModel): ImportSource[] {
  return [
    runtimeSource(context, "index.ts", 1),
    source("../services.ts", { RouteContext: "type" }),
    source("./events.ts", { registerEventRoutes: "value" }),
    source("./exports.ts", { registerExportRoutes: "value" }),
    ...version.resources.map((r) => source(`./${r.collection}/routes.ts`, { [r.symbols.register]: "value" })),
  ];
}

/** `vN/exports.ts`: the exports collection of a version, over the exportable resources' own views. */
/** What `vN/exports.ts` may import: the runtime, and the view mapper of every exportable resource. */
function exportsSources(context: EmitContext, exports: VersionExport[]): ImportSource[] {
  return [
    source("fastify", { FastifyInstance: "type" }),
    source("zod", { z: "value" }),
    runtimeSource(context, "index.ts", 1),
    runtimeSource(context, "exports.ts", 1),
    source("../services.ts", { RouteContext: "type" }),
    ...exports.map((e) => source(`./${e.collection}/routes.ts`, { [e.symbols.view]: "value" })),
  ];
}

function exportsView(version: VersionModel, exports: VersionExport[]) {
  const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(", ");
  // A tenant principal's export holds its tenant's records only (SPEC §12.4): the job's match keeps the tenant.
  const tenantKeyOf = (e: VersionExport) =>
    version.resources.find((r) => r.collection === e.collection)?.tenantKey ?? null;
  return {
    tenancy: exports.some((e) => tenantKeyOf(e) !== null),
    header: GENERATED_HEADER,
    imports: IMPORTS,
    version: version.name,
    searchMinLength: version.searchMinLength,
    collectionList: exports.map((e) => e.collection).join(", "),
    resourceList: quoted(exports.map((e) => e.collection)),
    resourceUnion: exports.map((e) => JSON.stringify(e.collection)).join(" | "),
    exports: exports.map((e) => ({
      collection: e.collection,
      key: propertyKey(e.collection),
      symbols: e.symbols,
      pascal: e.names.pascal,
      camel: e.names.camel,
      service: e.names.pluralCamel,
      formats: quoted(e.formats),
      defaultFormat: e.formats[0],
      columns: quoted(e.columns),
      decimals: e.decimals.length ? quoted(e.decimals) : null,
      filters: [
        ...e.filters.map((f) => ({
          key: propertyKey(f.name),
          zod: zodField({ ...f, nullable: false, hasDefault: false }, "update"),
        })),
        ...e.conditions.map((c) => ({ key: propertyKey(c.param), zod: conditionBodySchema(c) })),
      ],
      tenant: tenantKeyOf(e) !== null,
      where: [
        ...(tenantKeyOf(e) ? [`${propertyKey(tenantKeyOf(e)!)}: tenant`] : []),
        ...e.filters.map((f) =>
          `${propertyKey(f.storageName)}: body.filters.${access(f.name)}`.replace(".[", "["),
        ),
      ].join(", "),
      conditions: e.conditions.length ? `, conditionsOf(${e.names.camel}Conditions, body.filters)` : "",
      conditionsName: `${e.names.camel}Conditions`,
      conditionSpecs: conditionSpecs(e.conditions),
      sort: e.sort.length ? sortSchema(e.sort) : null,
      searchFields: quoted(e.search.map((f) => f.storageName)),
    })),
  };
}

/** Each operator filter as `conditionsOf` reads it: `"status[in]": ["status", "in", "rank"]`. */
function conditionSpecs(conditions: ListCondition[]): Array<{ key: string; spec: string }> {
  return conditions.map((c) => ({
    key: propertyKey(c.param),
    spec: [c.field.storageName, c.op, c.ordering].map((v) => JSON.stringify(v)).join(", "),
  }));
}

/** The references a service checks on write: each field's, then each path into arrays and objects (`tag_ids.*`). */
function referenceSpecs(
  fields: Array<{ field: string; collection: string }>,
  nested: Array<{ path: string; collection: string }>,
  tenantKeys?: ReadonlyMap<string, string>,
): string {
  // On a tenant-scoped resource, a reference into a tenant's records carries the key it is looked up by (SPEC §12.4).
  return [
    ...fields.map((ref) => ({ field: ref.field, collection: ref.collection })),
    ...nested.map((ref) => ({ field: ref.path, collection: ref.collection })),
  ]
    .map((ref) => {
      const key = tenantKeys?.get(ref.collection);
      return `{ field: ${JSON.stringify(ref.field)}, collection: ${JSON.stringify(ref.collection)}${key ? `, tenantKey: ${JSON.stringify(key)}` : ""} }`;
    })
    .join(", ");
}

/** The state machines of a resource's enum fields (SPEC §12.5) as the service's `transitions`, or "" without any. */
function transitionsOf(r: ApiModel["storage"][number]): string {
  const machines = r.fields.filter((f) => f.transitions).map((f) => [f.storageName, f.transitions]);
  return machines.length ? literal(Object.fromEntries(machines)) : "";
}

/** What an action does to its record (`ActionEffect`), or "" for an action that only records. */
function effectOf(a: ApiModel["storage"][number]["actionRecords"][number]): string {
  const { requires, sets } = a.rules;
  if (!requires.length && !sets.length) return "";
  return literal({
    targetField: a.targetField,
    ...(a.rulesSince !== null ? { since: a.rulesSince } : {}),
    ...(requires.length ? { requires: Object.fromEntries(requires.map((x) => [x.field, x.values])) } : {}),
    ...(sets.length
      ? {
          sets: Object.fromEntries(
            sets.map((x) => [x.field, x.from === undefined ? { value: x.value } : { from: x.from }]),
          ),
        }
      : {}),
  });
}

/**
 * `hooks.ts`: the `Hooks` type of `buildApp({ hooks })`, typed from the stored values of each
 * resource and its actions, and `hookSupport`, what a hook's store handle needs of every
 * collection (runtime/hooks.ts): its spec, the events of its writes as the newest version that
 * has the resource shows it (`events`), and, per older version, as that version shows it
 * (`versions`: a hook's writes in a request of that version publish those).
 */
function hooksFile(model: ApiModel, context: EmitContext): EmittedFile {
  const newestFirst = [...model.versions].sort((a, b) => b.number - a.number);
  const shownIn = (collection: string) => {
    for (const v of newestFirst) {
      const resource = v.resources.find((r) => r.collection === collection);
      if (resource) return { version: v, resource };
    }
    return null;
  };
  // Where each resource's view mapper lives: kept out of the template's view, whose JSON keys the
  // rendered text (a whole version in each resource's view made it N² long: at N=1000, past the
  // longest string V8 makes).
  const shownAll = model.storage.map((r) => shownIn(r.collection));
  const resources = model.storage.map((r, i) => {
    const shown = shownAll[i];
    const tenant = tenantField(r);
    return {
      key: propertyKey(r.collection),
      name: propertyKey(r.collection),
      service: r.symbols.service,
      values: r.symbols.values,
      collection: r.collection,
      singular: r.names.singular,
      view: shown ? shown.resource.symbols.view : "",
      // The events of a tenant-scoped record are kept with its tenant (SPEC §12.4), as the handlers' are.
      tenantKey: r.tenantKey ? `, ${JSON.stringify(r.tenantKey)}` : "",
      inserts: tenant ? `TenantFilled<${r.symbols.values}, ${JSON.stringify(tenant)}>` : r.symbols.values,
      actions: r.actionRecords.length
        ? `{ ${r.actionRecords.map((a) => `${propertyKey(a.name)}: ${a.symbols.values}`).join("; ")} }`
        : "Record<never, never>",
      actionValues: r.actionRecords.map((a) => a.symbols.values),
      // The records of its actions, which a delete through the handle takes along: their `.deleted` events.
      actionEvents: shown ? actionEvents(r.collection, shown.resource) : [],
    };
  });
  // The events of a hook's writes in a request of an older version show the record as that version
  // does (SPEC §5): per version, each collection it has, but in the newest version that has the
  // collection (its events are `events` already), each with that version's view mapper.
  const older: ImportSource[] = [];
  const versions = [...model.versions]
    .sort((a, b) => a.number - b.number)
    .map((v) => {
      const shownHere = model.storage.flatMap((r, i) => {
        const resource = v.resources.find((x) => x.collection === r.collection);
        if (!resource || shownAll[i]?.version === v) return [];
        const alias = `${resource.symbols.view}V${v.number}`;
        older.push({
          from: `./${v.name}/${resource.collection}/routes.ts`,
          names: new Map([[alias, "value"]]),
          aliases: new Map([[alias, resource.symbols.view]]),
        });
        const actions = actionEvents(r.collection, resource).map((a) => {
          const actionAlias = `${a.view}V${v.number}`;
          older.push({
            from: `./${v.name}/${resource.collection}/routes.ts`,
            names: new Map([[actionAlias, "value"]]),
            aliases: new Map([[actionAlias, a.view]]),
          });
          return { ...a, view: actionAlias };
        });
        return [{ ...resources[i]!, view: alias, actionEvents: actions }];
      });
      return { number: v.number, resources: shownHere };
    })
    .filter((v) => v.resources.length);
  const view = {
    header: GENERATED_HEADER,
    imports: IMPORTS,
    resources,
    versions,
    tenantScoped: model.storage.some((r) => tenantField(r) !== null),
  };
  const views = new Map<string, Record<string, "value">>();
  for (const shown of shownAll) {
    if (!shown) continue;
    const from = `./${shown.version.name}/${shown.resource.collection}/routes.ts`;
    const names = [shown.resource.symbols.view, ...shown.resource.actions.map((a) => a.symbols.view)];
    views.set(from, { ...views.get(from), ...Object.fromEntries(names.map((n) => [n, "value" as const])) });
  }
  const sources = [
    runtimeSource(context, "index.ts", 0),
    source("./services.ts", { resourceSpecs: "value" }),
    source(
      "./values.ts",
      Object.fromEntries(
        resources.flatMap((r) => [r.values, ...r.actionValues]).map((v) => [v, "type" as const]),
      ),
    ),
    ...[...[...views.entries()].map(([from, names]) => source(from, names)), ...older].sort((a, b) =>
      a.from < b.from ? -1 : a.from > b.from ? 1 : 0,
    ),
  ];
  return renderedFile(context, "hooks.ts", "hooks", view, sources);
}

/** The `.deleted` event of each action record of `resource` (a version's), by its collection (`tickets/escalations`). */
function actionEvents(collection: string, resource: VersionResource): Array<{ key: string; type: string; collection: string; view: string }> {
  return resource.actions.map((a) => ({
    key: propertyKey(`${collection}/${a.name}`),
    type: a.events.deleted,
    collection: `${collection}/${a.name}`,
    view: a.symbols.view,
  }));
}

/** The field a tenant-scoped collection's records name their tenant in (not the tenant collection's own `id`); null otherwise. */
function tenantField(resource: ApiModel["storage"][number]): string | null {
  return resource.tenantKey !== null && resource.tenantKey !== "id" ? resource.tenantKey : null;
}

/**
 * A collection's decimal fields as `ResourceSpec.decimals` lists them (runtime/decimal.ts
 * `DecimalField`), those inside an object, an array's items or a map's values with their `path`:
 * a hook's values are put in canonical form at every depth.
 */
function decimalSpecs(fields: readonly VersionField[]): string {
  return fields
    .flatMap((f) => decimalsIn(f, []).map((d) => ({ field: f.storageName, ...d })))
    .map(({ field, path, decimal }) =>
      literal({
        field,
        ...(path.length ? { path } : {}),
        precision: decimal.precision ?? 0,
        scale: decimal.scale ?? 0,
        ...(decimal.decimalMinimum !== undefined ? { minimum: decimal.decimalMinimum } : {}),
        ...(decimal.decimalMaximum !== undefined ? { maximum: decimal.decimalMaximum } : {}),
      }),
    )
    .join(", ");
}

/** The decimals `f` holds (itself, or inside it), each with its path from `f`. */
function decimalsIn(f: VersionField, path: string[]): Array<{ path: string[]; decimal: VersionField }> {
  if (f.type === "decimal") return [{ path, decimal: f }];
  if ((f.type === "array" || f.type === "map") && f.items)
    return decimalsIn(f.items, [...path, f.type === "array" ? "[]" : "{}"]);
  if (f.type === "object" && f.fields) return f.fields.flatMap((sub) => decimalsIn(sub, [...path, sub.name]));
  return [];
}

/** A collection's map fields as `ResourceSpec.maps` lists them (runtime/map.ts `MapField`). */
function mapSpecs(fields: readonly VersionField[]): string {
  return fields
    .filter((f) => f.type === "map")
    .map((f) => literal({ field: f.storageName, maxItems: f.maxItems ?? MAP_MAX_KEYS }))
    .join(", ");
}

function servicesView(model: ApiModel) {
  const tenantKeys = new Map(
    model.storage.flatMap((r) => (r.tenantKey ? [[r.collection, r.tenantKey] as const] : [])),
  );
  const services = model.storage.flatMap((r) => [
    {
      name: r.symbols.service,
      values: r.symbols.values,
      collection: r.collection,
      unique: r.unique.map((u) => JSON.stringify(u)).join(", "),
      uniqueTogether: r.uniqueTogether
        .map((list) => `[${list.map((u) => JSON.stringify(u)).join(", ")}]`)
        .join(", "),
      emails: comparedAs(r, "email"),
      instants: comparedAs(r, "instant"),
      references: referenceSpecs(
        r.references,
        r.nestedReferences,
        r.tenantKey && r.tenantKey !== "id" ? tenantKeys : undefined,
      ),
      transitions: transitionsOf(r),
      decimals: decimalSpecs(r.fields),
      maps: mapSpecs(r.fields),
      tenant: r.tenantKey && r.tenantKey !== "id" ? r.tenantKey : "",
      tenantKey: r.tenantKey ?? "",
      effect: "",
      plainAction: "",
      target: "",
      targetValues: "",
      hook: `hooks${member(r.collection)}`,
    },
    ...r.actionRecords.map((a) => ({
      name: a.symbols.service,
      values: a.symbols.values,
      collection: a.collection,
      unique: "",
      uniqueTogether: "",
      emails: "",
      instants: "",
      // Looked up within the tenant of the record acted on (SPEC §12.4).
      references: referenceSpecs(a.references, a.nestedReferences, r.tenantKey ? tenantKeys : undefined),
      transitions: "",
      decimals: decimalSpecs(a.fields),
      maps: mapSpecs(a.fields),
      tenant: "",
      tenantKey: "",
      // An action of a tenant-scoped resource whose fields reference a tenant's records looks them
      // up within the tenant of the record acted on: ActingService reads that record (SPEC §12.4).
      effect:
        effectOf(a) ||
        (r.tenantKey && [...a.references, ...a.nestedReferences].some((ref) => tenantKeys.has(ref.collection))
          ? literal({ targetField: a.targetField })
          : ""),
      // An action that only records acts through its hook alone: ActingService when one is given.
      plainAction: effectOf(a) ? "" : literal({ targetField: a.targetField }),
      target: r.symbols.service,
      targetValues: r.symbols.values,
      hook: `hooks${member(r.collection)}?.${member(a.name).replace(/^\./, "")}`,
    })),
  ]);
  services.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    header: GENERATED_HEADER,
    imports: IMPORTS,
    events: model.events,
    exports: model.exportJobs !== null,
    services,
    references: model.references.map(
      (r) =>
        `{ collection: ${JSON.stringify(r.collection)}, field: ${JSON.stringify(r.field)}, references: ${JSON.stringify(r.references)}, onDelete: ${JSON.stringify(r.onDelete)}${r.many ? ", many: true" : ""}${r.tenant ? `, tenant: ${JSON.stringify(r.tenant)}` : ""}${r.nullable ? ", nullable: true" : ""}${r.path ? `, path: [${r.path.map((part) => JSON.stringify(part)).join(", ")}]` : ""} }`,
    ),
  };
}

/**
 * For a tenant-scoped child of a tenant-scoped parent: a platform principal's create without the
 * tenant field takes its parent's tenant (runtime/tenancy.ts `tenantFromParent`), before
 * `tenantValues` asks for the field.
 */
function tenantFromParent(r: VersionResource): string {
  const parent = r.parent;
  if (!parent || !r.tenantKey || r.tenantKey === "id" || !parent.tenantKey || parent.tenantKey === "id") return "";
  const args = [
    "request",
    "values",
    JSON.stringify(r.tenantKey),
    `services.${parent.symbols.service}`,
    JSON.stringify(parent.field.storageName),
    JSON.stringify(parent.tenantKey),
  ];
  const line = `await tenantFromParent(${args.join(", ")});`;
  // As prettier writes it: on one line when it fits the route's indentation, else one argument a line.
  return line.length + 4 <= PRINT_WIDTH ? `${line}\n    ` : `await tenantFromParent(\n${args.map((a) => `      ${a},\n`).join("")}    );\n    `;
}
