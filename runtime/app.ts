/**
 * The Fastify application every generated service runs in: request ids, JSON-only bodies
 * with a size limit, authentication, rate limiting, deprecation headers, and one error
 * handler that answers every failure with the envelope and an exact status.
 */
import { createServer } from "node:http";
import rateLimit from "@fastify/rate-limit";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Authenticate } from "./auth.ts";
import { ApiError, InternalError, NotFoundError, RateLimitedError, UnauthenticatedError, ValidationError } from "./errors.ts";
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
  logger?: boolean;
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
  });
  app.decorateRequest("principal", null);
  app.removeContentTypeParser(["text/plain"]);

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    const deprecation = deprecationOf(options.versions, request.url);
    if (deprecation) {
      reply.header("deprecation", "true");
      reply.header("sunset", deprecation.sunset);
      reply.header("link", `<${options.baseUrl}/${deprecation.successor}/${collectionSegment(request.url)}>; rel="successor-version"`);
    }
    if (request.url.length > maxUrlLength) {
      throw new ValidationError([{ field: "url", issue: `must be at most ${maxUrlLength} characters` }], "The request URL is too long.");
    }
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => sendError(reply, request, toApiError(error)));
  app.setNotFoundHandler((request, reply) => sendError(reply, request, new NotFoundError("No operation answers this method and path.")));

  if (options.rateLimit) {
    const { max, windowMs, redis } = options.rateLimit;
    await app.register(rateLimit, {
      global: true,
      max,
      timeWindow: windowMs,
      hook: "preHandler",
      ...(redis ? { redis: redis as never } : {}),
      keyGenerator: (request) => (request.principal ? `principal:${request.principal.id}` : `address:${request.ip}`),
      errorResponseBuilder: (_request, context) => new RateLimitedError(context.ttl / 1000),
      addHeadersOnExceeding: { "x-ratelimit-limit": true, "x-ratelimit-remaining": true, "x-ratelimit-reset": true },
      addHeaders: { "retry-after": true, "x-ratelimit-limit": true, "x-ratelimit-remaining": true, "x-ratelimit-reset": true },
    });
  }

  for (const version of options.versions) {
    await app.register(async (scope) => {
      await version.docs(scope);
    });
    await app.register(async (scope) => {
      scope.addHook("onRequest", async (request) => {
        const principal = await options.authenticate(request);
        if (!principal) throw new UnauthenticatedError();
        request.principal = principal;
      });
      await version.routes(scope);
    });
  }
  return app;
}

function deprecationOf(versions: VersionPlugin[], url: string): Deprecation | null {
  const match = /^\/(v[1-9]\d*)(?:[/?]|$)/.exec(url);
  if (!match) return null;
  return versions.find((v) => v.name === match[1])?.deprecation ?? null;
}

function collectionSegment(url: string): string {
  return url.split("?")[0]!.split("/")[2] ?? "";
}

/** Fastify's own errors (body parsing, limits) become 400s; anything unknown a 500. */
function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  const status = typeof error.statusCode === "number" ? error.statusCode : 500;
  if (status === 404) return new NotFoundError();
  if (status >= 400 && status < 500) {
    return new ValidationError([{ field: "body", issue: clientIssue(error) }], "The request could not be read.");
  }
  return new InternalError();
}

function clientIssue(error: FastifyError): string {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return "is larger than the body size limit";
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return "must be sent as application/json";
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "must not be empty with Content-Type application/json";
    default:
      return "must be valid JSON";
  }
}

function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  if (error.status === 500) request.log.error({ err: error }, "unexpected failure");
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type("application/json; charset=utf-8").send(error.toEnvelope());
}
