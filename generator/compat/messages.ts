import { namesNoField } from "./schema.ts";
import { filterFieldOf } from "./paths.ts";
import type { Change } from "./types.ts";

/** The words of a breaking-change diagnostic: what broke, where, and how to make the change instead. */

/** `response`, `request body`, `query parameter "status"`, or "" for the operation itself. */
export function partLabel(change: Change): string {
  const part = change.part;
  switch (part.in) {
    case "request":
      return "request body";
    case "response":
      return `response ${part.status}`;
    case "parameter":
      return `${part.location} parameter "${part.name}"`;
    default:
      return "";
  }
}

/** `getOrder, listOrders and 3 more` */
export function operationList(ids: string[]): string {
  const unique = [...new Set(ids)];
  const shown = unique.slice(0, 4);
  const more = unique.length - shown.length;
  if (more > 0) return `${shown.join(", ")} and ${more} more`;
  return shown.length > 1 ? `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}` : (shown[0] ?? "");
}

/** `v1`, `v1 and v2` */
export function versionList(versions: string[]): string {
  return versions.length > 1
    ? `${versions.slice(0, -1).join(", ")} and ${versions.at(-1)}`
    : (versions[0] ?? "");
}

/** A change together with the published version it breaks. */
export interface VersionedChange {
  version: string;
  change: Change;
}

/**
 * The diagnostic message of one break (one kind of change at one definition line), in every
 * published version and operation it reaches: `v1 is published and this breaks its clients:
 * field "due_cents" was renamed "amount_due_cents" [field-renamed], in createOrder (request body); getOrder (response)`.
 */
export function breakMessage(group: VersionedChange[], exportFilter = false): string {
  const versions = [...new Set(group.map((g) => g.version))];
  const changes = group.map((g) => g.change);
  const first = representative(changes);
  const named = first.schema?.field && !namesNoField(first.schema.field);
  const subject = named
    ? `${exportFilter ? "export filter" : "field"} "${first.schema!.field}"`
    : first.subject;
  const places = new Map<string, string[]>();
  // A filter's operators (`price[gte]`) are said with the filter: `query parameters "price", "price[gte]"`.
  const operators = new Map<string, Set<string>>();
  for (const c of changes) {
    const part = c.part;
    const label = part.in === "response" ? "response" : part.in === "parameter" ? `${part.location} parameter "${filterFieldOf(part.name)}"` : partLabel(c);
    if (part.in === "parameter") operators.set(label, (operators.get(label) ?? new Set()).add(part.name));
    places.set(label, [...(places.get(label) ?? []), c.operation?.operationId ?? ""].filter(Boolean));
  }
  const said = (label: string) => {
    const names = [...(operators.get(label) ?? [])];
    if (names.length < 2) return names.length === 1 ? label.replace(/"[^"]*"$/, `"${names[0]}"`) : label;
    return label.replace(/parameter "[^"]*"$/, `parameters ${names.map((n) => `"${n}"`).join(", ")}`);
  };
  const where = [...places]
    .map(([label, ids]) => `${operationList(ids)}${label ? ` (${said(label)})` : ""}`)
    .filter(Boolean)
    .join("; ");
  const who =
    versions.length > 1
      ? `${versionList(versions)} are published and this breaks their clients`
      : `${versions[0]} is published and this breaks its clients`;
  return `${who}: ${subject} ${first.detail} [${first.kind}]${where ? `, in ${where}` : ""}`;
}

/** The change of a group that names the field best: through a component, with the shortest path. */
export function representative(group: Change[]): Change {
  // A sort key is said as the list's `sort` parameter says it, before an export's body.
  const score = (c: Change) => (c.sortKey !== undefined && c.part.in === "parameter" ? -1 : c.schema?.field ? c.schema.field.length : 10_000 + c.field.length);
  return group.reduce((a, b) => (score(b) < score(a) ? b : a));
}

/** Where a field that cannot be versioned itself is versioned (locate.ts, versionedOwner). */
export type FieldOwner = { action: string } | { top: string; field: string } | { export: string };

/** The kinds whose fix is about a field of a body or record (not a list's, an action's or the resource's own keys). */
const FIELD_KINDS = new Set<Change["kind"]>(["field-removed", "field-renamed", "field-optional", "field-required", "type-changed", "format-changed", "limit-tightened", "nullable-changed", "enum-value-removed", "enum-value-added", "references-added", "references-changed", "on-delete-changed", "transitions-added", "transitions-narrowed", "schema-changed", "closed-object"]);

/**
 * How to make the change without breaking `version`: keep it as it was, and make the change
 * in a new version `next` with added / removed / renamed.
 */
export function breakFix(
  version: string,
  next: string,
  change: Change,
  nextIsDraft: boolean | "listed" = false,
  exportFilter = false,
  listUnder?: string,
  owner?: FieldOwner,
): string {
  // "listed": api.yaml lists `next` already, and it is not published yet (this run writes it first).
  const add = nextIsDraft === "listed" ? `make the change in ${next} (listed in api.yaml, not published yet)` : nextIsDraft ? `make the change in the draft ${next}` : `add ${next} to versions in api.yaml`;
  // A filter's operator (`total_cents[gt]` of an export's filters) is its field's: the fix names the field.
  const name = filterFieldOf((change.schema?.field || change.field).split(".").pop()!.replace(/\[\]$/, ""));
  const renamedTo = change.renamedTo?.split(".").pop();
  const newName = renamedTo === undefined ? undefined : filterFieldOf(renamedTo);
  // An export's filters are the list's: what keeps a filter keeps them (`parameter-removed`).
  if (exportFilter && change.kind === "field-removed")
    return `keep the filter "${name}" in ${version}: put it back in filters (exports take the list's filters); to drop it, ${add} and move the resource to a successor (a resource of another name: two cannot share one) marked \`added: ${next}\``;
  if (change.kind === "enum-value-removed" && change.sortKey !== undefined)
    return `keep the sort keys of ${version}: put the field back in sort (sort applies to every version of a resource); to drop it, ${add} and move the resource to a successor (a resource of another name: two cannot share one) marked \`added: ${next}\``;
  if (listUnder && (change.kind === "path-removed" || change.kind === "operation-removed" || change.kind === "list-under-changed"))
    return `keep the list under "${listUnder}" in ${version}: put \`list_under: true\` back on "${listUnder}"${change.kind === "list-under-changed" ? " and take it off the field that has it now (one list under each referenced collection)" : ""} (a list_under path holds every version in which the field is shown); to drop it, ${add}, mark the field \`removed: ${next}\` and add it again under a new name with \`added: ${next}\`, without list_under`;
  // An action's field and a field inside an object or a map take no `added`, `removed` or
  // `renamed` (version-ref): the fix versions what holds them.
  // A resource's export (SPEC §8): its formats and the export itself hold every version from its first.
  if (owner && "export" in owner) {
    if (change.kind === "schema-changed")
      return `keep the export of "${owner.export}" in ${version}: put \`export\` back on the resource (an export holds every version from its first, \`export: { added }\`); to drop it, ${add} and move the resource to a successor (a resource of another name: two cannot share one) marked \`added: ${next}\``;
    if (name === "format")
      return `keep the formats of the export of "${owner.export}" in ${version}: put the format back in its \`export: { formats }\` (formats hold every version the export is in); to drop it, ${add} and move the resource to a successor (a resource of another name: two cannot share one) marked \`added: ${next}\``;
  }
  if (owner && !("export" in owner) && !exportFilter && FIELD_KINDS.has(change.kind)) {
    if ("action" in owner)
      return `keep the field "${name}" of the action "${owner.action}" in ${version} as it was: an action's fields hold in every version (they take no added, removed or renamed); to change it, ${add} and add a new action with the changed field and \`added: ${next}\``;
    const what = owner.field === `${owner.top}.*` ? `the values of "${owner.top}" of ${version} as they were` : `"${owner.field}" of ${version} as it was`;
    return `keep ${what}: a field inside an object or a map takes no added, removed or renamed, its top-level field does: ${add}, mark "${owner.top}" \`removed: ${next}\` and add the changed one under a new name with \`added: ${next}\``;
  }
  // The exports' paths gone: no resource of the version is exportable any more.
  if ((change.kind === "path-removed" || change.kind === "operation-removed") && /^\/v[0-9]+\/exports(\/|$)/.test(change.operation?.path ?? ""))
    return `keep ${version}'s exports: put \`export\` back on the resources that had it (an export holds every version from its first); to drop one, ${add} and move its resource to a successor (a resource of another name: two cannot share one) marked \`added: ${next}\``;
  // A file format no export of the version offers any more (`text/csv` of the exports' files).
  if (change.kind === "media-type-removed" && /^\/v[0-9]+\/exports\//.test(change.operation?.path ?? ""))
    return `keep the file formats of ${version}'s exports: put the format back in \`export: { formats }\` of the resources that offered it (formats hold every version an export is in); to drop it, ${add} and move those resources to successors (resources of other names) marked \`added: ${next}\``;
  switch (change.kind) {
    case "field-removed":
      return `keep "${name}" in ${version}: put the field back, ${add} and mark it \`removed: ${next}\``;
    case "field-optional":
      if (change.part.in === "response")
        return `keep "${name}" in every answer of ${version}: a field a later version leaves out (\`removed\`, or added later) needs a default, which the records written without it take; or make the change in a new version: ${add}, mark the field \`removed: ${next}\` and add the optional one under a new name with \`added: ${next}\``;
      break;
    case "field-renamed":
      return `keep the name "${name}" in ${version}: ${add} and write \`renamed: { in: ${next}, from: ${name} }\` on "${newName}"`;
    case "field-added":
    case "parameter-added":
      return `a new required input breaks every client of ${version}: make "${name || partName(change)}" optional or give it a default, or ${add} and mark it \`added: ${next}\``;
    case "operation-removed":
    case "path-removed":
    case "action-removed":
      return `keep it in ${version}: put it back (operations and actions apply to every version of a resource); to drop it, ${add}, mark the resource \`removed: ${next}\` and add its successor (a resource of another name: two cannot share one) with \`added: ${next}\``;
    case "pagination-changed":
      return `keep the pagination mode: it applies to every version of a resource; to change it, ${add}, mark the resource \`removed: ${next}\` and add its successor (a resource of another name: two cannot share one) with \`added: ${next}\` and the new mode`;
    case "parameter-renamed":
      return `keep ${partName(change)} in ${version}: keep the name "${filterField(change.part)}" there, ${add} and write \`renamed: { in: ${next}, from: ${filterField(change.part)} }\` on "${filterFieldOf(change.renamedTo ?? "")}"`;
    case "parameter-removed":
      return `keep ${partName(change)} in ${version}: put the filter (or option) back; to drop it, ${add} and move the resource to a successor (a resource of another name: two cannot share one) marked \`added: ${next}\``;
    case "status-removed":
    case "response-body-removed":
      return `keep the response of ${version} as it was (for an action, its \`response:\`); to change it, ${add} and add the new action or resource with \`added: ${next}\``;
    case "unique-added":
      return change.uniqueField
        ? `keep "${change.uniqueField}" of ${version} without unique: a field's unique holds every version of the resource (and rows already stored may repeat a value); to add it, ${add}, mark the field \`removed: ${next}\` and add the unique one under a new name with \`added: ${next}\``
        : `keep ${version} without the new list: a resource-level unique holds every version of the resource; to add it, ${add}, mark the resource \`removed: ${next}\` and add its successor (a resource of another name: two cannot share one) with \`added: ${next}\` and the list`;
    case "tenant-added":
    case "tenant-removed":
      return `keep the tenancy of ${version} as it was: a tenant field holds every version of the resource; to change it, ${add}, mark the resource \`removed: ${next}\` and add its successor (a resource of another name: two cannot share one) with \`added: ${next}\` and the tenant field`;
    case "transitions-added":
    case "transitions-narrowed":
      return `keep the transitions of "${name}" in ${version} as they were (none, or no fewer targets): a field's transitions hold in every version; to restrict them, ${add}, mark the field \`removed: ${next}\` and add the restricted one under a new name with \`added: ${next}\``;
    case "requires-added":
      return `keep what the action requires in ${version} as it was (no new field, no value fewer): an action's requires hold in every version; to restrict it, ${add} and add a new action with the requirement and \`added: ${next}\``;
    case "sets-removed":
      return `keep what the action sets in ${version} as it was: put the sets back (with \`rules_added\` no later than the first version that published them); to stop setting it, ${add} and add a new action without it, \`added: ${next}\``;
    case "sets-changed":
      return `keep what the action sets in ${version} as it was: its clients rely on the record it leaves (an action's sets hold in every version it is shown in); to set another value, ${add} and add a new action with the new sets and \`added: ${next}\``;
    case "sets-added":
      return `keep what the action sets in ${version} as it was: the field's transitions would refuse the action on records the published version changed; to change it, date the new sets with \`rules_added: ${next}\` on the action (docs/versioning.md; where a published version after ${version} already shows them, \`rules_added\` names the first such version), or ${add} and add a new action with the sets and \`added: ${next}\``;
    case "servers-changed":
      return `keep base_url as it was: clients of ${version} call it`;
    case "sort-key-renamed":
      return `keep the sort key "${change.sortKey}" in ${version}: keep the field's name there, ${add} and write \`renamed: { in: ${next}, from: ${change.sortKey} }\` on "${change.renamedTo}"`;
    case "sort-order-changed":
      return `keep the order of "${change.sortKey ?? name}"'s values in ${version}: a list sorted by it follows that order in every version; to reorder them, ${add}, mark the field \`removed: ${next}\` and add the reordered one under a new name with \`added: ${next}\``;
  }
  return name
    ? `keep "${name}" of ${version} as it was: ${add}, mark the field \`removed: ${next}\` and add the changed one under a new name with \`added: ${next}\``
    : `keep ${version} as it was and make the change in a new version: ${add} and mark the change there with added, removed or renamed: ${next}`;
}

/** The field a filter parameter names: `status` of `status[in]`. */
function filterField(part: Change["part"]): string {
  return part.in === "parameter" ? filterFieldOf(part.name) : "";
}

function partName(change: Change): string {
  return change.part.in === "parameter"
    ? `the ${change.part.location} parameter "${change.part.name}"`
    : partLabel(change);
}
