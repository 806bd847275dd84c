/**
 * What the generated `/vN/exports` routes call: the schema of a create body's `resource`, the
 * lookup of the caller's own job (anyone else's is a 404), and the download of a job's file.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { principalKey, type Authorize } from "./auth.ts";
import { NotFoundError } from "./errors.ts";
import type { ExportJob } from "./exports-job.ts";
import type { ExportService } from "./exports-service.ts";
import { authorizeOrThrow, principalOf } from "./http.ts";

/** `{ resource }` of a create body: one of the version's exportable collections. */
export function exportResourceSchema<const T extends readonly [string, ...string[]]>(collections: T) {
  return z.looseObject({
    resource: z.enum(collections, {
      error: (issue) =>
        issue.input === undefined ? "is required" : `must be one of: ${collections.join(", ")}`,
    }),
  });
}

/** What `authorize` is told of a job: its values, without the link's token. */
function accessRecord(job: ExportJob): { id: string; values: object } {
  const { token: _token, attempt: _attempt, ...values } = job.values;
  return { id: job.id, values };
}

/**
 * A job of this version that the caller created, after `authorize` (read) said yes. Anyone
 * else's job, or one of another version, answers 404 as if it did not exist.
 */
export async function ownExport(
  exports: ExportService,
  authorize: Authorize,
  request: FastifyRequest,
  version: string,
  id: string,
): Promise<ExportJob> {
  const job = await exports.get(id);
  if (!job || job.values.owner !== principalKey(principalOf(request)) || job.values.version !== version) {
    throw new NotFoundError("No export has this id.");
  }
  await authorizeOrThrow(authorize, request, "read", "exports", accessRecord(job));
  return job;
}

function sameToken(a: string, b: string): boolean {
  const digest = (t: string) => createHash("sha256").update(t).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Streams a job's file when `token` is its link's and the link has not expired; else 404. */
export async function sendExportFile(
  reply: FastifyReply,
  exports: ExportService,
  job: ExportJob,
  token: string,
): Promise<FastifyReply> {
  const v = job.values;
  if (v.status !== "succeeded" || !v.token || !sameToken(v.token, token)) {
    throw new NotFoundError("No export file has this link.");
  }
  if (!v.expires_at || Date.parse(v.expires_at) <= Date.now()) {
    throw new NotFoundError("The download link has expired: create a new export.");
  }
  const file = await exports.openFile(job);
  if (!file) throw new NotFoundError("The export's file is no longer kept: create a new export.");
  return reply
    .code(200)
    .type(file.mediaType)
    .header("content-length", file.size)
    .header("content-disposition", `attachment; filename="${file.fileName}"`)
    .header("cache-control", "private, no-store")
    .send(file.stream);
}
