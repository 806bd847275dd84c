/**
 * Idempotency keys on a SQL store (idempotency.ts): the table `canon__idempotency_keys`, created
 * by the generated migrations like canon's other tables (the generator reads
 * `IDEMPOTENCY_TABLE` here). One row per (principal, key), unique: of two instances claiming
 * one key at once, the database lets one insert it.
 *
 * A row is inserted `written` by the request's write, in its own statement (`claimMark`) or
 * transaction (`markClaim`), and is `done` once its answer is kept. (`running`: a claim made
 * before the handler through `claim`, which the app no longer calls on SQL.) Times are the
 * database's, so that every instance agrees on leases and expiry.
 */
import {
  IDEMPOTENCY_LEASE_MS,
  IDEMPOTENCY_SWEEP_MS,
  IDEMPOTENCY_TTL_MS,
  activeClaim,
  ClaimLostError,
  newClaimToken,
  type IdempotencyClaim,
  type IdempotencyKeyStore,
  type IdempotentAnswer,
} from "./idempotency.ts";
import type { SqlQueryable } from "./sql-driver.ts";
import { ROW_ID_COLUMN } from "./sql-schema.ts";
import { namedStatement } from "./sql-statements.ts";

/** The table of the keys, as the generated migrations create it. */
export const IDEMPOTENCY_TABLE = {
  name: "canon__idempotency_keys",
  /** What it keeps, for the schema snapshot. */
  collection: "canon/idempotency-keys",
  columns: [
    ROW_ID_COLUMN,
    { name: "principal", type: "text", notNull: true },
    { name: "key", type: "text", notNull: true },
    /** The request's fingerprint: method, path and canonical body, hashed. */
    { name: "fingerprint", type: "text", notNull: true },
    /** The claim of the request that runs or ran the key. */
    { name: "token", type: "uuid", notNull: true },
    /** `running`, `written` (its write committed) or `done` (its answer is kept). */
    { name: "state", type: "text", notNull: true },
    { name: "status", type: "integer", notNull: false },
    { name: "body", type: "text", notNull: false },
    { name: "location", type: "text", notNull: false },
    { name: "etag", type: "text", notNull: false },
    /** Until when a claim in flight holds the key (then a repeat may take it over). */
    { name: "locked_until", type: "timestamptz", notNull: true },
    { name: "expires_at", type: "timestamptz", notNull: true },
  ],
  indexes: [
    {
      name: "canon__idempotency_keys_principal__key_unique",
      together: ["principal", "key"],
      definition: 'using btree ("principal", "key")',
    },
    { name: "canon__idempotency_keys_expires_at_idx", definition: 'using btree ("expires_at")' },
  ],
} as const;

const T = `"${IDEMPOTENCY_TABLE.name}"`;
const LEASE = `clock_timestamp() + interval '${IDEMPOTENCY_LEASE_MS / 1000} seconds'`;
const TTL = `clock_timestamp() + interval '${IDEMPOTENCY_TTL_MS / 1000} seconds'`;

/**
 * The claim and the kept answer commit without waiting for the WAL flush (`synchronous_commit`
 * off for their own one-statement transaction): each is visible at once to every instance, and
 * the write that follows, committed synchronously, flushes the claim with it. A database crash can
 * lose at most a kept answer of the last moments (wal_writer_delay): its row then says `written`,
 * and a repeat answers 409 rather than running again.
 */
const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) as "canon__async"`;

/** How long `lookup` waits for the answer of a request whose write committed, and how often it looks. */
const LOOKUP_WAIT_MS = 2000;
const LOOKUP_POLL_MS = 20;

/** The most claims one statement makes (4 parameters each). */
const CLAIM_BATCH = 32;
const CLAIM_PARAMETERS = 4;
const claimStatements: Array<ReturnType<typeof namedStatement>> = [];
/**
 * Claims `count` keys in one statement (a claim takes a new row, or the row of an expired key, or
 * of a claim in flight whose lease is over and that was for the same request): each row of the `values` list is (principal, key,
 * fingerprint, token); the statement returns the token of each row it inserted or took over
 * (the keys of the batch are distinct: one row cannot be affected twice).
 */
function claimStatement(count: number): ReturnType<typeof namedStatement> {
  let statement = claimStatements[count];
  if (!statement) {
    const rows = Array.from({ length: count }, (_, i) => {
      const n = (k: number) => `$${i * CLAIM_PARAMETERS + k}`;
      return `(${n(1)}::text, ${n(2)}::text, ${n(3)}::text, ${n(4)}::uuid)`;
    });
    statement = claimStatements[count] = namedStatement(
      `insert into ${T} ("principal", "key", "fingerprint", "token", "state", "locked_until", "expires_at") ` +
        `select "v"."principal", "v"."key", "v"."fingerprint", "v"."token", 'running', ${LEASE}, ${TTL} ` +
        `from ${ASYNC_COMMIT}, (values ${rows.join(", ")}) as "v" ("principal", "key", "fingerprint", "token") ` +
        `on conflict ("principal", "key") do update set ` +
        `"fingerprint" = excluded."fingerprint", "token" = excluded."token", "state" = 'running', "status" = null, ` +
        `"body" = null, "location" = null, "etag" = null, "locked_until" = excluded."locked_until", "expires_at" = excluded."expires_at" ` +
        `where ${T}."expires_at" <= clock_timestamp() or (${T}."state" = 'running' and ${T}."locked_until" <= clock_timestamp() ` +
        `and ${T}."fingerprint" = excluded."fingerprint") returning "token"`,
    );
  }
  return statement;
}

/** A claim waiting to be made, and its request's promise (true: the key is its). */
interface PendingClaim {
  id: string;
  token: string;
  params: unknown[];
  resolve: (won: boolean) => void;
  reject: (error: unknown) => void;
}

const READ = namedStatement(
  `select "fingerprint", "state", "status", "body", "location", "etag", "locked_until" <= clock_timestamp() as "stale" ` +
    `from ${T} where "principal" = $1 and "key" = $2 and "expires_at" > clock_timestamp()`,
);
/** The most answers one statement keeps (7 parameters each). */
const KEEP_BATCH = 32;
const KEEP_PARAMETERS = 7;
const keepStatements: Array<ReturnType<typeof namedStatement>> = [];
/**
 * Keeps `count` answers in one statement: each row of the `values` list is (principal, key, token,
 * status, body, location, etag), and a row is kept only while its claim is the request's (token).
 */
function keepStatement(count: number): ReturnType<typeof namedStatement> {
  let statement = keepStatements[count];
  if (!statement) {
    const rows = Array.from({ length: count }, (_, i) => {
      const n = (k: number) => `$${i * KEEP_PARAMETERS + k}`;
      return `(${n(1)}::text, ${n(2)}::text, ${n(3)}::uuid, ${n(4)}::integer, ${n(5)}::text, ${n(6)}::text, ${n(7)}::text)`;
    });
    statement = keepStatements[count] = namedStatement(
      `update ${T} set "state" = 'done', "status" = "v"."status", "body" = "v"."body", "location" = "v"."location", "etag" = "v"."etag" ` +
        `from ${ASYNC_COMMIT}, (values ${rows.join(", ")}) as "v" ("principal", "key", "token", "status", "body", "location", "etag") ` +
        `where ${T}."principal" = "v"."principal" and ${T}."key" = "v"."key" and ${T}."token" = "v"."token"`,
    );
  }
  return statement;
}

/** An answer waiting to be kept, and its request's promise. */
interface PendingKeep {
  params: unknown[];
  resolve: () => void;
  reject: (error: unknown) => void;
}
const RELEASE = namedStatement(`delete from ${T} where "principal" = $1 and "key" = $2 and "token" = $3`);
const SWEEP = namedStatement(`delete from ${T} where "expires_at" <= clock_timestamp()`);

/**
 * What a write's claim does on conflict: the row is taken when it is the request's own (a second
 * write of the request), expired, or a claim in flight (`claim`) whose lease is over and that was
 * for the same request; else it is another request's, and the claim returns no row.
 */
const TAKE_OVER =
  `on conflict ("principal", "key") do update set "fingerprint" = excluded."fingerprint", "token" = excluded."token", ` +
  `"state" = excluded."state", "status" = excluded."status", "body" = excluded."body", "location" = excluded."location", ` +
  `"etag" = excluded."etag", "locked_until" = excluded."locked_until", "expires_at" = excluded."expires_at" ` +
  `where ${T}."token" = excluded."token" or ${T}."expires_at" <= clock_timestamp() or (${T}."state" = 'running' ` +
  `and ${T}."locked_until" <= clock_timestamp() and ${T}."fingerprint" = excluded."fingerprint")`;
const COLUMNS = `("principal", "key", "fingerprint", "token", "state", "status", "body", "location", "etag", "locked_until", "expires_at")`;
/** The claim of a write in a transaction (`markClaim`): the row, `written`. */
const MARK = namedStatement(
  `insert into ${T} ${COLUMNS} values ($1, $2, $3, $4::uuid, 'written', null, null, null, null, ${LEASE}, ${TTL}) ` +
    `${TAKE_OVER} returning 1 as "marked"`,
);
/** A request that wrote nothing through the store: its key claimed with its answer. */
const CLAIM_AND_KEEP = namedStatement(
  `insert into ${T} ${COLUMNS} select $1, $2, $3, $4::uuid, 'done', $5::integer, $6::text, $7::text, $8::text, ${LEASE}, ${TTL} ` +
    `from ${ASYNC_COMMIT} ${TAKE_OVER}`,
);

/**
 * The request's claim made within a write's own statement (`writeWithEvent`): a CTE that inserts
 * the key's row, `written`, when `written` (the write's CTE) returned its row, and a column to
 * select that fails the whole statement (division by zero, SQLSTATE 22012: nothing of it is
 * kept) when it claimed nothing, the key being another request's. `CLAIM_LOST_SQLSTATE` tells
 * the store. Parameters: principal, key, token, fingerprint.
 */
export function claimMark(
  written: string,
  principal: string,
  key: string,
  token: string,
  fingerprint: string,
): { cte: string; fence: string } {
  return {
    cte:
      `"canon__claim" as (insert into ${T} ${COLUMNS} select ${principal}::text, ${key}::text, ${fingerprint}::text, ` +
      `${token}::uuid, 'written', null, null, null, null, ${LEASE}, ${TTL} where exists (select 1 from ${written}) ` +
      `${TAKE_OVER} returning 1)`,
    fence: `1 / (select count(*)::integer from "canon__claim") as "canon__claimed"`,
  };
}

/** The SQLSTATE of `claimMark`'s fence: the claim was lost. */
export const CLAIM_LOST_SQLSTATE = "22012";

/**
 * Claims the request's key (if it has one) for its write, `written`; call it in the transaction
 * of the write. Throws ClaimLostError (the transaction rolls back) when the key is another
 * request's.
 */
export async function markClaim(db: SqlQueryable): Promise<void> {
  const claim = activeClaim();
  if (!claim) return;
  const rows = await db.query(MARK, [claim.principal, claim.key, claim.fingerprint ?? "", claim.token]);
  if (!rows.length) throw new ClaimLostError();
  claim.claimed = true;
}

export class SqlIdempotencyKeys implements IdempotencyKeyStore {
  private swept = 0;
  /** Claims waiting for the claim statement under way (`claim`). */
  private readonly claims: PendingClaim[] = [];
  private claiming = false;
  /** Answers waiting for the keep under way (`keep`). */
  private readonly pending: PendingKeep[] = [];
  private keeping = false;
  /** The keeping under way (`keepPending`), for `settled`. */
  private keepsUnderWay: Promise<void> | null = null;
  private readonly db: SqlQueryable;

  /** Keys are claimed with the writes (`claimMark`, `markClaim`): no statement before the handler. */
  readonly claimsWithWrite = true;

  constructor(db: SqlQueryable) {
    this.db = db;
  }

  async lookup(principal: string, key: string, fingerprint: string): Promise<IdempotencyClaim | null> {
    this.sweep();
    // A write committed whose answer is being kept: waited for, up to LOOKUP_WAIT_MS.
    for (let waited = 0; ; waited += LOOKUP_POLL_MS) {
      const [row] = await this.db.query(READ, [principal, key]);
      if (!row) return null;
      if (row.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (row.state === "done") return { outcome: "replay", answer: answerOf(row) };
      if (row.stale === true) return { outcome: row.state === "written" ? "unanswered" : "running" };
      if (waited >= LOOKUP_WAIT_MS) return { outcome: "running" };
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_POLL_MS));
    }
  }

  async claimAndKeep(
    principal: string,
    key: string,
    fingerprint: string,
    token: string,
    answer: IdempotentAnswer,
  ): Promise<void> {
    this.sweep();
    await this.db.query(CLAIM_AND_KEEP, [
      principal,
      key,
      fingerprint,
      token,
      answer.status,
      answer.body,
      answer.location,
      answer.etag,
    ]);
  }

  async claim(principal: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    this.sweep();
    // A row removed between the claim and the read (its request failed) is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const token = newClaimToken();
      if (await this.claimed(principal, key, fingerprint, token)) return { outcome: "run", token };
      const [row] = await this.db.query(READ, [principal, key]);
      if (!row) continue;
      if (row.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (row.state === "done") return { outcome: "replay", answer: answerOf(row) };
      // Written but never answered, and no longer running: its instance stopped in between.
      if (row.state === "written" && row.stale === true) return { outcome: "unanswered" };
      return { outcome: "running" };
    }
    return { outcome: "running" };
  }

  /**
   * Makes a claim; resolves once it has committed, true when the key is the claim's. Claims that
   * come while a claim statement is under way wait for it and are then made together, in one
   * statement (`claimStatement`): under load, one round trip claims many keys; alone, a key is
   * claimed at once. A key already in the batch waits for the next one.
   */
  private claimed(principal: string, key: string, fingerprint: string, token: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.claims.push({
        id: JSON.stringify([principal, key]),
        token,
        params: [principal, key, fingerprint, token],
        resolve,
        reject,
      });
      if (!this.claiming) void this.claimPending();
    });
  }

  /** Makes the waiting claims, up to `CLAIM_BATCH` distinct keys at a time, one statement after the other. */
  private async claimPending(): Promise<void> {
    this.claiming = true;
    try {
      while (this.claims.length) {
        const batch: PendingClaim[] = [];
        const ids = new Set<string>();
        for (let i = 0; i < this.claims.length && batch.length < CLAIM_BATCH;) {
          const claim = this.claims[i]!;
          if (ids.has(claim.id)) {
            i++;
            continue;
          }
          ids.add(claim.id);
          batch.push(claim);
          this.claims.splice(i, 1);
        }
        try {
          const rows = await this.db.query(
            claimStatement(batch.length),
            batch.flatMap((c) => c.params),
          );
          const won = new Set(rows.map((row) => String(row.token)));
          for (const c of batch) c.resolve(won.has(c.token));
        } catch (error) {
          for (const c of batch) c.reject(error);
        }
      }
    } finally {
      this.claiming = false;
    }
  }

  /**
   * Keeps an answer; resolves once it has committed (the answer is sent after). Answers that
   * come while a keep is under way wait for it and are then kept together, in one statement
   * (`keepStatement`): under load, one round trip keeps many answers; alone, an answer is kept at once.
   */
  keep(principal: string, key: string, token: string, answer: IdempotentAnswer): Promise<void> {
    this.sweep();
    return new Promise((resolve, reject) => {
      this.pending.push({
        params: [principal, key, token, answer.status, answer.body, answer.location, answer.etag],
        resolve,
        reject,
      });
      if (!this.keeping) void this.keepPending();
    });
  }

  /** Resolves once every answer given to `keep` so far has been kept (or failed): the store's `close` waits for it. */
  async settled(): Promise<void> {
    while (this.keepsUnderWay) await this.keepsUnderWay;
  }

  /** Keeps the waiting answers, `KEEP_BATCH` at a time, one statement after the other. */
  private keepPending(): Promise<void> {
    const run = this.keepEach().finally(() => {
      if (this.keepsUnderWay === run) this.keepsUnderWay = null;
    });
    this.keepsUnderWay = run;
    return run;
  }

  private async keepEach(): Promise<void> {
    this.keeping = true;
    try {
      while (this.pending.length) {
        const batch = this.pending.splice(0, KEEP_BATCH);
        try {
          await this.db.query(
            keepStatement(batch.length),
            batch.flatMap((k) => k.params),
          );
          for (const k of batch) k.resolve();
        } catch (error) {
          for (const k of batch) k.reject(error);
        }
      }
    } finally {
      this.keeping = false;
    }
  }

  async release(principal: string, key: string, token: string): Promise<void> {
    await this.db.query(RELEASE, [principal, key, token]);
  }

  /** Deletes expired rows, at most once a minute per instance, without holding up the request. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.swept < IDEMPOTENCY_SWEEP_MS) return;
    this.swept = now;
    this.db.query(SWEEP).catch(() => {});
  }
}

function answerOf(row: Record<string, unknown>): IdempotentAnswer {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    status: Number(row.status),
    body: text(row.body),
    location: text(row.location),
    etag: text(row.etag),
  };
}
