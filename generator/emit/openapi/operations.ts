import type { Route, VersionAction, VersionResource, VersionSettings } from "../../model/types.ts";
import { orList } from "../shared/code.ts";
import { errorResponses } from "./errors.ts";
import { ref, type Json, type JsonObject } from "./json.ts";
import { jsonBody, jsonResponse, noContent, operationObject, type OperationParts, type PathOperation } from "./operation.ts";
import { idParameter, ifMatchParameter, listParameters } from "./parameters.ts";
import { schemaNames } from "./schemas.ts";

/**
 * Every operation of one resource in one version, one per route of the model's route record
 * (model/routes.ts: path, method, operation id, summary, body and record schemas, statuses):
 * list and create on the collection; read, replace, update and delete on the record; the lists
 * under a record; one POST per action. This file adds what only the document says: parameters,
 * descriptions, the page schemas of lists.
 */
export function resourceOperations(version: VersionSettings, resource: VersionResource): PathOperation[] {
  const { names, collection } = resource;
  const id = idParameter(names.words);
  // The record an answer holds, and a request's body: the route's schemas.
  const record = (route: Route, status: string, description: string, headers: string[] = []) =>
    jsonResponse(version, collection, status, description, ref("schemas", route.record!), ["ETag", ...headers]);
  const body = (route: Route) => jsonBody(route.body!);
  const unders = [...(resource.parent ? [resource.parent] : []), ...resource.listsUnder];
  return resource.routes.map((route): PathOperation => {
    const at = (parts: OperationParts): PathOperation => ({
      path: route.path,
      method: route.method,
      operation: operationObject(version, collection, route.operationId, route.summary, {
        ...parts,
        responses: [...parts.responses, ...errorResponses(route.errors)],
      }),
    });
    switch (route.kind) {
      case "list":
        return at({ description: listDescription(resource), parameters: listParameters(resource), responses: [listResponse(version, resource)] });
      case "create":
        return at({ requestBody: body(route), responses: [record(route, "201", "Created.", ["Location"])] });
      case "read":
        return at({ parameters: [id], responses: [record(route, "200", "The record.")] });
      case "replace":
        return at({
          description: "Replaces the record: the body is a whole record, as on create. A field left out takes its default, a change like any other (a transition may refuse it: 422); read-only fields keep their values.",
          parameters: [id, ifMatchParameter],
          requestBody: body(route),
          responses: [record(route, "200", "The replaced record.")],
        });
      case "update":
        return at({
          description: "Changes the given fields; the others keep their values.",
          parameters: [id, ifMatchParameter],
          requestBody: body(route),
          responses: [record(route, "200", "The updated record.")],
        });
      case "delete":
        return at({ parameters: [id, ifMatchParameter], responses: [noContent(version, collection, "Deleted.")] });
      case "list-under": {
        const under = unders.find((u) => u.collection === route.of)!;
        const list = at({
          description: `The ${names.pluralWords} whose \`${under.field.name}\` is this ${under.names.words}. ${listDescription(resource)}`,
          parameters: [idParameter(under.names.words), ...listParameters(resource)],
          responses: [listResponse(version, resource)],
        });
        // The field the list goes by, for the gate (compat/operations.ts): another field's list at the same path is a break.
        list.operation["x-canon-list-under"] = under.field.name;
        return list;
      }
      case "action": {
        const action = resource.actions.find((a) => a.name === route.of)!;
        const success =
          route.record !== null
            ? jsonResponse(version, collection, String(route.status), `The ${action.names.words}.`, ref("schemas", route.record), [])
            : noContent(version, collection, "Done.");
        const acting = actionRules(resource, action);
        const post = at({
          description: [action.description, acting.note].filter(Boolean).join(" ") || undefined,
          // If-Match names the revision of the record acted on (runtime/hooks.ts actionContext).
          parameters: [id, ifMatchParameter],
          requestBody: body(route),
          responses: [success],
        });
        Object.assign(post.operation, acting.extensions);
        return post;
      }
    }
  });
}

/**
 * What an action requires of its record and sets on it (SPEC §12.5), as a sentence of its
 * description and as `x-canon-requires` and `x-canon-sets` (fields by this version's names).
 */
function actionRules(resource: VersionResource, action: VersionAction): { note: string; extensions: JsonObject } {
  const { requires, sets } = action.rules;
  const extensions: JsonObject = {};
  const sentences: string[] = [];
  const { words } = resource.names;
  if (requires.length) {
    extensions["x-canon-requires"] = Object.fromEntries(requires.map((r) => [r.field, r.values as Json[]]));
    const each = requires.map((r) => `${r.field} to be ${orList(r.values.map((v) => String(v)))}`);
    sentences.push(`Requires the ${words}'s ${each.join(" and ")}; otherwise 422 and nothing is created.`);
  }
  if (sets.length) {
    const from = (name: string) => action.fields.find((f) => f.storageName === name)?.name ?? name;
    extensions["x-canon-sets"] = Object.fromEntries(
      sets.map((s) => [s.field, s.from === undefined ? (s.value as Json) : { from: from(s.from) }]),
    );
    const each = sets.map((s) => (s.from === undefined ? `${s.field} to ${String(s.value)}` : `${s.field} to the ${from(s.from)} given`));
    sentences.push(
      `Sets the ${words}'s ${each.join(" and ")}, in the same transaction (its transitions checked; it gets a new ETag, and a ${resource.events.updated} event precedes this action's).`,
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
      : resource.sort.length
        ? "Cursor pages in the order of `sort` (ascending id without one): follow `next_cursor`."
        : "Cursor pages in ascending id order: follow `next_cursor`.";
  if (!resource.search.length) return mode;
  const fields = resource.search.map((f) => `\`${f.name}\``).join(", ");
  return `${mode} \`q\` matches ${fields} (case-insensitive substring).`;
}
