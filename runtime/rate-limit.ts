/**
 * The rate limit: `max` requests per key per window, counted against a request's principal, or
 * its client address when it has none.
 */
import { createRequire } from "node:module";
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { InternalError, RateLimitedError } from "./errors.ts";

export interface RateLimitOptions {
  /** Requests per principal (or client address without one) per window. */
  max: number;
  windowMs: number;
  /** A shared store for several instances, such as an ioredis client. */
  redis?: unknown;
  /** Longest wait for Redis per request before counting in this instance instead (default 250 ms). */
  redisWaitMs?: number;
}

/**
 * The ioredis options `canon serve` uses, and that a shared limit wants: a command fails at once
 * while Redis is unreachable (no offline queue piling up) or after `commandTimeout`, instead of
 * holding the request; the client reconnects by itself.
 */
export const REDIS_CLIENT_OPTIONS = {
  connectTimeout: 2000,
  commandTimeout: 500,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  retryStrategy: (times: number) => Math.min(100 * times, 1000),
} as const;

export type Done = (error?: Error) => void;
export type Limit = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;

/**
 * The rate limiter: `max` requests per key per window, the window starting at a key's first
 * request; a request counts against its principal, or its client address without one. In one
 * process the counts live in memory (the 5000 most recently seen principals and as many
 * addresses, as @fastify/rate-limit's local store keeps its keys) and the check is synchronous;
 * with `redis`, @fastify/rate-limit counts in Redis for every instance. Either way a refused
 * request gets `Retry-After` and the `X-RateLimit-*` headers; an allowed one gets none.
 *
 * Redis down is not the service down: while Redis is not connected, or a count takes longer
 * than `redisWaitMs`, or fails, each instance counts in its own memory (so N instances allow N
 * times the limit), logging one warning per outage; meanwhile one count at a time is still sent
 * to Redis (the others are counted in memory at once), and the first that Redis answers ends the
 * outage (one line at info): the shared count is used again.
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
    store: fallbackStore(app, redis as RedisLike, settings.redisWaitMs ?? 250),
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

/** What the fallback needs of an ioredis client; `status` is `ready` while it is connected. */
interface RedisLike {
  status?: string;
}

type Incr = (
  key: string,
  cb: (error: Error | null, result?: { current: number; ttl: number }) => void,
  timeWindow: number,
  max: number,
) => void;

/**
 * @fastify/rate-limit's store: its Redis store while Redis answers, else a count in this
 * instance (its local store), one warning per outage.
 */
function fallbackStore(app: FastifyInstance, redis: RedisLike, waitMs: number) {
  // @fastify/rate-limit's own stores, by file: the package exports no name for them.
  const require = createRequire(import.meta.url);
  const RedisStore = require("@fastify/rate-limit/store/RedisStore.js") as new (...args: unknown[]) => {
    incr: Incr;
  };
  const LocalStore = require("@fastify/rate-limit/store/LocalStore.js") as new (...args: unknown[]) => {
    incr: Incr;
  };
  return class FallbackStore {
    private readonly shared: { incr: Incr };
    private readonly local: { incr: Incr };
    private down = false;
    /** A count sent to Redis during an outage that Redis has not answered yet (nor ioredis given up on). */
    private probing = false;
    private probeStartedMs = 0;

    constructor(options: { continueExceeding?: boolean; exponentialBackoff?: boolean }) {
      this.shared = new RedisStore(options.continueExceeding, options.exponentialBackoff, redis);
      this.local = new LocalStore(options.continueExceeding, options.exponentialBackoff, 5000);
    }

    incr: Incr = (key, cb, timeWindow, max) => {
      if (redis.status !== undefined && redis.status !== "ready") {
        this.outage(`Redis is ${redis.status}`);
        return this.local.incr(key, cb, timeWindow, max);
      }
      // During an outage one count at a time asks Redis whether it is back; the others are
      // counted here at once: a Redis that stalls (connected, silent) costs every request
      // neither the wait nor a command queued in the client until it answers.
      // (A client without a command timeout may never answer one: another is sent after 10 s.)
      if (this.down && this.probing && Date.now() - this.probeStartedMs < 10_000)
        return this.local.incr(key, cb, timeWindow, max);
      const probe = this.down;
      if (probe) {
        this.probing = true;
        this.probeStartedMs = Date.now();
      }
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        this.outage(`Redis did not answer within ${waitMs} ms`);
        this.local.incr(key, cb, timeWindow, max);
      }, waitMs);
      this.shared.incr(
        key,
        (error, result) => {
          if (probe) this.probing = false;
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (error) {
            this.outage(error.message);
            return this.local.incr(key, cb, timeWindow, max);
          }
          if (this.down) {
            this.down = false;
            app.log.info("rate limit: Redis answers again; counting in Redis, shared by every instance");
          }
          cb(null, result);
        },
        timeWindow,
        max,
      );
    };

    /** Per-route limits are not used (the limiter is one hook); a child shares this store. */
    child(): FallbackStore {
      return this;
    }

    private outage(reason: string): void {
      if (this.down) return;
      this.down = true;
      app.log.warn(
        { reason },
        "rate limit: Redis unavailable; counting in this instance only until it answers again",
      );
    }
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
