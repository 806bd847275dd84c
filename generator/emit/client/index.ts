import type { ApiModel, VersionExport, VersionModel, VersionResource } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter, type UnitContext } from "../emitter.ts";
import { commentText, propertyKey, tsType } from "../shared/code.ts";
import { IMPORTS, placedCode, withImports, type ImportSource, type PlacedCode } from "../shared/imports.ts";
import { declaredTypes, typeAliases, typesSource, type TypeAliases } from "../shared/local-names.ts";
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
  type QueryView,
} from "./classes.ts";
import { ERROR_STATUSES } from "../../../runtime/errors.ts";
import { defineUnit } from "../../engine.ts";

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
    const core = withErrorClasses(context.templateText("client/core.ts").replace(/^import [^;]* from "\.\.\/\.\.\/runtime\/pages\.ts";\n/m, ""));
    return model.versions.map((version) => {
      // The version's types whose names the core has too are imported under an alias (`Client as ClientRecord`).
      const aliases = typeAliases(version, context.canonTypeNames());
      const parts = clientParts(context, version, aliases);
      const rendered = context.render("client/client", clientView(model, version, `${pages.trimEnd()}\n\n${core}`, parts.entries));
      // The queries and classes, rendered resource by resource, where the template places them;
      // the identifiers they use and declare were found with them.
      const planned = withImports(rendered, typeSources(version, aliases), parts.placed);
      return styledTs(`${version.name}/client.ts`, planned.replace(BLOCKS, () => parts.pieces.join("")));
    });
  },
};

/**
 * The core with its `ERROR_CLASSES` written from the runtime's table of error statuses
 * (runtime/errors.ts `ERROR_STATUSES`): the client throws, for each status the service answers
 * with, the class of the same name as the server's. A status whose class the core lacks is an
 * error of canon's, found when the client is generated.
 */
export function withErrorClasses(core: string): string {
  const table = /const ERROR_CLASSES: Record<number, typeof ApiError> = \{\n[^}]*\};/;
  if (!table.test(core)) throw new Error("templates/client/core.ts has no ERROR_CLASSES table to write");
  for (const e of ERROR_STATUSES) {
    if (!core.includes(`export class ${e.className} extends ApiError`))
      throw new Error(`templates/client/core.ts has no class ${e.className} for status ${e.status} (runtime/errors.ts)`);
  }
  const entries = ERROR_STATUSES.map((e) => `  ${e.status}: ${e.className},\n`).join("");
  return core.replace(table, () => `const ERROR_CLASSES: Record<number, typeof ApiError> = {\n${entries}};`);
}

/** Where `client/client.hbs` places the queries and classes (`{{{blocks}}}`). */
const BLOCKS = "/*<canon:blocks>*/";

/**
 * What one resource adds to the client: its queries and classes as text, what that text uses and
 * declares (for the client's imports), and the client's property of each of its top-level classes.
 */
interface ResourcePart {
  entries: ClientEntry[];
  text: { queries: string; classes: string };
  placed: PlacedCode;
}

/** A property of the client: a top-level collection's class. */
interface ClientEntry {
  property: string;
  className: string;
  doc: string;
}

/** The client's properties of the classes that have one. */
function entriesOf(classes: ClassView[]): ClientEntry[] {
  return classes.flatMap((c) => (c.property === null ? [] : [{ property: c.property, className: c.name, doc: c.doc }]));
}

/** Each resource's part: a function of the resource and its child collections alone. */
const resourcePart = defineUnit(
  "client resource part",
  (
    { resource, children, aliases }: { resource: VersionResource; children: VersionResource[]; aliases: Array<[string, string]> },
    context: UnitContext,
  ): ResourcePart => {
    const classes = callable(resourceClasses(resource, children, new Map(aliases)));
    const text = blocks(context, resourceQueries(resource), classes);
    return { entries: entriesOf(classes), text, placed: placedCode(`${text.queries}\n${text.classes}`) };
  },
);

/**
 * The queries and classes of a version's client, as pieces of text in the order the template
 * wrote them whole (every query, then every class), and the classes the client has a property for.
 */
function clientParts(context: EmitContext, version: VersionModel, aliases: TypeAliases): { pieces: string[]; placed: PlacedCode[]; entries: ClientEntry[] } {
  const children = new Map<string, VersionResource[]>();
  for (const r of version.resources) {
    for (const u of [...(r.parent ? [r.parent] : []), ...r.listsUnder]) children.set(u.collection, [...(children.get(u.collection) ?? []), r]);
  }
  const parts = version.resources.map((r) => {
    const mine = [r, ...(children.get(r.collection) ?? [])].flatMap(declaredTypes).filter((n) => aliases.has(n));
    return context.unit(resourcePart, { resource: r, children: children.get(r.collection) ?? [], aliases: mine.map((n): [string, string] => [n, aliases.get(n)!]) });
  });
  const extraQueries: QueryView[] = [];
  const extraClasses: ClassView[] = [];
  if (version.eventsPath) {
    extraQueries.push(eventsQuery(version.eventsPath));
    extraClasses.push(eventsClass(version.eventsPath));
  }
  if (version.exportsPath) {
    extraQueries.push(exportsQuery(version.exportsPath));
    extraClasses.push(exportsClass(version.exportsPath));
  }
  const extra = blocks(context, extraQueries, callable(extraClasses));
  return {
    pieces: [...parts.map((p) => p.text.queries), extra.queries, ...parts.map((p) => p.text.classes), extra.classes],
    placed: [...parts.map((p) => p.placed), placedCode(`${extra.queries}\n${extra.classes}`)],
    entries: [...parts.flatMap((p) => p.entries), ...entriesOf(callable(extraClasses))],
  };
}

/** The classes that have something to call: a collection without any operation has no class. */
function callable(classes: ClassView[]): ClassView[] {
  return classes.filter((c) => c.methods.length > 0 || c.members.length > 0);
}

/** Queries and classes as the template writes them. */
function blocks(context: UnitContext, queries: QueryView[], classes: ClassView[]): { queries: string; classes: string } {
  return { queries: context.render("client/queries", { queries }), classes: context.render("client/classes", { classes }) };
}

/** What the client may import: the version's own types, as types only (erased in a browser bundle). */
function typeSources(version: VersionModel, aliases: TypeAliases): ImportSource[] {
  return version.resources.map((r) => typesSource(`./${r.symbols.typesModule}`, declaredTypes(r), aliases));
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
      members: [
        ...e.filters.map((f) => ({ key: propertyKey(f.name), type: tsType({ ...f, nullable: false }) })),
        ...e.conditions.map((c) => {
          const value = tsType({ ...c.field, nullable: false });
          return { key: propertyKey(c.param), type: c.op === "in" ? `Array<${value}>` : c.op === "null" ? "boolean" : value };
        }),
      ],
      operators: e.conditions.length > 0,
      sort: e.sort.length ? `up to 3 comma-separated keys among ${e.sort.map((k) => `\`${k.name}\``).join(", ")}, \`-\` for descending` : null,
    })),
  };
}

function clientView(model: ApiModel, version: VersionModel, core: string, entries: ClientEntry[]) {
  return {
    header: GENERATED_HEADER,
    title: commentText(model.title),
    version: version.name,
    searchMinLength: version.searchMinLength,
    imports: IMPORTS,
    core: core.trimEnd(),
    events: version.eventsPath !== null,
    exports: version.exports && exportsView(version.exports),
    blocks: BLOCKS,
    client: entries,
  };
}
