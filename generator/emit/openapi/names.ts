import type { VersionModel } from "../../model/types.ts";
import { ERROR_STATUSES } from "../../../runtime/errors.ts";
import type { Json, JsonObject } from "./json.ts";

/**
 * The names canon gives its own parts of a version's document (the error envelope, health,
 * readiness, the event feed, exports), which a user's names can meet: a collection `healths` has
 * a record `Health` and an operation `getHealth`, as `GET /vN/health` does; `singular: event`
 * makes `Event` and `getEvent`. Two components or operations never share a name; which one keeps
 * it:
 *
 * - a name the version's published document gave one of canon's parts stays that part's
 *   (`VersionModel.publishedNames`, read from the output folder): adding a collection `errors`
 *   to a published version leaves its envelope `Error`, and the new collection's record schema
 *   is `ErrorRecord` there, so that nothing a client generated from the published document names
 *   changes meaning;
 * - otherwise the user's name wins and canon's part yields: `ApiError`, `ApiHealth`,
 *   `getApiHealth` (numbered on when that is taken too).
 */

/** One of canon's operations: its path under the version, method, operation id and the schemas it names. */
interface CanonOperation {
  path: string;
  method: string;
  operationId: string;
  /** The schema of its success response, and of its request body. */
  response?: string;
  body?: string;
}

/** Every operation canon adds beside the resources' (health.ts, events.ts, exports.ts), and the schemas it answers with. */
export const CANON_OPERATIONS: readonly CanonOperation[] = [
  { path: "health", method: "get", operationId: "getHealth", response: "Health" },
  { path: "ready", method: "get", operationId: "getReadiness", response: "Readiness" },
  { path: "events", method: "get", operationId: "listEvents", response: "EventCursorPage" },
  { path: "events/{id}", method: "get", operationId: "getEvent", response: "Event" },
  { path: "exports", method: "post", operationId: "createExport", response: "Export", body: "ExportCreate" },
  { path: "exports", method: "get", operationId: "listExports", response: "ExportCursorPage" },
  { path: "exports/{id}", method: "get", operationId: "getExport", response: "Export" },
  { path: "exports/{id}/files/{token}", method: "get", operationId: "getExportFile" },
];

/** The error envelope's schema (errors.ts), which every error response names. */
export const ERROR_SCHEMA = "Error";

/** The names canon gives its own parts here, and the user's names that yield to a published one of them; only those renamed. */
export interface OpenApiNames {
  /** canon's schema or operation id → its name in this document (`Error` → `ApiError`). */
  canon: ReadonlyMap<string, string>;
  /** the user's schema → its name in this document (`Error` → `ErrorRecord`). */
  userSchemas: ReadonlyMap<string, string>;
  /** the user's operation id → its id in this document (`getHealth` → `getHealthRecord`). */
  userOperations: ReadonlyMap<string, string>;
}

/**
 * The names of this document. `canonSchemas` and `canonOperations`: canon's own in this version
 * (the feed's only with events, the exports' only with exports); `userSchemas`, `userOperations`:
 * the resources'.
 */
export function openapiNames(
  version: Pick<VersionModel, "publishedNames">,
  canonSchemas: readonly string[],
  canonOperations: readonly string[],
  userSchemas: ReadonlySet<string>,
  userOperations: ReadonlySet<string>,
): OpenApiNames {
  const published = version.publishedNames ?? {};
  const canon = new Map<string, string>();
  const yielded = { schemas: new Map<string, string>(), operations: new Map<string, string>() };
  const settle = (own: readonly string[], user: ReadonlySet<string>, renamed: Map<string, string>, apiForm: (name: string) => string) => {
    const taken = new Set([...user, ...own]);
    const chosen = new Map<string, string>();
    // First the names a published document gave: they stay where they were.
    for (const name of own) {
      const kept = published[name];
      if (kept !== undefined) chosen.set(name, kept);
    }
    for (const name of own) {
      if (chosen.has(name)) continue;
      if (!user.has(name) && ![...chosen.values()].includes(name)) {
        chosen.set(name, name);
        continue;
      }
      const stem = apiForm(name);
      let alias = stem;
      for (let n = 2; taken.has(alias) || [...chosen.values()].includes(alias); n++) alias = `${stem}${n}`;
      taken.add(alias);
      chosen.set(name, alias);
    }
    const canonNames = new Set(chosen.values());
    for (const [name, alias] of chosen) if (alias !== name) canon.set(name, alias);
    // The user's names that a published name of canon's holds yield: `Error` → `ErrorRecord`.
    for (const name of [...user].sort()) {
      if (!canonNames.has(name)) continue;
      let alias = `${name}Record`;
      for (let n = 2; taken.has(alias) || canonNames.has(alias); n++) alias = `${name}Record${n}`;
      taken.add(alias);
      renamed.set(name, alias);
    }
  };
  settle(canonSchemas, userSchemas, yielded.schemas, (name) => `Api${name}`);
  // `getHealth` → `getApiHealth`: the verb, then `Api`.
  settle(canonOperations, userOperations, yielded.operations, (id) => id.replace(/^[a-z]+/, (verb) => `${verb}Api`));
  return { canon, userSchemas: yielded.schemas, userOperations: yielded.operations };
}

/** `name` as this document writes canon's part of that name. */
export function canonName(names: OpenApiNames, name: string): string {
  return names.canon.get(name) ?? name;
}

/** `json` with every `$ref` to a schema in `renamed` pointing at its new name; itself when none is renamed. */
export function withRenamedRefs<T extends Json>(json: T, renamed: ReadonlyMap<string, string>): T {
  if (renamed.size === 0) return json;
  const walk = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== "object") return value;
    const out: JsonObject = {};
    for (const [key, v] of Object.entries(value)) {
      const target = key === "$ref" && typeof v === "string" && v.startsWith(SCHEMA_REF) ? renamed.get(v.slice(SCHEMA_REF.length)) : undefined;
      out[key] = target !== undefined ? `${SCHEMA_REF}${target}` : walk(v);
    }
    return out;
  };
  return walk(json) as T;
}

const SCHEMA_REF = "#/components/schemas/";

/**
 * The names a published document gave canon's parts (`VersionModel.publishedNames`): each of
 * canon's operations' id and the schemas it names, and the error envelope's. A draft's document
 * is no contract: none.
 */
export function publishedNamesOf(document: JsonObject, version: string): Record<string, string> {
  const info = document.info as JsonObject | undefined;
  if (info?.["x-canon-draft"] === true) return {};
  const out: Record<string, string> = {};
  const refName = (schema: Json | undefined): string | undefined => {
    const target = (schema as JsonObject | undefined)?.$ref;
    return typeof target === "string" && target.startsWith(SCHEMA_REF) ? target.slice(SCHEMA_REF.length) : undefined;
  };
  const jsonOf = (holder: Json | undefined) => ((holder as JsonObject | undefined)?.content as JsonObject | undefined)?.["application/json"] as JsonObject | undefined;
  const responses = (document.components as JsonObject | undefined)?.responses as JsonObject | undefined;
  const envelope = refName(jsonOf(responses?.[ERROR_STATUSES[0]!.response])?.schema);
  if (envelope !== undefined) out[ERROR_SCHEMA] = envelope;
  const paths = (document.paths ?? {}) as JsonObject;
  for (const o of CANON_OPERATIONS) {
    const operation = (paths[`/${version}/${o.path}`] as JsonObject | undefined)?.[o.method] as JsonObject | undefined;
    if (!operation) continue;
    if (typeof operation.operationId === "string") out[o.operationId] = operation.operationId;
    if (o.response) {
      const success = Object.entries((operation.responses ?? {}) as JsonObject).find(([status]) => status.startsWith("2"));
      const name = refName(jsonOf(success?.[1])?.schema);
      if (name !== undefined) out[o.response] = name;
    }
    if (o.body) {
      const name = refName(jsonOf(operation.requestBody)?.schema);
      if (name !== undefined) out[o.body] = name;
    }
  }
  return out;
}
