/**
 * What every generated handler does the same way: parse input with a zod schema into the
 * error envelope, authorize, look records up, and compare ETags. Handlers stay short and
 * read top to bottom; the rules live here, once, with their own tests.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import type { AccessAction, AccessRequest, Authorize, Principal } from "./auth.ts";
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RecordChangedError,
  ValidationError,
  type ErrorDetail,
} from "./errors.ts";
import type { Condition, Match, Ordering, StoredRecord, Values } from "./store.ts";
import { detailIssue, ISSUES, validationMessage } from "./messages.ts";
import { unstorableFields } from "./storable.ts";
import { isAcceptedUuid, uuidSchema } from "./uuid.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /** Answer 404, not 403, for a record the principal may not read (AppOptions.hideForbidden). */
    hideForbidden: boolean;
    /** The app's `authorize` (AppOptions.authorize): a reference to a record its principal may not read is as one to none. */
    authorizer: Authorize | null;
  }
}

/** Keys a client may never send: canon's own fields and internal keys. */
const SERVER_KEYS = new Set(["id", "row_id", "created_at", "updated_at"]);

/**
 * One detail per problem: `field` is the dotted body path or the parameter name. In a body, a
 * key canon or a hook owns "is read-only"; a query (`inBody` false) has no such keys: its
 * `?created_at=` is a parameter the list does not take.
 */
export function issuesToDetails(
  issues: ReadonlyArray<z.core.$ZodIssue>,
  readOnly: ReadonlySet<string> = new Set(),
  inBody = true,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const field = base ? `${base}.${key}` : key;
        const serverOwned = inBody && base === "" && (SERVER_KEYS.has(key) || readOnly.has(key));
        details.push({ field, issue: serverOwned ? ISSUES.readOnly : issue.message });
      }
      continue;
    }
    details.push({ field: base || "body", issue: detailIssue(issue) });
  }
  return details;
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
      [{ field: "body", issue: ISSUES.jsonObject }],
      "The request body must be a JSON object.",
    );
  }
  const parsed = schema.safeParse(body, PARSE);
  const unstorable = unstorableFields(body);
  if (!parsed.success || unstorable.length) {
    throw new ValidationError(
      withDetails(parsed.success ? [] : issuesToDetails(parsed.error.issues, readOnly), unstorable),
    );
  }
  return parsed.data;
}

/** `details`, then each of `more` whose field none of them names. */
function withDetails(details: ErrorDetail[], more: ErrorDetail[]): ErrorDetail[] {
  const named = new Set(details.map((d) => d.field));
  return [...details, ...more.filter((d) => !named.has(d.field))];
}

/** Every parse reports the input (to tell a missing value from a wrong one) and speaks canon's words (./messages.ts). */
const PARSE = { reportInput: true, error: validationMessage } as const;

/** Path or query parameters as `schema` reads them, or a 400 naming each bad parameter. */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  // The ids of a record's path (`{ id: uuidSchema }`) are read on every request to a record:
  // valid ones without zod, to the same value; anything else goes to zod, which names the problem.
  let fast = idParsers.get(schema);
  if (fast === undefined) {
    fast = idParser(schema);
    idParsers.set(schema, fast);
  }
  const ids = fast?.(input);
  if (ids !== undefined) return ids as z.output<S>;
  const parsed = schema.safeParse(input ?? {}, PARSE);
  const unstorable = unstorableFields(input);
  if (!parsed.success || unstorable.length) {
    throw new ValidationError(
      withDetails(
        parsed.success ? [] : issuesToDetails(parsed.error.issues.map(repeated), undefined, false),
        unstorable,
      ),
    );
  }
  return parsed.data;
}

/**
 * A parameter given twice (`?sort=a&sort=b`) reaches its schema as an array, which only a query
 * string makes: its issue says to give it once, not that it "must be a string".
 */
function repeated(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  return issue.path.length === 1 && Array.isArray(issue.input) ? { ...issue, message: ISSUES.once } : issue;
}

type IdParser = (input: unknown) => Record<string, string> | undefined;

const idParsers = new WeakMap<z.ZodType, IdParser | null>();

/**
 * For `z.strictObject({ a: uuidSchema, … })`: a check that answers what zod answers for valid
 * input (every key present, no other key, each an accepted UUID, lowercased) and undefined for
 * anything else. Null for every other schema.
 */
function idParser(schema: z.ZodType): IdParser | null {
  const def = (schema as unknown as { _zod?: { def?: ObjectDef } })._zod?.def;
  if (def?.type !== "object" || def.catchall?._zod.def.type !== "never") return null;
  const keys = Object.keys(def.shape);
  if (keys.length === 0 || keys.some((key) => def.shape[key] !== uuidSchema)) return null;
  if (keys.length === 1) {
    // The usual `{ id }`: one value to check, and no other key.
    const only = keys[0]!;
    return (input) => {
      if (typeof input !== "object" || input === null) return undefined;
      const values = input as Record<string, unknown>;
      const value = values[only];
      if (typeof value !== "string" || !isAcceptedUuid(value) || !Object.hasOwn(values, only))
        return undefined;
      for (const key in values) if (key !== only) return undefined;
      return only === "id" ? { id: value.toLowerCase() } : { [only]: value.toLowerCase() };
    };
  }
  return (input) => {
    if (typeof input !== "object" || input === null) return undefined;
    const values = input as Record<string, unknown>;
    let count = 0;
    for (const key in values) {
      if (!Object.hasOwn(values, key)) return undefined;
      count++;
    }
    if (count !== keys.length) return undefined;
    const ids: Record<string, string> = {};
    for (const key of keys) {
      const value = values[key];
      if (typeof value !== "string" || !isAcceptedUuid(value)) return undefined;
      ids[key] = value.toLowerCase();
    }
    return ids;
  };
}

interface ObjectDef {
  type: string;
  shape: Record<string, unknown>;
  catchall?: { _zod: { def: { type: string } } };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("authenticate did not run for this route");
  return request.principal;
}

/** What a write proposes, and how a record is named in a 404. */
export interface AccessDetails {
  /** The values as stored after the change: of the new record, the changed one, or the action's record. */
  proposed?: object;
  /** The record's kind in a 404 when `hideForbidden` hides it: `order` gives "No order has this id.". */
  name?: string;
  /** On a list under a record: that record and its collection (AccessRequest.under). */
  under?: AccessRequest["under"];
}

/**
 * Calls `authorize`; 403 when it says no. With the app's `hideForbidden`, a record the principal
 * may not even read answers 404, as a record that does not exist does. A synchronous `authorize`
 * (the usual case) is answered at once, without a promise; an asynchronous one returns its
 * promise. Call it with `await`.
 */
export function authorizeOrThrow(
  authorize: Authorize,
  request: FastifyRequest,
  action: AccessAction,
  collection: string,
  record?: { id: string; values: object },
  details: AccessDetails = {},
): void | Promise<void> {
  const principal = principalOf(request);
  const access: AccessRequest = { principal, action, collection };
  if (record) access.record = record;
  if (details.proposed) access.proposed = details.proposed;
  if (details.under) access.under = details.under;
  const denied = () => refusal(authorize, request, access, details.name);
  return decide(authorize(access), denied);
}

/** Nothing when allowed; else what `denied` throws (or rejects with). */
function decide(
  allowed: boolean | Promise<boolean>,
  denied: () => void | Promise<void>,
): void | Promise<void> {
  if (typeof allowed === "boolean") return allowed ? undefined : denied();
  return allowed.then((yes) => (yes ? undefined : denied()));
}

/** 403; or, with `hideForbidden`, 404 when the principal may not read the record either. */
function refusal(
  authorize: Authorize,
  request: FastifyRequest,
  access: AccessRequest,
  name = "record",
): void | Promise<void> {
  if (!access.record || !request.server.hideForbidden) throw new ForbiddenError();
  // An action's collection is `orders/cancellations`: reading is asked of `orders`.
  const collection = access.collection.split("/")[0]!;
  const hidden = new NotFoundError(`No ${name} has this id.`);
  if (access.action === "read" && access.collection === collection) throw hidden;
  const readable = authorize({
    principal: access.principal,
    action: "read",
    collection,
    record: access.record,
  });
  if (typeof readable === "boolean") throw readable ? new ForbiddenError() : hidden;
  return readable.then((yes) => {
    throw yes ? new ForbiddenError() : hidden;
  });
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

/**
 * 409 when `If-Match` is present and names neither `*` nor the record's current ETag. The
 * comparison is strong (RFC 9110 §13.1.1): a weak tag (`W/"…"`) never matches.
 */
export function checkIfMatch(request: FastifyRequest, record: StoredRecord<Values>): void {
  const header = request.headers["if-match"];
  if (header === undefined) return;
  const current = etagOf(record);
  const candidates = header.split(",").map((t) => t.trim());
  if (!candidates.includes("*") && !candidates.includes(current)) {
    throw new ConflictError("The record has changed: If-Match does not match its current ETag.", [
      { field: "If-Match", issue: ISSUES.ifMatch },
    ]);
  }
}

/**
 * How many times a write by id without If-Match is tried when the record keeps changing under it:
 * each round of racing writes lets one through, so as many as race at once (a few) get through.
 */
const UNCONDITIONAL_ATTEMPTS = 16;

/**
 * A PATCH, PUT or DELETE by id (`attempt`: read the record, check it, write): without If-Match,
 * tried again when another request changed the record between the read and the write
 * (`RecordChangedError`), so that it applies to the record as it is then, its checks (transitions,
 * authorization, references) run again, as it would have had it come a moment later; a client
 * that asked for a revision (If-Match) gets the 409. After `UNCONDITIONAL_ATTEMPTS`, 409.
 */
export async function unconditional<T>(request: FastifyRequest, attempt: () => Promise<T>): Promise<T> {
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (error) {
      if (
        !(error instanceof RecordChangedError) ||
        request.headers["if-match"] !== undefined ||
        attempts >= UNCONDITIONAL_ATTEMPTS
      )
        throw error;
    }
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

/** An operator condition as a list's query gives it: its value is undefined when the parameter is absent. */
export type ConditionInput =
  | { field: string; op: "in"; ordering: Ordering; values: unknown[] | undefined }
  | { field: string; op: "gt" | "gte" | "lt" | "lte"; ordering: Ordering; value: unknown }
  | { field: string; op: "null"; value: boolean | undefined };

/** One operator filter of a list, as the generated routes declare it: `[field, op, ordering]` under its parameter. */
export type ConditionSpec = readonly [
  field: string,
  op: "in" | "gt" | "gte" | "lt" | "lte" | "null",
  ordering: Ordering | null,
];

/**
 * The operator conditions a list's query gives: for each declared parameter (`"status[in]"`), the
 * condition on its field with the query's value (undefined when the parameter is absent).
 */
export function conditionsOf(
  specs: Readonly<Record<string, ConditionSpec>>,
  query: Record<string, unknown>,
): ConditionInput[] {
  const out: ConditionInput[] = [];
  for (const param in specs) {
    const value = query[param];
    if (value === undefined) continue;
    const [field, op, ordering] = specs[param]!;
    if (op === "null") out.push({ field, op, value: value as boolean });
    else if (op === "in") out.push({ field, op, ordering: ordering!, values: value as unknown[] });
    else out.push({ field, op, ordering: ordering!, value });
  }
  return out;
}

/**
 * A list's match: the given exact-match values, `q` (when not blank) on the search fields, and
 * the operator conditions whose parameters were given.
 */
export function matchOf(
  where: Values,
  searchFields: string[],
  q: string | undefined,
  conditions?: readonly ConditionInput[],
): Match {
  const text = q?.trim();
  const match: Match = {
    where: definedOnly(where),
    ...(text ? { search: { fields: searchFields, text } } : {}),
  };
  if (conditions) {
    const given = conditions.filter((c) => ("values" in c ? c.values : c.value) !== undefined) as Condition[];
    if (given.length) match.conditions = given;
  }
  return match;
}
