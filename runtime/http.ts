/**
 * What every generated handler does the same way: parse input with a zod schema into the
 * error envelope, authorize, look records up, and compare ETags. Handlers stay short and
 * read top to bottom; the rules live here, once, with their own tests.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { AccessAction, Authorize, Principal } from "./auth.ts";
import { ConflictError, ForbiddenError, NotFoundError, ValidationError, type ErrorDetail } from "./errors.ts";
import type { Match, StoredRecord, Values } from "./store.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Keys a client may never send: canon's own fields and internal keys. */
const SERVER_KEYS = new Set(["id", "row_id", "created_at", "updated_at"]);

/** One detail per problem: `field` is the dotted body path or the parameter name. */
export function issuesToDetails(
  issues: ReadonlyArray<z.core.$ZodIssue>,
  readOnly: ReadonlySet<string> = new Set(),
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const field = base ? `${base}.${key}` : key;
        const serverOwned = base === "" && (SERVER_KEYS.has(key) || readOnly.has(key));
        details.push({ field, issue: serverOwned ? "is read-only" : "is not an allowed field" });
      }
      continue;
    }
    details.push({ field: base || "body", issue: issueText(issue) });
  }
  return details;
}

function issueText(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_type") {
    if (issue.input === undefined) return "is required";
    return issue.message.startsWith("Invalid input") ? `must be ${article(issue.expected)}` : issue.message;
  }
  return issue.message;
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The request body as `schema` reads it, or a 400 listing every problem. */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  readOnly?: ReadonlySet<string>,
): z.output<S> {
  if (!isPlainObject(body)) {
    throw new ValidationError(
      [{ field: "body", issue: "must be a JSON object" }],
      "The request body must be a JSON object.",
    );
  }
  const parsed = schema.safeParse(body, { reportInput: true });
  if (!parsed.success) throw new ValidationError(issuesToDetails(parsed.error.issues, readOnly));
  return parsed.data;
}

/** Path or query parameters as `schema` reads them, or a 400 naming each bad parameter. */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {}, { reportInput: true });
  if (!parsed.success) throw new ValidationError(issuesToDetails(parsed.error.issues));
  return parsed.data;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("authenticate did not run for this route");
  return request.principal;
}

/** Calls `authorize`; 403 when it says no. */
export async function authorizeOrThrow(
  authorize: Authorize,
  request: FastifyRequest,
  action: AccessAction,
  collection: string,
  record?: { id: string; values: object },
): Promise<void> {
  const allowed = await authorize({
    principal: principalOf(request),
    action,
    collection,
    ...(record ? { record } : {}),
  });
  if (!allowed) throw new ForbiddenError();
}

/** The record, or 404. */
export function found<T>(record: T | null | undefined, what = "record"): T {
  if (record === null || record === undefined) throw new NotFoundError(`No ${what} has this id.`);
  return record;
}

/** The strong ETag of a record at its current revision. */
export function etagOf(record: StoredRecord<Values>): string {
  // Strong, different for every record and every write: its id and revision, no hashing needed.
  return `"${record.id}.${record.revision.toString(36)}"`;
}

/** 409 when `If-Match` is present and names neither `*` nor the record's current ETag. */
export function checkIfMatch(request: FastifyRequest, record: StoredRecord<Values>): void {
  const header = request.headers["if-match"];
  if (header === undefined) return;
  const current = etagOf(record);
  const candidates = header.split(",").map((t) => t.trim().replace(/^W\//, ""));
  if (!candidates.includes("*") && !candidates.includes(current)) {
    throw new ConflictError("The record has changed: If-Match does not match its current ETag.", [
      { field: "If-Match", issue: "does not match the current ETag" },
    ]);
  }
}

/** Sends a record with its ETag. */
export function sendRecord(
  reply: FastifyReply,
  status: 200 | 201,
  record: StoredRecord<Values>,
  body: object,
): FastifyReply {
  return reply.code(status).header("etag", etagOf(record)).send(body);
}

/** The entries whose value is not undefined: the fields a PATCH sets. */
export function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A list's match: the given exact-match values, and `q` (when not blank) on the search fields. */
export function matchOf(where: Values, searchFields: string[], q: string | undefined): Match {
  const text = q?.trim();
  return { where: definedOnly(where), ...(text ? { search: { fields: searchFields, text } } : {}) };
}
