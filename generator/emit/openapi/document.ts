import { digested, knowDigested, type Digested } from "../../compat/parts.ts";
import { compareText } from "../../diagnostics/diagnostic.ts";
import { GENERATED_MARK } from "../../util/generated.ts";
import { defineUnit } from "../../engine.ts";
import type { EmitContext } from "../emitter.ts";
import type { ApiModel, StorageResource, VersionModel, VersionResource, VersionSettings } from "../../model/types.ts";
import { errorResponseComponents, errorSchema } from "./errors.ts";
import { eventOperations, eventSchemas, eventsTagObject } from "./events.ts";
import { exportHeaderComponents, exportOperations, exportSchemas, exportsTagObject } from "./exports.ts";
import { headerComponents } from "./headers.ts";
import { healthOperations, healthSchemas, healthTagObject } from "./health.ts";
import { ref, sortedObject, type Json, type JsonObject } from "./json.ts";
import type { PathOperation } from "./operation.ts";
import { resourceOperations } from "./operations.ts";
import { canonName, CANON_OPERATIONS, ERROR_SCHEMA, openapiNames, withRenamedRefs } from "./names.ts";
import { idempotencyKeyParameter, parameterComponents } from "./parameters.ts";
import { resourceSchemas } from "./schemas.ts";

export const generatedNotice = `${GENERATED_MARK}: change the definitions and run canon generate.`;

const methodOrder = ["get", "put", "post", "patch", "delete"];

/** The OpenAPI 3.1 document of one version: every operation the service answers in it. */
export function openapiDocument(model: ApiModel, version: VersionModel, context?: Pick<EmitContext, "unit">): JsonObject {
  const settings = settingsOf(version);
  const storage = new Map(model.storage.map((s) => [s.collection, s]));
  const parts = version.resources.map((resource) => {
    const slice = { settings, resource, storage: storage.get(resource.collection) ?? null };
    const built = context ? context.unit(resourceParts, slice) : resourceParts.compute(slice, undefined);
    // The comparisons of the run (CHANGES.md, the gate) find each part's digest known.
    built.operations.forEach((o, i) => knowDigested(o.operation, built.digests.operations[i]!));
    built.schemas.forEach(([, schema], i) => knowDigested(schema, built.digests.schemas[i]!));
    return built;
  });
  const userOperations: PathOperation[] = parts.flatMap((p) => p.operations);
  const userSchemas = parts.flatMap((p) => p.schemas);
  const tags: JsonObject[] = version.resources.map((r) => {
    const tag: JsonObject = { name: r.collection };
    if (r.description) tag.description = r.description;
    return tag;
  });
  // canon's own operations and schemas, under their usual names until `names` settles them.
  const canonOperations: PathOperation[] = [];
  const canonSchemas: Array<[string, Json]> = [[ERROR_SCHEMA, errorSchema()]];
  if (version.events) {
    canonOperations.push(...eventOperations(version));
    canonSchemas.push(...eventSchemas());
    tags.push(eventsTagObject());
  }
  canonOperations.push(...healthOperations(version));
  canonSchemas.push(...healthSchemas());
  tags.push(healthTagObject());
  const headers = headerComponents(version);
  if (version.exports) {
    canonOperations.push(...exportOperations(version, version.exports).map(idempotentPost));
    // The bodies of each collection's export (`OrderExportCreate`) are the user's names.
    const exportParts = exportSchemas(version.exports, version.searchMinLength);
    const own = new Set(CANON_OPERATIONS.flatMap((o) => [o.response, o.body]));
    canonSchemas.push(...exportParts.filter(([name]) => own.has(name)));
    userSchemas.push(...exportParts.filter(([name]) => !own.has(name)));
    tags.push(exportsTagObject());
    for (const [name, value] of exportHeaderComponents(version)) headers[name] = value;
  }
  // Two components or operations never share a name (names.ts): canon's yield (`ApiError`), or,
  // where the published document gave canon's the name, the user's (`ErrorRecord`).
  const names = openapiNames(
    version,
    canonSchemas.map(([name]) => name),
    canonOperations.map((o) => String(o.operation.operationId)),
    new Set(userSchemas.map(([name]) => name)),
    new Set(userOperations.map((o) => String(o.operation.operationId))),
  );
  // canon's schemas name canon's (renamed as `names.canon` says) and the exports' bodies (the user's).
  const canonRefs = new Map([...[...names.userSchemas].filter(([name]) => !canonSchemas.some(([own]) => own === name)), ...names.canon]);
  const renamedOperation = (o: PathOperation, refs: ReadonlyMap<string, string>, ids: (id: string) => string): PathOperation => {
    const id = String(o.operation.operationId);
    if (refs.size === 0 && ids(id) === id) return o;
    return { ...o, operation: { ...withRenamedRefs(o.operation, refs), operationId: ids(id) } };
  };
  const operations: PathOperation[] = [
    ...userOperations.map((o) => renamedOperation(o, names.userSchemas, (id) => names.userOperations.get(id) ?? id)),
    ...canonOperations.map((o) => renamedOperation(o, canonRefs, (id) => canonName(names, id))),
  ];
  const schemas: Array<[string, Json]> = [
    ...userSchemas.map(([name, schema]): [string, Json] => [names.userSchemas.get(name) ?? name, withRenamedRefs(schema, names.userSchemas)]),
    ...canonSchemas.map(([name, schema]): [string, Json] => [canonName(names, name), withRenamedRefs(schema, canonRefs)]),
  ];
  return {
    "x-generated": generatedNotice,
    openapi: "3.1.0",
    info: {
      title: version.title,
      version: version.name,
      description: infoDescription(model, version),
      // The gate reads it: a draft's document is no contract yet, and a published one never becomes a draft again.
      ...(version.draft ? { "x-canon-draft": true } : {}),
      // The gate reads it: this document's schemas name the collection each id must reference
      // (`x-canon-references`), so an id schema without one is free; a document written before
      // canon named them does not say so, and its ids are not compared.
      "x-canon-references": true,
      // The gate reads it: this document's `x-canon-unique` lists fields unique on their own too
      // (lists of one); in a document written before, those are not compared.
      "x-canon-unique-fields": true,
      // The gate reads it: this document's records (not only its write bodies) name their tenant
      // field (`x-canon-tenant`); in a document written before, records are not compared for it.
      "x-canon-tenant-records": true,
    },
    servers: [{ url: version.baseUrl }],
    security: [{ bearerAuth: [] }],
    tags: tags.sort((a, b) => compareText(String(a.name), String(b.name))),
    paths: pathItems(operations),
    components: {
      headers: sortedObject(Object.entries(headers)),
      parameters: parameterComponents(version.searchMinLength),
      responses: errorResponseComponents(version, canonName(names, ERROR_SCHEMA)),
      schemas: sortedObject(schemas),
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
    },
  };
}

/**
 * A POST (create, action, export) with the optional `Idempotency-Key` header (SPEC §12.7), and
 * `Idempotent-Replayed` on its success response; a copy: built parts are shared and never modified.
 */
function idempotentPost(o: PathOperation): PathOperation {
  if (o.method !== "post") return o;
  const responses: JsonObject = {};
  for (const [status, response] of Object.entries(o.operation.responses as JsonObject)) {
    const r = response as JsonObject;
    responses[status] = status.startsWith("2") ? { ...r, headers: { ...(r.headers as JsonObject), "Idempotent-Replayed": ref("headers", "Idempotent-Replayed") } } : r;
  }
  const parameters = [...((o.operation.parameters as Json[] | undefined) ?? []), idempotencyKeyParameter];
  // The keys in operationObject's order: parameters before the request body.
  const operation: JsonObject = {};
  for (const [key, value] of Object.entries(o.operation)) {
    if (key === "requestBody" || key === "responses") operation.parameters = parameters;
    operation[key] = key === "parameters" ? parameters : key === "responses" ? responses : value;
  }
  return { ...o, operation };
}

/** What one resource adds to its version's document. */
interface ResourceParts {
  operations: PathOperation[];
  schemas: Array<[string, Json]>;
  /**
   * The digest and references of each operation and schema (compat/parts.ts), computed with
   * them: what the comparisons of a document read, so that a run that recalls the parts of an
   * unchanged resource does not read them again.
   */
  digests: { operations: Digested[]; schemas: Digested[] };
}

/** The operations and schemas of one resource: a function of the version's settings, the resource and its storage alone. */
const resourceParts = defineUnit(
  "openapi resource parts",
  ({ settings, resource, storage }: { settings: VersionSettings; resource: VersionResource; storage: StorageResource | null }): ResourceParts => {
    const operations = resourceOperations(settings, resource).map(idempotentPost);
    const schemas = resourceSchemas(resource, storage ?? undefined);
    return { operations, schemas, digests: { operations: operations.map((o) => digested(o.operation)), schemas: schemas.map(([, schema]) => digested(schema)) } };
  },
);

/** The version's settings: everything but its resources and exports. */
function settingsOf(version: VersionModel): VersionSettings {
  const { resources: _resources, exports: _exports, publishedNames: _published, ...settings } = version;
  return settings;
}

/** Operations grouped by path, paths sorted, methods in a fixed order. */
function pathItems(operations: PathOperation[]): JsonObject {
  const byPath = new Map<string, PathOperation[]>();
  for (const o of operations) byPath.set(o.path, [...(byPath.get(o.path) ?? []), o]);
  return sortedObject(
    [...byPath].map(([path, list]): [string, Json] => [
      path,
      Object.fromEntries(
        [...list]
          .sort((a, b) => methodOrder.indexOf(a.method) - methodOrder.indexOf(b.method))
          .map((o) => [o.method, o.operation]),
      ),
    ]),
  );
}

function infoDescription(model: ApiModel, version: VersionModel): string {
  const parts = [model.description ?? ""];
  if (version.draft) {
    parts.push(`**Draft**: ${version.name} is not published yet and may still change in any way.`);
  }
  const d = version.deprecation;
  if (d) {
    parts.push(
      `**Deprecated** since ${d.deprecated}; sunset on ${d.sunset}. Use ${d.successor}. Every response of this version carries \`Deprecation\`, \`Sunset\` and \`Link\` headers.`,
    );
  }
  parts.push(
    `Request bodies are JSON (\`application/json\`) of at most ${model.bodyLimit} bytes. Every identifier is a UUID v7. Lists return at most 100 records per page (20 by default).`,
  );
  if (model.rateLimit) {
    parts.push(
      `Rate limit: ${model.rateLimit.requests} requests per ${model.rateLimit.perSeconds} seconds per principal (per client address without credentials); over it, 429 with \`Retry-After\`.`,
    );
  }
  parts.push(`Errors are \`{ "error": { "code", "message", "details"? } }\`.`);
  return parts.filter(Boolean).join("\n\n");
}
