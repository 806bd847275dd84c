/**
 * No client starves the others (issue 30.2): the reads that cost the database most — a list with
 * `q`, `sort` or an operator filter (`f[gte]`, `f[in]`, `f[null]`…), and creating an export —
 * run at most `perPrincipal` at once per principal (per client address without one); one more
 * answers 429 `RATE_LIMITED` with `Retry-After: 1` at once, before any query. The count is kept
 * in the process (each instance counts its own requests: behind a balancer of n instances a
 * principal may run up to n × perPrincipal). A slot is held from authentication until the
 * answer is made: a client that leaves does not free it while its queries still run. A request
 * whose client has gone before its handler runs is not run at all (nothing is queued for nobody).
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { RateLimitedError } from "./errors.ts";

export interface ExpensiveReadOptions {
  /** Expensive reads a principal may have in flight at once. Default 4. */
  perPrincipal: number;
}

export const DEFAULT_EXPENSIVE_READS: ExpensiveReadOptions = { perPrincipal: 4 };

type Done = (error?: Error) => void;

/** Whether a request is an expensive read: a GET (or HEAD, which runs the GET) list with `q`, `sort` or an operator filter, or POST …/exports. */
export function isExpensiveRead(method: string, url: string): boolean {
  const mark = url.indexOf("?");
  const path = mark < 0 ? url : url.slice(0, mark);
  if (method === "POST") return path.endsWith("/exports");
  if ((method !== "GET" && method !== "HEAD") || mark < 0) return false;
  for (const pair of url.slice(mark + 1).split("&")) {
    const end = pair.indexOf("=");
    const name = end < 0 ? pair : pair.slice(0, end);
    if (name === "q" || name === "sort" || name.includes("[") || /%5b/i.test(name)) return true;
  }
  return false;
}

/** The release of each counted request's slot: once its handler has answered (onSend), or it was never handled. */
const releases = new WeakMap<FastifyRequest, () => void>();

/**
 * The onRequest step that counts expensive reads, to run once the principal is known; `done`
 * gets the 429 beyond the limit. Counts live in one Map, a key removed when its count is 0. A
 * slot is given back when the answer is made (`releaseExpensiveRead`, onSend), which is after the
 * handler's queries have ended even when the client left meanwhile; a request that closes and is
 * never answered gives it back a minute after closing at the latest.
 */
export function expensiveReadLimiter(
  options: ExpensiveReadOptions,
): (request: FastifyRequest, reply: FastifyReply, done: Done) => void {
  const running = new Map<string, number>();
  return (request, reply, done) => {
    if (!isExpensiveRead(request.method, request.url)) return done();
    const key = request.principal ? `principal:${request.principal.id}` : `address:${request.ip}`;
    const now = running.get(key) ?? 0;
    if (now >= options.perPrincipal) return done(new RateLimitedError(1));
    running.set(key, now + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      releases.delete(request);
      const left = (running.get(key) ?? 1) - 1;
      if (left > 0) running.set(key, left);
      else running.delete(key);
    };
    releases.set(request, release);
    reply.raw.once("close", () => {
      if (!released) setTimeout(release, 60_000).unref();
    });
    done();
  };
}

/** onSend: the request's answer is made, its handler done: its expensive-read slot is free again. */
export function releaseExpensiveRead(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload: unknown) => void,
): void {
  releases.get(request)?.();
  done(null, payload);
}

/** preHandler: a request whose client closed the connection is not handled (its work would be for nobody). */
export function skipAbandoned(request: FastifyRequest, reply: FastifyReply, done: Done): void {
  if (request.raw.socket?.destroyed) {
    request.log.info("client gone before the handler ran: not handled");
    releases.get(request)?.();
    reply.hijack();
    return;
  }
  done();
}
