import { z } from "zod";
import { EXPORT_FORMATS } from "../../runtime/exports-job.ts";

/**
 * The definition format (SPEC §2) as zod schemas. The same schemas validate every file and
 * are published as JSON Schema (schema/*.schema.json) for editors. Shape only lives here;
 * rules that relate values to each other (conventions, versions, references) are lint rules.
 */

const version = z.string().describe("A version key of api.yaml, such as v1 or v2.");
const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be an ISO date such as 2026-09-01")
  .describe("An ISO date, YYYY-MM-DD.");

export const fieldTypes = [
  "string",
  "integer",
  "number",
  "boolean",
  "uuid",
  "date",
  "datetime",
  "enum",
  "array",
  "object",
  "decimal",
  "map",
] as const;

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const defaultValue = z.union([scalar, z.array(scalar), z.record(z.string(), z.unknown())]);

export const FieldSchema = z
  .strictObject({
    type: z.enum(fieldTypes).describe("The field's type."),
    description: z.string().optional(),
    min_length: z.int().min(0).optional().describe("string: fewest characters."),
    max_length: z.int().min(0).optional().describe("string: most characters."),
    pattern: z.string().optional().describe("string: a regular expression the value matches."),
    format: z.enum(["email", "uri"]).optional().describe("string: a well-known format."),
    schemes: z
      .array(z.string().regex(/^[a-z][a-z0-9+.-]*$/, "a URL scheme in lowercase, such as https or mailto"))
      .min(1)
      .optional()
      .describe("string with format: uri: the URL schemes accepted (default [http, https])."),
    minimum: z
      .union([z.number(), z.string()])
      .optional()
      .describe('integer or number: smallest value; decimal: smallest value as a string, such as "0".'),
    maximum: z
      .union([z.number(), z.string()])
      .optional()
      .describe('integer or number: largest value; decimal: largest value as a string, such as "99999.99".'),
    precision: z.int().optional().describe("decimal: most significant digits, 1 to 38."),
    scale: z.int().optional().describe("decimal: digits after the decimal point, 0 to precision."),
    references: z.string().optional().describe("uuid: the collection whose record this id names."),
    on_delete: z
      .enum(["restrict", "cascade"])
      .optional()
      .describe(
        "With references: what deleting the referenced record does. restrict (the default): refused with 422 naming this collection; cascade: this record is deleted too (the default for a child's parent field).",
      ),
    list_under: z
      .boolean()
      .optional()
      .describe(
        "uuid with references (not the parent field): also list this resource under the referenced record, GET /vN/<referenced>/{id}/<resource>.",
      ),
    tenant: z
      .boolean()
      .optional()
      .describe(
        "uuid with references to the tenant collection: makes the resource tenant-scoped (SPEC 12.4). A principal with a tenant sees and changes only the records whose field names its tenant; on create the field is filled from the principal when absent.",
      ),
    values: z.array(z.string()).min(1).optional().describe("enum: the allowed values."),
    transitions: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .describe(
        "enum: the state machine. Each value lists the values it may change to by an update, a replace or an action; a value that is not a key is final. A create takes any value; keeping the same value is no transition; any other change answers 422.",
      ),
    get items() {
      return FieldSchema.optional().describe("array: the type of each item; map: the type of each value.");
    },
    max_items: z.int().min(0).optional().describe("array: most items; map: most keys (default 100, never more)."),
    get fields() {
      return z.record(z.string(), FieldSchema).optional().describe("object: its fields.");
    },
    optional: z.boolean().optional().describe("May be absent in create and replace requests and in responses."),
    nullable: z.boolean().optional().describe("May be null."),
    default: defaultValue.optional().describe("Value used when a create omits the field."),
    read_only: z.boolean().optional().describe("Set by the server; never accepted as input. Not on a field inside an object (the object is accepted whole)."),
    write_only: z.boolean().optional().describe("Accepted as input; never returned. Not on a field inside an object (the object is returned whole)."),
    unique: z.boolean().optional().describe("No two records share the value: a duplicate answers 409."),
    added: version.optional().describe("First version that has the field."),
    removed: version.optional().describe("First version without the field."),
    renamed: z
      .strictObject({ in: version, from: z.string() })
      .optional()
      .describe("The field was called `from` before version `in`."),
  })
  .describe("A field of a resource or action.");

export type FieldDefinition = z.infer<typeof FieldSchema>;

/** File formats of an export: one record per line (NDJSON) or comma-separated values with a header row. */
export const exportFormats = EXPORT_FORMATS;

export const operationNames = ["list", "read", "create", "update", "replace", "delete"] as const;

export const ActionSchema = z.strictObject({
  description: z.string().optional(),
  added: version.optional().describe("First version that has the action (default: the resource's first)."),
  fields: z.record(z.string(), FieldSchema).optional().describe("Fields of the action's request body."),
  response: z.union([z.literal(201), z.literal(204)]).optional().describe("201 (default): the created action record; 204: no body."),
  requires: z
    .record(z.string(), z.array(scalar).min(1))
    .optional()
    .describe("The values fields of the record must have for the action to be taken (enum, boolean or string fields); else 422 naming the field, and nothing is created."),
  sets: z
    .record(z.string(), z.union([scalar, z.strictObject({ from: z.string().describe("An action field whose value the field takes.") })]))
    .optional()
    .describe(
      "Fields of the record the action changes, in the same transaction as the action record (transitions checked; a new revision and a .updated event): a value, or { from: <action field> }. A read_only field may be set here.",
    ),
  rules_added: version
    .optional()
    .describe(
      "First version in which requires and sets apply (default: the action's first version). Earlier versions keep the action as they published it: it records itself and changes nothing.",
    ),
});

export const ResourceSchema = z
  .strictObject({
    $schema: z.string().optional(),
    resource: z.string().describe("Collection path segment: a plural noun, lowercase, words joined by hyphens."),
    singular: z.string().optional().describe("Singular name; derived when absent."),
    description: z.string().optional(),
    added: version.optional().describe("First version that has the resource (default v1)."),
    removed: version.optional().describe("First version without the resource."),
    parent: z.string().optional().describe("Collection this resource is listed under: GET /vN/<parent>/{id}/<resource>."),
    operations: z.array(z.enum(operationNames)).optional().describe("Default: list, read, create, update, delete."),
    pagination: z.enum(["cursor", "offset"]).optional().describe("cursor (default) or offset."),
    search: z.array(z.string()).optional().describe("Fields matched by ?q= (case-insensitive substring)."),
    filters: z
      .array(z.string())
      .optional()
      .describe(
        "Fields usable as query parameters: ?f=value (equals), f[in]=a,b, f[gt|gte|lt|lte]=value, f[null]=true|false, as the field's type allows; created_at and updated_at take the range operators.",
      ),
    sort: z
      .array(z.string())
      .optional()
      .describe(
        "Fields a list may be ordered by with ?sort=f,-g (up to 3 keys; - for descending; id breaks ties); created_at and updated_at allowed.",
      ),
    unique: z
      .array(z.array(z.string()))
      .optional()
      .describe(
        "Fields unique together: each list (two or more fields) may not repeat in two records, a duplicate answers 409; text compares as for a unique field; a record with one of them null or absent is not held by the list.",
      ),
    export: z
      .union([
        z.boolean(),
        z.strictObject({
          formats: z
            .array(z.enum(exportFormats))
            .min(1)
            .optional()
            .describe("File formats offered, the first being the default: ndjson (default), csv."),
          added: z
            .string()
            .optional()
            .describe("First version that offers the export (v1, v2, ...): making a resource exportable in a published version changes that version's /vN/exports, so date it from a new version."),
        }),
      ])
      .optional()
      .describe("Offer a background export of the collection: POST /vN/exports, a job and a download link. true: NDJSON files."),
    fields: z.record(z.string(), FieldSchema).describe("The resource's fields; id, created_at and updated_at are added."),
    actions: z.record(z.string(), ActionSchema).optional().describe("POST /vN/<resource>/{id}/<action>: plural nouns."),
  })
  .describe("One resource of a canon API.");

export type ResourceDefinition = z.infer<typeof ResourceSchema>;

export const VersionSchema = z.strictObject({
  draft: z
    .boolean()
    .optional()
    .describe(
      "Not published yet: generated, served and documented, but any change to it passes the breaking-change gate. Remove it to publish the version; from then on the gate holds it.",
    ),
  deprecated: isoDate.optional().describe("Date the version was deprecated."),
  sunset: isoDate.optional().describe("Date the version goes away; at least 90 days after deprecated."),
  retired: z
    .boolean()
    .optional()
    .describe("The version is gone: no longer generated or served. Only after its sunset date; it stays listed so that numbering holds."),
});

export const ApiSchema = z
  .strictObject({
    $schema: z.string().optional(),
    title: z.string().min(1),
    description: z.string().optional(),
    base_url: z.string().describe("Absolute URL without a trailing slash, used in Link headers and OpenAPI servers."),
    versions: z.record(z.string(), VersionSchema.nullable()).describe("v1, v2, ... consecutive from v1."),
    rate_limit: z
      .strictObject({ requests: z.int().min(1), per_seconds: z.int().min(1) })
      .optional()
      .describe("Requests allowed per principal (or client address) per window."),
    events: z.boolean().optional().describe("Serve GET /vN/events and /vN/events/{id}."),
    body_limit: z.int().min(1024).max(10_485_760).optional().describe("Largest request body in bytes (default 65536)."),
    search_min_length: z
      .int()
      .min(1)
      .max(200)
      .optional()
      .describe("Fewest characters of ?q= (default 3, the shortest a trigram index serves); a shorter q answers 400."),
  })
  .describe("The api.yaml of a canon API.");

export type ApiDefinition = z.infer<typeof ApiSchema>;
