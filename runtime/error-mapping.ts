/**
 * Every failure as the error envelope with an exact status: Fastify's own errors (body parsing,
 * limits, the router) become 400s, anything else that is not an ApiError a 500 without its
 * internals.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ClientGoneError } from "./client-scope.ts";
import { ApiError, InternalError, NotFoundError, ValidationError } from "./errors.ts";

/** The answer to a method and path that no operation serves. */
export function noOperation(): NotFoundError {
  return new NotFoundError("No operation answers this method and path.");
}

export function urlTooLong(maxUrlLength: number): ValidationError {
  return new ValidationError(
    [{ field: "url", issue: `must be at most ${maxUrlLength} characters` }],
    "The request URL is too long.",
  );
}

/** Errors that mean the client sent something unreadable: Fastify's own 4xx errors. */
function isClientError(error: FastifyError): boolean {
  const status = typeof error.statusCode === "number" ? error.statusCode : 500;
  return status >= 400 && status < 500 && typeof error.code === "string" && error.code.startsWith("FST_ERR_");
}

/**
 * Fastify's own errors (body parsing, limits, the router) become 400s; anything else that
 * is not an ApiError is an unexpected failure, answered 500 without its internals.
 */
export function toApiError(error: FastifyError | ApiError, maxUrlLength: number, url = ""): ApiError {
  if (error instanceof ApiError) {
    // A 500 made around a failure to reach the database (an async `authenticate`, a service) says so too.
    return error instanceof InternalError && isRetryable(error.cause) ? storeUnreachable(error.cause) : error;
  }
  if (error.statusCode === 404) return new NotFoundError();
  // The database (or another peer of the service) is unreachable or cut the connection: a 500
  // the client may retry, never the client's fault (an ECONNRESET of the store is not its socket's).
  // So is a statement the database gave up on for a while (its statement_timeout, a deadlock).
  if (isRetryable(error)) return storeUnreachable(error);
  // The client closed the connection before its body arrived: its failure, not the service's.
  // Node's request stream reports it as `aborted` (ECONNRESET, no syscall).
  if (error.code === "ECONNRESET") {
    return new ValidationError(
      [{ field: "body", issue: "was not received completely" }],
      "The request body could not be read.",
    );
  }
  if (!isClientError(error)) return new InternalError(error);
  switch (error.code) {
    case "FST_ERR_MAX_PARAM_LENGTH":
      return urlTooLong(maxUrlLength);
    case "FST_ERR_BAD_URL":
      return new ValidationError(
        [
          {
            field: "url",
            issue: `must be a valid URL${malformedEscape(url) ? ": a percent-encoding is malformed" : ""}`,
          },
        ],
        "The request URL is not valid.",
      );
  }
  return new ValidationError(
    [{ field: "body", issue: clientIssue(error) }],
    "The request body could not be read.",
  );
}

/** Seconds a client is asked to wait after a failure to reach the database. */
export const UNREACHABLE_RETRY_SECONDS = 5;

/** A 500 with `Retry-After`: the database could not be reached, cut the connection or gave up on a statement for a while. Logged with its cause. */
export function storeUnreachable(cause: unknown): ApiError {
  const error = new ApiError(500, "INTERNAL_ERROR", "An unexpected error occurred.", undefined, {
    "Retry-After": String(UNREACHABLE_RETRY_SECONDS),
  });
  error.cause = cause;
  return error;
}

/** Socket errors of a connection the service opened (a syscall's, not the request stream's). */
const CONNECTION_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Whether `error` is a failure to reach the database: a socket error of the service's own
 * connection (it names a syscall: `read ECONNRESET`, `connect ECONNREFUSED`), pg's messages for a
 * connection that ended or never opened, or PostgreSQL's connection failures (SQLSTATE class 08,
 * the server shutting down or starting, 57P01-57P03, too many connections, 53300).
 */
export function isConnectionFailure(error: unknown): boolean {
  const e = error as { code?: unknown; syscall?: unknown; message?: unknown } | null;
  if (typeof e !== "object" || e === null) return false;
  const code = typeof e.code === "string" ? e.code : "";
  if (CONNECTION_CODES.has(code) && typeof e.syscall === "string") return true;
  if (/^08|^57P0[123]$|^53300$/.test(code)) return true;
  const message = typeof e.message === "string" ? e.message : "";
  return /^Connection terminated|^timeout exceeded when trying to connect|^Client has encountered a connection error|^Connection refused/.test(
    message,
  );
}

/**
 * Whether `error` is a failure the same request may not meet a little later: the database's
 * connection failing (above), or a statement PostgreSQL gave up on for what other sessions did
 * or how busy it is: cancelled by `statement_timeout` (57014; a lock held by another session,
 * a slow table), a deadlock (40P01) or a serialization failure (40001). A statement cancelled
 * because its client left is not answered to anyone (client-scope.ts).
 */
export function isRetryable(error: unknown): boolean {
  if (isConnectionFailure(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return code === "57014" || code === "40P01" || code === "40001";
}

function malformedEscape(url: string): boolean {
  try {
    decodeURI(url);
    return false;
  } catch {
    return true;
  }
}

function clientIssue(error: FastifyError): string {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return "is larger than the body size limit";
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return "must be sent as application/json";
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return "does not match its Content-Length";
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "must not be empty with Content-Type application/json";
    default:
      return "must be valid JSON";
  }
}

/** Answers `error` with its status, its headers and the envelope; a 500 is logged with its cause. */
export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  // Work stopped because its client left (client-scope.ts): expected, and answered to nobody.
  if (error.cause instanceof ClientGoneError) request.log.info("client gone: its work was stopped");
  else if (error.status === 500) request.log.error({ err: error.cause ?? error }, "unexpected failure");
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type("application/json; charset=utf-8").send(error.toEnvelope());
}
