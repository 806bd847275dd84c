/**
 * The Fastify application every generated service runs in: request ids, JSON-only bodies
 * with a size limit, authentication, rate limiting, deprecation headers, and one error
 * handler that answers every failure with the envelope and an exact status.
 */
import { createServer, type IncomingMessage } from "node:http";
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
    serverFactory: (handler) => {
      // HTTP/1.1 without Host is refused in onRequest below, with the envelope; Node's own refusal is a bare 400.
      const server = createServer({ maxHeaderSize: 65_536, requireHostHeader: false }, handler);
      // An `Expect` other than 100-continue is ignored (RFC 9110 §10.1.1 allows it), not a bare 417.
      server.on("checkExpectation", handler);
      // A client that half-closes after its request (shuts down its sending side) still gets the
      // answer; by default Node ends the connection at once and drops the answer in progress.
      (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
      return server;
    },
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && isUuidV7(given) ? given.toLowerCase() : newId();
    },
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: maxUrlLength },
    // Requests Node's HTTP parser refuses (headers over 64 KiB, malformed HTTP, a body that
    // never arrives) answer 400 with the envelope and a request id, not Fastify's own body.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, options),
    // Errors of the router itself (a malformed percent-encoding, an over-long path parameter)
    // answer with the envelope and the headers of every response, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      addStandardHeaders(reply, request, options);
      return sendError(reply, request, toApiError(error, maxUrlLength, request.url));
    },
  });
  // CONNECT never reaches Fastify: Node hands the socket over, and would close it unanswered.
  app.server.on("connect", (request: IncomingMessage, socket: Duplex) => {
    const error = new NotFoundError("No operation answers this method and path.");
    writeRawError(socket, 404, "Not Found", error, request.url ?? "", options);
    socket.destroy();
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
    // With Upgrade, Node reads no end of stream inside the body as an error: a body cut short by
    // the client's close would hold the connection open (half-open, see serverFactory) for good.
    if (request.headers.upgrade !== undefined) {
      const raw = request.raw;
      const cutShort = () => {
        if (!raw.complete) raw.socket.destroy();
      };
      if (raw.socket.readableEnded) cutShort();
      else raw.socket.once("end", cutShort);
    }
    if (request.url.length > maxUrlLength) throw urlTooLong(maxUrlLength);
    if (request.headers.host === undefined && request.raw.httpVersion === "1.1") {
      throw new ValidationError(
        [{ field: "Host", issue: "is required in HTTP/1.1" }],
        "The request has no Host header.",
      );
    }
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) =>
    // No operation answers this method and path: 404, even when its body could not be read.
    request.is404 && !(error instanceof ApiError)
      ? sendError(reply, request, new NotFoundError("No operation answers this method and path."))
      : sendError(reply, request, toApiError(error, maxUrlLength)),
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
      // The X-RateLimit-* headers go with a 429 only: every other answer stays as small as it can.
      addHeadersOnExceeding: {
        "x-ratelimit-limit": false,
        "x-ratelimit-remaining": false,
        "x-ratelimit-reset": false,
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
        // An empty path segment where an id belongs (`/v2/orders/`) names no operation.
        if (hasEmptyParam(request.params))
          throw new NotFoundError("No operation answers this method and path.");
        request.principal = (await options.authenticate(request)) ?? null;
        if (limit) await limit(request, reply);
        if (!request.principal) throw new UnauthenticatedError();
      });
      await version.routes(scope);
    });
  }
  return app;
}

function answerClientError(
  error: Error & { code?: string; rawPacket?: unknown },
  socket: Duplex,
  options: AppOptions,
): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  // An answer already under way on this connection is not corrupted by a second one: the
  // connection just closes.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const issue =
      error.code === "HPE_HEADER_OVERFLOW"
        ? { field: "url", issue: "must fit, with the other headers, in 65536 bytes" }
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? { field: "body", issue: "was not received in time" }
          : { field: "request", issue: "must be a valid HTTP request" };
    // The request line, when the parser got that far, tells the version: a deprecated one's
    // headers are on this answer too.
    const line = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\S+) HTTP\//.exec(
      Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString("latin1") : "",
    );
    const error400 = new ValidationError([issue], "The request could not be read.");
    writeRawError(socket, 400, "Bad Request", error400, line?.[1] ?? "", options);
  }
  socket.destroy(error);
}

/** An error answer written straight to a socket that Fastify never saw as a request. */
function writeRawError(
  socket: Duplex,
  status: number,
  reason: string,
  error: ApiError,
  url: string,
  options: AppOptions,
): void {
  if (!socket.writable) return;
  const body = JSON.stringify(error.toEnvelope());
  const headers = [
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${newId()}`,
    ...deprecationHeaders(options, url).map(([name, value]) => `${name}: ${value}`),
    "Connection: close",
  ];
  // A header value carries no byte outside visible ASCII, whatever the request line held.
  const head = headers.join("\r\n").replace(/[^\t\r\n\x20-\x7e]/g, (c) => encodeURIComponent(c));
  socket.write(`HTTP/1.1 ${status} ${reason}\r\n${head}\r\n\r\n${body}`);
}

/** `X-Request-Id` on every response; `Deprecation`, `Sunset` and `Link` on every response of a deprecated version. */
function addStandardHeaders(reply: FastifyReply, request: FastifyRequest, options: AppOptions): void {
  reply.header("x-request-id", request.id);
  for (const [name, value] of deprecationHeaders(options, request.url)) reply.header(name, value);
}

function deprecationHeaders(options: AppOptions, url: string): Array<[string, string]> {
  // Most requests are plain `/vN/…` targets: read without regular expressions. Only an
  // unusual target (absolute form, percent-encoding, a fragment) is parsed like the router does.
  const plain = url.charCodeAt(0) === 47 && !url.includes("%") && !url.includes("#");
  const query = plain ? url.indexOf("?") : -1;
  const path = plain ? (query === -1 ? url : url.slice(0, query)) : routedPath(url);
  const segments = path.split("/");
  const deprecation = options.versions.find((v) => v.name === segments[1])?.deprecation ?? null;
  if (!deprecation || segments[0] !== "") return [];
  return [
    ["deprecation", "true"],
    ["sunset", deprecation.sunset],
    ["link", `<${options.baseUrl}/${deprecation.successor}/${segments[2] ?? ""}>; rel="successor-version"`],
  ];
}

/**
 * The path of a request target as the router reads it: an absolute-form target
 * (`http://host/v1/orders`) without its scheme and authority, without query or fragment, and
 * with percent-encoded unreserved characters decoded (`/v1/%6Frders` is `/v1/orders`).
 */
function routedPath(url: string): string {
  let path = url;
  const authority = /^https?:\/\/[^/?#]*/i.exec(path);
  if (authority) path = path.slice(authority[0].length);
  const end = path.search(/[?#]/);
  if (end !== -1) path = path.slice(0, end);
  if (!path.startsWith("/")) path = `/${path}`;
  return path.replace(/%([0-9a-f]{2})/gi, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /^[A-Za-z0-9._~-]$/.test(char) ? char : escape;
  });
}

function hasEmptyParam(params: unknown): boolean {
  if (!params || typeof params !== "object") return false;
  return Object.entries(params).some(([name, value]) => name !== "*" && value === "");
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
function toApiError(error: FastifyError | ApiError, maxUrlLength: number, url = ""): ApiError {
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

function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  if (error.status === 500) request.log.error({ err: error.cause ?? error }, "unexpected failure");
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type("application/json; charset=utf-8").send(error.toEnvelope());
}
