/**
 * Idempotency keys on a SQL store (idempotency.ts): the table `canon__idempotency_keys`, created
 * by the generated migrations like canon's other tables (the generator reads
 * `IDEMPOTENCY_TABLE` here). One row per (principal, key), unique: of two instances claiming
 * one key at once, the database lets one insert it.
 *
 * A row is inserted `running` before the request's handler (`claimAhead`, in an app whose writes
 * run code of the user's: idempotency.ts `registerIdempotency`), taken over, or else inserted,
 * `written` by the request's write, in its own statement (`claimMark`) or transaction (`markClaim`), naming
 * the record a create made, and is `done` once its answer is kept. Should its instance die before
 * keeping it, a repeat of the create answers with that record (`adoptable`). Times are the
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
    /**
     * The collection and id of the record the request's write returned (a create's): what a
     * repeat rebuilds the answer from when its answer was never kept (`adoptable`).
     */
    { name: "collection", type: "text", notNull: false },
    { name: "record", type: "text", notNull: false },
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
 * How long a `written` row waits for its answer to be kept (a moment after it is sent) before a
 * repeat takes its writer for gone and rebuilds the answer from the record (`adoptable`).
 */
export const WRITTEN_LEASE_MS = 2000;
const WRITTEN_LEASE = `clock_timestamp() + interval '${WRITTEN_LEASE_MS / 1000} seconds'`;

/**
 * The claim and the kept answer commit without waiting for the WAL flush (`synchronous_commit`
 * off for their own one-statement transaction): each is visible at once to every instance, and
 * the write that follows, committed synchronously, flushes the claim with it. A database crash can
 * lose at most a kept answer of the last moments (wal_writer_delay): its row then says `written`,
 * and a repeat answers 409 rather than running again.
 */
const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) as "canon__async"`;

/** How long `lookup` waits for the answer of a request whose write committed, and how often it looks. */
const LOOKUP_WAIT_MS = WRITTEN_LEASE_MS + 500;
const LOOKUP_POLL_MS = 20;

/**
 * The claim before the handler (`claimAhead`; also the store API's `claim`): a new
 * row, `running`, or the row of an expired key, or of a claim in flight whose lease is over and
 * that was for the same request. Returns the row when the key is the claim's.
 */
const CLAIM = namedStatement(
  `insert into ${T} ("principal", "key", "fingerprint", "token", "state", "locked_until", "expires_at") ` +
    `select $1::text, $2::text, $3::text, $4::uuid, 'running', ${LEASE}, ${TTL} from ${ASYNC_COMMIT} ` +
    `on conflict ("principal", "key") do update set ` +
    `"fingerprint" = excluded."fingerprint", "token" = excluded."token", "state" = 'running', "status" = null, ` +
    `"body" = null, "location" = null, "etag" = null, "collection" = null, "record" = null, ` +
    `"locked_until" = excluded."locked_until", "expires_at" = excluded."expires_at" ` +
    `where ${T}."expires_at" <= clock_timestamp() or (${T}."state" = 'running' and ${T}."locked_until" <= clock_timestamp() ` +
    `and ${T}."fingerprint" = excluded."fingerprint") returning "token"`,
);

const READ = namedStatement(
  `select "fingerprint", "token", "state", "status", "body", "location", "etag", "collection", "record", ` +
    `"locked_until" <= clock_timestamp() as "stale" ` +
    `from ${T} where "principal" = $1 and "key" = $2 and "expires_at" > clock_timestamp()`,
);
/**
 * For tests only: how long each answer waits before it is kept (`CANON_TEST_IDEMPOTENCY_KEEP_DELAY_MS`),
 * so that a test can kill an instance between a write's commit and keeping its answer.
 */
const KEEP_DELAY_MS = Number(process.env.CANON_TEST_IDEMPOTENCY_KEEP_DELAY_MS ?? 0) || 0;

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
const RELEASE_AHEAD = namedStatement(
  `delete from ${T} where "principal" = $1 and "key" = $2 and "token" = $3 and "state" = 'running'`,
);
const SWEEP = namedStatement(`delete from ${T} where "expires_at" <= clock_timestamp()`);

/**
 * What a write's claim does on conflict: the row is taken when it is the request's own (a second
 * write of the request), expired, or a claim in flight (`claim`) whose lease is over and that was
 * for the same request; else it is another request's, and the claim returns no row.
 */
const TAKE_OVER =
  `on conflict ("principal", "key") do update set "fingerprint" = excluded."fingerprint", "token" = excluded."token", ` +
  `"state" = excluded."state", "status" = excluded."status", "body" = excluded."body", "location" = excluded."location", ` +
  `"etag" = excluded."etag", "collection" = excluded."collection", "record" = excluded."record", ` +
  `"locked_until" = excluded."locked_until", "expires_at" = excluded."expires_at" ` +
  `where ${T}."token" = excluded."token" or ${T}."expires_at" <= clock_timestamp() or (${T}."state" = 'running' ` +
  `and ${T}."locked_until" <= clock_timestamp() and ${T}."fingerprint" = excluded."fingerprint")`;
const COLUMNS =
  `("principal", "key", "fingerprint", "token", "state", "status", "body", "location", "etag", "collection", "record", ` +
  `"locked_until", "expires_at")`;
/** The claim of a write in a transaction (`markClaim`): the row, `written`, with the record the write returned if one. */
const MARK = namedStatement(
  `insert into ${T} ${COLUMNS} values ($1, $2, $3, $4::uuid, 'written', null, null, null, null, $5::text, $6::text, ` +
    `${WRITTEN_LEASE}, ${TTL}) ` +
    `${TAKE_OVER} returning 1 as "marked"`,
);
/** A request that wrote nothing through the store: its key claimed with its answer. */
const CLAIM_AND_KEEP = namedStatement(
  `insert into ${T} ${COLUMNS} select $1, $2, $3, $4::uuid, 'done', $5::integer, $6::text, $7::text, $8::text, null, null, ` +
    `${LEASE}, ${TTL} ` +
    `from ${ASYNC_COMMIT} ${TAKE_OVER}`,
);

/**
 * The request's claim made within a write's own statement (`writeWithEvent`): a CTE that inserts
 * the key's row, `written`, when `written` (the write's CTE) returned its row, and a column to
 * select that fails the whole statement (division by zero, SQLSTATE 22012: nothing of it is
 * kept) when it claimed nothing, the key being another request's. `CLAIM_LOST_SQLSTATE` tells
 * the store. The row names the record the write returned (`collection`, and the id of `written`'s
 * row): a repeat can rebuild the answer from it should the answer never be kept. Parameters:
 * principal, key, token, fingerprint, collection.
 */
export function claimMark(
  written: string,
  principal: string,
  key: string,
  token: string,
  fingerprint: string,
  collection: string,
): { cte: string; fence: string } {
  return {
    cte:
      `"canon__claim" as (insert into ${T} ${COLUMNS} select ${principal}::text, ${key}::text, ${fingerprint}::text, ` +
      `${token}::uuid, 'written', null, null, null, null, ${collection}::text, "w"."id"::text, ${WRITTEN_LEASE}, ${TTL} ` +
      `from (select "id" from ${written} limit 1) as "w" ${TAKE_OVER} returning 1)`,
    fence: `1 / (select count(*)::integer from "canon__claim") as "canon__claimed"`,
  };
}

/** The SQLSTATE of `claimMark`'s fence: the claim was lost. */
export const CLAIM_LOST_SQLSTATE = "22012";

/**
 * Claims the request's key (if it has one) for its write, `written`; call it in the transaction
 * of the write, with the record the request answers with when the write made one (a create). Throws ClaimLostError (the transaction rolls back) when the key is another
 * request's.
 */
export async function markClaim(
  db: SqlQueryable,
  record?: { collection: string; id: string },
): Promise<void> {
  const claim = activeClaim();
  if (!claim) return;
  const rows = await db.query(MARK, [
    claim.principal,
    claim.key,
    claim.fingerprint ?? "",
    claim.token,
    record?.collection ?? null,
    record?.id ?? null,
  ]);
  if (!rows.length) throw new ClaimLostError();
  claim.claimed = true;
}

export class SqlIdempotencyKeys implements IdempotencyKeyStore {
  private swept = 0;
  /** Answers waiting for the keep under way (`keep`). */
  private readonly pending: PendingKeep[] = [];
  private keeping = false;
  /** The keeping under way (`keepPending`), for `settled`. */
  private keepsUnderWay: Promise<void> | null = null;
  private readonly db: SqlQueryable;

  /** Keys are claimed by the writes (`claimMark`, `markClaim`), taking over a claim made before the handler (`claimAhead`) when there is one. */
  readonly claimsWithWrite = true;

  constructor(db: SqlQueryable) {
    this.db = db;
  }

  async lookup(
    principal: string,
    key: string,
    fingerprint: string,
    token?: string,
  ): Promise<IdempotencyClaim | null> {
    this.sweep();
    // A write committed whose answer is being kept: waited for, up to LOOKUP_WAIT_MS.
    for (let waited = 0; ; waited += LOOKUP_POLL_MS) {
      const [row] = await this.db.query(READ, [principal, key]);
      if (!row) return null;
      // This very request's write committed, and its answer failed after (the connection was
      // cut on the way back): no other request holds the key, and a repeat rebuilds the answer
      // from the record.
      if (token !== undefined && row.token === token) return null;
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

  claim(principal: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
    return this.claimed(principal, key, fingerprint, newClaimToken, (row) =>
      // Written but never answered, and no longer running: its instance stopped in between.
      row.state === "written" && row.stale === true
        ? ({ outcome: "unanswered" } as const)
        : ({ outcome: "running" } as const),
    );
  }

  claimAhead(
    principal: string,
    key: string,
    fingerprint: string,
    token: string,
  ): Promise<IdempotencyClaim | null> {
    return this.claimed(
      principal,
      key,
      fingerprint,
      () => token,
      (row) =>
        // `written`: the first's write committed; its answer is waited for, or rebuilt, at the write.
        row.state === "running" ? ({ outcome: "running" } as const) : null,
    );
  }

  /**
   * `CLAIM` with `token()`: `run` when the key is this request's; else what its row says (another
   * fingerprint, a kept answer to replay, or `held` of a row still in another request's hands).
   */
  private async claimed<T>(
    principal: string,
    key: string,
    fingerprint: string,
    token: () => string,
    held: (row: Record<string, unknown>) => T,
  ): Promise<IdempotencyClaim | T> {
    this.sweep();
    // A row removed between the claim and the read (its request failed) is claimed again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const claim = token();
      if ((await this.db.query(CLAIM, [principal, key, fingerprint, claim])).length)
        return { outcome: "run", token: claim };
      const [row] = await this.db.query(READ, [principal, key]);
      if (!row) continue;
      if (row.fingerprint !== fingerprint) return { outcome: "mismatch" };
      if (row.state === "done") return { outcome: "replay", answer: answerOf(row) };
      return held(row);
    }
    return { outcome: "running" };
  }

  /**
   * For a create whose write found the request's key taken (a repeat): the record the first
   * request's write created, when its answer was never kept — the row is `written`, names a
   * record of `collection`, and its writer is taken for gone (its `WRITTEN_LEASE_MS` is over;
   * waited for, while the first's answer may still be kept). The claim is then the repeat's to
   * keep (`claim.token` becomes the row's): it answers with the record as stored now, and
   * keeps that answer. Null when the key's state is for `lookup` (kept, another request,
   * still running) or the record is gone.
   */
  async adoptable(collection: string): Promise<{ id: string; token: string } | null> {
    const claim = activeClaim();
    if (!claim || claim.claimed || claim.fingerprint === undefined) return null;
    for (let waited = 0; ; waited += LOOKUP_POLL_MS) {
      const [row] = await this.db.query(READ, [claim.principal, claim.key]);
      if (!row || row.fingerprint !== claim.fingerprint || row.state !== "written") return null;
      if (row.collection !== collection || row.record === null || row.record === undefined) return null;
      // This request's own write committed (its answer failed on the way back): its record.
      if (row.token === claim.token) return { id: String(row.record), token: claim.token };
      if (row.stale === true) return { id: String(row.record), token: String(row.token) };
      if (waited >= LOOKUP_WAIT_MS) return null;
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_POLL_MS));
    }
  }

  /**
   * Keeps an answer; resolves once it has committed (the answer is sent after). Answers that
   * come while a keep is under way wait for it and are then kept together, in one statement
   * (`keepStatement`): under load, one round trip keeps many answers; alone, an answer is kept at once.
   */
  async keep(principal: string, key: string, token: string, answer: IdempotentAnswer): Promise<void> {
    this.sweep();
    if (KEEP_DELAY_MS > 0) await new Promise((resolve) => setTimeout(resolve, KEEP_DELAY_MS));
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

  async releaseAhead(principal: string, key: string, token: string): Promise<void> {
    await this.db.query(RELEASE_AHEAD, [principal, key, token]);
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
