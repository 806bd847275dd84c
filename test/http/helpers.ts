// Shared helpers of the HTTP suite (SPEC §5): start the generated showcase service on
// loopback, call it with fetch, and check EVERY response against the version's own
// OpenAPI document (status listed, body valid, documented headers present) plus the
// conventions that hold for every response (request id, deprecation headers, no row_id,
// no password, no integer identifier, exact error envelope).
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { FastifyInstance } from "fastify";
import { buildApp, devAuthenticate } from "../../generated/index.ts";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres, storeFromEnvironment } from "../store/stores.ts";
import { canon, workspace } from "../support/cli.ts";
import { resolveRef } from "../support/openapi-ref.ts";

type Obj = Record<string, any>;
type BuildOptions = Parameters<typeof buildApp>[0];

export const VERSIONS = ["v1", "v2"] as const;
export const SUNSET = "Wed, 30 Jun 2027 00:00:00 GMT";
export const BASE_URL = "https://api.example.com";
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const UNKNOWN_ID = "01890a5d-ac96-774b-bcce-b302099a8057";
export const V1_UUID = "c232ab00-9414-11ec-b3c8-9f6bdeced846";
export const V4_UUID = "9b2f3d1e-4c5a-4b6d-8e7f-0a1b2c3d4e5f";

// ---------------------------------------------------------------------------------------
// The OpenAPI documents and their validator

/** What a generated service promises: its versions' documents, and which versions are deprecated. */
export interface Contract {
  /** Names the contract's schemas in the validator. */
  name: string;
  documents: Map<string, Obj>;
  /** Deprecated versions: their Sunset value and the base of their successor links. */
  deprecated: Map<string, { sunset: string; successor: string; baseUrl: string }>;
}

/** Reads `<dir>/vN/openapi.json` for each version. */
export function loadContract(name: string, dir: URL, versions: string[], deprecated: Contract["deprecated"] = new Map()): Contract {
  const documents = new Map<string, Obj>();
  for (const version of versions) {
    const doc = JSON.parse(readFileSync(new URL(`${version}/openapi.json`, dir), "utf8")) as Obj;
    documents.set(version, doc);
    ajv.addSchema(doc, `${name}-${version}`);
  }
  return { name, documents, deprecated };
}

const AjvClass = Ajv2020 as unknown as typeof Ajv2020.default;
const addFormatsTo = addFormats as unknown as typeof addFormats.default;
const ajv = new AjvClass({ strict: false, allErrors: true, validateFormats: true });
addFormatsTo(ajv);
// The OpenAPI format registry's `decimal` (canon's decimal fields), which ajv-formats does not know.
ajv.addFormat("decimal", /^-?[0-9]+(\.[0-9]+)?$/);

/** The showcase in `generated/`: v1 deprecated (sunset 2027-06-30), v2, and v3 (SPEC §12's keys; published at the end of that round). */
export const SHOWCASE: Contract = loadContract(
  "showcase",
  new URL("../../generated/", import.meta.url),
  // v3 (SPEC §12's keys), served and checked like the others; VERSIONS are the two before it, which the older tests walk.
  [...VERSIONS, "v3"],
  new Map([["v1", { sunset: SUNSET, successor: "v2", baseUrl: BASE_URL }]]),
);

export function documentOf(version: string, contract: Contract = SHOWCASE): Obj {
  const doc = contract.documents.get(version);
  assert.ok(doc, `no OpenAPI document for ${version}`);
  return doc;
}

/** A schema of a document with its local `$ref`s pointing into that document (`id`). */
function anchored(id: string, schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((s) => anchored(id, s));
  if (schema && typeof schema === "object") {
    return Object.fromEntries(
      Object.entries(schema).map(([k, v]) => [k, k === "$ref" && typeof v === "string" && v.startsWith("#") ? `${id}${v}` : anchored(id, v)]),
    );
  }
  return schema;
}

const validators = new Map<string, ReturnType<typeof ajv.compile>>();
function validatorFor(contract: Contract, version: string, key: string, schema: unknown): ReturnType<typeof ajv.compile> {
  const id = `${contract.name}-${version}`;
  let validate = validators.get(`${id}:${key}`);
  if (!validate) {
    validate = ajv.compile(anchored(id, schema) as object);
    validators.set(`${id}:${key}`, validate);
  }
  return validate;
}

/** Validates `value` against `#/components/schemas/<name>` of a version's document. */
export function assertSchema(version: string, name: string, value: unknown, contract: Contract = SHOWCASE): void {
  const validate = validatorFor(contract, version, `schema:${name}`, { $ref: `#/components/schemas/${name}` });
  assert.ok(validate(value), `not a valid ${version} ${name}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
}

interface Operation {
  template: string;
  operation: Obj;
}

/** The operation of `doc` that answers `method` on `path` (no query), if any. */
export function findOperation(doc: Obj, method: string, path: string): Operation | null {
  const candidates: Array<Operation & { params: number }> = [];
  for (const [template, item] of Object.entries(doc.paths as Obj)) {
    const operation = (item as Obj)[method.toLowerCase()];
    if (!operation) continue;
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (pattern.test(path)) candidates.push({ template, operation, params: (template.match(/\{/g) ?? []).length });
  }
  candidates.sort((a, b) => a.params - b.params);
  return candidates[0] ?? null;
}

// ---------------------------------------------------------------------------------------
// Checking every response

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  body: any;
  /** The operation's path template, `/v2/orders/{id}`; null for unlisted paths. */
  template: string | null;
}

const ERROR_KEYS = new Set(["code", "message", "details"]);

/** An error body is exactly `{ error: { code, message, details? } }`. */
export function assertErrorEnvelope(body: unknown, code?: string): void {
  assert.ok(body && typeof body === "object" && !Array.isArray(body), `error body is not an object: ${JSON.stringify(body)}`);
  assert.deepEqual(Object.keys(body as Obj), ["error"], `error body has other keys: ${JSON.stringify(body)}`);
  const error = (body as Obj).error as Obj;
  assert.ok(error && typeof error === "object", "error is not an object");
  for (const key of Object.keys(error)) assert.ok(ERROR_KEYS.has(key), `unexpected key error.${key}`);
  assert.equal(typeof error.code, "string");
  assert.equal(typeof error.message, "string");
  if ("details" in error) {
    assert.ok(Array.isArray(error.details) && error.details.length > 0, "details, when present, is a non-empty array");
    for (const detail of error.details as Obj[]) {
      assert.deepEqual(Object.keys(detail).sort(), ["field", "issue"], `detail keys: ${JSON.stringify(detail)}`);
      assert.equal(typeof detail.field, "string");
      assert.equal(typeof detail.issue, "string");
    }
  }
  if (code) assert.equal(error.code, code, `expected ${code}: ${JSON.stringify(body)}`);
}

/** No `row_id`, no `password`, no integer identifier anywhere in a body. */
function assertNoInternals(value: unknown, at = "body"): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoInternals(v, `${at}.${i}`));
    return;
  }
  if (!value || typeof value !== "object") return;
  for (const [key, v] of Object.entries(value)) {
    assert.notEqual(key, "row_id", `${at} carries row_id`);
    assert.notEqual(key, "password", `${at} carries password`);
    if (key === "id" || key.endsWith("_id")) {
      assert.notEqual(typeof v, "number", `${at}.${key} is an integer identifier`);
      if (typeof v === "string") assert.doesNotMatch(v, /^\d+$/, `${at}.${key} is an integer identifier`);
    }
    assertNoInternals(v, `${at}.${key}`);
  }
}

function headerValueMatches(schema: Obj, value: string): boolean {
  if (Array.isArray(schema.enum)) return schema.enum.map(String).includes(value);
  if (schema.type === "integer") return /^\d+$/.test(value) && (schema.minimum === undefined || Number(value) >= schema.minimum);
  return true;
}

/** The first path segments a version serves: its document's paths, and its docs, health and readiness. */
function successorSegments(contract: Contract, version: string): Set<string> {
  const paths = Object.keys((contract.documents.get(version) as Obj | undefined)?.paths ?? {});
  return new Set([...paths.map((p) => p.split("/")[2] ?? ""), "openapi.json", "docs", "health", "ready"]);
}

/** The request id and the deprecation headers every response carries; returns the path's version. */
function checkStandardHeaders(contract: Contract, path: string, where: string, res: Res): string | undefined {
  // Every response: a request id that is a UUID v7.
  const requestId = res.headers.get("x-request-id");
  assert.ok(requestId && UUID_V7.test(requestId), `X-Request-Id missing or not a v7 (${requestId}): ${where}`);
  // Every response: browsers never sniff a type other than the one declared.
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", `X-Content-Type-Options: ${where}`);

  // A deprecated version: the three headers on every response, errors included; others: none.
  const version = /^\/(v[1-9]\d*)(?:\/|$)/.exec(path)?.[1];
  const deprecation = version ? contract.deprecated.get(version) : undefined;
  if (deprecation) {
    assert.equal(res.headers.get("deprecation"), "true", `Deprecation: ${where}`);
    assert.equal(res.headers.get("sunset"), deprecation.sunset, `Sunset: ${where}`);
    // The successor's resource when the path names one it serves, else the successor itself: never raw path characters.
    const collection = path.split("/")[2] ?? "";
    const known = successorSegments(contract, deprecation.successor).has(collection);
    assert.equal(res.headers.get("link"), `<${deprecation.baseUrl}/${deprecation.successor}${known ? `/${collection}` : ""}>; rel="successor-version"`, `Link: ${where}`);
  } else {
    for (const name of ["deprecation", "sunset", "link"]) assert.equal(res.headers.get(name), null, `${name} on a current version: ${where}`);
  }
  return version;
}

function describeCall(method: string, url: string, res: Res): string {
  return `${method} ${url.length > 120 ? `${url.slice(0, 120)}…` : url} → ${res.status} ${res.text.slice(0, 300)}`;
}

/**
 * `urlRefusable`: the request target is one the service may refuse before routing (400 naming
 * `url`), even on a path no operation answers: an over-long URL always is.
 */
function checkResponse(contract: Contract, method: string, url: string, res: Res, urlRefusable = false): void {
  const path = url.split("?")[0]!;
  const where = describeCall(method, url, res);
  const version = checkStandardHeaders(contract, path, where, res);

  // The version's document, also at the reference page's own /vN/docs/json and /vN/docs/yaml.
  const isDocument = /^\/v[1-9]\d*\/(openapi\.json|docs\/json|docs\/yaml)$/.test(path);
  if (!isDocument && res.status !== 204 && res.text !== "" && (res.headers.get("content-type") ?? "").includes("json")) {
    assertNoInternals(res.body);
  }
  // An NDJSON file: each line a record, held to the same rules.
  if (/^application\/x-ndjson/i.test(res.headers.get("content-type") ?? "")) {
    res.text.split("\n").filter((line) => line !== "").forEach((line, i) => assertNoInternals(JSON.parse(line), `line ${i + 1}`));
  }
  assert.ok(res.status !== 200 || !(res.body && typeof res.body === "object" && "error" in res.body), `200 with an error payload: ${where}`);

  const doc = version ? contract.documents.get(version) : undefined;
  // Served but not listed: the version's document and its reference page.
  if (doc && method === "GET" && (path === `/${version}/openapi.json` || path === `/${version}/docs` || path.startsWith(`/${version}/docs/`))) {
    return;
  }
  const found = doc ? findOperation(doc, method, path) : null;
  if (!found) {
    // An unknown path, version or method: 404 with the envelope. (A long URL is refused first.)
    assert.ok(res.status === 404 || (res.status === 400 && (url.length > 4096 || urlRefusable)), `unlisted operation answered ${where}`);
    assertErrorEnvelope(res.body, res.status === 404 ? "NOT_FOUND" : "VALIDATION_ERROR");
    const errorVersion = version && contract.documents.has(version) ? version : [...contract.documents.keys()].at(-1)!;
    assertSchema(errorVersion, "Error", res.body, contract);
    return;
  }
  res.template = found.template;
  const listed = found.operation.responses[String(res.status)];
  assert.ok(listed, `${found.template}: status ${res.status} is not documented: ${where}`);
  const response = resolveRef(doc!, listed);

  for (const [name, header] of Object.entries((response.headers ?? {}) as Obj)) {
    const h = resolveRef(doc!, header as Obj);
    const value = res.headers.get(name);
    if (h.required) assert.ok(value !== null, `documented header ${name} missing: ${where}`);
    if (value !== null && h.schema) assert.ok(headerValueMatches(h.schema, value), `header ${name}: ${value} does not fit its schema: ${where}`);
  }

  const content = response.content?.["application/json"];
  if (!content) {
    // A file (an export's NDJSON or CSV): its media type is one the document lists; no content: no body.
    const types = Object.keys(response.content ?? {});
    if (types.length === 0) assert.equal(res.text, "", `${res.status} must have an empty body: ${where}`);
    else assert.ok(types.includes((res.headers.get("content-type") ?? "").split(";")[0]!.trim()), `content-type is not one of ${types.join(", ")}: ${where}`);
    return;
  }
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/, `content-type: ${where}`);
  const validate = validatorFor(contract, version!, `${method} ${found.template} ${res.status}`, content.schema);
  assert.ok(validate(res.body), `${where}\nbody does not match the document: ${ajv.errorsText(validate.errors)}`);
  if (res.status >= 400) assertErrorEnvelope(res.body);
}

// ---------------------------------------------------------------------------------------
// The service and a client

/** A JSON document (`application/json`, `application/problem+json`), not NDJSON or another text. */
function isJson(contentType: string | null): boolean {
  return /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType ?? "");
}

export interface Api {
  app: FastifyInstance;
  base: string;
  contract: Contract;
  close(): Promise<void>;
}

/** Starts the showcase service on loopback, port 0. */
/**
 * The showcase app on loopback. Its store is the one `CANON_TEST_STORE` names (memory, pglite or
 * postgres; memory when unset), so the whole suite runs against each store (scripts/test.ts).
 */
export async function startApp(options: Partial<BuildOptions> = {}): Promise<Api> {
  const factory = options.store ? null : storeFromEnvironment();
  const store = options.store ?? (await factory!.create());
  const api = await listen(await buildApp({ authenticate: devAuthenticate, rateLimit: false, ...options, store }), SHOWCASE);
  return {
    ...api,
    close: async () => {
      await api.close();
      await factory?.cleanup();
    },
  };
}

/** Runs `use` with an app of its own (started with `options`), and closes the app after it, whatever `use` does. */
export async function withApp<T>(options: Partial<BuildOptions>, use: (api: Api) => Promise<T>): Promise<T> {
  const api = await startApp(options);
  try {
    return await use(api);
  } finally {
    await api.close();
  }
}

/** Listens on loopback with an app built by any generated `buildApp`, checked against `contract`. */
export async function listen(app: FastifyInstance, contract: Contract): Promise<Api> {
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address();
  assert.ok(address && typeof address === "object");
  return { app, base: `http://127.0.0.1:${address.port}`, contract, close: () => app.close() };
}

export interface CallOptions {
  /** An object (sent as JSON), or a string sent as is. */
  body?: unknown;
  /** `Bearer <auth>`; null sends no Authorization. Default dev-writer. */
  auth?: string | null;
  headers?: Record<string, string>;
}

/** One request over real HTTP; the response is checked against the document before it is returned. */
export async function call(api: Api, method: string, url: string, options: CallOptions = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  const auth = options.auth === undefined ? "dev-writer" : options.auth;
  if (auth !== null) headers.authorization = `Bearer ${auth}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    if (typeof options.body === "string") body = options.body;
    else {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
  }
  Object.assign(headers, options.headers);
  const response = await fetch(api.base + url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text !== "" && isJson(response.headers.get("content-type"))) parsed = JSON.parse(text);
  const res: Res = { status: response.status, headers: response.headers, text, body: parsed, template: null };
  checkResponse(api.contract, method, url, res);
  return res;
}

/** A call whose answer must be this status. */
export async function expectStatus(api: Api, method: string, url: string, status: number, options: CallOptions = {}): Promise<Res> {
  const res = await call(api, method, url, options);
  assert.equal(res.status, status, `${method} ${url.slice(0, 200)}: expected ${status}, got ${res.status} ${res.text.slice(0, 500)}`);
  return res;
}

/** A call that must fail with `status` and `code`; returns the error object. */
export async function expectError(api: Api, method: string, url: string, status: number, code: string, options: CallOptions = {}): Promise<Obj> {
  const res = await expectStatus(api, method, url, status, options);
  assertErrorEnvelope(res.body, code);
  return (res.body as Obj).error as Obj;
}

/** The detail fields of a 400, sorted. */
export function detailFields(error: Obj): string[] {
  return ((error.details ?? []) as Obj[]).map((d) => d.field as string).sort();
}

// ---------------------------------------------------------------------------------------
// Fixtures

let counter = Math.floor(Math.random() * 400_000);
export function unique(): number {
  counter += 1;
  return counter;
}

export function userBody(overrides: Obj = {}): Obj {
  const n = unique();
  return { email: `user${n}@example.com`, name: `User ${n}`, password: "correct horse battery", ...overrides };
}

export function orderBody(version: string, userId: string, overrides: Obj = {}): Obj {
  const n = unique();
  const code = `ORD-${String(n % 1_000_000).padStart(6, "0")}`;
  const due = version === "v1" ? { due_cents: 500 } : { amount_due_cents: 500 };
  return { user_id: userId, code, total_cents: 1200, currency: "EUR", ...due, ...overrides };
}

export function productBody(overrides: Obj = {}): Obj {
  const n = unique();
  return { sku: `SKU-${n}`, name: `Product ${n}`, price_cents: 999, ...overrides };
}

export async function createUser(api: Api, version = "v2", overrides: Obj = {}): Promise<Obj> {
  return (await expectStatus(api, "POST", `/${version}/users`, 201, { body: userBody(overrides) })).body as Obj;
}

export async function createOrder(api: Api, userId: string, version = "v2", overrides: Obj = {}): Promise<Obj> {
  return (await expectStatus(api, "POST", `/${version}/orders`, 201, { body: orderBody(version, userId, overrides) })).body as Obj;
}

export async function createProduct(api: Api, version = "v2", overrides: Obj = {}): Promise<Obj> {
  return (await expectStatus(api, "POST", `/${version}/products`, 201, { body: productBody(overrides) })).body as Obj;
}

export async function createInvoice(api: Api, orderId: string, version = "v2", overrides: Obj = {}): Promise<Obj> {
  const body = { order_id: orderId, amount_cents: 1200, due_date: "2026-07-01", ...overrides };
  return (await expectStatus(api, "POST", `/${version}/invoices`, 201, { body })).body as Obj;
}

/** Follows next_cursor from `url` to the end; returns every record seen and the pages. */
export async function walk(api: Api, url: string, onPage?: (page: Obj, index: number) => Promise<void>): Promise<Obj[]> {
  const seen: Obj[] = [];
  let next: string | null = url;
  for (let i = 0; next !== null; i++) {
    assert.ok(i < 1000, "the walk does not end");
    const page = (await expectStatus(api, "GET", next, 200)).body as Obj;
    assertCursorPage(page);
    seen.push(...(page.data as Obj[]));
    if (onPage) await onPage(page, i);
    const cursor = page.pagination.next_cursor as string | null;
    next = cursor === null ? null : `${url}${url.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`;
  }
  return seen;
}

/** `{ data, pagination: { next_cursor, has_more } }` with next_cursor null exactly when has_more is false. */
export function assertCursorPage(page: Obj): void {
  assert.deepEqual(Object.keys(page).sort(), ["data", "pagination"]);
  assert.deepEqual(Object.keys(page.pagination).sort(), ["has_more", "next_cursor"]);
  assert.equal(page.pagination.next_cursor === null, page.pagination.has_more === false, JSON.stringify(page.pagination));
  const ids = (page.data as Obj[]).map((r) => r.id as string);
  assert.deepEqual(ids, [...ids].sort(), "a page is in ascending id order");
}

// ---------------------------------------------------------------------------------------
// Raw requests (the hardening suite): exact bytes, any method, target, header and body

export interface RawRequest {
  method: string;
  /** The request target exactly as sent: origin-form (`/v2/orders?x`), absolute-form, escapes as given. */
  target: string;
  /** Sent as given (an array sends the header once per value); only Host and the body's framing are added. */
  headers?: Record<string, string | string[]>;
  body?: Buffer | string;
  /** How a body is framed: `Content-Length` (default) or `Transfer-Encoding: chunked`. */
  framing?: "length" | "chunked";
}

const rawAgent = new Agent({ keepAlive: true, maxSockets: 64 });

/** Sends `request` as is over HTTP/1.1 (Node's client: methods must be tokens, targets bytes 0x21–0xff). */
export function sendRaw(api: Api, request: RawRequest, timeoutMs = 15_000): Promise<Res> {
  const { hostname, port } = new URL(api.base);
  const headers: Record<string, string | string[] | number> = { ...request.headers };
  if (request.body !== undefined) {
    if (request.framing === "chunked") headers["transfer-encoding"] = "chunked";
    else headers["content-length"] = Buffer.byteLength(request.body);
  }
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest({ agent: rawAgent, host: hostname, port, method: request.method, path: request.target, headers, timeout: timeoutMs }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("error", reject);
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const responseHeaders = new Headers();
        for (let i = 0; i < response.rawHeaders.length; i += 2) responseHeaders.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
        let body: unknown = undefined;
        try {
          if (text !== "" && isJson(responseHeaders.get("content-type"))) body = JSON.parse(text);
        } catch {
          reject(new assert.AssertionError({ message: `${request.method} ${request.target.slice(0, 120)} → ${response.statusCode}: the body is not JSON: ${text.slice(0, 300)}` }));
          return;
        }
        resolve({ status: response.statusCode ?? 0, headers: responseHeaders, text, body, template: null });
      });
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    // The server may answer (an over-large body) and close before the whole body is written.
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    if (request.body !== undefined) req.end(request.body);
    else req.end();
  });
}

/**
 * The target as the service's router reads it: an absolute-form target without scheme and
 * authority, the path ending at the first `?` or `#`, and percent-escapes of unreserved
 * characters decoded (RFC 3986 §6.2.2.2).
 */
export function targetUrl(target: string): string {
  let url = target;
  const authority = /^https?:\/\/[^/?#]*/i.exec(url);
  if (authority) url = url.slice(authority[0].length);
  if (!url.startsWith("/")) url = `/${url}`;
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  const query = end === -1 ? "" : `?${url.slice(end + 1)}`;
  const decoded = path.replace(/%([0-9a-f]{2})/gi, (escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return /^[A-Za-z0-9._~-]$/.test(char) ? char : escape;
  });
  return decoded + query;
}

/**
 * A target the service may refuse before routing: over-long, not ASCII (not HTTP at all), with a
 * fragment or a malformed escape, or not origin-form.
 */
function refusableTarget(target: string): boolean {
  if (target.length > 4096 || /[^\x21-\x7e]/.test(target) || target.includes("#") || !target.startsWith("/")) return true;
  try {
    decodeURI(target);
    return false;
  } catch {
    return true;
  }
}

/**
 * One raw request, its response checked like `call`'s against the version's document. HEAD is
 * checked as the GET it mirrors, without a body.
 */
export async function callRaw(api: Api, request: RawRequest): Promise<Res> {
  const res = await sendRaw(api, request);
  checkRawResponse(api.contract, request, res);
  return res;
}

/** `call`'s checks for a response to a raw request. */
export function checkRawResponse(contract: Contract, request: RawRequest, res: Res): void {
  const url = targetUrl(request.target);
  if (request.method !== "HEAD") {
    checkResponse(contract, request.method, url, res, refusableTarget(request.target));
    return;
  }
  const path = url.split("?")[0]!;
  const where = describeCall("HEAD", request.target, res);
  const version = checkStandardHeaders(contract, path, where, res);
  assert.equal(res.text, "", `a HEAD answer has no body: ${where}`);
  const doc = version ? contract.documents.get(version) : undefined;
  if (doc && (path === `/${version}/openapi.json` || path === `/${version}/docs` || path.startsWith(`/${version}/docs/`))) return;
  const found = doc ? findOperation(doc, "GET", path) : null;
  if (!found) {
    assert.ok(res.status === 404 || (res.status === 400 && refusableTarget(request.target)), `HEAD of an unlisted operation answered ${where}`);
    return;
  }
  res.template = found.template;
  assert.ok(found.operation.responses[String(res.status)], `${found.template}: HEAD status ${res.status} is not documented for GET: ${where}`);
}

/**
 * Writes `bytes` on a fresh connection, shuts down its sending side, and reads the first response
 * until the service closes the connection; null when it closes it unanswered. No close within
 * `timeoutMs` is a failure: the service would hold the connection. An array of pieces is written
 * one piece at a time, 50 ms apart, so that the service reads each as its own chunk.
 */
export function sendBytes(api: Api, bytes: Buffer | string | Array<Buffer | string>, timeoutMs = 15_000): Promise<Res | null> {
  const { hostname, port } = new URL(api.base);
  const pieces = Array.isArray(bytes) ? bytes : [bytes];
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let timedOut = false;
    const socket = connect(Number(port), hostname, async () => {
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await new Promise((wait) => setTimeout(wait, 50));
        if (socket.destroyed) return;
        if (i === pieces.length - 1) socket.end(piece);
        else socket.write(piece);
      }
    });
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      if (timedOut) return reject(new assert.AssertionError({ message: `the connection was neither answered nor closed within ${timeoutMs} ms` }));
      let raw = Buffer.concat(chunks);
      // Interim answers (100 Continue) come before the response.
      while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 16).toString("latin1")) && raw.includes("\r\n\r\n")) raw = raw.subarray(raw.indexOf("\r\n\r\n") + 4);
      const split = raw.indexOf("\r\n\r\n");
      if (raw.length === 0 || split === -1) return resolve(null);
      const [statusLine, ...lines] = raw.subarray(0, split).toString("latin1").split("\r\n");
      const status = /^HTTP\/1\.[01] (\d{3}) /.exec(statusLine ?? "");
      if (!status) return reject(new assert.AssertionError({ message: `not an HTTP response: ${JSON.stringify(statusLine)}` }));
      const headers = new Headers();
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      }
      const length = Number(headers.get("content-length") ?? NaN);
      const rest = raw.subarray(split + 4);
      const text = (Number.isNaN(length) ? rest : rest.subarray(0, length)).toString("utf8");
      let body: unknown = undefined;
      try {
        if (text !== "" && isJson(headers.get("content-type"))) body = JSON.parse(text);
      } catch {
        return reject(new assert.AssertionError({ message: `${statusLine}: the body is not JSON: ${text.slice(0, 300)}` }));
      }
      resolve({ status: Number(status[1]), headers, text, body, template: null });
    });
  });
}

/**
 * The checks that hold for the answer to bytes that may not be HTTP at all: a request id, the
 * exact envelope on an error, and when the bytes start with a request line for a deprecated
 * version, its headers.
 */
export function checkBytesResponse(contract: Contract, bytes: Buffer | string, res: Res): void {
  const line = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\S+) HTTP\/1\.[01]\r\n/.exec(Buffer.from(bytes).toString("latin1"));
  // A header carries a URI: bytes of the request line outside visible ASCII come percent-encoded.
  const path = line ? targetUrl(line[1]!).split("?")[0]!.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c)) : "";
  const where = `${JSON.stringify(Buffer.from(bytes).toString("latin1").slice(0, 120))} → ${res.status} ${res.text.slice(0, 300)}`;
  const requestId = res.headers.get("x-request-id");
  assert.ok(requestId && UUID_V7.test(requestId), `X-Request-Id missing or not a v7 (${requestId}): ${where}`);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", `X-Content-Type-Options: ${where}`);
  // A message the HTTP parser refused ("could not be read") carries its version's headers too,
  // however its bytes came in chunks.
  if (line) checkStandardHeaders(contract, path, where, res);
  if (res.status >= 400 && res.text !== "") {
    assertErrorEnvelope(res.body);
    assertSchema([...contract.documents.keys()].at(-1)!, "Error", res.body, contract);
  }
}

/**
 * A fixture's service (`test/fixtures/<fixture>`, generated into a workspace) on loopback, on the
 * store CANON_TEST_STORE names (memory, PGlite in memory, or a fresh schema of the PostgreSQL
 * server, dropped on close), checked against its own documents.
 */
export async function startFixture(
  name: string,
  fixture: string,
  versions: string[],
  options: Record<string, unknown> = {},
): Promise<Api & { dir: string }> {
  const dir = workspace(name, fixture);
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
  const kind = process.env.CANON_TEST_STORE ?? "memory";
  const schemas: string[] = [];
  let store: { close(): Promise<void> };
  if (kind === "postgres") {
    await preparePostgres();
    const schema = freshSchema(`canon_${name.replace(/-/g, "_")}`);
    schemas.push(schema);
    store = await sql.openStore(POSTGRES_URL, { schema });
  } else {
    store = await sql.openStore(kind === "pglite" ? "pglite:memory://" : "memory");
  }
  // `wrapStore` (a test's own option) puts a wrapper of its own between the app and the store;
  // `prepare` gives more options once the output is in `dir` (code that imports it: hooks).
  const { wrapStore, prepare, ...rest } = options as {
    wrapStore?: (store: unknown) => unknown;
    prepare?: (dir: string) => Promise<Record<string, unknown>>;
  };
  const served = wrapStore ? wrapStore(store) : store;
  const more = prepare ? await prepare(dir) : {};
  const app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store: served, ...rest, ...more });
  const api = await listen(app, loadContract(name, out, versions));
  return {
    ...api,
    dir,
    close: async () => {
      await api.close();
      await store.close();
      await dropSchemas(schemas);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
