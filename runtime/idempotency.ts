/**
 * Idempotency keys (SPEC §12.7; the IETF draft "The Idempotency-Key HTTP Header Field", and
 * Stripe's behaviour): every POST takes an optional `Idempotency-Key` header.
 *
 *  - The first request with a key claims it: a row (or, on the memory store, an entry) marks it
 *    in flight, in a statement of its own, under (principal, key), with a fingerprint of the
 *    request (method, path and canonical JSON body). Of two claims at once, on any instances,
 *    the store's unique (principal, key) lets one win; the other answers 409 `CONFLICT`.
 *  - A 2xx answer (status, body, `Location`, `ETag`) is kept for `IDEMPOTENCY_TTL_MS` (24 h);
 *    a repeat with the same fingerprint gets it with `Idempotent-Replayed: true`, and runs
 *    nothing. Another path or body under the same key answers 422 `BUSINESS_RULE_VIOLATION`.
 *  - An error answer is not kept: the claim is removed and the client may try again.
 *  - On a SQL store the write of the request marks its claim `written` in the transaction (or
 *    the one statement) that keeps the write and its event (sql-events.ts): a claim whose write
 *    committed never runs again. A claim left in flight by an instance that stopped (its lease,
 *    `IDEMPOTENCY_LEASE_MS`, over) is taken over by a repeat with the same fingerprint; the
 *    write of the first, should it still come, then finds its claim gone and is rolled back.
 *  - Expired entries are replaced when their key is used again (lazily), and swept by the
 *    instance that claims a key at most once a minute.
 *
 * The request's claim travels with its async context (`activeClaim()`), so that the store marks
 * it without the handlers knowing.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { BusinessRuleError, ConflictError, ValidationError } from "./errors.ts";

/** How long a kept answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a claim in flight holds its key before a repeat may take it over (its instance stopped). */
export const IDEMPOTENCY_LEASE_MS = 60 * 1000;
/** How often an instance sweeps expired entries, at most. */
export const IDEMPOTENCY_SWEEP_MS = 60 * 1000;

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";

/** A 2xx answer as kept. */
export interface IdempotentAnswer {
  status: number;
  /** The body as sent (JSON text), or null for none. */
  body: string | null;
  location: string | null;
  etag: string | null;
}

export type IdempotencyClaim =
  /** The key is this request's: run it, then keep or release with `token`. */
  | { outcome: "run"; token: string }
  | { outcome: "replay"; answer: IdempotentAnswer }
  /** The key was used for another request (method, path or body). */
  | { outcome: "mismatch" }
  /** A request with this key is still running. */
  | { outcome: "running" }
  /** The first request's write committed but its answer was not kept (its instance stopped in between). */
  | { outcome: "unanswered" };

/** Where a store keeps idempotency keys; every instance over one store shares them. */
export interface IdempotencyKeyStore {
  claim(principal: string, key: string, fingerprint: string): Promise<IdempotencyClaim>;
  /** Keeps the answer of the claim `token`; nothing when the claim is no longer its. */
  keep(principal: string, key: string, token: string, answer: IdempotentAnswer): Promise<void>;
  /** Removes the claim `token` (its request failed). */
  release(principal: string, key: string, token: string): Promise<void>;
}

/** The claim of the request being handled, for the store to mark with its write. */
export interface ActiveClaim {
  principal: string;
  key: string;
  token: string;
  /** Set once the request has answered: work it started that is still running (a job) marks nothing. */
  answered?: boolean;
}

const claims = new AsyncLocalStorage<ActiveClaim>();

/** Runs `fn` with `claim` as the active claim of its async context (the hook runs each keyed POST so). */
export function runWithClaim<T>(claim: ActiveClaim, fn: () => T): T {
  return claims.run(claim, fn);
}

/** The idempotency claim of the request whose async context this is, while it has not answered. */
export function activeClaim(): ActiveClaim | undefined {
  const claim = claims.getStore();
  return claim?.answered ? undefined : claim;
}

/** Thrown by a store when the claim a write was to mark is no longer the request's: the write is rolled back. */
export class ClaimLostError extends ConflictError {
  constructor() {
    super("Another request with this Idempotency-Key took it over: this one was not carried out.", [
      { field: "Idempotency-Key", issue: "was taken over by another request" },
    ]);
  }
}

const KEY = /^[\x20-\x7e]{1,255}$/;

/** The header's key, undefined without one; 400 naming `Idempotency-Key` when malformed. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value === "string" && KEY.test(value)) return value;
  throw new ValidationError(
    [{ field: "Idempotency-Key", issue: "must be 1 to 255 printable ASCII characters" }],
    "The Idempotency-Key header is not valid.",
  );
}

/** JSON with every object's keys sorted: two bodies that mean the same give the same text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return "";
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    const parts: string[] = [];
    for (const k of keys) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(v)}`);
    }
    return `{${parts.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** What makes two requests the same: method, path (and query) and canonical JSON body, hashed. */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method}\n${url}\n${canonicalJson(body)}`)
    .digest("base64url");
}

/** A new claim token. */
export function newClaimToken(): string {
  return randomUUID();
}

interface MemoryEntry {
  fingerprint: string;
  token: string;
  answer: IdempotentAnswer | null;
  lockedUntil: number;
  expiresAt: number;
}

/** The keys of a memory store: in the process, as its records are. */
export class MemoryIdempotencyKeys implements IdempotencyKeyStore {
  private readonly entries = new Map<string, MemoryEntry>();
  private swept = 0;

  async claim(principal: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    const now = Date.now();
    if (now - this.swept >= IDEMPOTENCY_SWEEP_MS) this.sweep(now);
    const id = JSON.stringify([principal, key]);
    const entry = this.entries.get(id);
    const free =
      !entry ||
      entry.expiresAt <= now ||
      (entry.answer === null && entry.lockedUntil <= now && entry.fingerprint === fingerprint);
    if (free) {
      const token = newClaimToken();
      this.entries.set(id, {
        fingerprint,
        token,
        answer: null,
        lockedUntil: now + IDEMPOTENCY_LEASE_MS,
        expiresAt: now + IDEMPOTENCY_TTL_MS,
      });
      return { outcome: "run", token };
    }
    if (entry.fingerprint !== fingerprint) return { outcome: "mismatch" };
    return entry.answer ? { outcome: "replay", answer: entry.answer } : { outcome: "running" };
  }

  async keep(principal: string, key: string, token: string, answer: IdempotentAnswer): Promise<void> {
    const entry = this.entries.get(JSON.stringify([principal, key]));
    if (entry?.token === token) entry.answer = answer;
  }

  async release(principal: string, key: string, token: string): Promise<void> {
    const id = JSON.stringify([principal, key]);
    if (this.entries.get(id)?.token === token) this.entries.delete(id);
  }

  /** How many entries are kept (expired ones until the next sweep). */
  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number): void {
    this.swept = now;
    for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(id);
  }
}

/** The claim of each request that runs with a key, set by the preHandler hook. */
const requestClaims = new WeakMap<FastifyRequest, ActiveClaim>();

/**
 * Registers the hooks of idempotency keys on `app` (before the versions' routes): every POST
 * to an operation may carry `Idempotency-Key`. A store that fails to keep an answer is logged:
 * the write stands and its answer is sent.
 */
export function registerIdempotency(app: FastifyInstance, keys: IdempotencyKeyStore): void {
  app.addHook("preHandler", (request, reply, done) => {
    if (request.method !== "POST" || request.is404 || !request.principal) return done();
    let key: string | undefined;
    try {
      key = idempotencyKeyOf(request);
    } catch (error) {
      return done(error as Error);
    }
    if (key === undefined) return done();
    const principal = request.principal.id;
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    keys.claim(principal, key, fingerprint).then(
      (claim) => {
        switch (claim.outcome) {
          case "run": {
            const active: ActiveClaim = { principal, key: key!, token: claim.token };
            requestClaims.set(request, active);
            // The handler runs inside this call: its writes see the claim (activeClaim()).
            return claims.run(active, done);
          }
          case "replay":
            // Answered here: the handler does not run (a callback hook that sends calls no `done`).
            return replay(reply, claim.answer);
          case "mismatch":
            return done(
              new BusinessRuleError(
                "This Idempotency-Key was used for another request: another method, path or body.",
                [{ field: "Idempotency-Key", issue: "was used for another request" }],
              ),
            );
          case "running":
            return done(
              new ConflictError("A request with this Idempotency-Key is still running: try again later.", [
                { field: "Idempotency-Key", issue: "is in use by a request still running" },
              ]),
            );
          case "unanswered":
            return done(
              new ConflictError(
                "The request with this Idempotency-Key was carried out, but its answer was not kept: look the record up, or send a new key.",
                [{ field: "Idempotency-Key", issue: "was used by a request whose answer was not kept" }],
              ),
            );
        }
      },
      (error: unknown) => done(error as Error),
    );
  });

  app.addHook("onSend", async (request, reply, payload) => {
    const claim = requestClaims.get(request);
    if (!claim) return payload;
    requestClaims.delete(request);
    claim.answered = true;
    const { principal, key, token } = claim;
    try {
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        await keys.keep(principal, key, token, {
          status: reply.statusCode,
          body: payloadText(payload),
          location: headerText(reply.getHeader("location")),
          etag: headerText(reply.getHeader("etag")),
        });
      } else {
        await keys.release(principal, key, token);
      }
    } catch (error) {
      request.log.error({ err: error }, "the answer of an idempotent request could not be kept");
    }
    return payload;
  });
}

/** Sends a kept answer from a preHandler hook. */
function replay(reply: FastifyReply, answer: IdempotentAnswer): void {
  reply.code(answer.status).header(IDEMPOTENT_REPLAYED_HEADER, "true");
  if (answer.location !== null) reply.header("location", answer.location);
  if (answer.etag !== null) reply.header("etag", answer.etag);
  if (answer.body === null) {
    reply.send();
    return;
  }
  reply.type("application/json; charset=utf-8").send(answer.body);
}

function payloadText(payload: unknown): string | null {
  if (payload === undefined || payload === null || payload === "") return null;
  if (typeof payload === "string") return payload;
  if (Buffer.isBuffer(payload)) return payload.toString("utf8");
  return null;
}

function headerText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return Array.isArray(value) ? value.join(", ") : String(value);
}
