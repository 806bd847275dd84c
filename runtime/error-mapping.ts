/**
 * Every failure as the error envelope with an exact status: Fastify's own errors (body parsing,
 * limits, the router) become 400s, anything else that is not an ApiError a 500 without its
 * internals.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
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
  if (error instanceof ApiError) return error;
  if (error.statusCode === 404) return new NotFoundError();
  // The client closed the connection before its body arrived: its failure, not the service's.
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
  if (error.status === 500) request.log.error({ err: error.cause ?? error }, "unexpected failure");
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type("application/json; charset=utf-8").send(error.toEnvelope());
}
