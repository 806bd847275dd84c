import type { ApiModel, VersionModel } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { commentText } from "../shared/code.ts";
import { IMPORTS, source, withImports, type ImportSource } from "../shared/imports.ts";
import { eventsClass, eventsQuery, resourceClasses, resourceQueries, type ClassView } from "./classes.ts";

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
    const core = context.templateText("client/core.ts");
    return model.versions.map((version) => {
      const rendered = context.render("client/client", clientView(model, version, core));
      return styledTs(`${version.name}/client.ts`, withImports(rendered, typeSources(version)));
    });
  },
};

/** What the client may import: the version's own types, as types only (erased in a browser bundle). */
function typeSources(version: VersionModel): ImportSource[] {
  return version.resources.map((r) => {
    const names = [r.symbols.type, r.symbols.createBody, r.symbols.updateBody, r.symbols.replaceBody];
    for (const a of r.actions) names.push(a.symbols.type, a.symbols.createBody);
    return source(`./${r.collection}/types.ts`, Object.fromEntries(names.map((n) => [n, "type" as const])));
  });
}

function clientView(model: ApiModel, version: VersionModel, core: string) {
  const queries = version.resources.flatMap((r) => resourceQueries(r));
  const classes: ClassView[] = version.resources.flatMap((r) => resourceClasses(version, r));
  if (version.eventsPath) {
    queries.push(eventsQuery(version.eventsPath));
    classes.push(eventsClass(version.eventsPath));
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
    queries,
    classes: classes.filter((c) => c.methods.length > 0 || c.members.length > 0),
    client: entries.map((c) => ({ property: c.property, className: c.name, doc: c.doc })),
  };
}
