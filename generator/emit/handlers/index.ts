import type { ApiModel, VersionExport, VersionField, VersionModel, VersionResource } from "../../model/types.ts";
import { camelCase } from "../../util/names.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { literal, propertyKey } from "../shared/code.ts";
import { zodField } from "../validators/zod.ts";

/**
 * Route handlers: per version and resource `vN/<collection>/routes.ts`, per version
 * `vN/index.ts` (the version's operations and documents) and `vN/events.ts` when events are
 * on, and the shared `services.ts` (the service of every resource over a store).
 */
export const handlersEmitter: Emitter = {
  name: "handlers",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    const files: EmittedFile[] = [];
    for (const version of model.versions) {
      for (const resource of version.resources) {
        files.push(styledTs(`${version.name}/${resource.collection}/routes.ts`, context.render("routes", routesView(version, resource))));
      }
      if (version.events) files.push(styledTs(`${version.name}/events.ts`, context.render("events", { header: GENERATED_HEADER, version: version.name, collections: model.eventCollections.map((c) => JSON.stringify(c)).join(", ") })));
      if (version.exports) files.push(styledTs(`${version.name}/exports.ts`, context.render("exports", exportsView(version, version.exports))));
      files.push(styledTs(`${version.name}/index.ts`, context.render("version", versionView(version))));
    }
    files.push(styledTs("services.ts", context.render("services", servicesView(model))));
    return files;
  },
};


const access = (name: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `[${JSON.stringify(name)}]`);

function bodyValue(field: VersionField): string {
  return `body.${access(field.name)}`.replace(".[", "[");
}

function routesView(version: VersionModel, r: VersionResource) {
  const v = version.name;
  const pascal = r.names.pascal;
  const camel = r.names.camel;
  const service = r.names.pluralCamel;
  const inputs = r.fields.filter((f) => f.input);
  const ops = r.operations;
  const actions = r.actions.map((a) => {
    const actionPascal = `${pascal}${a.names.pascal}`;
    return {
      path: `/${v}/${r.collection}/:id/${a.name}`,
      collection: `${r.collection}/${a.name}`,
      pascal: actionPascal,
      camel: camelCase(`${r.names.singular}-${a.singular}`),
      singular: `${r.names.singular} ${a.singular}`,
      service: camelCase(`${r.names.singular}-${a.name}`),
      targetField: a.targetField,
      view: a.fields.filter((f) => f.output).map((f) => ({ key: propertyKey(f.name), source: access(f.storageName) })),
      createValues: a.fields.filter((f) => f.input).map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
      eventType: a.eventType,
      noContent: a.response === 204,
    };
  });

  const runtime = new Set(["type StoredRecord"]);
  const schemas = new Set<string>();
  const contextNames = new Set(["services"]);
  const listing = ops.list || r.parent !== null;
  if (listing) {
    for (const name of ["authorizeOrThrow", "parseParams", "matchOf", "listByCursor"]) runtime.add(name);
    if (r.pagination === "offset") runtime.add("listByOffset");
    schemas.add(`${camel}ListQuery`);
    contextNames.add("authorize").add("cursors");
  }
  if (r.parent || ops.read || ops.update || ops.replace || ops.delete || actions.length) {
    for (const name of ["authorizeOrThrow", "parseParams", "found"]) runtime.add(name);
    schemas.add(`${camel}IdParams`);
    contextNames.add("authorize");
  }
  if (ops.read || ops.create || ops.update || ops.replace) runtime.add("sendRecord");
  if (ops.create || ops.update || ops.replace || actions.length) runtime.add("parseBody");
  if (ops.create || ops.update || ops.replace || ops.delete || actions.length) runtime.add("eventOf");
  if (ops.create) schemas.add(`${camel}Create`);
  if (ops.create || ops.update || ops.replace) schemas.add(`${camel}ReadOnly`);
  if (ops.update) {
    schemas.add(`${camel}Update`);
    runtime.add("definedOnly");
  }
  if (ops.replace) schemas.add(`${camel}Replace`);
  if (ops.update || ops.replace || ops.delete) runtime.add("checkIfMatch");
  if (ops.delete) runtime.add("NotFoundError");
  for (const a of actions) schemas.add(`${a.camel}Create`);
  if (ops.create || ops.update || ops.replace || actions.length) runtime.add("authorizeOrThrow");

  const where = r.filters.map((f) => `${propertyKey(f.storageName)}: query.${access(f.name)}`);
  return {
    header: GENERATED_HEADER,
    version: v,
    collection: r.collection,
    singular: r.names.singular,
    pascal,
    pluralPascal: r.names.pluralPascal,
    camel,
    service,
    operations: ops,
    offset: r.pagination === "offset",
    runtimeImports: sortImports([...runtime]),
    valueTypes: [`${pascal}Values`, ...actions.map((a) => `${a.pascal}Values`)].sort().join(", "),
    viewTypes: [pascal, ...actions.map((a) => a.pascal)].sort().join(", "),
    schemaImports: [...schemas].sort().join(", "),
    contextNames: [...contextNames].sort().join(", "),
    view: r.fields.filter((f) => f.output).map((f) => ({ key: propertyKey(f.name), source: access(f.storageName) })),
    createValues: [
      ...inputs.map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
      ...r.serverDefaults.map((d) => ({ key: propertyKey(d.storageName), expr: literal(d.value) })),
    ],
    replaceValues: inputs.map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
    patchValues: inputs.map((f) => ({ key: propertyKey(f.storageName), expr: bodyValue(f) })),
    where: objectLiteral(where),
    searchFields: r.search.map((f) => JSON.stringify(f.storageName)).join(", "),
    paths: {
      collection: `/${v}/${r.collection}`,
      item: `/${v}/${r.collection}/:id`,
      scope: `${v}/${r.collection}`,
      location: `/${v}/${r.collection}/\${record.id}`,
    },
    parent: r.parent && {
      path: `/${v}/${r.parent.collection}/:id/${r.collection}`,
      scope: `${v}/${r.parent.collection}/\${id}/${r.collection}`,
      collection: r.parent.collection,
      singular: r.parent.names.singular,
      camel: r.parent.names.camel,
      service: r.parent.names.pluralCamel,
      where: objectLiteral([`${propertyKey(r.parent.field.storageName)}: id`, ...where]),
    },
    actions,
  };
}

/** An object literal of `key: value` entries on one line, as prettier prints it. */
function objectLiteral(entries: string[]): string {
  return entries.length ? `{ ${entries.join(", ")} }` : "{}";
}

/** Value imports first, then `type` imports, each alphabetical. */
function sortImports(names: string[]): string {
  const plain = names.filter((n) => !n.startsWith("type ")).sort();
  const types = names.filter((n) => n.startsWith("type ")).sort();
  return [...plain, ...types].join(", ");
}

function versionView(version: VersionModel) {
  return {
    header: GENERATED_HEADER,
    version: version.name,
    deprecation: version.deprecation,
    events: version.events,
    exports: version.exports !== null,
    resources: version.resources.map((r) => ({ collection: r.collection, pluralPascal: r.names.pluralPascal })),
  };
}

/** `vN/exports.ts`: the exports collection of a version, over the exportable resources' own views. */
function exportsView(version: VersionModel, exports: VersionExport[]) {
  const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(", ");
  return {
    header: GENERATED_HEADER,
    version: version.name,
    collectionList: exports.map((e) => e.collection).join(", "),
    resourceList: quoted(exports.map((e) => e.collection)),
    resourceUnion: exports.map((e) => JSON.stringify(e.collection)).join(" | "),
    exports: exports.map((e) => ({
      collection: e.collection,
      key: propertyKey(e.collection),
      pascal: e.names.pascal,
      camel: e.names.camel,
      service: e.names.pluralCamel,
      formats: quoted(e.formats),
      defaultFormat: e.formats[0],
      columns: quoted(e.columns),
      filters: e.filters.map((f) => ({ key: propertyKey(f.name), zod: zodField({ ...f, nullable: false, hasDefault: false }, "update") })),
      where: e.filters.map((f) => `${propertyKey(f.storageName)}: body.filters.${access(f.name)}`.replace(".[", "[")).join(", "),
      searchFields: quoted(e.search.map((f) => f.storageName)),
    })),
  };
}

function servicesView(model: ApiModel) {
  const services = model.storage.flatMap((r) => [
    {
      name: r.names.pluralCamel,
      pascal: r.names.pascal,
      collection: r.collection,
      unique: r.unique.map((u) => JSON.stringify(u)).join(", "),
      references: r.references.map((ref) => `{ field: ${JSON.stringify(ref.field)}, collection: ${JSON.stringify(ref.collection)} }`).join(", "),
    },
    ...r.actionRecords.map((a) => ({
      name: camelCase(`${r.names.singular}-${a.name}`),
      pascal: a.names.pascal,
      collection: a.collection,
      unique: "",
      references: "",
    })),
  ]);
  services.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return {
    header: GENERATED_HEADER,
    events: model.events,
    exports: model.exportJobs !== null,
    services,
    valueTypes: services.map((s) => `${s.pascal}Values`).sort().join(", "),
  };
}
