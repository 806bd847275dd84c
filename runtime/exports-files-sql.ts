/**
 * Export files in the database, so that every instance over one PostgreSQL server can serve any
 * of them: the table `canon__export_chunks` holds each attempt's file as numbered chunks of
 * bytes. A job writes a chunk whenever a chunk's worth of text has gathered, and a download reads
 * them back one query per chunk, streamed with backpressure: neither side ever holds more than
 * a chunk or two of a file, however large. The table is created by the generated migrations
 * (the generator reads `EXPORT_CHUNKS_TABLE` here); a job's chunks go with its row.
 */
import { Readable } from "node:stream";
import type { ExportFileName, ExportFileWriter, ExportFiles } from "./exports-files.ts";
import type { SqlQueryable } from "./sql-driver.ts";
import { ROW_ID_COLUMN } from "./sql-schema.ts";
import { namedStatement } from "./sql-statements.ts";

/** The table of the chunks, as the generated migrations create it. */
export const EXPORT_CHUNKS_TABLE = {
  name: "canon__export_chunks",
  /** What it keeps, for the schema snapshot. */
  collection: "canon/exports/chunks",
  columns: [
    ROW_ID_COLUMN,
    {
      name: "job_id",
      type: "uuid",
      notNull: true,
      references: { name: "canon__export_chunks_job_id_fkey", table: "canon__exports", onDelete: "cascade" },
    },
    { name: "attempt", type: "text", notNull: true },
    { name: "seq", type: "integer", notNull: true },
    { name: "bytes", type: "bytea", notNull: true },
  ],
  indexes: [
    {
      name: "canon__export_chunks_job_id_attempt_seq_idx",
      definition: 'using btree ("job_id", "attempt", "seq")',
    },
  ],
} as const;

const T = `"${EXPORT_CHUNKS_TABLE.name}"`;
const JOBS = `"${EXPORT_CHUNKS_TABLE.columns[1].references.table}"`;

/** Every statement here is fixed: each is prepared once per connection. A chunk goes in as text, kept as its UTF-8 bytes. */
const WRITE = namedStatement(
  `insert into ${T} ("job_id", "attempt", "seq", "bytes") values ($1, $2, $3, convert_to($4, 'UTF8'))`,
);
const SIZE = namedStatement(
  `select count(*)::integer as "chunks", coalesce(sum(octet_length("bytes")), 0)::bigint as "size" from ${T} where "job_id" = $1 and "attempt" = $2`,
);
/** Read back as text: a chunk is whole strings' UTF-8, and text crosses the wire at its size, where bytea is sent as hex (measured 1.6 times faster). */
const READ = namedStatement(
  `select convert_from("bytes", 'UTF8') as "text" from ${T} where "job_id" = $1 and "attempt" = $2 and "seq" = $3`,
);
const REMOVE = namedStatement(`delete from ${T} where "job_id" = $1 and "attempt" = $2`);
/** The chunks no job serves or is writing: of a job that failed, whose link expired, that is gone, or of an attempt no longer the job's. */
const SWEEP = namedStatement(
  `delete from ${T} c where not exists (select 1 from ${JOBS} j where j."id" = c."job_id" and j."attempt" = c."attempt" and (j."status" in ('pending', 'running') or (j."status" = 'succeeded' and j."expires_at" > $1)))`,
);

/** Bytes per chunk, by default: 256 KiB. */
export const CHUNK_BYTES = 256 * 1024;

export class DatabaseExportFiles implements ExportFiles {
  private readonly db: SqlQueryable;
  private readonly chunkBytes: number;

  constructor(db: SqlQueryable, chunkBytes = CHUNK_BYTES) {
    this.db = db;
    this.chunkBytes = chunkBytes;
  }

  async start(): Promise<void> {}

  async create(file: ExportFileName): Promise<ExportFileWriter> {
    const db = this.db;
    const limit = this.chunkBytes;
    let parts: string[] = [];
    let size = 0;
    let seq = 0;
    const flush = async () => {
      const text = parts.join("");
      parts = [];
      size = 0;
      await db.query(WRITE, [file.id, file.attempt, seq, text]);
      seq += 1;
    };
    return {
      async write(text) {
        parts.push(text);
        size += Buffer.byteLength(text);
        if (size >= limit) await flush();
      },
      // The last chunk is written even when empty: a file with no chunk is a file no longer kept.
      close: flush,
      discard: () => this.remove(file),
    };
  }

  /** The job's own compare-and-set (its `attempt`, `succeeded`) is what makes the chunks its file. */
  async publish(_file: ExportFileName): Promise<void> {}

  async remove(file: ExportFileName): Promise<void> {
    await this.db.query(REMOVE, [file.id, file.attempt]);
  }

  async open(file: ExportFileName): Promise<{ stream: Readable; size: number } | null> {
    const [row] = await this.db.query(SIZE, [file.id, file.attempt]);
    const chunks = Number(row?.chunks ?? 0);
    if (chunks === 0) return null;
    const db = this.db;
    const readChunk = async (seq: number): Promise<Buffer> => {
      const [chunk] = await db.query(READ, [file.id, file.attempt, seq]);
      // Swept meanwhile (the link expired): the response ends short of its length.
      if (!chunk) throw new Error(`chunk ${seq} of export ${file.id} is gone`);
      return Buffer.from(String(chunk.text), "utf8");
    };
    async function* read(): AsyncGenerator<Buffer> {
      for (let seq = 0; seq < chunks; seq++) yield await readChunk(seq);
    }
    // A high-water mark of one byte: the stream reads one chunk ahead of the client, no more.
    return {
      stream: Readable.from(read(), { objectMode: false, highWaterMark: 1 }),
      size: Number(row!.size),
    };
  }

  /** A link expires at its job's `expires_at`: its chunks go at once. */
  async sweep(now: number, _linkTtlMs: number): Promise<void> {
    await this.db.query(SWEEP, [new Date(now).toISOString()]);
  }
}
