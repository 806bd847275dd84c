import { routeOf } from "../../model/routes.ts";
import type { Route, VersionField, VersionResource } from "../../model/types.ts";
import { camelCase } from "../../util/names.ts";
import { commentText, propertyKey, tsType } from "../shared/code.ts";
import { localName, type TypeAliases } from "../shared/local-names.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../../runtime/pages.ts";
import { PRINT_WIDTH } from "../../format/prettier.ts";

/** A class of the client: a collection, a child collection under its parent, or an action. */
export interface ClassView {
  name: string;
  doc: string;
  /** Its property on the client (`orders`), for a top-level collection; null for a nested one. */
  property: string | null;
  /** Nested classes: child collections and actions (`api.orders.cancellations`). */
  members: Array<{ property: string; className: string; doc: string }>;
  methods: MethodView[];
}

interface MethodView {
  /** Overload signatures, each with its doc, before the implementation (offset lists). */
  overloads: Array<{ doc: string; signature: string }>;
  /** Doc of the implementation; empty when overloads carry the docs. */
  doc: string;
  signature: string;
  /** What the implementation returns: a call of the transport, `this.#http.…`. */
  call: string;
}

/** A query interface of a list. */
export interface QueryView {
  /** Types declared before it (the keys of `sort`). */
  aliases?: Array<{ name: string; doc: string; type: string }>;
  name: string;
  doc: string;
  members: Array<{ key: string; type: string; optional: boolean; doc: string }>;
}

/** The options of a read or a list; of a create (`idempotencyKey`); of a write of one record (`ifMatch`); of an action (both). */
const OPTIONS = "options?: CallOptions";
const CREATE_OPTIONS = "options?: CreateOptions";
const WRITE_OPTIONS = "options?: WriteOptions";
const ACTION_OPTIONS = "options?: ActionOptions";
const PAGE_SIZE = `Records per page, 1 to ${MAX_PAGE_SIZE}; ${DEFAULT_PAGE_SIZE} when absent.`;
const CURSOR = "`next_cursor` of the page before; the first page when absent.";

/** The path and id arguments of a transport call: the model's path (`/v2/orders/{id}`), and the parameter filling `{id}`. */
function pathArguments(path: string, id = "id"): string {
  return `${JSON.stringify(path)}, ${path.includes("{id}") ? id : "null"}`;
}

function queryNames(r: VersionResource) {
  return { list: `${r.names.pluralPascal}ListQuery`, search: `${r.names.pluralPascal}SearchQuery` };
}

/** The query interfaces of a resource's lists: one in cursor mode; in offset mode, one more for a search. */
export function resourceQueries(r: VersionResource): QueryView[] {
  if (!r.operations.list && !r.parent && !r.listsUnder.length) return [];
  const names = queryNames(r);
  const paths = r.routes.filter((route) => route.kind === "list" || route.kind === "list-under").map((route) => `${route.method.toUpperCase()} ${route.path}`);
  const filters = filterMembers(r);
  const aliases = sortAlias(r);
  const q = (optional: boolean) => ({ key: "q", type: "string", optional, doc: `${searchDoc(r.search)}; always cursor mode.` });
  const cursorMembers = [
    { key: "limit", type: "number", optional: true, doc: PAGE_SIZE },
    { key: "cursor", type: "string", optional: true, doc: CURSOR },
  ];
  if (r.pagination === "cursor") {
    return [{ aliases, name: names.list, doc: `Query of ${paths.join(" and ")}.`, members: [...cursorMembers, q(true), ...filters] }];
  }
  return [
    {
      aliases,
      name: names.list,
      doc: `Query of ${paths.join(" and ")}: offset mode.`,
      members: [
        { key: "page", type: "number", optional: true, doc: "Page number, from 1; 1 when absent." },
        { key: "per_page", type: "number", optional: true, doc: PAGE_SIZE },
        ...filters,
      ],
    },
    { name: names.search, doc: `Query of a search of ${r.collection}: cursor mode.`, members: [q(false), ...cursorMembers, ...filters] },
  ];
}

/** What `q` matches: "Text to find (case-insensitive) in name or email". */
export function searchDoc(fields: VersionField[]): string {
  const names = fields.map((f) => f.name);
  const listed = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : names[0];
  return listed ? `Text to find (case-insensitive) in ${listed}` : "Text to find (case-insensitive); this collection has no text field";
}

/**
 * One member per filter field: its value (equals), and an object of its operators when it has
 * some (`{ in: ["open", "pending"] }`, `{ gte: "2026-11-01T00:00:00Z", lt: "…" }`, `{ null: true }`),
 * sent as `status[in]=open,pending`; then `sort`, one key or an array of up to 3.
 */
function filterMembers(r: VersionResource) {
  const byName = new Map<string, { field: VersionField; equals: boolean; ops: string[] }>();
  for (const f of r.filters) byName.set(f.name, { field: f, equals: true, ops: [] });
  for (const c of r.conditions) {
    const entry = byName.get(c.field.name) ?? { field: c.field, equals: false, ops: [] };
    entry.ops.push(c.op);
    byName.set(c.field.name, entry);
  }
  const members = [...byName.values()].map(({ field, equals, ops }) => {
    const value = tsType({ ...field, nullable: false });
    const opTypes = ops.map((op) => `${op}?: ${op === "in" ? `Array<${value}>` : op === "null" ? "boolean" : value}`);
    const object = opTypes.length ? `{ ${opTypes.join("; ")} }` : null;
    const parts = [...(equals ? value.split(" | ") : []), ...(object ? [object] : [])];
    const type = unionLayout(`  ${propertyKey(field.name)}?: `, parts, "    ");
    const said = [equals ? "is this value" : null, ...ops.map((op) => OPERATOR_DOCS[op])].filter(Boolean);
    return { key: propertyKey(field.name), type, optional: true, doc: `Only records whose ${field.name} ${said.join(", or ")}.` };
  });
  if (r.sort.length) {
    const alias = sortAliasName(r);
    members.unshift({
      key: "sort",
      type: `SortOrder<${alias}>`,
      optional: true,
      doc: `Order: a key, or up to 3; \`-\` for descending; \`id\` breaks ties, records without a value come last.`,
    });
  }
  return members;
}

/**
 * A union type as prettier prints it after `head` (`  status?: `): on the same line when it fits;
 * else on the next line, indented, when it fits there; else one member a line.
 */
function unionLayout(head: string, parts: string[], indent: string): string {
  const line = parts.join(" | ");
  if (`${head}${line};`.length <= PRINT_WIDTH) return line;
  if (`${indent}${line};`.length <= PRINT_WIDTH) return `\n${indent}${line}`;
  return `\n${parts.map((p) => `${indent}| ${p}`).join("\n")}`;
}

function sortAliasName(r: VersionResource): string {
  return `${r.names.pluralPascal}SortKey`;
}

/** The keys `sort` takes, as a type of their own: `"priority" | "-priority" | …`. */
function sortAlias(r: VersionResource): QueryView["aliases"] {
  if (!r.sort.length) return [];
  const keys = r.sort.flatMap((k) => [JSON.stringify(k.name), JSON.stringify(`-${k.name}`)]);
  const name = sortAliasName(r);
  const type = unionLayout(`export type ${name} = `, keys, "  ");
  return [{ name, doc: `A key of \`sort\` on ${r.collection}: ascending, or descending with \`-\`.`, type }];
}

const OPERATOR_DOCS: Record<string, string> = {
  in: "is one of `{ in: [...] }`",
  gt: "is above `{ gt }`",
  gte: "is at least `{ gte }`",
  lt: "is below `{ lt }`",
  lte: "is at most `{ lte }`",
  null: "is absent `{ null: true }` or present `{ null: false }`",
};

/** The list methods of a resource's list, at `path` with `{id}` the parent's id (`userId`). */
function listMethod(r: VersionResource, aliases: TypeAliases, path: string, doc: string, parentId?: string): MethodView {
  const record = localName(aliases, r.symbols.type);
  const names = queryNames(r);
  const idParam = parentId ? `${parentId}: string, ` : "";
  const call = `list(${pathArguments(path, parentId)}, query, options)`;
  if (r.pagination === "cursor") {
    const signature = `list(${idParam}query: ${names.list} = {}, ${OPTIONS}): ListCall<${record}, CursorPage<${record}>>`;
    return { overloads: [], doc, signature, call };
  }
  const both = `${names.list} | Partial<${names.search}>`;
  const pages = `AnyPage<${record}>`;
  return {
    overloads: [
      { doc: `${doc} With \`q\`: a search, in cursor mode.`, signature: `list(${idParam}query: ${names.search}, ${OPTIONS}): ListCall<${record}, CursorPage<${record}>>` },
      { doc: `${doc} Offset mode: \`page\` and \`per_page\`.`, signature: `list(${idParam}query?: ${names.list}, ${OPTIONS}): ListCall<${record}, OffsetPage<${record}>>` },
      { doc: `${doc} Offset mode, or cursor mode with \`q\`.`, signature: `list(${idParam}query?: EitherQuery<${names.list} | ${names.search}>, ${OPTIONS}): ListCall<${record}, ${pages}>` },
    ],
    doc: "",
    signature: `list(${idParam}query: ${both} = {}, ${OPTIONS}): ListCall<${record}, ${pages}>`,
    call,
  };
}

/**
 * The classes of one resource: its own, then one per child collection it is the parent of…
 * Its record and body types are written as the client imports them (`aliases`, shared/local-names.ts).
 */
export function resourceClasses(r: VersionResource, children: VersionResource[], aliases: TypeAliases = new Map()): ClassView[] {
  const record = () => localName(aliases, r.symbols.type);
  const one = r.names.words;
  const methods: MethodView[] = [];
  const method = (doc: string, signature: string, call: string): MethodView => ({ overloads: [], doc, signature, call });
  // Each method calls its route of the model's route record (model/routes.ts): its method and path.
  const routes = new Map(r.routes.filter((route) => route.kind !== "list-under" && route.kind !== "action").map((route) => [route.kind, route]));
  const at = (route: Route) => `${route.method.toUpperCase()} ${route.path}`;
  const call = (route: Route, id: string | null, body: string) =>
    `call("${route.method.toUpperCase()}", ${id === null ? pathArguments(route.path) : pathArguments(route.path, id)}, ${body}, options)`;
  const list = routes.get("list");
  if (list) methods.push(listMethod(r, aliases, list.path, `${at(list)}: \`await\` it for a page, \`for await\` it for every record, or \`.pages()\`.`));
  const read = routes.get("read");
  if (read) methods.push(method(`${at(read)}: one ${one}; \`.withResponse()\` gives its ETag too.`, `get(id: string, ${OPTIONS}): ApiCall<${record()}>`, call(read, "id", "undefined")));
  const create = routes.get("create");
  if (create) methods.push(method(`${at(create)}: a new ${one}.`, `create(body: ${localName(aliases, create.body!)}, ${CREATE_OPTIONS}): ApiCall<${record()}>`, call(create, null, "body")));
  const update = routes.get("update");
  if (update) methods.push(method(`${at(update)}: changes the fields given; \`ifMatch\` makes it conditional.`, `update(id: string, body: ${localName(aliases, update.body!)}, ${WRITE_OPTIONS}): ApiCall<${record()}>`, call(update, "id", "body")));
  const replace = routes.get("replace");
  if (replace) methods.push(method(`${at(replace)}: replaces the record, as \`create\` sends it: a field left out takes its default (a transition may refuse it: 422), read-only fields keep theirs; \`ifMatch\` makes it conditional.`, `replace(id: string, body: ${localName(aliases, replace.body!)}, ${WRITE_OPTIONS}): ApiCall<${record()}>`, call(replace, "id", "body")));
  const remove = routes.get("delete");
  if (remove) methods.push(method(`${at(remove)}; \`ifMatch\` makes it conditional.`, `delete(id: string, ${WRITE_OPTIONS}): ApiCall<void>`, call(remove, "id", "undefined")));
  const targetId = `${camelCase(r.names.singular)}Id`;
  const actions: ClassView[] = r.actions.map((a) => {
    const route = routeOf(r, "action", a.name);
    const result = route.record === null ? "void" : localName(aliases, route.record);
    const body = localName(aliases, route.body!);
    const doc = a.description ? ` ${commentText(a.description)}` : "";
    return {
      name: `${a.names.pluralPascal}Of${r.names.pascal}Client`,
      doc: `${a.names.pluralPascal.replace(/([a-z])([A-Z])/g, "$1 $2")} of one ${one}: ${at(route)}.${doc}`,
      property: null,
      members: [],
      methods: [method(`${at(route)}: a new ${a.names.words} of the ${one} \`${targetId}\`.`, `create(${targetId}: string, body: ${body}, ${ACTION_OPTIONS}): ApiCall<${result}>`, call(route, targetId, "body"))],
    };
  });
  const childClasses: ClassView[] = children.map((c) => {
    // Its parent's list, or the list under a `list_under` field that names this collection.
    const route = routeOf(c, "list-under", r.collection);
    return {
      name: `${c.names.pluralPascal}Of${r.names.pascal}Client`,
      doc: `The ${c.names.pluralWords} of one ${one}: ${at(route)}.`,
      property: null,
      members: [],
      methods: [listMethod(c, aliases, route.path, `${at(route)}: the ${c.names.pluralWords} of the ${one} \`${targetId}\`.`, targetId)],
    };
  });
  const members = [
    ...childClasses.map((c, i) => ({ property: children[i]!.names.pluralCamel, className: c.name, doc: c.doc })),
    ...actions.map((a, i) => ({ property: r.actions[i]!.names.pluralCamel, className: a.name, doc: a.doc })),
  ];
  const own: ClassView = {
    name: `${r.names.pluralPascal}Client`,
    doc: r.description ? commentText(r.description) : `The operations on ${r.collection}.`,
    property: r.names.pluralCamel,
    members,
    methods,
  };
  return [own, ...childClasses, ...actions];
}

/** `api.events`: every write's event, in the order they occurred. */
export function eventsQuery(path: string): QueryView {
  return {
    name: "EventsListQuery",
    doc: `Query of GET ${path}.`,
    members: [
      { key: "limit", type: "number", optional: true, doc: PAGE_SIZE },
      { key: "cursor", type: "string", optional: true, doc: CURSOR },
    ],
  };
}

export function eventsClass(path: string): ClassView {
  return {
    name: "EventsClient",
    doc: `The events of every write, oldest first: GET ${path}.`,
    property: "events",
    members: [],
    methods: [
      {
        overloads: [],
        doc: `GET ${path}: \`await\` it for a page, \`for await\` it for every event, or \`.pages()\`.`,
        signature: `list(query: EventsListQuery = {}, ${OPTIONS}): ListCall<ApiEvent, CursorPage<ApiEvent>>`,
        call: `list(${pathArguments(path)}, query, options)`,
      },
      {
        overloads: [],
        doc: `GET ${path}/{id}: one event.`,
        signature: `get(id: string, ${OPTIONS}): ApiCall<ApiEvent>`,
        call: `call("GET", ${pathArguments(`${path}/{id}`)}, undefined, options)`,
      },
    ],
  };
}

/** `api.exports`: background exports of whole collections, and their files. */
export function exportsClass(path: string): ClassView {
  const method = (doc: string, signature: string, call: string): MethodView => ({ overloads: [], doc, signature, call });
  return {
    name: "ExportsClient",
    doc: `Exports of whole collections (a background job, then a file): ${path}.`,
    property: "exports",
    members: [],
    methods: [
      method(
        `POST ${path}: a new export job, pending; \`get\` it until it has succeeded, then \`download\` it.`,
        `create(body: ExportCreate, ${CREATE_OPTIONS}): ApiCall<ExportJob>`,
        `createExport(${JSON.stringify(path)}, body, options)`,
      ),
      method(
        `GET ${path}: your export jobs; \`await\` it for a page, \`for await\` it for every job.`,
        `list(query: ExportsListQuery = {}, ${OPTIONS}): ListCall<ExportJob, CursorPage<ExportJob>>`,
        `list(${pathArguments(path)}, query, options)`,
      ),
      method(`GET ${path}/{id}: one export job.`, `get(id: string, ${OPTIONS}): ApiCall<ExportJob>`, `call("GET", ${pathArguments(`${path}/{id}`)}, undefined, options)`),
      method(
        "The file of a succeeded job (its `download_url`), as text: NDJSON or CSV; an error before.",
        `download(job: Pick<ExportJob, "download_url">, ${OPTIONS}): ApiCall<string>`,
        "text(job.download_url, options)",
      ),
    ],
  };
}

export function exportsQuery(path: string): QueryView {
  return { ...eventsQuery(path), name: "ExportsListQuery" };
}
