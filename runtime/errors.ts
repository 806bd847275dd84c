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
