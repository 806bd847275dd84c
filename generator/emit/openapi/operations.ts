import type { VersionAction, VersionResource, VersionSettings } from "../../model/types.ts";
import { orList } from "../shared/code.ts";
import { commonErrors, errorResponses, lookupErrors, writeErrors } from "./errors.ts";
import { ref, spaced, withArticle, type Json, type JsonObject } from "./json.ts";
import { jsonBody, jsonResponse, noContent, operationObject, type OperationParts, type PathOperation } from "./operation.ts";
import { idParameter, ifMatchParameter, listParameters } from "./parameters.ts";
import { actionSchemaNames, schemaNames } from "./schemas.ts";

/**
 * Every operation of one resource in one version: list and create on the collection; read,
 * update, replace and delete on the record; the list under its parent; one POST per action.
 * Only the operations the resource enables are listed.
 */
export function resourceOperations(version: VersionSettings, resource: VersionResource): PathOperation[] {
  const { names, operations, collection } = resource;
  const schemas = schemaNames(resource);
  const base = `/${version.name}/${collection}`;
  const item = `${base}/{id}`;
  const one = withArticle(names.singular);
  const id = idParameter(names.singular);
  const lookupWrite = [...commonErrors, ...lookupErrors, ...writeErrors];
  const record = (status: string, description: string, headers: string[] = []) =>
    jsonResponse(version, collection, status, description, ref("schemas", schemas.record), ["ETag", ...headers]);
  const at = (path: string, method: PathOperation["method"], operationId: string, summary: string, parts: OperationParts) => ({
    path,
    method,
    operation: operationObject(version, collection, operationId, summary, parts),
  });

  const out: PathOperation[] = [];
  if (operations.list) {
    out.push(
      at(base, "get", `list${names.pluralPascal}`, `List ${spaced(collection)}`, {
        description: listDescription(resource),
        parameters: listParameters(resource),
        responses: [listResponse(version, resource), ...errorResponses(commonErrors)],
      }),
    );
  }
  if (operations.create) {
    out.push(
      at(base, "post", `create${names.pascal}`, `Create ${one}`, {
        requestBody: jsonBody(schemas.create),
        responses: [record("201", "Created.", ["Location"]), ...errorResponses([...commonErrors, ...writeErrors])],
      }),
    );
  }
  if (operations.read) {
    out.push(
      at(item, "get", `get${names.pascal}`, `Get ${one}`, {
        parameters: [id],
        responses: [record("200", "The record."), ...errorResponses([...commonErrors, ...lookupErrors])],
      }),
    );
  }
  if (operations.replace) {
    out.push(
      at(item, "put", `replace${names.pascal}`, `Replace ${one}`, {
        description: "Replaces the record: the body is a whole record, as on create.",
        parameters: [id, ifMatchParameter],
        requestBody: jsonBody(schemas.replace),
        responses: [record("200", "The replaced record."), ...errorResponses(lookupWrite)],
      }),
    );
  }
  if (operations.update) {
    out.push(
      at(item, "patch", `update${names.pascal}`, `Update ${one}`, {
        description: "Changes the given fields; the others keep their values.",
        parameters: [id, ifMatchParameter],
        requestBody: jsonBody(schemas.update),
        responses: [record("200", "The updated record."), ...errorResponses(lookupWrite)],
      }),
    );
  }
  if (operations.delete) {
    out.push(
      at(item, "delete", `delete${names.pascal}`, `Delete ${one}`, {
        parameters: [id, ifMatchParameter],
        responses: [noContent(version, collection, "Deleted."), ...errorResponses(lookupWrite)],
      }),
    );
  }
  // The lists under one record: the parent's, then each `list_under` field's.
  for (const parent of [...(resource.parent ? [resource.parent] : []), ...resource.listsUnder]) {
    const summary = `List the ${spaced(collection)} of ${withArticle(parent.names.singular)}`;
    out.push(
      at(
        parent.path,
        "get",
        `list${parent.names.pascal}${names.pluralPascal}`,
        summary,
        {
          description: `The ${spaced(collection)} whose \`${parent.field.name}\` is this ${spaced(parent.names.singular)}. ${listDescription(resource)}`,
          parameters: [idParameter(parent.names.singular), ...listParameters(resource)],
          responses: [listResponse(version, resource), ...errorResponses([...commonErrors, ...lookupErrors])],
        },
      ),
    );
  }
  for (const action of resource.actions) {
    const actionSchemas = actionSchemaNames(resource, action);
    const success =
      action.response === 201
        ? jsonResponse(version, collection, "201", `The ${spaced(action.singular)}.`, ref("schemas", actionSchemas.record), [])
        : noContent(version, collection, "Done.");
    const summary = `Create ${withArticle(action.singular)} of ${one}`;
    const acting = actionRules(resource, action);
    const post = at(`${item}/${action.name}`, "post", `create${names.pascal}${action.names.pascal}`, summary, {
      description: [action.description, acting.note].filter(Boolean).join(" ") || undefined,
      parameters: [id],
      requestBody: jsonBody(actionSchemas.create),
      responses: [success, ...errorResponses(lookupWrite)],
    });
    Object.assign(post.operation, acting.extensions);
    out.push(post);
  }
  return out;
}

/**
 * What an action requires of its record and sets on it (SPEC §12.5), as a sentence of its
 * description and as `x-canon-requires` and `x-canon-sets` (fields by this version's names).
 */
function actionRules(resource: VersionResource, action: VersionAction): { note: string; extensions: JsonObject } {
  const { requires, sets } = action.rules;
  const extensions: JsonObject = {};
  const sentences: string[] = [];
  const one = resource.names.singular;
  if (requires.length) {
    extensions["x-canon-requires"] = Object.fromEntries(requires.map((r) => [r.field, r.values as Json[]]));
    const each = requires.map((r) => `${r.field} to be ${orList(r.values.map((v) => String(v)))}`);
    sentences.push(`Requires the ${spaced(one)}'s ${each.join(" and ")}; otherwise 422 and nothing is created.`);
  }
  if (sets.length) {
    const from = (name: string) => action.fields.find((f) => f.storageName === name)?.name ?? name;
    extensions["x-canon-sets"] = Object.fromEntries(
      sets.map((s) => [s.field, s.from === undefined ? (s.value as Json) : { from: from(s.from) }]),
    );
    const each = sets.map((s) => (s.from === undefined ? `${s.field} to ${String(s.value)}` : `${s.field} to the ${from(s.from)} given`));
    sentences.push(
      `Sets the ${spaced(one)}'s ${each.join(" and ")}, in the same transaction (its transitions checked; it gets a new ETag, and a ${one}.updated event precedes this action's).`,
    );
  }
  return { note: sentences.join(" "), extensions };
}

function listResponse(version: VersionSettings, resource: VersionResource): [string, JsonObject] {
  const names = schemaNames(resource);
  const schema =
    resource.pagination === "offset"
      ? { oneOf: [ref("schemas", names.offsetPage), ref("schemas", names.cursorPage)] }
      : ref("schemas", names.cursorPage);
  return jsonResponse(version, resource.collection, "200", "A page of records.", schema, []);
}

function listDescription(resource: VersionResource): string {
  const mode =
    resource.pagination === "offset"
      ? "Offset pages (`page`, `per_page`). A search (`q`) answers in cursor mode, paged with `limit` and `cursor`. A parameter of the other mode answers 400 naming it."
      : "Cursor pages in ascending id order: follow `next_cursor`.";
  if (!resource.search.length) return mode;
  const fields = resource.search.map((f) => `\`${f.name}\``).join(", ");
  return `${mode} \`q\` matches ${fields} (case-insensitive substring).`;
}
