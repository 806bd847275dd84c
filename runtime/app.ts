/**
 * The Fastify application every generated service runs in: request ids, JSON-only bodies
 * with a size limit, authentication, the rate limit, deprecation headers, and one error
 * handler that answers every failure with the envelope and an exact status.
 */
import { createServer } from "node:http";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from "fastify";
import type { Authenticate, Authorize, Principal } from "./auth.ts";
import {
  answerExpectContinue,
  type ConnectionOptions,
  connectionLimits,
  discardRefusedBodies,
  serverTimeouts,
  trackRequests,
} from "./connections.ts";
import { inClientScope, watchHalfCloses } from "./client-scope.ts";
import { type CorsOptions, registerCors } from "./cors.ts";
import { addDeprecationHeaders, type Deprecation, type DeprecationSettings } from "./deprecation.ts";
import { noOperation, sendError, toApiError, urlTooLong } from "./error-mapping.ts";
import { ApiError, InternalError, inVersionNames, UnauthenticatedError, ValidationError } from "./errors.ts";
import { type IdempotencyKeyStore, MemoryIdempotencyKeys, registerIdempotency } from "./idempotency.ts";
import { type ReadyProbe, registerHealth } from "./health.ts";
import { registerJsonParser } from "./json-body.ts";
import { type LogLevel, loggerOptions, RequestLog } from "./logging.ts";
import { type Done, type Limit, type RateLimitOptions, rateLimiter } from "./rate-limit.ts";
import {
  DEFAULT_EXPENSIVE_READS,
  expensiveReadLimiter,
  releaseExpensiveRead,
  skipAbandoned,
  type ExpensiveReadOptions,
} from "./expensive-reads.ts";
import { answerClientError, answerConnect, completingHeads, keepRequestHeads } from "./raw-socket-errors.ts";
import { isUuidV7, newId } from "./uuid.ts";

export interface VersionPlugin {
  name: string;
  deprecation: Deprecation | null;
  /** Registers the version's operations; authentication already runs in this scope. */
  routes(app: FastifyInstance): void | Promise<void>;
  /** Registers `/vN/openapi.json` and `/vN/docs`, which need no credentials. */
  docs(app: FastifyInstance): void | Promise<void>;
}

export interface AppOptions {
  baseUrl: string;
  authenticate: Authenticate;
  rateLimit: RateLimitOptions | false;
  /** Largest request body in bytes; larger bodies answer 400. */
  bodyLimit: number;
  /** Longest request target (path and query) in characters; longer ones answer 400. */
  maxUrlLength?: number;
  /** Timeouts of slow and idle connections and the cap on open ones; see ConnectionOptions for the defaults. */
  connections?: ConnectionOptions;
  /** What writes ask of a record they refer to: one the principal may not `read` is answered as missing (422). */
  authorize?: Authorize;
  /** Answer 404 instead of 403 for a record the principal may not read at all, so its existence does not leak. */
  hideForbidden?: boolean;
  /** Fastify's logger: true, false, or its options (`{ level, stream }`). Unexpected failures are logged with the original error; credentials are redacted (logging.ts). */
  logger?: FastifyServerOptions["logger"];
  /** The level of the one summary line per request (default `info`; `silent`: none). */
  requestLogLevel?: LogLevel;
  /** Browser pages of these origins may call the service (CORS); none when absent. */
  cors?: CorsOptions;
  /** Which peers' `X-Forwarded-For` (and `-Proto`, `-Host`) to believe; see `TRUSTED_PROXIES`. */
  trustProxy?: TrustProxy;
  /** Where the `Idempotency-Key`s of POSTs are kept (the store's, SPEC §12.7); in the process when absent. */
  idempotency?: IdempotencyKeyStore;
  /**
   * The writes run code of the user's (hooks, services, authorize): a SQL store claims a POST's key before
   * its handler (one statement more), so that a repeat on another instance while it runs answers
   * 409 (SPEC §12.7). Default true.
   */
  userCode?: boolean;
  /** What `/vN/ready` asks (health.ts); without it every instance that serves is ready. */
  ready?: ReadyProbe;
  /** Expensive reads (`q`, `sort`, operator filters, exports) per principal at once: expensive-reads.ts. Default 4; false: no limit. */
  expensiveReads?: ExpensiveReadOptions | false;
  versions: VersionPlugin[];
}

/** Fastify's `trustProxy`: false (believe no peer), true (every peer), or addresses, ranges and the names below. */
export type TrustProxy = boolean | string | string[];

/**
 * The peers believed by default: a load balancer on the same machine (loopback) only. Behind
 * one, a request's address is then its client's, taken from `X-Forwarded-For`, so requests
 * without credentials are rate-limited per client rather than all as the balancer; any other
 * peer's header is ignored (a client cannot claim another address). A balancer on another
 * machine is named: `trustProxy: "10.0.0.5, 10.0.1.0/24"`, `canon serve --trust-proxy`.
 */
export const TRUSTED_PROXIES = "loopback";

export async function createApp(appOptions: AppOptions): Promise<FastifyInstance> {
  // The first path segments of each version's routes, filled as they are registered: the only
  // resources a deprecated version's `Link` names (deprecation.ts).
  const resources = new Map<string, Set<string>>();
  const options: AppOptions & DeprecationSettings = { ...appOptions, resources };
  const maxUrlLength = options.maxUrlLength ?? 4096;
  const limits = connectionLimits(options.connections);
  const app = Fastify({
    logger: loggerOptions(options.logger ?? false),
    // One summary line per request instead of Fastify's two; every line of a request carries its
    // id as `request_id`, the X-Request-Id of the answer.
    logController: new RequestLog(options.logger ? (options.requestLogLevel ?? "info") : "silent"),
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy ?? TRUSTED_PROXIES,
    // Headers up to 64 KiB reach the app, so an over-long URL gets the envelope, not a bare 431.
    serverFactory: (handler) => {
      // HTTP/1.1 without Host is refused in onRequest below, with the envelope; Node's own refusal is a bare 400.
      // Each request runs in its client's scope: work below it (a query) stops when the client leaves.
      const handle = inClientScope(trackRequests(completingHeads(handler)));
      const server = createServer(
        { maxHeaderSize: 65_536, requireHostHeader: false, ...serverTimeouts(limits) },
        handle,
      );
      server.maxConnections = limits.maxConnections;
      // An `Expect` other than 100-continue is ignored (RFC 9110 §10.1.1 allows it), not a bare 417.
      server.on("checkExpectation", handle);
      // 100-continue: no `100 Continue` for a body over the limit, answered without it.
      answerExpectContinue(server, options.bodyLimit, handle);
      // A refused body is read and thrown away (up to a bound) before the connection closes.
      discardRefusedBodies(server, limits.discardLimitBytes);
      // A client that half-closes after its request (shuts down its sending side) still gets the
      // answer; by default Node ends the connection at once and drops the answer in progress.
      (server as typeof server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
      // But the work of a request whose client half-closed stops, a moment later, unless told otherwise.
      if (limits.halfCloseIsGone) watchHalfCloses(server, limits.halfCloseGraceMs);
      keepRequestHeads(server);
      answerConnect(server, options);
      return server;
    },
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && isUuidV7(given) ? given.toLowerCase() : newId();
    },
    routerOptions: { ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: maxUrlLength },
    // Every GET route answers HEAD as well, as one route (onRoute below), instead of Fastify's
    // second route per GET: 3 in 10 fewer routes to build when the app starts (and on every save
    // of `canon dev`).
    exposeHeadRoutes: false,
    // While `close` drains (SIGTERM), a request that still arrives on an open connection (a
    // balancer's busy keep-alive connection) is answered by its route, with `Connection: close`,
    // over the store that stays open until every connection ended, instead of Fastify's bare 503
    // (no envelope, no X-Request-Id, a status no operation documents).
    return503OnClosing: false,
    // Requests Node's HTTP parser refuses (headers over 64 KiB, malformed HTTP, a body that
    // never arrives) answer 400 with the envelope and a request id, not Fastify's own body.
    clientErrorHandler: (error, socket) =>
      answerClientError(error, socket, options, limits.discardLimitBytes),
    // Errors of the router itself (a malformed percent-encoding, an over-long path parameter)
    // answer with the envelope and the headers of every response, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      addStandardHeaders(reply, request, options);
      return sendError(reply, request, toApiError(error, maxUrlLength, request.url));
    },
  });
  app.addHook("onRoute", (route) => {
    // What Fastify's exposeHeadRoutes did: a route that answers GET (and not HEAD already) answers
    // HEAD too, unless it says `exposeHeadRoute: false`.
    const methods = [route.method].flat();
    if (methods.includes("GET") && !methods.includes("HEAD") && route.exposeHeadRoute !== false) {
      route.method = [...methods, "HEAD"];
      route.onSend = [...(route.onSend === undefined ? [] : [route.onSend].flat()), answerHead];
    }
    const [, version, segment] = /^\/(v[1-9]\d*)\/([^/:*]+)/.exec(route.url) ?? [];
    if (!version || !segment) return;
    const known = resources.get(version) ?? new Set<string>();
    known.add(segment);
    resources.set(version, known);
  });
  app.decorateRequest("principal", null);
  app.decorate("hideForbidden", options.hideForbidden ?? false);
  app.decorate("authorizer", options.authorize ?? null);
  app.removeContentTypeParser(["text/plain"]);
  registerJsonParser(app);

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
  // After the headers of every answer, so that a preflight carries them too.
  if (options.cors) await registerCors(app, options.cors);

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) =>
    // No operation answers this method and path: 404, even when its body could not be read.
    request.is404 && !(error instanceof ApiError)
      ? sendError(reply, request, noOperation())
      : sendError(reply, request, shownIn(request, toApiError(error, maxUrlLength))),
  );
  app.setNotFoundHandler((request, reply) => sendError(reply, request, noOperation()));

  // The rate limit runs after authentication has been tried and before its outcome: a request
  // counts against its principal, or against its client address when it has none, so guessing
  // credentials is limited too.
  const limit = options.rateLimit ? await rateLimiter(app, options.rateLimit) : null;
  const expensive =
    options.expensiveReads === false
      ? null
      : expensiveReadLimiter(options.expensiveReads ?? DEFAULT_EXPENSIVE_READS);
  // Every POST takes an Idempotency-Key, checked once the principal and the body are known.
  registerIdempotency(app, options.idempotency ?? new MemoryIdempotencyKeys(), options.userCode ?? true);
  // `/vN/health` and `/vN/ready`: outside the versions' scopes, so without credentials or rate limit.
  registerHealth(
    app,
    options.versions.map((version) => version.name),
    options.ready,
  );

  for (const version of options.versions) {
    await app.register(async (scope) => {
      if (limit) scope.addHook("onRequest", limit);
      await version.docs(scope);
    });
    await app.register(async (scope) => {
      scope.addHook("onRequest", (request, reply, done) => {
        // An empty path segment where an id belongs (`/v2/orders/`) names no operation.
        if (hasEmptyParam(request.params)) return done(noOperation());
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
      // After authentication: expensive reads counted per principal, and no handler for a client gone.
      if (expensive) {
        scope.addHook("onRequest", expensive);
        scope.addHook("onSend", releaseExpensiveRead);
      }
      scope.addHook("preHandler", skipAbandoned);
      await version.routes(scope);
    });
  }
  return app;
}

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
 * `X-Request-Id` and `X-Content-Type-Options: nosniff` on every response; `Deprecation`,
 * `Sunset` and `Link` on every response of a deprecated version.
 */
function addStandardHeaders(reply: FastifyReply, request: FastifyRequest, options: AppOptions): void {
  reply.header("x-request-id", request.id);
  reply.header("x-content-type-options", "nosniff");
  addDeprecationHeaders(reply, options, request.url);
}

function hasEmptyParam(params: unknown): boolean {
  if (!params || typeof params !== "object") return false;
  for (const name in params) {
    if (name !== "*" && (params as Record<string, unknown>)[name] === "") return true;
  }
  return false;
}

/**
 * A HEAD request's answer: the GET's status and headers, its Content-Length the length of the
 * body a GET would get, and no body (a stream's is drained or cancelled). The last `onSend` of
 * every GET route, as Fastify's own HEAD routes have it; a GET passes through.
 */
function answerHead(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  if (request.method !== "HEAD") return done(null, payload);
  if (payload === undefined || payload === null) {
    reply.header("content-length", "0");
  } else if (typeof (payload as { resume?: unknown }).resume === "function") {
    const stream = payload as NodeJS.ReadableStream & {
      on(event: "error", listener: (error: Error) => void): unknown;
    };
    stream.on("error", (error) => reply.log.error({ err: error }, "a HEAD answer's stream failed"));
    stream.resume();
  } else if (typeof (payload as { getReader?: unknown }).getReader === "function") {
    (payload as ReadableStream)
      .cancel("a HEAD answer has no body")
      .catch((error: unknown) => reply.log.error({ err: error }, "a HEAD answer's stream failed"));
  } else {
    reply.header("content-length", String(Buffer.byteLength(payload as string | Buffer)));
  }
  done(null, null);
}

/**
 * The route's config of a version whose fields are renamed in a later one (the generated routes
 * set it): each renamed field's storage name, and the name this version shows.
 */
export interface VersionNamesConfig {
  names?: Readonly<Record<string, string>>;
}

/** The error in the names of the route's version (`inVersionNames`). */
function shownIn(request: FastifyRequest, error: ApiError): ApiError {
  const names = (request.routeOptions?.config as VersionNamesConfig | undefined)?.names;
  return names ? inVersionNames(error, names) : error;
}
