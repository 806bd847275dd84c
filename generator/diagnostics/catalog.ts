import type { Diagnostic, Severity, SourceLocation } from "./diagnostic.ts";

/**
 * Every rule canon reports, with its severity and what it protects. Rule ids are stable:
 * users grep for them and docs/rules.md lists them.
 */
export const RULES = {
  "yaml-syntax": { severity: "error", doc: "The file is not valid YAML." },
  "schema": { severity: "error", doc: "A value does not have the shape the definition format requires." },
  "unknown-key": { severity: "error", doc: "A key the definition format does not know (often a typo)." },
  "missing-api": { severity: "error", doc: "The definitions folder has no api.yaml." },
  "duplicate-resource": { severity: "error", doc: "Two files define the same collection." },
  "path-lowercase": { severity: "error", doc: "Path segments use lowercase letters and hyphens only (conventions 4.1.1-2)." },
  "path-plural": { severity: "error", doc: "Collections and actions are plural nouns (conventions 4.1.3, 4.1.8)." },
  "path-no-verb": { severity: "error", doc: "No verb appears in a path (conventions 4.1.4)." },
  "path-nesting": { severity: "error", doc: "Paths nest at most 2 levels (conventions 4.1.5, 8)." },
  "path-conflict": { severity: "error", doc: "A collection or action would answer on a path that canon or another resource already serves." },
  "field-name": { severity: "error", doc: "Field keys are snake_case." },
  "field-reserved": { severity: "error", doc: "id, row_id, created_at and updated_at are provided by canon and may not be declared (conventions 2.1, 2.2.6)." },
  "field-id-type": { severity: "error", doc: "A field named id or ending in _id is a uuid (conventions 2.2.4-5)." },
  "field-option": { severity: "error", doc: "An option that does not apply to the field's type, or contradicts another option." },
  "field-default": { severity: "error", doc: "A default value that does not fit its field." },
  "pattern-backtracking": { severity: "error", doc: "A pattern runs in time linear in its input: one that can backtrack catastrophically would let one request hold the service." },
  "array-max-items": { severity: "error", doc: "An array holds at most 100 items (conventions 8)." },
  "map-max-items": { severity: "error", doc: "A map holds at most 100 keys (SPEC 12.6)." },
  "map-nesting": { severity: "error", doc: "Maps nest at most two deep: a map of maps, never a map of maps of maps." },
  "version-name": { severity: "error", doc: "Versions are v1, v2, ... consecutive from v1, no minor versions (conventions 9.2-9.4, 9.6)." },
  "version-sunset": { severity: "error", doc: "A deprecated version names a sunset at least 90 days after its deprecation (conventions 8, 9.9)." },
  "version-draft": { severity: "error", doc: "Drafts (draft: true) come after every published version and are neither deprecated nor retired." },
  "version-ref": { severity: "error", doc: "added, removed and renamed name versions that exist, in order." },
  "version-added-required": { severity: "error", doc: "A field added after a resource's first version is optional or has a default, so that writes through older versions stay valid." },
  "base-url": { severity: "error", doc: "base_url is an absolute http(s) URL without a trailing slash." },
  "reference-unknown": { severity: "error", doc: "references and parent name a collection that is defined." },
  "parent-field": { severity: "error", doc: "A child resource has exactly one uuid field that references its parent." },
  "parent-cycle": { severity: "error", doc: "parent chains may not loop." },
  "filter-field": { severity: "error", doc: "filters and search name fields that exist, of a type they can match; a uuid field only as a filter of [null] (conventions 2.2, 4.1.6)." },
  "list-under": { severity: "error", doc: "list_under sits on a top-level uuid field with references, not the parent's, one per referenced collection (SPEC 12.3)." },
  "tenant-field": { severity: "error", doc: "tenant sits on one required, top-level uuid field with references per resource, in every version; every tenant field references the same collection, which is not itself tenant-scoped; no action sets it (SPEC 12.4)." },
  "tenant-scope": { severity: "error", doc: "A child of a tenant-scoped resource, and a resource that references one, is tenant-scoped too; an action's fields do not reference a tenant-scoped collection (SPEC 12.4)." },
  "list-keys": { severity: "warning", doc: "sort, filters, search and pagination: offset sit on a resource that has a list (its list operation, a parent or a list_under field) or, but for pagination, an export: elsewhere they would do nothing (SPEC 12); and a search that names no field of a version with a string field, whose ?q= would match no record." },
  "sort-field": { severity: "error", doc: "sort names fields (or created_at/updated_at) whose values have an order (SPEC 12.1)." },
  "unique-together": { severity: "error", doc: "A resource-level unique list names two or more scalar fields, each once, none removed or write_only; no list repeats or holds another, or a field unique on its own (SPEC 12.3)." },
  "transitions": { severity: "error", doc: "transitions sit on an enum field of the resource; every key and target is one of its values, listed once (SPEC 12.5)." },
  "transition-itself": { severity: "warning", doc: "A value of transitions lists itself: keeping a value is never a transition and is always allowed, so the entry says nothing (SPEC 12.5)." },
  "action-requires": { severity: "error", doc: "An action's requires names enum, boolean or string fields of the resource, each with values the field can hold, each once (SPEC 12.5)." },
  "action-sets": { severity: "error", doc: "An action's sets names fields of the resource, each with a value the field can hold (and, on a field with transitions, reachable from what the action requires) or from an action field of a compatible type (SPEC 12.5)." },
  "action-fields": { severity: "error", doc: "Action fields follow the same rules as resource fields." },
  "operations": { severity: "error", doc: "operations are listed once each, and a resource with actions can be read." },
  "table-conflict": { severity: "error", doc: "An action and a many-to-many array field of one resource would be kept in one table (the action label-ids and the field label_ids: orders__label_ids)." },
  "reference-version": { severity: "warning", doc: "A references names a collection that a version in which the referring field exists does not serve (removed before it, or added after)." },
  "sunset-near": { severity: "warning", doc: "A deprecated version's sunset date is near or past: remove the version on time." },
} as const satisfies Record<string, { severity: Severity; doc: string }>;

/**
 * Rules of the compatibility gate of `canon generate` and `canon check`: they compare the
 * definitions' output with the published documents in the output folder, so `canon lint`
 * (and the broken corpus, which has no output folder) never reports them.
 */
export const OUTPUT_RULES = {
  "breaking-change": { severity: "error", doc: "A published version's OpenAPI document would change in a way that breaks its clients (conventions 9.7)." },
  "references-not-compared": { severity: "warning", doc: "A published version's document was written before canon named the collection each id references (x-canon-references): this run could not compare references; the next can." },
  "output-drift": { severity: "error", doc: "A file in the output folder is not what canon generate would write: edited by hand, missing or stale (canon check)." },
  "version-draft-published": { severity: "error", doc: "A published version was marked draft: true; a published contract cannot be reopened." },
  "version-sunset-earlier": { severity: "error", doc: "A published version's sunset moved earlier than its published document announced, or was first announced less than 90 days ahead (conventions 9.9)." },
  "version-removed-early": { severity: "error", doc: "A published version was removed from the definitions before its sunset date passed (conventions 9.9)." },
  "foreign-file": { severity: "error", doc: "A file in the output folder that canon did not write: generate never overwrites or removes it, and refuses to run while it is there." },
} as const satisfies Record<string, { severity: Severity; doc: string }>;

export type RuleId = keyof typeof RULES | keyof typeof OUTPUT_RULES;

const ALL_RULES: Record<RuleId, { severity: Severity; doc: string }> = { ...RULES, ...OUTPUT_RULES };

export function diagnostic(rule: RuleId, location: SourceLocation, message: string, fix: string): Diagnostic {
  return { rule, severity: ALL_RULES[rule].severity, message, fix, location };
}
