import type { StorageResource, VersionAction, VersionField, VersionResource } from "../../model/types.ts";
import { fieldSchema, objectSchema } from "./fieldSchema.ts";
import { ref, type Json, type JsonObject } from "./json.ts";

/**
 * Component schema names of one resource; the paths refer to them by these names. The record and
 * the bodies are named as their TypeScript types (`resource.symbols`), as the route record names them.
 */
export function schemaNames(resource: VersionResource) {
  const p = resource.names.pascal;
  return {
    record: resource.symbols.type,
    create: resource.symbols.createBody,
    update: resource.symbols.updateBody,
    replace: resource.symbols.replaceBody,
    cursorPage: `${p}CursorPage`,
    offsetPage: `${p}OffsetPage`,
  };
}

export function actionSchemaNames(action: VersionAction) {
  return { record: action.symbols.type, create: action.symbols.createBody };
}

export const idSchema: JsonObject = { type: "string", format: "uuid", description: "UUID v7, assigned by the server." };
const timestamp: JsonObject = { type: "string", format: "date-time" };

/** Does the resource answer a list: its own, or one under its parent? */
export function isListed(resource: VersionResource): boolean {
  return resource.operations.list || resource.parent !== null || resource.listsUnder.length > 0;
}

/**
 * Every component schema of one resource, by name. `storage` says which values every stored
 * record has: a record written through another version may lack a field this one requires.
 */
export function resourceSchemas(resource: VersionResource, storage: StorageResource | undefined): Array<[string, Json]> {
  const names = schemaNames(resource);
  const out: Array<[string, Json]> = [[names.record, recordSchema(resource, storage)]];
  const { operations } = resource;
  if (operations.create) out.push([names.create, withUnique(resource, objectSchema(resource.fields, "create"))]);
  if (operations.update) out.push([names.update, withUnique(resource, objectSchema(resource.fields, "patch"))]);
  if (operations.replace) out.push([names.replace, withUnique(resource, objectSchema(resource.fields, "create"))]);
  if (isListed(resource)) {
    out.push([names.cursorPage, cursorPageSchema(names.record, resource.sort.length > 0)]);
    if (resource.pagination === "offset") out.push([names.offsetPage, offsetPageSchema(names.record)]);
  }
  for (const action of resource.actions) {
    const actionNames = actionSchemaNames(action);
    if (action.response === 201) out.push([actionNames.record, actionRecordSchema(action)]);
    out.push([actionNames.create, objectSchema(action.fields, "create")]);
  }
  return out;
}

/**
 * A write body's schema with the resource's unique constraints as `x-canon-unique`: the lists of
 * fields (this version's names) no two records may share, a field unique on its own as a list of
 * one, then the composite ones (SPEC §12.3); a write that would answers 409. The breaking-change
 * gate reads it (adding a list is breaking; the document says it lists single fields too with
 * `info.x-canon-unique-fields`).
 */
function withUnique(resource: VersionResource, schema: JsonObject): JsonObject {
  // A tenant-scoped resource (SPEC §12.4) names its tenant field as `x-canon-tenant`: the gate
  // reads it (making a resource tenant-scoped is breaking).
  const tenant: JsonObject = resource.tenantKey && resource.tenantKey !== "id" ? { "x-canon-tenant": resource.tenantKey } : {};
  const lists = [...resource.uniqueFields.map((name) => [name]), ...resource.uniqueTogether.map((list) => [...list])];
  if (!lists.length) return { ...schema, ...tenant };
  return { ...schema, "x-canon-unique": lists, ...tenant };
}

/**
 * The record as the service returns it: id, the returned fields, then the timestamps. A field
 * is required when it is not optional and every stored record has it.
 */
function recordSchema(resource: VersionResource, storage: StorageResource | undefined): JsonObject {
  const fields = resource.fields.filter((f) => f.output);
  const stored = new Map(storage?.fields.map((f) => [f.name, f]));
  const always = (f: VersionField) => !f.optional && stored.get(f.storageName)?.optional !== true;
  const record = closedObject(
    [
      ["id", idSchema],
      ...fields.map((f): [string, Json] => [f.name, fieldSchema(f, "output")]),
      ["created_at", timestamp],
      ["updated_at", timestamp],
    ],
    ["id", ...fields.filter(always).map((f) => f.name), "created_at", "updated_at"],
    resource.description,
  );
  // The record names its tenant field too (SPEC §12.4), as the write bodies do: a resource with no
  // write body (`operations: [list, read]`) made tenant-scoped changes what every tenant's
  // principal reads, and the gate sees it here (`info.x-canon-tenant-records`).
  return resource.tenantKey && resource.tenantKey !== "id" ? { ...record, "x-canon-tenant": resource.tenantKey } : record;
}

/** The record an action creates: its own id, the target's id, the action's fields, created_at. */
function actionRecordSchema(action: VersionAction): JsonObject {
  const fields = action.fields.filter((f) => f.output);
  return closedObject(
    [
      ["id", idSchema],
      [action.targetField, { type: "string", format: "uuid" }],
      ...fields.map((f): [string, Json] => [f.name, fieldSchema(f, "output")]),
      ["created_at", timestamp],
    ],
    ["id", action.targetField, ...fields.filter((f) => !f.optional).map((f) => f.name), "created_at"],
    action.description,
  );
}

/** A cursor page of `record`s; `sorted`: the list takes `sort` (SPEC §12.1), which orders its pages. */
export function cursorPageSchema(record: string, sorted = false): JsonObject {
  return closedObject(
    [
      ["data", pageData(record)],
      [
        "pagination",
        closedObject(
          [
            [
              "next_cursor",
              { type: ["string", "null"], description: "Pass as `cursor` for the next page; null when there is none." },
            ],
            ["has_more", { type: "boolean" }],
          ],
          ["next_cursor", "has_more"],
        ),
      ],
    ],
    ["data", "pagination"],
    sorted ? "A page in cursor mode, in the order of `sort` (ascending id without one)." : "A page in cursor mode, in ascending id order.",
  );
}

function offsetPageSchema(record: string): JsonObject {
  const count = (minimum: number): JsonObject => ({ type: "integer", minimum });
  return closedObject(
    [
      ["data", pageData(record)],
      [
        "pagination",
        closedObject(
          [
            ["page", count(1)],
            ["per_page", { type: "integer", minimum: 1, maximum: 100 }],
            ["total", count(0)],
            ["total_pages", count(0)],
          ],
          ["page", "per_page", "total", "total_pages"],
        ),
      ],
    ],
    ["data", "pagination"],
    "A page in offset mode.",
  );
}

function pageData(record: string): JsonObject {
  return { type: "array", items: ref("schemas", record), maxItems: 100 };
}

export function closedObject(properties: Array<[string, Json]>, required: string[], description?: string): JsonObject {
  const schema: JsonObject = { type: "object" };
  if (description) schema.description = description;
  schema.properties = Object.fromEntries(properties);
  schema.required = required;
  schema.additionalProperties = false;
  return schema;
}
