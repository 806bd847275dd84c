/**
 * Idempotency keys (SPEC §12.7; the IETF draft "The Idempotency-Key HTTP Header Field", and
 * Stripe's behaviour): every POST takes an optional `Idempotency-Key` header.
 *
 *  - The first request with a key claims it under (principal, key), with a fingerprint of the
 *    request (method, path and canonical JSON body): on the memory store an entry, before the
 *    handler; on a SQL store (`claimsWithWrite`) a row inserted by the request's write in its own
 *    statement or transaction, taking over, in an app whose writes run code of the user's, a
 *    `running` row inserted before the handler (`claimAhead`, one statement). Of two claims at once, on any instances, the store's unique (principal, key)
 *    lets one win; the other answers 409 `CONFLICT` or, once the first's answer is kept, gets it
 *    replayed.
 *  - A 2xx answer (status, body, `Location`, `ETag`) is kept for `IDEMPOTENCY_TTL_MS` (24 h);
 *    a repeat with the same fingerprint gets it with `Idempotent-Replayed: true`, and runs
 *    nothing. Another path or body under the same key answers 422 `BUSINESS_RULE_VIOLATION`.
 *  - An error answer is not kept: the claim is removed and the client may try again.
 *  - On a SQL store the row is `written` from the write's commit (a key whose write committed
 *    never runs again) and `done` once its answer is kept, just after the answer is sent. A
 *    request that could not claim the key answers with the key's state (`settle`).
 *  - Expired entries are replaced when their key is used again (lazily), and swept by the
 *    instance that claims a key at most once a minute.
 *
 * The request's claim travels with its async context (`activeClaim()`), so that the store marks
 * it without the handlers knowing.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { principalKey } from "./auth.ts";
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
  /**
   * Set by a store that claims a key with the request's write itself (SQL: in the write's own
   * statement or transaction, `ActiveClaim.claimed`): `claim` is then never called (`claimAhead`,
   * when given, claims before the handler). Such a store gives the three below.
   */
  readonly claimsWithWrite?: boolean;
  /**
   * The key's state for a request that did not claim it (its write found it taken, or it answered
   * an error before writing, or after its write, with `token`, committed): null when no other
   * request holds it. A request whose write
   * committed but whose answer is not yet kept is waited for, a moment.
   */
  lookup?(
    principal: string,
    key: string,
    fingerprint: string,
    token?: string,
  ): Promise<IdempotencyClaim | null>;
  /**
   * For a create of `collection` refused or undone because its key is taken: the id of the record
   * the first request with the key created, and that request's claim token, when its answer was
   * never kept (its instance died before keeping it, or it is this very request, whose connection
   * was cut after its commit); the active claim takes over the key's row with the token once the
   * record is found. Null otherwise. (SQL: `SqlIdempotencyKeys.adoptable`.)
   */
  adoptable?(collection: string): Promise<{ id: string; token: string } | null>;
  /**
   * Claims the key for a request about to run, with its own `token`, before its handler (one
   * statement): a repeat on any instance while it runs is then told 409 at once (SPEC §12.7).
   * `run` when the key is the request's (its write takes the row over); the key's state when it
   * is another's (a kept answer, another request's, one still running); null when the first's
   * write committed but its answer is not kept yet: the request runs up to its write, which
   * finds the key taken (`lookup`, `adoptable`).
   */
  claimAhead?(
    principal: string,
    key: string,
    fingerprint: string,
    token: string,
  ): Promise<IdempotencyClaim | null>;
  /**
   * Removes the claim `token` made by `claimAhead` while no write has taken it over (still
   * `running`): a request that failed before its write. A row its write made `written` stays
   * (the write may have committed without the request learning it: a cut connection).
   */
  releaseAhead?(principal: string, key: string, token: string): Promise<void>;
  /** A 2xx answer of a request that wrote nothing through the store: claims the key and keeps the answer at once. */
  claimAndKeep?(
    principal: string,
    key: string,
    fingerprint: string,
    token: string,
    answer: IdempotentAnswer,
  ): Promise<void>;
}

/** The claim of the request being handled, for the store to mark with its write. */
export interface ActiveClaim {
  principal: string;
  key: string;
  token: string;
  /** The request's fingerprint (a store that claims with the write keeps it then). */
  fingerprint?: string;
  /** Set by a store that claims with the write (`claimsWithWrite`) once a write made the claim. */
  claimed?: boolean;
  /** Set when the key was claimed before the handler (`claimAhead`): an error answer removes that claim. */
  ahead?: boolean;
  /**
   * Set by such a store when the request, a repeat, answers with the record the first request
   * with its key created, whose answer was never kept (its instance died in between): the answer
   * is sent with `Idempotent-Replayed: true` and kept.
   */
  replayed?: boolean;
  /** Set once `adoptedOr` has looked for such a record. */
  adoptionTried?: boolean;
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

/**
 * A create that failed (`error`) in a request whose key is another request's: the record that
 * request created, as stored now, when its answer was never kept (`adoptable`); the request then
 * answers with it as a replay, and keeps that answer. Else `error` is thrown again.
 */
export async function adoptedOr<Stored>(
  store: {
    idempotency?: IdempotencyKeyStore;
    get(collection: string, id: string): Promise<Stored | null>;
  },
  collection: string,
  error: unknown,
): Promise<Stored> {
  const claim = activeClaim();
  if (!claim || claim.claimed || claim.adoptionTried || !store.idempotency?.adoptable) throw error;
  // Looked for once per request (a service and its store may both ask).
  claim.adoptionTried = true;
  const adoptable = await store.idempotency.adoptable(collection);
  const record = adoptable ? await store.get(collection, adoptable.id) : null;
  if (!record) throw error;
  // The answer is kept under the claim that wrote the record (the first request's, taken over).
  claim.token = adoptable!.token;
  claim.claimed = true;
  claim.replayed = true;
  return record;
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

/** What a malformed `Idempotency-Key` is told, here and where Node's parser refused it (raw-socket-errors.ts). */
export const IDEMPOTENCY_KEY_ISSUE = "must be 1 to 255 printable ASCII characters";

/** The header's key, undefined without one; 400 naming `Idempotency-Key` when malformed. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value === "string" && KEY.test(value)) return value;
  throw new ValidationError(
    [{ field: "Idempotency-Key", issue: IDEMPOTENCY_KEY_ISSUE }],
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
 * the write stands and its answer is sent. `ahead`: a store that claims with the write claims
 * before the handler too (`claimAhead`), one statement more, for handlers that run code of the
 * user's (hooks, services, authorize) whose time canon cannot bound; without it, the handler is canon's
 * own, milliseconds to its write, and a repeat meanwhile finds the key at its write (409, or the
 * first's answer replayed once kept).
 */
export function registerIdempotency(app: FastifyInstance, keys: IdempotencyKeyStore, ahead = true): void {
  const inFlight: InFlight = new Map();
  app.addHook("preHandler", (request, reply, done) => {
    if (request.method !== "POST" || request.is404 || !request.principal) return done();
    let key: string | undefined;
    try {
      key = idempotencyKeyOf(request);
    } catch (error) {
      return done(error as Error);
    }
    if (key === undefined) return done();
    // Its tenant too: the same person in another tenant has keys of its own (SPEC §12.4).
    const principal = principalKey(request.principal);
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    if (keys.claimsWithWrite) {
      // Nothing asked of the store now: the write claims the key (onSend sorts out the rest).
      // A repeat on this instance while the first runs is told at once.
      const id = `${principal}\0${key}`;
      const running = inFlight.get(id);
      if (running !== undefined)
        return done(running.fingerprint === fingerprint ? stillRunning() : usedForAnother());
      const active: ActiveClaim = { principal, key, token: newClaimToken(), fingerprint };
      inFlight.set(id, active);
      requestClaims.set(request, active);
      // However the request ends (its connection closed before any answer too), its key is free again here.
      reply.raw.once("close", () => leave(inFlight, active));
      if (!ahead || !keys.claimAhead || !keys.releaseAhead) return claims.run(active, done);
      // Claimed before the handler, so that a repeat on another instance while this one runs is
      // told 409 (the write then takes the row over with the same token).
      const notHere = () => {
        requestClaims.delete(request);
        leave(inFlight, active);
      };
      keys.claimAhead(principal, key, fingerprint, active.token).then(
        (claim) => {
          if (claim === null || claim.outcome === "run") {
            active.ahead = claim !== null;
            return claims.run(active, done);
          }
          notHere();
          if (claim.outcome === "replay") return replay(reply, claim.answer);
          return done(refusal(claim.outcome));
        },
        (error: unknown) => {
          notHere();
          done(error as Error);
        },
      );
      return;
    }
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
          default:
            return done(refusal(claim.outcome));
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
    if (keys.claimsWithWrite) return settle(keys, inFlight, claim, request, reply, payload);
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

/** The requests with a key running in one app (over a store that claims with the write), by principal and key. */
type InFlight = Map<string, ActiveClaim>;

function leave(inFlight: InFlight, claim: ActiveClaim): void {
  const id = `${claim.principal}\0${claim.key}`;
  if (inFlight.get(id) === claim) inFlight.delete(id);
}

/**
 * The end of a keyed request on a store that claims with the write (`claimsWithWrite`): a 2xx
 * answer is kept (claimed with it when no write claimed the key); an error answer of a request
 * whose write claimed the key removes the claim; an error answer of one that did not (its write
 * found the key taken, or it failed before writing) gives way to the key's state: the kept
 * answer replayed, 422 for another request's key, 409 while the other still runs.
 */
async function settle(
  keys: IdempotencyKeyStore,
  inFlight: InFlight,
  claim: ActiveClaim,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  const { principal, key, token } = claim;
  const fingerprint = claim.fingerprint!;
  try {
    if (reply.statusCode >= 200 && reply.statusCode < 300) {
      const answer: IdempotentAnswer = {
        status: reply.statusCode,
        body: payloadText(payload),
        location: headerText(reply.getHeader("location")),
        etag: headerText(reply.getHeader("etag")),
      };
      // A repeat that rebuilt the first's answer from its record says it is a replay.
      if (claim.replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, "true");
      // Kept without holding the answer up: a repeat that comes before the keep has committed
      // finds the key `written` and waits for it (`lookup`).
      if (claim.claimed)
        void keys.keep(principal, key, token, answer).catch((error: unknown) => {
          request.log.error({ err: error }, "the answer of an idempotent request could not be kept");
        });
      else await keys.claimAndKeep!(principal, key, fingerprint, token, answer);
      return payload;
    }
    if (claim.claimed) {
      await keys.release(principal, key, token);
      return payload;
    }
    const state = await keys.lookup!(principal, key, fingerprint, token);
    if (!state || state.outcome === "run") {
      // The key claimed before the handler, and no write took it: free again.
      if (claim.ahead) await keys.releaseAhead!(principal, key, token);
      return payload;
    }
    if (state.outcome === "replay") {
      const { answer } = state;
      reply.removeHeader("location");
      reply.removeHeader("etag");
      reply.code(answer.status).header(IDEMPOTENT_REPLAYED_HEADER, "true");
      if (answer.location !== null) reply.header("location", answer.location);
      if (answer.etag !== null) reply.header("etag", answer.etag);
      if (answer.body === null) {
        reply.removeHeader("content-type");
        return "";
      }
      reply.header("content-type", "application/json; charset=utf-8");
      return answer.body;
    }
    const error = refusal(state.outcome);
    reply.removeHeader("location");
    reply.removeHeader("etag");
    reply.code(error.status).header("content-type", "application/json; charset=utf-8");
    return JSON.stringify(error.toEnvelope());
  } catch (error) {
    request.log.error({ err: error }, "the answer of an idempotent request could not be kept");
    return payload;
  } finally {
    leave(inFlight, claim);
  }
}

/** The error of a key held by another request. */
function refusal(outcome: "mismatch" | "running" | "unanswered"): BusinessRuleError | ConflictError {
  switch (outcome) {
    case "mismatch":
      return usedForAnother();
    case "running":
      return stillRunning();
    case "unanswered":
      return new ConflictError(
        "The request with this Idempotency-Key was carried out, but its answer was not kept and cannot be rebuilt (its record was deleted since, or this repeat was refused before its write): look it up, or send a new key.",
        [{ field: "Idempotency-Key", issue: "was used by a request whose answer was not kept" }],
      );
  }
}

function usedForAnother(): BusinessRuleError {
  return new BusinessRuleError(
    "This Idempotency-Key was used for another request: another method, path or body.",
    [{ field: "Idempotency-Key", issue: "was used for another request" }],
  );
}

function stillRunning(): ConflictError {
  return new ConflictError("A request with this Idempotency-Key is still running: try again later.", [
    { field: "Idempotency-Key", issue: "is in use by a request still running" },
  ]);
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
