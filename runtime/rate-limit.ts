/**
 * The rate limit: `max` requests per key per window, counted against a request's principal, or
 * its client address when it has none.
 */
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { InternalError, RateLimitedError } from "./errors.ts";

export interface RateLimitOptions {
  /** Requests per principal (or client address without one) per window. */
  max: number;
  windowMs: number;
  /** A shared store for several instances, such as an ioredis client. */
  redis?: unknown;
}

export type Done = (error?: Error) => void;
export type Limit = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;

/**
 * The rate limiter: `max` requests per key per window, the window starting at a key's first
 * request; a request counts against its principal, or its client address without one. In one
 * process the counts live in memory (the 5000 most recently seen principals and as many
 * addresses, as @fastify/rate-limit's local store keeps its keys) and the check is synchronous;
 * with `redis`, @fastify/rate-limit counts in Redis for every instance. Either way a refused
 * request gets `Retry-After` and the `X-RateLimit-*` headers; an allowed one gets none.
 */
export async function rateLimiter(app: FastifyInstance, settings: RateLimitOptions): Promise<Limit> {
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
