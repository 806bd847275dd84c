/**
 * The Fastify application every generated service runs in: request ids, JSON-only bodies
 * with a size limit, authentication, rate limiting, deprecation headers, and one error
 * handler that answers every failure with the envelope and an exact status.
 */
import { createServer } from "node:http";
import type { Duplex } from "node:stream";
import rateLimit from "@fastify/rate-limit";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from "fastify";
import type { Authenticate } from "./auth.ts";
import {
  ApiError,
  InternalError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
  ValidationError,
} from "./errors.ts";
import { isUuidV7, newId } from "./uuid.ts";

export interface Deprecation {
  /** IMF-fixdate of the sunset, `Wed, 30 Jun 2027 00:00:00 GMT`. */
  sunset: string;
  /** The successor version, `v2`. */
  successor: string;
}

export interface VersionPlugin {
  name: string;
  deprecation: Deprecation | null;
  /** Registers the version's operations; authentication already runs in this scope. */
  routes(app: FastifyInstance): void | Promise<void>;
  /** Registers `/vN/openapi.json` and `/vN/docs`, which need no credentials. */
  docs(app: FastifyInstance): void | Promise<void>;
}

export interface RateLimitOptions {
  /** Requests per principal (or client address without one) per window. */
  max: number;
  windowMs: number;
  /** A shared store for several instances, such as an ioredis client. */
  redis?: unknown;
}

export interface AppOptions {
  baseUrl: string;
  authenticate: Authenticate;
  rateLimit: RateLimitOptions | false;
  /** Largest request body in bytes; larger bodies answer 400. */
  bodyLimit: number;
  /** Longest request target (path and query) in characters; longer ones answer 400. */
  maxUrlLength?: number;
  /** Fastify's logger: true, false, or its options (`{ level, stream }`). Unexpected failures are logged with the original error. */
  logger?: FastifyServerOptions["logger"];
  versions: VersionPlugin[];
}

export async function createApp(options: AppOptions): Promise<FastifyInstance> {
  const maxUrlLength = options.maxUrlLength ?? 4096;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: options.bodyLimit,
    // Headers up to 64 KiB reach the app, so an over-long URL gets the envelope, not a bare 431.
    serverFactory: (handler) => createServer({ maxHeaderSize: 65_536 }, handler),
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && isUuidV7(given) ? given.toLowerCase() : newId();
    },
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: maxUrlLength },
    // Requests Node's HTTP parser refuses (headers over 64 KiB, malformed HTTP, a body that
    // never arrives) answer 400 with the envelope and a request id, not Fastify's own body.
    clientErrorHandler: answerClientError,
    // Errors of the router itself (a malformed percent-encoding, an over-long path parameter)
    // answer with the envelope and the headers of every response, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      addStandardHeaders(reply, request, options);
      return sendError(reply, request, toApiError(error, maxUrlLength));
    },
  });
  app.decorateRequest("principal", null);
  app.removeContentTypeParser(["text/plain"]);
  // JSON only. An empty body with a JSON Content-Type (a DELETE from a client that always
  // sends one) is no body; an operation that needs one answers "must be a JSON object".
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser(["application/json"]);
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text === "") done(null, undefined);
    else parseJson(request, text, done);
  });

  app.addHook("onRequest", async (request, reply) => {
    addStandardHeaders(reply, request, options);
    if (request.url.length > maxUrlLength) throw urlTooLong(maxUrlLength);
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) =>
    sendError(reply, request, toApiError(error, maxUrlLength)),
  );
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, new NotFoundError("No operation answers this method and path.")),
  );

  // The rate limit runs after authentication has been tried and before its outcome: a request
  // counts against its principal, or against its client address when it has none, so guessing
  // credentials is limited too.
  let limit: ((request: FastifyRequest, reply: FastifyReply) => Promise<unknown>) | null = null;
  if (options.rateLimit) {
    const { max, windowMs, redis } = options.rateLimit;
    await app.register(rateLimit, {
      global: false,
      max,
      timeWindow: windowMs,
      ...(redis ? { redis: redis as never } : {}),
      keyGenerator: (request) =>
        request.principal ? `principal:${request.principal.id}` : `address:${request.ip}`,
      errorResponseBuilder: (_request, context) => new RateLimitedError(context.ttl / 1000),
      addHeadersOnExceeding: {
        "x-ratelimit-limit": true,
        "x-ratelimit-remaining": true,
        "x-ratelimit-reset": true,
      },
      addHeaders: {
        "retry-after": true,
        "x-ratelimit-limit": true,
        "x-ratelimit-remaining": true,
        "x-ratelimit-reset": true,
      },
    });
    limit = app.rateLimit();
  }

  for (const version of options.versions) {
    await app.register(async (scope) => {
      if (limit) scope.addHook("onRequest", limit);
      await version.docs(scope);
    });
    await app.register(async (scope) => {
      scope.addHook("onRequest", async (request, reply) => {
        request.principal = (await options.authenticate(request)) ?? null;
        if (limit) await limit(request, reply);
        if (!request.principal) throw new UnauthenticatedError();
      });
      await version.routes(scope);
    });
  }
  return app;
}

function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  if (socket.writable) {
    const issue =
      error.code === "HPE_HEADER_OVERFLOW"
        ? { field: "url", issue: "must fit, with the other headers, in 65536 bytes" }
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? { field: "body", issue: "was not received in time" }
          : { field: "request", issue: "must be a valid HTTP request" };
    const body = JSON.stringify(new ValidationError([issue], "The request could not be read.").toEnvelope());
    socket.write(
      "HTTP/1.1 400 Bad Request\r\n" +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${newId()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** `X-Request-Id` on every response; `Deprecation`, `Sunset` and `Link` on every response of a deprecated version. */
function addStandardHeaders(reply: FastifyReply, request: FastifyRequest, options: AppOptions): void {
  reply.header("x-request-id", request.id);
  const deprecation = deprecationOf(options.versions, request.url);
  if (deprecation) {
    reply.header("deprecation", "true");
    reply.header("sunset", deprecation.sunset);
    reply.header(
      "link",
      `<${options.baseUrl}/${deprecation.successor}/${collectionSegment(request.url)}>; rel="successor-version"`,
    );
  }
}

function deprecationOf(versions: VersionPlugin[], url: string): Deprecation | null {
  const match = /^\/(v[1-9]\d*)(?:[/?]|$)/.exec(url);
  if (!match) return null;
  return versions.find((v) => v.name === match[1])?.deprecation ?? null;
}

function collectionSegment(url: string): string {
  return url.split("?")[0]!.split("/")[2] ?? "";
}

function urlTooLong(maxUrlLength: number): ValidationError {
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
function toApiError(error: FastifyError | ApiError, maxUrlLength: number): ApiError {
  if (error instanceof ApiError) return error;
  if (error.statusCode === 404) return new NotFoundError();
  if (!isClientError(error)) return new InternalError(error);
  switch (error.code) {
    case "FST_ERR_MAX_PARAM_LENGTH":
      return urlTooLong(maxUrlLength);
    case "FST_ERR_BAD_URL":
      return new ValidationError(
        [{ field: "url", issue: "must be a valid URL: a percent-encoding is malformed" }],
        "The request URL is not valid.",
      );
  }
  return new ValidationError(
    [{ field: "body", issue: clientIssue(error) }],
    "The request body could not be read.",
  );
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

function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  if (error.status === 500) request.log.error({ err: error.cause ?? error }, "unexpected failure");
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type("application/json; charset=utf-8").send(error.toEnvelope());
}
