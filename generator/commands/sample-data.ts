import { readFile } from "node:fs/promises";
import type { FastifyInstance } from "fastify";
import { parse } from "yaml";

/**
 * `--sample-data <file>` of `serve` and `dev`: records written into an EMPTY store at start, so
 * that a first look at an API (the showcase's `npm start`) finds some. The file names a
 * version and, per collection in the order to write them, request bodies; `$id: <name>` names
 * a record and the string `$<name>` elsewhere is that record's id. Every record goes through
 * the API itself (a POST as the dev writer, validated like any other), and nothing is written
 * when any of these collections already holds a record.
 */
interface SampleFile {
  version: string;
  records: Record<string, Array<Record<string, unknown>>>;
}

const WRITER = { authorization: "Bearer dev-writer" };

/** An error answer in one line: its message and the fields it names. */
function problem(body: string): string {
  try {
    const { error } = JSON.parse(body) as { error?: { message?: string; details?: Array<{ field?: string; issue?: string }> } };
    const details = (error?.details ?? []).map((d) => `${d.field}: ${d.issue}`).join("; ");
    return `${error?.message ?? body}${details ? ` (${details})` : ""}`;
  } catch {
    return body;
  }
}

/** Reads and checks the file; a problem is thrown as one sentence. */
async function readSamples(file: string): Promise<SampleFile> {
  let value: unknown;
  try {
    value = parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error((error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message);
  }
  const shape = value as Partial<SampleFile> | null;
  if (!shape || typeof shape.version !== "string" || !shape.records || typeof shape.records !== "object") {
    throw new Error("expected version: vN and records: { <collection>: [ <request body>, … ] }");
  }
  for (const [collection, list] of Object.entries(shape.records)) {
    if (!Array.isArray(list) || list.some((r) => !r || typeof r !== "object" || Array.isArray(r))) {
      throw new Error(`records.${collection} must be a list of request bodies`);
    }
  }
  return shape as SampleFile;
}

/** Replaces each "$<name>" string with the id of the record named so. */
function resolved(value: unknown, ids: Map<string, string>): unknown {
  if (typeof value === "string" && value.startsWith("$")) {
    const id = ids.get(value.slice(1));
    if (id === undefined) throw new Error(`${value} names no record written before it`);
    return id;
  }
  if (Array.isArray(value)) return value.map((item) => resolved(item, ids));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolved(v, ids)]));
  return value;
}

/** Writes the sample records when the store is empty; the line to print says what happened. */
export async function writeSampleData(app: FastifyInstance, file: string): Promise<string> {
  const { version, records } = await readSamples(file);
  const collections = Object.keys(records);
  for (const collection of collections) {
    const answer = await app.inject({ method: "GET", url: `/${version}/${collection}`, headers: WRITER });
    if (answer.statusCode !== 200) {
      throw new Error(`GET /${version}/${collection} answered ${answer.statusCode}: ${problem(answer.body)}`);
    }
    if ((answer.json() as { data: unknown[] }).data.length > 0) return `sample data not written: the store holds ${collection} already (${file} fills an empty store only)`;
  }
  const ids = new Map<string, string>();
  const written: string[] = [];
  for (const collection of collections) {
    for (const record of records[collection]!) {
      const { $id: name, ...body } = record;
      const answer = await app.inject({ method: "POST", url: `/${version}/${collection}`, headers: { ...WRITER, "content-type": "application/json" }, payload: JSON.stringify(resolved(body, ids)) });
      if (answer.statusCode !== 201) {
        throw new Error(`POST /${version}/${collection} ${name === undefined ? "" : `($id ${String(name)}) `}answered ${answer.statusCode}: ${problem(answer.body)}`);
      }
      if (name !== undefined) ids.set(String(name), (answer.json() as { id: string }).id);
    }
    written.push(`${records[collection]!.length} ${collection}`);
  }
  return `sample data written from ${file}: ${written.join(", ")}`;
}
