/**
 * What changed between two OpenAPI documents of canon, and whether a client of the old one
 * breaks. Changes are computed from the documents alone (generator/compat/compare.ts), so
 * they catch breaks that come from the definitions and breaks that come from canon itself.
 */

/** A JSON value as the documents hold it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type ChangeKind =
  // operations and paths
  | "operation-added"
  | "operation-removed"
  | "path-removed"
  | "action-removed"
  | "operation-deprecated"
  // a list under a referenced record (SPEC §12.3) made by another field: the same path, other records
  | "list-under-changed"
  // parameters
  | "parameter-added"
  | "parameter-removed"
  | "parameter-renamed"
  | "parameter-required"
  // bodies and responses
  | "request-body-added"
  | "request-body-removed"
  | "request-body-required"
  | "status-added"
  | "status-removed"
  | "media-type-removed"
  | "response-body-removed"
  | "header-added"
  | "header-removed"
  | "pagination-changed"
  // the order of the values of an enum a list sorts by (SPEC §12.1)
  | "sort-order-changed"
  | "sort-key-renamed"
  // schemas and fields
  | "field-added"
  | "field-removed"
  | "field-renamed"
  | "field-required"
  | "field-optional"
  | "type-changed"
  | "format-changed"
  | "nullable-changed"
  | "enum-value-added"
  | "enum-value-removed"
  | "limit-tightened"
  | "limit-loosened"
  | "closed-object"
  | "default-changed"
  | "schema-changed"
  // composite unique constraints of a write body (`x-canon-unique`)
  | "references-added"
  | "references-changed"
  | "references-removed"
  | "on-delete-changed"
  | "unique-added"
  | "unique-widened"
  | "unique-removed"
  // tenancy of a write body or a record (`x-canon-tenant`, SPEC §12.4)
  | "tenant-added"
  | "tenant-removed"
  // the state machine of an enum field (`x-canon-transitions`, SPEC §12.5)
  | "transitions-added"
  | "transitions-removed"
  | "transitions-narrowed"
  | "transitions-widened"
  // what an action requires of its record (`x-canon-requires`, SPEC §12.5)
  | "requires-added"
  | "requires-removed"
  // what an action sets on its record (`x-canon-sets`, SPEC §12.5): a set added breaks on a field
  // with transitions; one changed (another value or `from`) or removed always breaks
  | "sets-added"
  | "sets-changed"
  | "sets-removed"
  // the document
  | "servers-changed";

export interface OperationRef {
  method: string;
  /** The path as the document names it, `/v1/orders/{id}`. */
  path: string;
  operationId: string;
}

/** Where in an operation a change sits. */
export type Part =
  | { in: "operation" }
  | { in: "parameter"; location: string; name: string }
  | { in: "request" }
  | { in: "response"; status: string };

export interface Change {
  kind: ChangeKind;
  /** Does a client written against the old document break? */
  breaking: boolean;
  /** The operation it affects; null for the document as a whole. */
  operation: OperationRef | null;
  part: Part;
  /** Field path from the body or parameter root: `data[].due_cents`, `tags[]`; "" for the root. */
  field: string;
  /** The component schema the field was reached through, `Order`, and the path inside it. */
  schema?: { name: string; field: string };
  /** The JSON Schema keyword concerned (`maxLength`, `enum`, `format`), when one is. */
  keyword?: string;
  /** The new name of a renamed field. */
  renamedTo?: string;
  /** `unique-added`, `unique-removed`: the field of a constraint of one field (its `unique: true`). */
  uniqueField?: string;
  /** `sort-order-changed`: the sort key (a field of the list's records) whose enum order changed; `sort-key-renamed`: its old name. */
  sortKey?: string;
  /**
   * `path-removed`, `operation-removed` of a `list_under` list (SPEC §12.3): the field whose
   * `list_under` made it, as the old document's description of the list names it. The
   * definitions cannot say which once `list_under` is gone from it and another field
   * references the same collection.
   */
  listUnderField?: string;
  /** JSON pointer into the old document (the new one for additions). */
  pointer: string;
  /** What changed, in words: `field "due_cents"`, `query parameter "status"`, `GET /v1/orders`. */
  subject: string;
  /** What happened to it: `was removed`, `has maxLength 400 instead of 500`. */
  detail: string;
  /** `subject detail`, the change in words without the operation. */
  text: string;
}
