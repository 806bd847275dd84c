/**
 * The route record: one per operation of a resource in a version (its list and record
 * operations, its lists under another record, its actions), built once with the version's
 * snapshot (snapshot.ts) and read by every emitter that names an operation: the handlers
 * (`serverPath`, the events), the OpenAPI documents (`path`, `operationId`, `summary`, the
 * statuses), the client (`method`, `path`). A fact of a route is written here and nowhere else.
 */
import type { Names } from "./names.ts";
import type { ListUnder, Operation, RecordEvents, ResourceSymbols, Route, RouteKind, RouteMethod, VersionAction } from "./types.ts";

/** Error statuses every operation may answer (runtime/errors.ts ERROR_STATUSES has each). */
export const COMMON_ERRORS: readonly number[] = [400, 401, 403, 429, 500];
/** Where a record is looked up by id: 404. */
export const LOOKUP_ERRORS: readonly number[] = [404];
/** Writes: 409 (duplicate, stale `If-Match`, key in use) and 422 (a business rule). */
export const WRITE_ERRORS: readonly number[] = [409, 422];

/** What `resourceRoutes` reads of a resource. */
export interface RoutedResource {
  collection: string;
  names: Names;
  symbols: ResourceSymbols;
  operations: Record<Operation, boolean>;
  paths: { collection: string; item: string };
  events: RecordEvents;
  parent: ListUnder | null;
  listsUnder: ListUnder[];
  actions: VersionAction[];
}

/** The event types of the records of a resource whose singular is `singular` (`order`, `order.cancellation`). */
export function recordEvents(singular: string): RecordEvents {
  return { created: `${singular}.created`, updated: `${singular}.updated`, deleted: `${singular}.deleted` };
}

/** `/v2/orders/{id}` → `/v2/orders/:id`. */
export function serverPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ":$1");
}

const sorted = (...groups: ReadonlyArray<readonly number[]>): number[] => groups.flat().sort((a, b) => a - b);

/**
 * Every route of a resource, in the order its documents list them: list and create on the
 * collection; read, replace, update and delete on the record; the lists under a record (the
 * parent's, then each `list_under` field's); one POST per action. Only enabled operations.
 */
export function resourceRoutes(r: RoutedResource): Route[] {
  const { names, symbols, operations, paths, events } = r;
  const route = (kind: RouteKind, method: RouteMethod, path: string, operationId: string, summary: string, schemas: { body: string | null; record: string | null }, status: Route["status"], errors: number[], published: string[], of?: string): Route => ({
    kind,
    method,
    path,
    serverPath: serverPath(path),
    operationId,
    summary,
    body: schemas.body,
    record: schemas.record,
    status,
    errors,
    events: published,
    ...(of === undefined ? {} : { of }),
  });
  const lookupWrite = sorted(COMMON_ERRORS, LOOKUP_ERRORS, WRITE_ERRORS);
  const reads = { body: null, record: symbols.type };
  const out: Route[] = [];
  if (operations.list) out.push(route("list", "get", paths.collection, `list${names.pluralPascal}`, `List ${names.pluralWords}`, reads, 200, sorted(COMMON_ERRORS), []));
  if (operations.create) out.push(route("create", "post", paths.collection, `create${names.pascal}`, `Create ${names.one}`, { body: symbols.createBody, record: symbols.type }, 201, sorted(COMMON_ERRORS, WRITE_ERRORS), [events.created]));
  if (operations.read) out.push(route("read", "get", paths.item, `get${names.pascal}`, `Get ${names.one}`, reads, 200, sorted(COMMON_ERRORS, LOOKUP_ERRORS), []));
  if (operations.replace) out.push(route("replace", "put", paths.item, `replace${names.pascal}`, `Replace ${names.one}`, { body: symbols.replaceBody, record: symbols.type }, 200, lookupWrite, [events.updated]));
  if (operations.update) out.push(route("update", "patch", paths.item, `update${names.pascal}`, `Update ${names.one}`, { body: symbols.updateBody, record: symbols.type }, 200, lookupWrite, [events.updated]));
  if (operations.delete) out.push(route("delete", "delete", paths.item, `delete${names.pascal}`, `Delete ${names.one}`, { body: null, record: null }, 204, lookupWrite, [events.deleted]));
  for (const under of [...(r.parent ? [r.parent] : []), ...r.listsUnder]) {
    out.push(route("list-under", "get", under.path, `list${under.names.pascal}${names.pluralPascal}`, `List the ${names.pluralWords} of ${under.names.one}`, reads, 200, sorted(COMMON_ERRORS, LOOKUP_ERRORS), [], under.collection));
  }
  for (const action of r.actions) {
    // An action that changes its record publishes the record's `.updated` event first (SPEC §12.5).
    const published = [...(action.rules.sets.length ? [events.updated] : []), action.events.created];
    const schemas = { body: action.symbols.createBody, record: action.response === 204 ? null : action.symbols.type };
    out.push(route("action", "post", action.path, `create${names.pascal}${action.names.pascal}`, `Create ${action.names.one} of ${names.one}`, schemas, action.response, lookupWrite, published, action.name));
  }
  return out;
}

/** The route of `kind` (and, for a list under a record or an action, `of`) of a resource; throws when it has none. */
export function routeOf(resource: { routes: readonly Route[]; collection: string }, kind: RouteKind, of?: string): Route {
  const found = resource.routes.find((route) => route.kind === kind && route.of === of);
  if (!found) throw new Error(`${resource.collection} has no ${kind}${of ? ` ${of}` : ""} route`);
  return found;
}
