// Helpers of the export tests: principals of their own, a folder for the files, waiting for a
// job, and downloading a file with the same checks `call` makes of JSON responses (the status
// and media type are documented, the documented headers are present).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { FastifyRequest } from "fastify";
import { CrudService } from "../../generated/runtime/index.ts";
import type { Store } from "../../generated/runtime/store.ts";
import { resourceSpecs } from "../../generated/services.ts";
import type { OrderValues } from "../../generated/values.ts";
import { documentOf, expectStatus, findOperation, UUID_V7, type Api } from "../http/helpers.ts";

type Obj = Record<string, any>;

/** `Bearer alice` and `Bearer bob` may do everything, `Bearer reader` only read. */
export function principals(request: FastifyRequest): { id: string; scopes: string[] } | null {
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1];
  if (token === "alice" || token === "bob" || token === "dev-writer") return { id: token, scopes: ["read", "write"] };
  if (token === "reader" || token === "dev-reader") return { id: token, scopes: ["read"] };
  return null;
}

/** A fresh folder for export files, and its removal. */
export function exportsFolder(): { directory: string; remove(): void } {
  const directory = mkdtempSync(path.join(tmpdir(), "canon-exports-test-"));
  return { directory, remove: () => rmSync(directory, { recursive: true, force: true }) };
}

/** Polls `GET /vN/exports/{id}` until the job has succeeded or failed. */
export async function settled(api: Api, version: string, id: string, auth = "dev-writer", timeoutMs = 60_000): Promise<Obj> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = (await expectStatus(api, "GET", `/${version}/exports/${id}`, 200, { auth })).body as Obj;
    if (job.status === "succeeded" || job.status === "failed") return job;
    assert.ok(Date.now() < until, `export ${id} still ${job.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface Download {
  status: number;
  headers: Headers;
  text: string;
}

/** GET of a download link that must answer 200 with a documented file. */
export async function download(api: Api, url: string, auth = "dev-writer"): Promise<Download> {
  const response = await fetch(api.base + url, { headers: { authorization: `Bearer ${auth}` } });
  const text = await response.text();
  assert.equal(response.status, 200, `GET ${url}: ${response.status} ${text.slice(0, 300)}`);
  const requestId = response.headers.get("x-request-id");
  assert.ok(requestId && UUID_V7.test(requestId), "X-Request-Id");
  const version = /^\/(v\d+)\//.exec(url)![1]!;
  const doc = documentOf(version, api.contract);
  const found = findOperation(doc, "GET", url.split("?")[0]!);
  assert.ok(found, `no operation documents GET ${url}`);
  assert.equal(found.template, `/${version}/exports/{id}/files/{token}`);
  const documented = found.operation.responses["200"];
  assert.ok(documented, "200 is documented");
  const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
  assert.ok(Object.keys(documented.content).includes(mediaType), `${mediaType} is not a documented media type of the file`);
  for (const [name, ref] of Object.entries(documented.headers as Obj)) {
    const header = ref.$ref ? doc.components.headers[(ref.$ref as string).split("/").pop()!] : ref;
    if (header.required) assert.ok(response.headers.get(name) !== null, `documented header ${name} missing`);
  }
  return { status: response.status, headers: response.headers, text };
}

/** The records of an NDJSON file. */
export function ndjson(text: string): Obj[] {
  assert.ok(text === "" || text.endsWith("\n"), "every line ends with a newline");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Obj);
}

/** Rows of an RFC 4180 CSV text (quoted fields may hold commas, quotes and line breaks). */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += c;
  }
  assert.equal(field, "", "the file ends with a line break");
  assert.equal(row.length, 0, "the file ends with a line break");
  return rows;
}

/** How a record's value is written in a CSV cell. */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** The default orders service, with every list call `delay` ms slower: an export that takes a while. */
export function slowOrders(store: Store, delay: number, onList?: () => void): CrudService<OrderValues> {
  return new (class extends CrudService<OrderValues> {
    override async list(query: Parameters<CrudService<OrderValues>["list"]>[0]) {
      onList?.();
      await new Promise((resolve) => setTimeout(resolve, delay));
      return super.list(query);
    }
  })(store, resourceSpecs.orders);
}
