/**
 * The error classes of the API: one per status of conventions §4.4, each rendering the one
 * error envelope `{ error: { code, message, details? } }` of conventions §7.
 */

export interface ErrorDetail {
  /** Dotted body path (`address.city`, `tags.0`) or the bare name of a query or path parameter. */
  field: string;
  issue: string;
}

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: ErrorDetail[] };
}

/**
 * One status the API answers with an error: its code, the class of this file that answers it
 * (and of the generated client that a caller catches), what it means, and the headers it carries.
 */
export interface ErrorStatus {
  status: number;
  code: string;
  /** The class that answers it here, and that the generated client throws for it. */
  className: string;
  /** The name of its shared response in the OpenAPI documents (`#/components/responses/NotFound`). */
  response: string;
  /** What it means, as the OpenAPI documents say it. */
  description: string;
  /** The message of its example in the OpenAPI documents. */
  message: string;
  /** Headers every answer of this status carries. */
  headers: readonly string[];
  /** Headers some answers of this status carry, and when. */
  optionalHeaders: ReadonlyArray<{ name: string; description: string }>;
}

/**
 * Every error status of the API (conventions §4.4), lowest first: the one table the OpenAPI
 * documents' error responses and the generated client's error classes are written from.
 */
export const ERROR_STATUSES: readonly ErrorStatus[] = [
  {
    status: 400,
    code: "VALIDATION_ERROR",
    className: "ValidationError",
    response: "BadRequest",
    description:
      "Invalid input: a malformed UUID, a missing, wrong-typed, unknown or read-only field, a bad query parameter or cursor, an unsupported Content-Type, or a body over the size limit. One detail per problem.",
    message: "The request is not valid.",
    headers: [],
    optionalHeaders: [],
  },
  {
    status: 401,
    code: "UNAUTHENTICATED",
    className: "UnauthenticatedError",
    response: "Unauthorized",
    description: "Missing or invalid credentials.",
    message: "Authentication is required.",
    headers: ["WWW-Authenticate"],
    optionalHeaders: [],
  },
  {
    status: 403,
    code: "FORBIDDEN",
    className: "ForbiddenError",
    response: "Forbidden",
    description: "Authenticated, but not allowed.",
    message: "This action is not allowed.",
    headers: [],
    optionalHeaders: [],
  },
  {
    status: 404,
    code: "NOT_FOUND",
    className: "NotFoundError",
    response: "NotFound",
    description: "No record has this id (the record, its parent, or the target of an action).",
    message: "The resource does not exist.",
    headers: [],
    optionalHeaders: [],
  },
  {
    status: 409,
    code: "CONFLICT",
    className: "ConflictError",
    response: "Conflict",
    description:
      "A duplicate of a unique field, an `If-Match` that is not the record's current ETag, or a POST whose `Idempotency-Key` is in use by a request still running. Nothing changed.",
    message: "The request conflicts with the current state.",
    headers: [],
    optionalHeaders: [],
  },
  {
    status: 422,
    code: "BUSINESS_RULE_VIOLATION",
    className: "BusinessRuleError",
    response: "UnprocessableEntity",
    description:
      "Valid input that breaks a business rule, such as a reference to a record that does not exist, or an `Idempotency-Key` already used for another path or body.",
    message: "The request breaks a business rule.",
    headers: [],
    optionalHeaders: [],
  },
  {
    status: 429,
    code: "RATE_LIMITED",
    className: "RateLimitedError",
    response: "TooManyRequests",
    description: "Over the rate limit; retry after `Retry-After` seconds.",
    message: "Too many requests.",
    headers: ["Retry-After"],
    // The rate limit's refusals carry these; a refusal of too many expensive reads at once does not.
    optionalHeaders: [
      {
        name: "X-RateLimit-Limit",
        description: "Requests allowed per window (a refusal by the rate limit).",
      },
      {
        name: "X-RateLimit-Remaining",
        description: "Requests left in the window: 0 (a refusal by the rate limit).",
      },
      {
        name: "X-RateLimit-Reset",
        description: "Seconds until the window starts again (a refusal by the rate limit).",
      },
    ],
  },
  {
    status: 500,
    code: "INTERNAL_ERROR",
    className: "InternalError",
    response: "InternalError",
    description:
      "An unexpected failure. The body carries no internals. When the database could not be reached, it carries `Retry-After`.",
    message: "Something went wrong.",
    headers: [],
    optionalHeaders: [
      {
        name: "Retry-After",
        description: "Seconds to wait before retrying: the database could not be reached.",
      },
    ],
  },
  {
    status: 503,
    code: "SERVICE_UNAVAILABLE",
    className: "ServiceUnavailableError",
    response: "ServiceUnavailable",
    description:
      "The instance cannot answer now (its store does not answer); retry after `Retry-After` seconds.",
    message: "The service is not ready. Retry later.",
    headers: ["Retry-After"],
    optionalHeaders: [],
  },
];

/** The entry of `status` in ERROR_STATUSES; throws for a status the API never answers with an error. */
export function errorStatus(status: number): ErrorStatus {
  const found = ERROR_STATUSES.find((e) => e.status === status);
  if (!found) throw new Error(`no error status ${status}`);
  return found;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;
  /** Extra response headers this error carries (`WWW-Authenticate`, `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    details?: ErrorDetail[],
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  toEnvelope(): ErrorEnvelope {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details && this.details.length > 0 ? { details: this.details } : {}),
      },
    };
  }
}

/** The most details an error lists; its message says how many more there are. */
export const MAX_DETAILS = 100;

/** 400: invalid input from the client. At most MAX_DETAILS details; the message counts the rest. */
export class ValidationError extends ApiError {
  constructor(details: ErrorDetail[], message = "The request is not valid.") {
    const more = details.length - MAX_DETAILS;
    super(
      400,
      "VALIDATION_ERROR",
      more > 0
        ? `${message} ${details.length} problems: the first ${MAX_DETAILS} are listed, ${more} more are not.`
        : message,
      more > 0 ? details.slice(0, MAX_DETAILS) : details,
    );
  }
}

/** 401: authentication missing or invalid. */
export class UnauthenticatedError extends ApiError {
  constructor(message = "Authentication is missing or invalid.") {
    super(401, "UNAUTHENTICATED", message, undefined, { "WWW-Authenticate": 'Bearer realm="api"' });
  }
}

/** 403: authenticated but not allowed. */
export class ForbiddenError extends ApiError {
  constructor(message = "You are not allowed to do this.") {
    super(403, "FORBIDDEN", message);
  }
}

/** 404: the resource does not exist. */
export class NotFoundError extends ApiError {
  constructor(message = "The resource does not exist.") {
    super(404, "NOT_FOUND", message);
  }
}

/** 409: state conflict, such as a duplicate or a version mismatch. */
export class ConflictError extends ApiError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(409, "CONFLICT", message, details);
  }
}

/**
 * 409: the record was changed by another request between its read and its write (its revision
 * moved). A write by id without If-Match is tried again on the record as it is then
 * (`unconditional`, http.ts); with If-Match it answers 409.
 */
export class RecordChangedError extends ConflictError {
  constructor() {
    super("The record was changed by another request.");
  }
}

/** 422: valid input that fails a business rule. */
export class BusinessRuleError extends ApiError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(422, "BUSINESS_RULE_VIOLATION", message, details);
  }
}

/** 429: rate limit exceeded; carries `Retry-After`. */
export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(429, "RATE_LIMITED", `Too many requests. Retry after ${seconds} seconds.`, undefined, {
      "Retry-After": String(seconds),
    });
  }
}

/** 503: the service cannot answer now (`/vN/ready` when the store does not answer); carries `Retry-After`. */
export class ServiceUnavailableError extends ApiError {
  constructor(retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(503, "SERVICE_UNAVAILABLE", "The service is not ready. Retry later.", undefined, {
      "Retry-After": String(seconds),
    });
  }
}

/** 500: server-side failure. The message never carries internals; `cause`, the original error, is only logged. */
export class InternalError extends ApiError {
  constructor(cause?: unknown) {
    super(500, "INTERNAL_ERROR", "An unexpected error occurred.");
    if (cause !== undefined) this.cause = cause;
  }
}

/**
 * A business-rule (422) or conflict (409) error in the names of the API version that was called:
 * the store and the rules name a field by its storage name, which a field renamed in a later
 * version (`renamed: { in: v4, from: status }`) does not show in this one. `names` maps each such
 * storage name to the version's (the generated routes give it, route config `names`); each
 * detail's first path segment and each whole word of the message and issues are translated.
 * Any other error is returned as it is: a 400 already names what the request sent.
 */
export function inVersionNames(error: ApiError, names: Readonly<Record<string, string>>): ApiError {
  if (error.status !== 409 && error.status !== 422) return error;
  const keys = Object.keys(names);
  if (keys.length === 0) return error;
  // Storage names are identifiers (`[a-z][a-z0-9_]*`): nothing in them to escape.
  const words = new RegExp(`(?<![A-Za-z0-9_.])(${keys.join("|")})(?![A-Za-z0-9_])`, "g");
  const text = (s: string) => s.replace(words, (name) => names[name] ?? name);
  const details = error.details?.map((d) => {
    const [first, ...rest] = d.field.split(".");
    return { field: [names[first!] ?? first, ...rest].join("."), issue: text(d.issue) };
  });
  return new ApiError(error.status, error.code, text(error.message), details, error.headers);
}
