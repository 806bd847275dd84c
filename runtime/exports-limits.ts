/**
 * The limits on export jobs: how many one principal may have pending or running at once (one
 * more answers 429), and how long a finished job is kept before the sweep deletes it.
 */
import { ApiError } from "./errors.ts";
import { EXPORT_JOBS, type ExportJob } from "./exports-job.ts";
import type { Store } from "./store.ts";
import { firstIdAt } from "./uuid.ts";

/** What a principal at its limit of running jobs is told to wait before trying again. */
export const EXPORT_RETRY_AFTER_SECONDS = 10;

async function jobs(
  store: Store,
  where: Record<string, string>,
  limit: number,
  after?: string,
): Promise<{ records: ExportJob[]; hasMore: boolean }> {
  const query = { where, limit, ...(after ? { after } : {}) };
  return (await store.list(EXPORT_JOBS, query)) as { records: ExportJob[]; hasMore: boolean };
}

/** A store that can run a check and a write as one step on every instance (SqlStore.exclusive). */
interface ExclusiveStore extends Store {
  exclusive<T>(key: string, fn: (store: Store) => Promise<T>): Promise<T>;
}

function isExclusive(store: Store): store is ExclusiveStore {
  return typeof (store as Partial<ExclusiveStore>).exclusive === "function";
}

/**
 * Inserts a new job (`record`) unless its owner has `max` jobs pending or running: then 429 with
 * `Retry-After`, and no job. On a SQL store (PostgreSQL, PGlite) the count and the insert run in
 * one transaction holding an advisory lock of the owner: requests racing on any number of
 * instances over one database take turns, and each sees the jobs of the ones before it. On the
 * memory store (one process) the job is inserted, then kept only when it is among its owner's
 * first `max` in id order.
 */
export async function insertWithinLimit(store: Store, record: ExportJob, max: number): Promise<ExportJob> {
  const owner = record.values.owner;
  if (isExclusive(store)) {
    return store.exclusive(`canon/exports:${owner}`, async (locked) => {
      if ((await activeJobs(locked, owner, max)).length >= max) throw tooManyJobs(max);
      return (await locked.insert({
        collection: EXPORT_JOBS,
        record,
        constraints: NO_CONSTRAINTS,
      })) as ExportJob;
    });
  }
  const job = (await store.insert({
    collection: EXPORT_JOBS,
    record,
    constraints: NO_CONSTRAINTS,
  })) as ExportJob;
  if ((await activeJobs(store, owner, max + 1)).sort().slice(0, max).includes(job.id)) return job;
  await store.delete({ collection: EXPORT_JOBS, id: job.id, expectedRevision: job.revision });
  throw tooManyJobs(max);
}

const NO_CONSTRAINTS = { unique: [] };

/** The ids of up to `limit` of `owner`'s jobs pending and up to `limit` running. */
async function activeJobs(store: Store, owner: string, limit: number): Promise<string[]> {
  const active: string[] = [];
  // Pending first: a job moves from pending to running, so it is seen in one list or the other.
  for (const status of ["pending", "running"] as const) {
    const page = await jobs(store, { owner, status }, limit);
    active.push(...page.records.map((r) => r.id));
  }
  return active;
}

function tooManyJobs(max: number): ApiError {
  return new ApiError(
    429,
    "RATE_LIMITED",
    `You have ${max} exports pending or running: retry once one has finished.`,
    undefined,
    { "Retry-After": String(EXPORT_RETRY_AFTER_SECONDS) },
  );
}

/**
 * Deletes, as of `now`, the jobs that finished more than `retentionMs` earlier: a failed one from
 * when it failed, a succeeded one from when its link expired. Jobs pending or running stay.
 */
export async function deleteFinishedJobs(store: Store, now: number, retentionMs: number): Promise<void> {
  const before = new Date(now - retentionMs).toISOString();
  // A job finishes after it is created, so only jobs created before the cutoff can be due: ids
  // are UUID v7, in creation order, so each walk stops at the first later one.
  const cutoff = firstIdAt(now - retentionMs);
  for (const status of ["succeeded", "failed"] as const) {
    let after: string | undefined;
    for (;;) {
      const page = await jobs(store, { status }, 500, after);
      const due = page.records.filter((job) => job.id < cutoff);
      for (const job of due) {
        const ended = status === "succeeded" ? job.values.expires_at : job.values.finished_at;
        // Another instance may have deleted it meanwhile: that is fine.
        if (ended !== undefined && ended < before)
          await store
            .delete({ collection: EXPORT_JOBS, id: job.id, expectedRevision: job.revision })
            .catch(() => false);
      }
      if (due.length < page.records.length || !page.hasMore || page.records.length === 0) break;
      after = page.records[page.records.length - 1]!.id;
    }
  }
}
