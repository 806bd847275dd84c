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
import type { Authenticate, Principal } from "./auth.ts";
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

  // The hooks on the way to a handler are callback hooks, synchronous when `authenticate` is:
  // an async hook costs promises and turns of the microtask queue on every request.
  app.addHook("onRequest", (request, reply, done) => {
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
    if (request.url.length > maxUrlLength) return done(urlTooLong(maxUrlLength));
    if (request.headers.host === undefined && request.raw.httpVersion === "1.1") {
      return done(
        new ValidationError(
          [{ field: "Host", issue: "is required in HTTP/1.1" }],
          "The request has no Host header.",
        ),
      );
    }
    done();
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
  const limit = options.rateLimit ? await rateLimiter(app, options.rateLimit) : null;

  for (const version of options.versions) {
    await app.register(async (scope) => {
      if (limit) scope.addHook("onRequest", limit);
      await version.docs(scope);
    });
    await app.register(async (scope) => {
      scope.addHook("onRequest", (request, reply, done) => {
        // An empty path segment where an id belongs (`/v2/orders/`) names no operation.
        if (hasEmptyParam(request.params))
          return done(new NotFoundError("No operation answers this method and path."));
        // A synchronous `authenticate` (the usual case) is answered without waiting for a promise.
        const principal = options.authenticate(request);
        if (isPromise(principal)) {
          principal.then(
            (p) => authenticated(request, reply, p, limit, done),
            (error: unknown) => done(error instanceof Error ? error : new InternalError(error)),
          );
        } else {
          authenticated(request, reply, principal, limit, done);
        }
      });
      await version.routes(scope);
    });
  }
  return app;
}

type Done = (error?: Error) => void;
type Limit = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** After `authenticate`: count the request against the rate limit, then 401 without a principal. */
function authenticated(
  request: FastifyRequest,
  reply: FastifyReply,
  principal: Principal | null | undefined,
  limit: Limit | null,
  done: Done,
): void {
  request.principal = principal ?? null;
  if (!limit) return done(request.principal ? undefined : new UnauthenticatedError());
  limit(request, reply, (error) =>
    done(error ?? (request.principal ? undefined : new UnauthenticatedError())),
  );
}

/**
 * The rate limiter: `max` requests per key per window, the window starting at a key's first
 * request; a request counts against its principal, or its client address without one. In one
 * process the counts live in memory (the 5000 most recently seen principals and as many
 * addresses, as @fastify/rate-limit's local store keeps its keys) and the check is synchronous;
 * with `redis`, @fastify/rate-limit counts in Redis for every instance. Either way a refused
 * request gets `Retry-After` and the `X-RateLimit-*` headers; an allowed one gets none.
 */
async function rateLimiter(app: FastifyInstance, settings: RateLimitOptions): Promise<Limit> {
  const { max, windowMs, redis } = settings;
  if (!redis) {
    // Read as @fastify/rate-limit reads them.
    const limit = Number.isFinite(max) && max >= 0 ? Math.trunc(max) : 1000;
    const window = Number.isFinite(windowMs) && windowMs >= 0 ? Math.trunc(windowMs) : 60_000;
    // Keyed by the principal's id or the address itself: no key string is built per request.
    const principals = new LocalWindows(limit, window);
    const addresses = new LocalWindows(limit, window);
    return (request, reply, done) => {
      const principal = request.principal;
      const refusal = principal ? principals.count(principal.id) : addresses.count(request.ip);
      if (refusal === null) return done();
      reply.headers({
        "x-ratelimit-limit": refusal.max,
        "x-ratelimit-remaining": 0,
        "x-ratelimit-reset": refusal.ttlSeconds,
        "retry-after": refusal.ttlSeconds,
      });
      done(new RateLimitedError(refusal.ttlMs / 1000));
    };
  }
  await app.register(rateLimit, {
    global: false,
    max,
    timeWindow: windowMs,
    redis: redis as never,
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
  const handler = app.rateLimit();
  return (request, reply, done) => {
    handler.call(app, request, reply).then(
      () => done(),
      (error: unknown) => done(error instanceof Error ? error : new InternalError(error)),
    );
  };
}

interface RateWindow {
  count: number;
  startMs: number;
}

/** Fixed-window request counts per key, the least recently seen key forgotten beyond `capacity`. */
class LocalWindows {
  private readonly windows = new Map<string, RateWindow>();
  private lastKey: string | null = null;
  private readonly max: number;
  private readonly windowMs: number;
  private readonly capacity: number;

  constructor(max: number, windowMs: number, capacity = 5000) {
    this.max = max;
    this.windowMs = windowMs;
    this.capacity = capacity;
  }

  /** Counts one request of `key`: null when it is within the limit, else how long until the window ends. */
  count(key: string): { max: number; ttlMs: number; ttlSeconds: number } | null {
    const now = Date.now();
    let window = this.windows.get(key);
    if (window === undefined) {
      window = { count: 0, startMs: now };
      if (this.windows.size >= this.capacity) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(key, window);
    } else if (key !== this.lastKey) {
      // Most recently seen last: Map keeps insertion order, so the first key is the least recent.
      this.windows.delete(key);
      this.windows.set(key, window);
    }
    this.lastKey = key;
    if (window.startMs + this.windowMs <= now) {
      window.count = 0;
      window.startMs = now;
    }
    window.count += 1;
    if (window.count <= this.max) return null;
    const ttlMs = this.windowMs - (now - window.startMs);
    return { max: this.max, ttlMs, ttlSeconds: Math.ceil(ttlMs / 1000) };
  }
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
  const deprecated = deprecatedVersion(options, request.url);
  if (deprecated) {
    reply.header("deprecation", "true");
    reply.header("sunset", deprecated.deprecation.sunset);
    reply.header("link", successorLink(options, deprecated));
  }
}

function deprecationHeaders(options: AppOptions, url: string): Array<[string, string]> {
  const deprecated = deprecatedVersion(options, url);
  if (!deprecated) return [];
  return [
    ["deprecation", "true"],
    ["sunset", deprecated.deprecation.sunset],
    ["link", successorLink(options, deprecated)],
  ];
}

function successorLink(options: AppOptions, { deprecation, resource }: DeprecatedTarget): string {
  return `<${options.baseUrl}/${deprecation.successor}/${resource}>; rel="successor-version"`;
}

interface DeprecatedTarget {
  deprecation: Deprecation;
  /** The path segment after the version, `orders` of `/v1/orders/…`; empty when there is none. */
  resource: string;
}

/** The deprecated version a request target is in, with the segment after it; null in any other version. */
function deprecatedVersion(options: AppOptions, url: string): DeprecatedTarget | null {
  // Most requests are plain `/vN/…` targets: read without regular expressions or splitting.
  // Only an unusual target (absolute form, percent-encoding, a fragment) is parsed like the router does.
  let path: string | null = null;
  for (const version of options.versions) {
    const deprecation = version.deprecation;
    if (!deprecation) continue;
    if (path === null) {
      const plain = url.charCodeAt(0) === 47 && !url.includes("%") && !url.includes("#");
      const query = plain ? url.indexOf("?") : -1;
      path = plain ? (query === -1 ? url : url.slice(0, query)) : routedPath(url);
    }
    // `path` starts with "/": its first segment is this version's name when the name is followed by "/" or the end.
    const after = version.name.length + 1;
    if (!path.startsWith(version.name, 1)) continue;
    if (path.length === after) return { deprecation, resource: "" };
    if (path.charCodeAt(after) !== 47) continue;
    const next = path.indexOf("/", after + 1);
    return { deprecation, resource: next === -1 ? path.slice(after + 1) : path.slice(after + 1, next) };
  }
  return null;
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
  for (const name in params) {
    if (name !== "*" && (params as Record<string, unknown>)[name] === "") return true;
  }
  return false;
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
