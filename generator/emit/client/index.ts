import type { ApiModel, VersionExport, VersionModel, VersionResource } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { commentText, propertyKey, tsType } from "../shared/code.ts";
import { IMPORTS, source, withImports, type ImportSource } from "../shared/imports.ts";
import { EXPORT_STATUSES } from "../../../runtime/exports-job.ts";
import {
  eventsClass,
  eventsQuery,
  exportsClass,
  exportsQuery,
  resourceClasses,
  resourceQueries,
  searchDoc,
  type ClassView,
} from "./classes.ts";

/**
 * The typed client of every version, `vN/client.ts` (SPEC §9): one file that needs only the
 * platform's fetch and the version's own types (imported as types, so it bundles for browsers).
 * The fixed part, `templates/client/core.ts` (errors, requests, retries, pagination), is placed
 * whole; `templates/client/client.hbs` places what varies: a class per collection with a
 * method per operation, its child collections and actions, and `createClient`.
 */
export const clientEmitter: Emitter = {
  name: "client",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    // The page types (runtime/pages.ts, imports nothing), then the fixed part without the import
    // of them that lets canon type-check it on its own.
    const pages = context.runtimeFile("pages.ts");
    const core = context.templateText("client/core.ts").replace(/^import type .*\n/m, "");
    return model.versions.map((version) => {
      const rendered = context.render("client/client", clientView(model, version, `${pages.trimEnd()}\n\n${core}`));
      return styledTs(`${version.name}/client.ts`, withImports(rendered, typeSources(version)));
    });
  },
};

/** What the client may import: the version's own types, as types only (erased in a browser bundle). */
function typeSources(version: VersionModel): ImportSource[] {
  return version.resources.map((r) => {
    const names = [r.symbols.type, r.symbols.createBody, r.symbols.updateBody, r.symbols.replaceBody];
    for (const a of r.actions) names.push(a.symbols.type, a.symbols.createBody);
    return source(`./${r.symbols.typesModule}`, Object.fromEntries(names.map((n) => [n, "type" as const])));
  });
}

const union = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(" | ");

/** The export job and the bodies of POST /vN/exports, one per exportable collection. */
function exportsView(exports: VersionExport[]) {
  return {
    resources: union(exports.map((e) => e.collection)),
    formats: union([...new Set(exports.flatMap((e) => e.formats))]),
    statuses: union(EXPORT_STATUSES),
    createNames: exports.map((e) => e.symbols.exportCreate).join(" | "),
    bodies: exports.map((e) => ({
      collection: e.collection,
      create: e.symbols.exportCreate,
      filters: e.symbols.exportFilters,
      resource: JSON.stringify(e.collection),
      formats: union(e.formats),
      search: searchDoc(e.search),
      members: e.filters.map((f) => ({ key: propertyKey(f.name), type: tsType({ ...f, nullable: false }) })),
    })),
  };
}

function clientView(model: ApiModel, version: VersionModel, core: string) {
  const queries = version.resources.flatMap((r) => resourceQueries(r));
  const children = new Map<string, VersionResource[]>();
  for (const r of version.resources) if (r.parent) children.set(r.parent.collection, [...(children.get(r.parent.collection) ?? []), r]);
  const classes: ClassView[] = version.resources.flatMap((r) => resourceClasses(r, children.get(r.collection) ?? []));
  if (version.eventsPath) {
    queries.push(eventsQuery(version.eventsPath));
    classes.push(eventsClass(version.eventsPath));
  }
  if (version.exportsPath) {
    queries.push(exportsQuery(version.exportsPath));
    classes.push(exportsClass(version.exportsPath));
  }
  // A collection without any operation has nothing to call.
  const entries = classes.filter((c) => c.property !== null && (c.methods.length > 0 || c.members.length > 0));
  return {
    header: GENERATED_HEADER,
    title: commentText(model.title),
    version: version.name,
    imports: IMPORTS,
    core: core.trimEnd(),
    events: version.eventsPath !== null,
    exports: version.exports && exportsView(version.exports),
    queries,
    classes: classes.filter((c) => c.methods.length > 0 || c.members.length > 0),
    client: entries.map((c) => ({ property: c.property, className: c.name, doc: c.doc })),
  };
}
