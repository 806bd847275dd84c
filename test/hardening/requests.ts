// The request generators of the HTTP fuzz suite (issue: hardening). Every operation of every
// version's OpenAPI document is a target; a request is a recipe (fast-check values: which
// operation, which id, which query parts, which body and how it is encoded, which headers) that
// is turned into bytes against the service's live state (existing ids, ETags, real cursors), so
// the fuzzer reaches past validation into lookups, conflicts and pagination.
import assert from "node:assert/strict";
import { METHODS } from "node:http";
import fc from "fast-check";
import type { Contract, RawRequest, Res } from "../http/helpers.ts";
import { refTarget } from "../support/openapi-ref.ts";

type Obj = Record<string, any>;

// ---------------------------------------------------------------------------------------
// Operations, from the documents

export interface Operation {
  version: string;
  method: string;
  /** `/v2/orders/{id}` */
  template: string;
  /** The collection the `{id}` of the path names (`users` in `/v2/users/{id}/orders`). */
  idCollection: string | null;
  /** For a create (POST on a collection): the collection its new record joins. */
  createsIn: string | null;
  query: Array<{ name: string; schema: Obj }>;
  /** The request body's schema with every `$ref` resolved, or null. */
  body: Obj | null;
  takesIfMatch: boolean;
}

/** How fast-check prints a value in a counterexample: by name, not in full. */
function named<T extends object>(name: string, value: T): T {
  return Object.defineProperty(value, fc.toStringMethod, { value: () => name, enumerable: false });
}

function deref(doc: Obj, value: unknown): any {
  if (Array.isArray(value)) return value.map((v) => deref(doc, v));
  if (!value || typeof value !== "object") return value;
  const ref = (value as Obj).$ref;
  if (typeof ref === "string") return deref(doc, refTarget(doc, ref));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deref(doc, v)]));
}

/** Every operation every version's document lists. */
export function operationsOf(contract: Contract): Operation[] {
  const operations: Operation[] = [];
  for (const [version, doc] of contract.documents) {
    for (const [template, item] of Object.entries(doc.paths as Obj)) {
      for (const [method, raw] of Object.entries(item as Obj)) {
        if (!METHODS.includes(method.toUpperCase())) continue;
        const operation = deref(doc, raw) as Obj;
        const parameters = (operation.parameters ?? []) as Obj[];
        const segments = template.split("/");
        const idAt = segments.indexOf("{id}");
        operations.push(named(`${method.toUpperCase()} ${template}`, {
          version,
          method: method.toUpperCase(),
          template,
          idCollection: idAt > 0 ? segments[idAt - 1]! : null,
          createsIn: method === "post" && idAt === -1 ? segments[2]! : null,
          query: parameters.filter((p) => p.in === "query").map((p) => ({ name: p.name as string, schema: p.schema as Obj })),
          body: (operation.requestBody?.content?.["application/json"]?.schema as Obj | undefined) ?? null,
          takesIfMatch: parameters.some((p) => p.in === "header" && p.name === "If-Match"),
        }));
      }
    }
  }
  assert.ok(operations.length > 0, "the documents list no operation");
  return operations;
}

// ---------------------------------------------------------------------------------------
// The service's live state, as the fuzzer has seen it

export class FuzzState {
  readonly ids = new Map<string, string[]>();
  readonly etags = new Map<string, string>();
  /** Real cursors, by the list template they came from. */
  readonly cursors = new Map<string, string[]>();
  /** Paths the service handed out (an export's `download_url`), by their template. */
  readonly links = new Map<string, string[]>();

  add(collection: string, id: string): void {
    const list = this.ids.get(collection) ?? [];
    if (!list.includes(id)) list.push(id);
    this.ids.set(collection, list);
  }

  remove(collection: string, id: string): void {
    const list = this.ids.get(collection);
    // Keep one record of each collection: reads by existing id stay reachable.
    if (list && list.length > 1) this.ids.set(collection, list.filter((i) => i !== id));
  }

  addCursor(template: string, cursor: string): void {
    const list = this.cursors.get(template) ?? [];
    if (list.length < 40) list.push(cursor);
    else list[cursor.length % 40] = cursor;
    this.cursors.set(template, list);
  }

  /** What a response tells about the state: new ids, ETags, cursors, deleted records. */
  observe(built: Built, res: Res): void {
    const { op, request } = built;
    const body = res.body as Obj | undefined;
    if (request.method !== op.method || built.mangledPath) return;
    if (res.status === 201 && op.createsIn && typeof body?.id === "string") this.add(op.createsIn, body.id);
    const etag = res.headers.get("etag");
    if ((res.status === 200 || res.status === 201) && etag && typeof body?.id === "string") this.etags.set(body.id, etag);
    if (res.status === 204 && op.method === "DELETE" && op.idCollection && built.id) this.remove(op.idCollection, built.id);
    for (const record of [body, ...(Array.isArray(body?.data) ? (body.data as Obj[]) : [])]) {
      const link = record?.download_url;
      if (typeof link !== "string") continue;
      const template = link.replace(/^\/(v\d+)\/([^/]+)\/[^/]+\/([^/]+)\/[^/]+$/, "/$1/$2/{id}/$3/{token}");
      const list = this.links.get(template) ?? [];
      if (!list.includes(link) && list.length < 40) list.push(link);
      this.links.set(template, list);
    }
    const next = body?.pagination?.next_cursor;
    if (res.status === 200 && typeof next === "string") this.addCursor(op.template, next);
  }
}

// ---------------------------------------------------------------------------------------
// Small helpers

/** Percent-encodes everything but unreserved characters, from the UTF-8 bytes (lone surrogates become U+FFFD). */
export function pct(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function pick<T>(list: readonly T[], index: number): T | undefined {
  return list.length === 0 ? undefined : list[index % list.length];
}

/** A value with what kind of bad input it is. */
interface Labeled {
  label: string;
  value: unknown;
}

const labeled = (label: string) => (value: unknown): Labeled => named(`<${label}>`, { label, value });

function nest(depth: number, kind: "array" | "object"): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = kind === "array" ? [value] : { a: value };
  return value;
}

// ---------------------------------------------------------------------------------------
// Bad values

/** Strings that trip parsers, normalisers, case mappings and logs. */
export const EDGE_STRINGS = [
  "", " ", "\u0000", "\ud800", "\udfff", "\udfff\ud800", "\ud83d\ude00", "\u202e\u202d", "\ufeff", "\u2028\u2029",
  "e\u0301", "\u00e9", "\u0130", "\u00df", "\ufb03", "\ud835\udd4f", "\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67",
  "\\", '"', "'; drop table orders; --", "<script>alert(1)</script>", "${7*7}", "{{7*7}}", "%s%n%x", "../../etc/passwd",
  "null", "undefined", "NaN", "Infinity", "-0", "1e308", "0x10", "true", "[]", "{}", "__proto__", "constructor",
  "prototype", "toString", "hasOwnProperty", "\t\n\r", " padded ", "\u00a0", "\u3000", "\uff21\uff22\uff23", "\u0661\u0662",
  "\u0000\u0001\u001f\u007f", "\u{10ffff}", "\ufffe\uffff", "a\u0000b",
];

const edgeString = fc.constantFrom(...EDGE_STRINGS).map(labeled("edge string"));

const longString = fc
  .constantFrom(300, 5_000, 20_000, 60_000, 100_000)
  .chain((n) => fc.constantFrom("x", "\u00e9", "\ud83d\ude00", "\u0000").map((c) => c.repeat(n)))
  .map(labeled("very long string"));

const dateish = fc
  .constantFrom("2026-02-30", "0000-00-00", "2026-13-01", "2026-1-1", "26-01-01", "2026-01-01T25:61:61Z", "+275760-09-13T00:00:00Z",
    "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00+25:00", "1970-01-01T00:00:00.0000000000001Z", "-000001-01-01")
  .map(labeled("bad date"));

const emailish = fc
  .constantFrom("a@b", "@", "a@", "@b.c", "a b@c.d", "a@b..c", `${"a".repeat(300)}@b.cd`, "\u00e9@\u00e9.fr", "a@[127.0.0.1]", '"a"@b.cd')
  .map(labeled("bad email"));

const uriish = fc
  .constantFrom("javascript:alert(1)", "http://", "http://[::1", "file:///etc/passwd", "//x", "x", "http://a b", `http://${"a".repeat(5000)}.com`)
  .map(labeled("bad uri"));

const numberEdge = fc
  .constantFrom(0, -0, 1, -1, 0.5, 1e308, -1e308, 5e-324, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 100_000_001, 1.0000001)
  .map(labeled("number edge"));

/** Any wrong value for any field. */
export const nasty: fc.Arbitrary<Labeled> = fc.oneof(
  fc.constantFrom(null, true, false).map(labeled("null or boolean")),
  numberEdge,
  fc.double().map(labeled("double")),
  fc.integer().map(labeled("integer")),
  edgeString,
  fc.string({ unit: "binary", maxLength: 40 }).map(labeled("unicode string")),
  fc.string({ unit: "grapheme", maxLength: 120 }).map(labeled("grapheme string")),
  longString,
  dateish,
  emailish,
  uriish,
  fc.uuid({ version: [1, 4, 7] }).map(labeled("uuid")),
  fc.jsonValue({ maxDepth: 3 }).map(labeled("json value")),
  fc.constantFrom(10, 100, 1000).chain((n) => fc.constantFrom("array", "object").map((k) => nest(n, k as "array" | "object"))).map(labeled("deep nesting")),
  fc.array(fc.string({ maxLength: 40 }), { minLength: 11, maxLength: 200 }).map(labeled("long array")),
);

// ---------------------------------------------------------------------------------------
// Valid values, from a schema (ids are picked from the live state when the request is built)

/** A uuid field's value, resolved against the state: `user_id` names a user. */
class IdRef {
  readonly field: string;
  readonly index: number;
  readonly fresh: boolean;
  constructor(field: string, index: number, fresh: boolean) {
    this.field = field;
    this.index = index;
    this.fresh = fresh;
  }
}

function valueOf(schema: Obj, field: string): fc.Arbitrary<unknown> {
  const branches = (schema.oneOf ?? schema.anyOf) as Obj[] | undefined;
  if (Array.isArray(branches) && branches.length > 0) return fc.oneof(...branches.map((b) => valueOf(b, field)));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const nullable = types.includes("null");
  const type = types.find((t) => t !== "null");
  let arbitrary: fc.Arbitrary<unknown>;
  if ("const" in schema) arbitrary = fc.constant(schema.const);
  else if (Array.isArray(schema.enum)) arbitrary = fc.constantFrom(...(schema.enum as unknown[]));
  else if (type === "string") arbitrary = stringOf(schema, field);
  else if (type === "integer") arbitrary = fc.integer({ min: schema.minimum ?? -1_000_000, max: Math.min(schema.maximum ?? 1_000_000_000, 2 ** 31) });
  else if (type === "number") arbitrary = fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
  else if (type === "boolean") arbitrary = fc.boolean();
  else if (type === "array") arbitrary = fc.array(valueOf(schema.items ?? {}, `${field}.items`), { maxLength: Math.min(schema.maxItems ?? 5, 5) });
  else if (type === "object") arbitrary = objectOf(schema);
  else arbitrary = fc.jsonValue({ maxDepth: 2 });
  return nullable ? fc.option(arbitrary, { freq: 5, nil: null }) : arbitrary;
}

function stringOf(schema: Obj, field: string): fc.Arbitrary<unknown> {
  switch (schema.format) {
    case "uuid":
      return fc.tuple(fc.nat(), fc.boolean()).map(([index, fresh]) => new IdRef(field, index, fresh && index % 5 === 0));
    case "date":
      return fc.date({ min: new Date("1970-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case "date-time":
      return fc.date({ min: new Date("1970-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((d) => d.toISOString());
    case "email":
      return fc.oneof(
        { weight: 5, arbitrary: fc.stringMatching(/^[a-z0-9]{1,16}$/).map((s) => `${s}@example.com`) },
        { weight: 1, arbitrary: fc.emailAddress() },
      );
    case "uri":
      return fc.webUrl();
  }
  if (typeof schema.pattern === "string") return fc.stringMatching(new RegExp(schema.pattern as string));
  return fc.string({ unit: "grapheme", minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
}

function objectOf(schema: Obj): fc.Arbitrary<Obj> {
  const properties = (schema.properties ?? {}) as Obj;
  const required = new Set((schema.required ?? []) as string[]);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) model[name] = valueOf(property as Obj, name);
  return fc.record(model, { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) }) as fc.Arbitrary<Obj>;
}

// ---------------------------------------------------------------------------------------
// Recipes

type IdPick =
  | { kind: "existing"; other: boolean; index: number; transform: IdTransform }
  | { kind: "literal"; label: string; segment: string };

type IdTransform = "none" | "upper" | "truncate" | "extra" | "braces" | "urn" | "nohyphen" | "space" | "version4" | "doubled";

const ID_TRANSFORMS: IdTransform[] = ["upper", "truncate", "extra", "braces", "urn", "nohyphen", "space", "version4", "doubled"];

const idPick: fc.Arbitrary<IdPick> = fc.oneof(
  { weight: 14, arbitrary: fc.record({ kind: fc.constant("existing" as const), other: fc.constant(false), index: fc.nat(), transform: fc.constant("none" as IdTransform) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("existing" as const), other: fc.constant(true), index: fc.nat(), transform: fc.constant("none" as IdTransform) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("existing" as const), other: fc.constant(false), index: fc.nat(), transform: fc.constantFrom(...ID_TRANSFORMS) }) },
  fc.uuid({ version: 7 }).map((segment) => ({ kind: "literal" as const, label: "random v7", segment })),
  fc.uuid({ version: [1, 2, 3, 4, 5, 6, 8] }).map((segment) => ({ kind: "literal" as const, label: "uuid of another version", segment })),
  fc.constantFrom("00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "FFFFFFFF-FFFF-7FFF-BFFF-FFFFFFFFFFFF")
    .map((segment) => ({ kind: "literal" as const, label: "nil or max uuid", segment })),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }).map((s) => ({ kind: "literal" as const, label: "unicode id", segment: pct(s) })),
  fc.string({ unit: "binary", minLength: 1, maxLength: 40 }).map((s) => ({ kind: "literal" as const, label: "binary id", segment: pct(s) })),
  fc.integer().map((n) => ({ kind: "literal" as const, label: "integer id", segment: String(n) })),
  fc.constantFrom("%", "%Z", "%ZZ", "%00", "%C0%AF", "%2F", "%ED%A0%80", "%FF", "%E0%A4%A", "%252F", "..", ".", "%2e%2e", "%2E", "null",
    "undefined", "NaN", "-1", "1e308", "__proto__", "constructor", "%5F_proto__", "%20", "+", "*", "~", "%7E", "!", "$", "'", "(", ")", ",", ";", "=", "@", ":")
    .map((segment) => ({ kind: "literal" as const, label: "percent junk or keyword", segment })),
  fc.constantFrom(200, 1000, 4000, 6000).map((n) => ({ kind: "literal" as const, label: "very long id", segment: "a".repeat(n) })),
);

type CursorPick = { same: boolean; index: number; tamper: CursorTamper; at: number; char: string };
type CursorTamper = "none" | "flip" | "truncate" | "append" | "swap" | "payload" | "signature" | "reencode" | "double";

const cursorPick: fc.Arbitrary<CursorPick> = fc.record({
  same: fc.boolean(),
  index: fc.nat(),
  tamper: fc.constantFrom<CursorTamper>("none", "none", "flip", "flip", "truncate", "append", "swap", "payload", "signature", "reencode", "double"),
  at: fc.nat(),
  char: fc.constantFrom("A", "a", "0", "-", "_", ".", "=", "%", "\u00e9", "+", "/"),
});

interface QueryPart {
  label: string;
  key: string;
  /** null: the key alone, without `=`. */
  value: string | null | CursorPick;
  /** Already percent-encoded (or deliberately not). */
  raw?: boolean;
}

const BAD_INTEGERS = ["0", "101", "-1", "1.5", "1e2", "0x10", "", " 5", "5 ", "+5", "NaN", "Infinity", "-0", "99999999999999999999", "\uff11", "5abc", "true", "null", "[]", "00005", "1,2"];

function queryPartFor(name: string, schema: Obj): fc.Arbitrary<QueryPart> {
  const part = (label: string) => (value: string | null | CursorPick): QueryPart => ({ label, key: name, value });
  if (name === "cursor") return cursorPick.map(part(`cursor`));
  if (schema.type === "integer") {
    return fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: schema.minimum ?? 1, max: schema.maximum ?? 1000 }).map((n) => part(`${name}: valid`)(String(n))) },
      { weight: 2, arbitrary: fc.constantFrom(...BAD_INTEGERS).map(part(`${name}: bad integer`)) },
      fc.integer().map((n) => part(`${name}: any integer`)(String(n))),
    );
  }
  if (Array.isArray(schema.enum)) {
    return fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...(schema.enum as string[])).map(part(`filter: valid`)) },
      fc.constantFrom("", "PENDING", " pending", "pending,paid", "null", "0").map(part("filter: bad value")),
      fc.string({ unit: "grapheme", maxLength: 20 }).map(part("filter: random")),
    );
  }
  if (name === "q") {
    return fc.oneof(
      { weight: 3, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }).map(part("q: text")) },
      fc.constantFrom(...EDGE_STRINGS).map(part("q: edge string")),
      fc.constantFrom(199, 200, 201, 1000).map((n) => part("q: long")("q".repeat(n))),
    );
  }
  return fc.oneof(
    { weight: 2, arbitrary: fc.stringMatching(/^[A-Z]{3}$/).map(part("filter: valid")) },
    fc.constantFrom("eur", "EURO", "", "E", "\u00c9UR").map(part("filter: bad value")),
    fc.string({ unit: "grapheme", maxLength: 20 }).map(part("filter: random")),
  );
}

const junkQueryPart: fc.Arbitrary<QueryPart> = fc.oneof(
  fc.constantFrom("limit[]", "limit[0]", "__proto__[polluted]", "__proto__", "constructor[prototype][polluted]", "constructor", "prototype", "toString",
    "hasOwnProperty", "__defineGetter__", "valueOf", "", "row_id", "id", "page[size]", "a.b", "%5F%5Fproto%5F%5F[polluted]")
    .chain((key) => fc.constantFrom("1", "yes", "", "polluted").map((value): QueryPart => ({ label: `query key: ${key || "(empty)"}`, key, value, raw: true }))),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).map((key): QueryPart => ({ label: "query key: unknown", key: pct(key), value: "1", raw: true })),
  fc.constantFrom("limit", "cursor", "q", "page").map((key): QueryPart => ({ label: "query: key without value", key, value: null })),
  fc.constantFrom("%", "%ZZ", "%C0%AF", "%ED%A0%80", "%00", "a%", "=", "==", "&", "?", "%26", "%3D").map((junk): QueryPart => ({ label: "query: percent junk", key: "q", value: junk, raw: true })),
  fc.constantFrom("\u00e9", "\u00ff", "\u0080", '"', "<", ">", "\\", "^", "`", "{", "|", "}", "[", "]").map((c): QueryPart => ({ label: "query: raw character", key: "q", value: c, raw: true })),
);

function queryOf(op: Operation): fc.Arbitrary<{ parts: QueryPart[]; separator: string; repeat: boolean }> {
  const known = op.query.map((p) => queryPartFor(p.name, p.schema));
  const part = known.length > 0 ? fc.oneof({ weight: 5, arbitrary: fc.oneof(...known) }, { weight: 1, arbitrary: junkQueryPart }) : junkQueryPart;
  return fc.record({
    parts: known.length > 0 ? fc.array(part, { maxLength: 4 }) : fc.oneof({ weight: 4, arbitrary: fc.constant<QueryPart[]>([]) }, { weight: 1, arbitrary: fc.array(part, { maxLength: 3 }) }),
    separator: fc.constantFrom("&", "&", "&", "&", ";", "&&"),
    repeat: fc.boolean().map((b) => b && Math.random() < 0.15),
  });
}

type Mutation =
  | { kind: "set"; key: number; value: Labeled }
  | { kind: "delete"; key: number }
  | { kind: "extra"; key: string; value: Labeled };

const EXTRA_KEYS = ["__proto__", "constructor", "prototype", "row_id", "id", "created_at", "updated_at", "status", "revision", "password",
  "due_cents", "amount_due_cents", "legacy_ref", "gift_wrap", "", "a.b", "0", "toString", "valueOf", "polluted"];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("set" as const), key: fc.nat(), value: nasty }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), key: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("extra" as const), key: fc.constantFrom(...EXTRA_KEYS), value: nasty }) },
  fc.record({ kind: fc.constant("extra" as const), key: fc.string({ unit: "binary", maxLength: 12 }), value: nasty }),
);

type Encoding =
  | "json" | "dup-key" | "proto-key" | "constructor-key" | "nested-proto" | "deep-array" | "deep-object" | "invalid-utf8" | "bom"
  | "utf16" | "trailing-garbage" | "truncated" | "empty" | "whitespace" | "number-literal" | "bad-escape" | "oversized" | "at-limit"
  | "json5" | "non-object";

const encodings: fc.Arbitrary<Encoding> = fc.oneof(
  { weight: 24, arbitrary: fc.constant<Encoding>("json") },
  { weight: 10, arbitrary: fc.constantFrom<Encoding>("dup-key", "proto-key", "constructor-key", "nested-proto", "deep-array", "deep-object",
    "invalid-utf8", "bom", "utf16", "trailing-garbage", "truncated", "empty", "whitespace", "number-literal", "bad-escape", "oversized",
    "at-limit", "json5", "non-object") },
);

const CONTENT_TYPES = [null, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=latin1",
  "application/json; charset=utf-8", "application/json;charset=UTF-16", "APPLICATION/JSON", "Application/Json", "application/json-patch+json",
  "application/merge-patch+json", "application/vnd.api+json", "application/jsonx", "application/json ; foo=bar", "application/json;", ";;", "",
  "*/*", "application/*", "json", "application/xml", "text/json", "application/json, text/plain", 'application/json; charset="utf-8"',
  "application/octet-stream", "text/html"];

interface BodyRecipe {
  present: boolean;
  mutations: Mutation[];
  encoding: Encoding;
  variant: number;
  contentType: string | null;
  contentTypeLabel: string;
  chunked: boolean;
}

const contentType: fc.Arbitrary<{ contentType: string | null; contentTypeLabel: string }> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ contentType: "application/json" as string | null, contentTypeLabel: "application/json" }) },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES).map((c) => ({ contentType: c, contentTypeLabel: c === null ? "(none)" : c || "(empty)" })) },
);

function bodyOf(op: Operation): fc.Arbitrary<BodyRecipe & { value: unknown }> {
  const present = op.body ? fc.oneof({ weight: 19, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) : fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
  return fc.record({
    present,
    value: op.body ? valueOf(op.body, "body") : fc.jsonValue({ maxDepth: 2 }),
    mutations: fc.oneof({ weight: 2, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }),
    encoding: encodings,
    variant: fc.nat(),
    chunked: fc.nat(19).map((n) => n === 0),
  }).chain((recipe) => contentType.map((ct) => ({ ...recipe, ...ct })));
}

type PathTweak = "none" | "trailing-slash" | "double-slash" | "absolute-form" | "fragment" | "semicolon" | "upper-collection" | "encoded-unreserved"
  | "dot-segment" | "unknown-version" | "no-version" | "encoded-slash" | "docs";

const pathTweak: fc.Arbitrary<{ tweak: PathTweak; variant: number }> = fc.record({
  tweak: fc.oneof(
    { weight: 40, arbitrary: fc.constant<PathTweak>("none") },
    { weight: 6, arbitrary: fc.constantFrom<PathTweak>("trailing-slash", "double-slash", "absolute-form", "fragment", "semicolon", "upper-collection",
      "encoded-unreserved", "dot-segment", "unknown-version", "no-version", "encoded-slash", "docs") },
  ),
  variant: fc.nat(),
});

const AUTHORIZATIONS: Array<string | null> = [null, "Bearer dev-reader", "Bearer", "Bearer ", "Basic ZGV2LXdyaXRlcjo=", "bearer dev-writer", "Bearer dev-writer ",
  "Bearer  dev-writer", "Bearer dev-writerx", "Bearer DEV-WRITER", `Bearer ${"x".repeat(8000)}`, "Bearer dev-writ\u00e9r", "Token dev-writer", "Bearer null", "dev-writer"];

const authorization = fc.oneof(
  { weight: 30, arbitrary: fc.constant<string | null>("Bearer dev-writer") },
  { weight: 3, arbitrary: fc.constantFrom(...AUTHORIZATIONS) },
);

type IfMatchPick = { kind: "none" } | { kind: "current" } | { kind: "weak-current" } | { kind: "literal"; value: string };

const ifMatch: fc.Arbitrary<IfMatchPick> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<IfMatchPick>({ kind: "none" }) },
  { weight: 4, arbitrary: fc.constant<IfMatchPick>({ kind: "current" }) },
  { weight: 1, arbitrary: fc.constant<IfMatchPick>({ kind: "weak-current" }) },
  fc.constantFrom("*", 'W/"abc"', '"stale"', '""', '"a", "b"', "unquoted", `"${"e".repeat(5000)}"`, ",", "*, *", "W/*")
    .map((value): IfMatchPick => ({ kind: "literal", value })),
);

/** Mostly nothing, sometimes one of `values`. */
function rarely<T>(values: T[], weight = 10): fc.Arbitrary<T | null> {
  return fc.oneof({ weight, arbitrary: fc.constant<T | null>(null) }, { weight: 1, arbitrary: fc.constantFrom<T | null>(...values) });
}

const extraHeaders = fc.record({
  requestId: fc.oneof(
    { weight: 12, arbitrary: fc.constant<string | null>(null) },
    fc.uuid({ version: 7 }),
    fc.uuid({ version: 7 }).map((u) => u.toUpperCase()),
    fc.uuid({ version: 4 }),
    fc.constantFrom("x", "", "../../etc", "1; drop", `${"r".repeat(3000)}`),
  ),
  accept: rarely(["application/xml", "text/html", "*/*", "application/json;q=0", "image/png"]),
  encoding: rarely(["gzip", "br", "identity", "x-unknown"], 15),
  duplicateContentType: fc.nat(29).map((n) => n === 0),
});

const methodChoice = fc.oneof(
  { weight: 30, arbitrary: fc.constant<string | null>(null) },
  { weight: 2, arbitrary: fc.constantFrom(...METHODS.filter((m) => m !== "CONNECT")) },
);

export interface Recipe {
  op: Operation;
  method: string | null;
  id: IdPick;
  /** Path parameters other than `{id}`. */
  other: IdPick;
  path: { tweak: PathTweak; variant: number };
  query: { parts: QueryPart[]; separator: string; repeat: boolean };
  body: BodyRecipe & { value: unknown };
  authorization: string | null;
  ifMatch: IfMatchPick;
  headers: { requestId: string | null; accept: string | null; encoding: string | null; duplicateContentType: boolean };
}

/** A request to any operation of `operations`, good or bad in every part. */
export function recipeOf(operations: Operation[]): fc.Arbitrary<Recipe> {
  return fc.constantFrom(...operations).chain((op) =>
    fc.record({
      op: fc.constant(op),
      method: methodChoice,
      id: idPick,
      other: idPick,
      path: pathTweak,
      query: queryOf(op),
      body: bodyOf(op),
      authorization,
      ifMatch: op.takesIfMatch ? ifMatch : fc.constant<IfMatchPick>({ kind: "none" }),
      headers: extraHeaders,
    }),
  );
}

// ---------------------------------------------------------------------------------------
// From a recipe to bytes

export interface Built {
  op: Operation;
  request: RawRequest;
  /** What kinds of input this request carries: tallied for the summary. */
  labels: string[];
  /** The id in the path, when it names an existing record unchanged. */
  id: string | null;
  /** The path is not the operation's (a tweak or another method): the state learns nothing from the answer. */
  mangledPath: boolean;
}

function resolveId(choice: IdPick, op: Operation, state: FuzzState, labels: string[]): { segment: string; id: string | null } {
  if (choice.kind === "literal") {
    labels.push(`id: ${choice.label}`);
    return { segment: choice.segment, id: null };
  }
  const collections = [...state.ids.keys()];
  const collection = choice.other ? (pick(collections.filter((c) => c !== op.idCollection), choice.index) ?? op.idCollection!) : op.idCollection!;
  const id = pick(state.ids.get(collection) ?? [], choice.index) ?? "01890a5d-ac96-774b-bcce-b302099a8057";
  if (choice.other) labels.push("id: of another collection");
  switch (choice.transform) {
    case "none":
      if (!choice.other) labels.push("id: existing");
      return { segment: id, id: choice.other ? null : id };
    case "upper":
      labels.push("id: uppercase");
      return { segment: id.toUpperCase(), id };
    case "truncate":
      labels.push("id: truncated");
      return { segment: id.slice(0, choice.index % 36), id: null };
    case "extra":
      labels.push("id: one character more");
      return { segment: `${id}0`, id: null };
    case "braces":
      labels.push("id: in braces");
      return { segment: `%7B${id}%7D`, id: null };
    case "urn":
      labels.push("id: urn form");
      return { segment: `urn:uuid:${id}`, id: null };
    case "nohyphen":
      labels.push("id: without hyphens");
      return { segment: id.replace(/-/g, ""), id: null };
    case "space":
      labels.push("id: with spaces");
      return { segment: choice.index % 2 ? `%20${id}` : `${id}%20`, id: null };
    case "version4":
      labels.push("id: version nibble changed");
      return { segment: `${id.slice(0, 14)}4${id.slice(15)}`, id: null };
    case "doubled":
      labels.push("id: twice");
      return { segment: `${id}${id}`, id: null };
  }
}

function pathOf(recipe: Recipe, segment: string, other: string, labels: string[]): { path: string; mangled: boolean } {
  let path = recipe.op.template.replace("{id}", segment).replace(/\{[^}]+\}/g, other);
  const { tweak, variant } = recipe.path;
  if (tweak === "none") return { path, mangled: false };
  labels.push(`path: ${tweak}`);
  const parts = path.split("/");
  switch (tweak) {
    case "trailing-slash":
      path += "/";
      break;
    case "double-slash":
      parts.splice(1 + (variant % (parts.length - 1)), 0, "");
      path = parts.join("/");
      break;
    case "absolute-form":
      path = `${pick(["http://api.example.com", "http://127.0.0.1", "HTTP://x:1", "https://evil.example"], variant)}${path}`;
      break;
    case "fragment":
      path += pick(["#x", "#", "#limit=5", "#/../../v1/users"], variant);
      break;
    case "semicolon":
      path += pick([";x", ";jsessionid=1", ";"], variant);
      break;
    case "upper-collection":
      parts[2] = parts[2]!.toUpperCase();
      path = parts.join("/");
      break;
    case "encoded-unreserved":
      path = path.replace(pick([/o/, /v/, /s/, /-/], variant)!, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
      break;
    case "dot-segment":
      path = pick([`${path}/..`, `${path}/.`, path.replace(/^\/v(\d)\//, "/v$1/./"), path.replace(/^\/v(\d)\//, "/v$1/x/../"), `${path}/%2e%2e/%2e%2e`], variant)!;
      break;
    case "unknown-version":
      path = path.replace(/^\/v\d+/, pick(["/v3", "/v0", "/v01", "/V2", "/v1.0", "/v-1", "/v99999999999999999999"], variant)!);
      break;
    case "no-version":
      path = path.replace(/^\/v\d+/, "") || "/";
      break;
    case "encoded-slash":
      path = path.replace(/\/([^/]*)$/, "%2F$1");
      break;
    case "docs":
      path = pick([`/${recipe.op.version}/docs/static/index.html`, `/${recipe.op.version}/docs/../../package.json`, `/${recipe.op.version}/docs/%2e%2e/%2e%2e/package.json`,
        `/${recipe.op.version}/docs/json`, `/${recipe.op.version}/openapi.json`, "/openapi.json", "/health", "/", "/favicon.ico"], variant)!;
      break;
  }
  return { path, mangled: true };
}

function resolveCursor(pick_: CursorPick, op: Operation, state: FuzzState, labels: string[]): string {
  const own = state.cursors.get(op.template) ?? [];
  const all = [...state.cursors.values()].flat();
  const base = pick(pick_.same && own.length > 0 ? own : all, pick_.index);
  if (base === undefined) {
    labels.push("cursor: random");
    return pct(`${pick_.char}${pick_.index}`);
  }
  labels.push(`cursor: ${pick_.same && own.length > 0 ? "of this list" : "of any list"}${pick_.tamper === "none" ? "" : `, ${pick_.tamper}`}`);
  const at = pick_.at % base.length;
  const dot = base.indexOf(".");
  let cursor = base;
  switch (pick_.tamper) {
    case "flip": {
      const c = base[at]!;
      const flipped = c === pick_.char ? (c === "A" ? "B" : "A") : pick_.char;
      cursor = base.slice(0, at) + flipped + base.slice(at + 1);
      break;
    }
    case "truncate":
      cursor = base.slice(0, at);
      break;
    case "append":
      cursor = base + pick_.char.repeat(1 + (pick_.at % 3));
      break;
    case "swap":
      cursor = `${base.slice(dot + 1)}.${base.slice(0, dot)}`;
      break;
    case "payload":
      cursor = `${Buffer.from(JSON.stringify([op.template, pick_.char])).toString("base64url")}${base.slice(dot)}`;
      break;
    case "signature":
      cursor = `${base.slice(0, dot)}.${Buffer.alloc(16, pick_.at % 256).toString("base64url")}`;
      break;
    case "reencode":
      cursor = Buffer.from(base).toString("base64");
      break;
    case "double":
      cursor = `${base}${base}`;
      break;
  }
  return pct(cursor);
}

function queryString(recipe: Recipe, state: FuzzState, labels: string[]): string {
  const { parts, separator, repeat } = recipe.query;
  if (parts.length === 0) return "";
  const encoded: string[] = [];
  for (const part of parts) {
    let value: string | null;
    if (part.value !== null && typeof part.value === "object") {
      value = resolveCursor(part.value, recipe.op, state, labels);
    } else {
      labels.push(part.label);
      value = part.value === null ? null : part.raw ? part.value : pct(part.value);
    }
    const key = part.raw ? part.key : pct(part.key);
    encoded.push(value === null ? key : `${key}=${value}`);
  }
  if (repeat) {
    labels.push("query: a key repeated");
    encoded.push(encoded[0]!);
  }
  if (separator !== "&") labels.push(`query: separator ${separator}`);
  return `?${encoded.join(separator)}`;
}

/** Puts a value at a key as an own property, `__proto__` included. */
function setOwn(target: Obj, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function resolveRefs(value: unknown, state: FuzzState): unknown {
  if (value instanceof IdRef) {
    if (value.fresh) return "01890a5d-ac96-774b-bcce-b302099a8057";
    const collection = `${value.field.replace(/_id$/, "")}s`;
    return pick(state.ids.get(collection) ?? [], value.index) ?? pick([...state.ids.values()].flat(), value.index) ?? "01890a5d-ac96-774b-bcce-b302099a8057";
  }
  if (Array.isArray(value)) return value.map((v) => resolveRefs(v, state));
  if (value && typeof value === "object") {
    const out: Obj = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, k, resolveRefs(v, state));
    return out;
  }
  return value;
}

function mutate(value: unknown, mutations: Mutation[], op: Operation, labels: string[]): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const out = value as Obj;
  const keys = [...new Set([...Object.keys(out), ...Object.keys(op.body?.properties ?? {})])];
  for (const m of mutations) {
    if (m.kind === "set" && keys.length > 0) {
      labels.push(`body field: ${m.value.label}`);
      setOwn(out, keys[m.key % keys.length]!, m.value.value);
    } else if (m.kind === "delete" && keys.length > 0) {
      labels.push("body field: missing");
      delete out[keys[m.key % keys.length]!];
    } else if (m.kind === "extra") {
      labels.push(`body extra key: ${EXTRA_KEYS.includes(m.key) ? m.key || "(empty)" : "random"}`);
      setOwn(out, m.key, m.value.value);
    }
  }
  return out;
}

const LIMIT = 65_536;

function insertAfterBrace(json: string, insert: string): string {
  if (!json.startsWith("{")) return insert.replace(/,$/, "");
  return json === "{}" ? `{${insert.replace(/,$/, "")}}` : `{${insert}${json.slice(1)}`;
}

function encode(value: unknown, recipe: BodyRecipe, labels: string[]): Buffer | string {
  const v = recipe.variant;
  const json = JSON.stringify(value) ?? "null";
  if (recipe.encoding !== "json") labels.push(`body encoding: ${recipe.encoding}`);
  switch (recipe.encoding) {
    case "json":
      return json;
    case "dup-key": {
      const key = Object.keys((value as Obj) ?? {})[0] ?? "a";
      return v % 2 ? insertAfterBrace(json, `${JSON.stringify(key)}:${pick(["null", "1", '"x"', "[]", "{}"], v)},`) : json.replace(/}$/, `,${JSON.stringify(key)}:${pick(["null", "1", '"x"', "[]", "{}"], v)}}`);
    }
    case "proto-key":
      return insertAfterBrace(json, `"__proto__":${pick(['{"polluted":"yes"}', "null", "[]", '{"isAdmin":true}'], v)},`);
    case "constructor-key":
      return insertAfterBrace(json, `"constructor":${pick(['{"prototype":{"polluted":"yes"}}', '{"polluted":"yes"}', "null", '"x"'], v)},`);
    case "nested-proto":
      return insertAfterBrace(json, `"dimensions":{"__proto__":{"polluted":"yes"},"width_mm":1,"height_mm":1},`);
    case "deep-array": {
      const n = pick([100, 1000, 10_000, 30_000, 40_000], v)!;
      return insertAfterBrace(json, `"tags":${"[".repeat(n)}${"]".repeat(n)},`);
    }
    case "deep-object": {
      const n = pick([100, 1000, 5000, 12_000], v)!;
      return insertAfterBrace(json, `"dimensions":${'{"a":'.repeat(n)}1${"}".repeat(n)},`);
    }
    case "invalid-utf8": {
      const bytes = Buffer.from(json);
      const at = bytes.indexOf(0x22, 1 + (v % Math.max(1, bytes.length - 1)));
      const bad = Buffer.from(pick([[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xfe, 0xff]], v)!);
      const cut = at === -1 ? bytes.length : at + 1;
      return Buffer.concat([bytes.subarray(0, cut), bad, bytes.subarray(cut)]);
    }
    case "bom":
      return v % 2 ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]) : `\ufeff\ufeff${json}`;
    case "utf16":
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(json, "utf16le")]);
    case "trailing-garbage":
      return json + pick([" x", "}", "]", ",", "\u0000", "{}", " // c", '\n{"a":1}', "\r\n\r\nGET / HTTP/1.1\r\n\r\n"], v)!;
    case "truncated":
      return json.slice(0, v % Math.max(1, json.length));
    case "empty":
      return "";
    case "whitespace":
      return pick([" ", "\n", "\t\r\n ", "\u00a0", "\u2028"], v)!;
    case "number-literal": {
      const literal = pick(["1e400", "-1e400", "-0", "NaN", "Infinity", "-Infinity", "0x10", "01", "1.", "+1", ".5", "1e-400",
        "123456789012345678901234567890", "9007199254740993", "1_000", "\uff11", "-", "1e", "0.1e+309"], v)!;
      const keys = Object.keys((value as Obj) ?? {});
      const key = pick(keys, v >> 5);
      return key === undefined ? literal : insertAfterBrace(json.replace(new RegExp(`,?${JSON.stringify(key).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:`), ""), `${JSON.stringify(key)}:${literal},`);
    }
    case "bad-escape":
      return insertAfterBrace(json, `${pick(['"note":"\\ud800"', '"name":"\\u0000"', '"reason":"\\uDFFF\\uD800"', '"note":"\\x41"', '"note":"\t"', '"note":"\\u12"', '"note":"\\\'"'], v)},`);
    case "oversized": {
      const size = pick([LIMIT + 1, LIMIT + 1000, 2 * LIMIT, 300_000], v)!;
      return insertAfterBrace(json, `"note":"${"x".repeat(size)}",`);
    }
    case "at-limit": {
      // Exactly at the limit is accepted as far as size goes; one byte over is not.
      const over = v % 2;
      const base = insertAfterBrace(json, `"pad":"",`);
      return base.replace('"pad":""', `"pad":"${"x".repeat(Math.max(0, LIMIT + over - Buffer.byteLength(base)))}"`);
    }
    case "json5":
      return pick(["{a:1}", "{'a':1}", '{"a":1,}', "[1,]", '{"a":1 /* c */}', "{\n  // c\n}", "{\"a\":'x'}", "{\"a\":undefined}"], v)!;
    case "non-object":
      return pick(["[]", '"str"', "1", "null", "true", "[{}]", `[${json}]`, '"{}"', "0"], v)!;
  }
}

export function build(recipe: Recipe, state: FuzzState): Built {
  const labels: string[] = [];
  const { op } = recipe;
  const method = recipe.method ?? op.method;
  if (method !== op.method) labels.push(`method: ${method} instead of ${op.method}`);
  const { segment, id } = op.idCollection ? resolveId(recipe.id, op, state, labels) : { segment: "", id: null };
  const other = /\{(?!id\})/.test(op.template) ? resolveId(recipe.other, op, state, []).segment : "";
  let { path, mangled } = pathOf(recipe, segment, other, labels);
  // A path the service handed out, with all its parameters (a download link), when it gave one.
  const link = recipe.id.kind === "existing" && recipe.id.transform === "none" && !recipe.id.other ? pick(state.links.get(op.template) ?? [], recipe.id.index) : undefined;
  if (link && !mangled) {
    path = link;
    labels.push("path: handed out by the service");
  }
  const target = path + queryString(recipe, state, labels);

  const headers: Record<string, string | string[]> = {};
  if (recipe.authorization !== null) headers.authorization = recipe.authorization;
  if (recipe.authorization !== "Bearer dev-writer") labels.push(`auth: ${recipe.authorization === null ? "none" : recipe.authorization.length > 40 ? "very long" : recipe.authorization}`);
  if (recipe.ifMatch.kind === "current") {
    headers["if-match"] = (id && state.etags.get(id)) ?? '"unknown"';
    labels.push("If-Match: current ETag");
  } else if (recipe.ifMatch.kind === "weak-current") {
    headers["if-match"] = `W/${(id && state.etags.get(id)) ?? '"unknown"'}`;
    labels.push("If-Match: current ETag, weak");
  } else if (recipe.ifMatch.kind === "literal") {
    headers["if-match"] = recipe.ifMatch.value;
    labels.push("If-Match: other");
  }
  const h = recipe.headers;
  if (h.requestId !== null) {
    headers["x-request-id"] = h.requestId;
    labels.push("X-Request-Id: given");
  }
  if (h.accept !== null) {
    headers.accept = h.accept;
    labels.push(`Accept: ${h.accept}`);
  }
  if (h.encoding !== null) {
    headers["content-encoding"] = h.encoding;
    labels.push(`Content-Encoding: ${h.encoding}`);
  }

  let body: Buffer | string | undefined;
  const b = recipe.body;
  if (b.present) {
    if (!op.body) labels.push(`body: on a ${method}`);
    const value = mutate(resolveRefs(b.value, state), b.mutations, op, labels);
    body = encode(value, b, labels);
    if (b.contentType !== null) headers["content-type"] = h.duplicateContentType ? [b.contentType, "text/plain"] : b.contentType;
    if (b.contentTypeLabel !== "application/json") labels.push(`Content-Type: ${b.contentTypeLabel}`);
    if (h.duplicateContentType) labels.push("Content-Type: twice");
    if (b.chunked) labels.push("framing: chunked");
  } else if (op.body) {
    labels.push("body: none");
    if (b.contentType !== null && b.variant % 3 === 0) headers["content-type"] = b.contentType;
  }
  return {
    op,
    request: { method, target, headers, ...(body === undefined ? {} : { body }), framing: b.chunked ? "chunked" : "length" },
    labels,
    id: mangled ? null : id,
    mangledPath: mangled || method !== op.method,
  };
}

/** A short account of a request, for failure messages. */
export function describe(built: Built): string {
  const { request } = built;
  const body = request.body === undefined ? "(no body)" : Buffer.from(request.body).toString("utf8");
  return [
    `${request.method} ${request.target.length > 300 ? `${request.target.slice(0, 300)}… (${request.target.length} chars)` : request.target}`,
    `headers: ${JSON.stringify(request.headers).slice(0, 500)}`,
    `body (${request.body === undefined ? 0 : Buffer.byteLength(request.body)} bytes, ${request.framing}): ${body.slice(0, 400)}${body.length > 400 ? "…" : ""}`,
    `inputs: ${built.labels.join("; ")}`,
  ].join("\n");
}

// ---------------------------------------------------------------------------------------
// Malformed HTTP: byte-level mutations of a valid request

type ByteMutation =
  | "method-lower" | "method-unknown" | "method-long" | "version" | "target-bytes" | "target-asterisk" | "target-empty" | "no-host" | "two-hosts"
  | "cl-twice" | "cl-negative" | "cl-plus" | "cl-hex" | "cl-smaller" | "cl-larger" | "te-and-cl" | "te-unknown" | "chunk-bad-size" | "chunk-extension"
  | "chunk-unterminated" | "header-no-colon" | "header-space-before-colon" | "header-nul" | "header-obs-fold" | "bare-lf" | "bare-cr" | "header-long"
  | "headers-many" | "flip-byte" | "garbage" | "pipelined" | "connect" | "http09" | "upgrade" | "expect" | "none";

const BYTE_MUTATIONS: ByteMutation[] = ["method-lower", "method-unknown", "method-long", "version", "target-bytes", "target-asterisk", "target-empty", "no-host",
  "two-hosts", "cl-twice", "cl-negative", "cl-plus", "cl-hex", "cl-smaller", "cl-larger", "te-and-cl", "te-unknown", "chunk-bad-size", "chunk-extension",
  "chunk-unterminated", "header-no-colon", "header-space-before-colon", "header-nul", "header-obs-fold", "bare-lf", "bare-cr", "header-long", "headers-many",
  "flip-byte", "garbage", "pipelined", "connect", "http09", "upgrade", "expect", "none"];

export interface BytesRecipe {
  op: Operation;
  id: string;
  mutations: ByteMutation[];
  variant: number;
  garbage: Uint8Array;
}

export function bytesRecipeOf(operations: Operation[]): fc.Arbitrary<BytesRecipe> {
  return fc.record({
    op: fc.constantFrom(...operations),
    id: fc.uuid({ version: 7 }),
    mutations: fc.array(fc.constantFrom(...BYTE_MUTATIONS), { minLength: 1, maxLength: 3 }),
    variant: fc.nat(),
    garbage: fc.uint8Array({ minLength: 1, maxLength: 200 }),
  });
}

/** The bytes of a request, mangled; and what was done to them. */
export function buildBytes(recipe: BytesRecipe, state: FuzzState): { bytes: Buffer; labels: string[] } {
  const { op, variant: v } = recipe;
  const id = (op.idCollection && pick(state.ids.get(op.idCollection) ?? [], v)) || recipe.id;
  let method = op.method;
  let target = op.template.replace("{id}", id);
  let version = "HTTP/1.1";
  let body = op.body ? '{"reason":"x"}' : "";
  let headers: Array<[string, string]> = [["Host", "api.example.com"], ["Authorization", "Bearer dev-writer"]];
  if (body) headers.push(["Content-Type", "application/json"], ["Content-Length", String(Buffer.byteLength(body))]);
  let eol = "\r\n";
  let tail = "";
  let whole: Buffer | null = null;
  const labels: string[] = [];
  for (const m of recipe.mutations) {
    labels.push(`bytes: ${m}`);
    switch (m) {
      case "method-lower":
        method = method.toLowerCase();
        break;
      case "method-unknown":
        method = pick(["FOO", "G ET", "GETT", "PATCHX", "DELETE\u0000", "BREW", "-", "GET/"], v)!;
        break;
      case "method-long":
        method = "G".repeat(2000);
        break;
      case "version":
        version = pick(["HTTP/1.0", "HTTP/2.0", "HTTP/1.2", "HTTP/11", "HTTPS/1.1", "", "http/1.1", "HTTP/1.1 x", "HTTP/9.9"], v)!;
        break;
      case "target-bytes":
        target += pick(["\u00e9", "\u007f", "\u0000", "\t", " x", '"', "<", "\\", "\u00ff\u00fe", "%", "\u0085"], v)!;
        break;
      case "target-asterisk":
        target = "*";
        break;
      case "target-empty":
        target = "";
        break;
      case "no-host":
        headers = headers.filter(([n]) => n !== "Host");
        break;
      case "two-hosts":
        headers.push(["Host", "other.example.com"]);
        break;
      case "cl-twice":
        headers.push(["Content-Length", String(Buffer.byteLength(body) + 1)]);
        break;
      case "cl-negative":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Content-Length", "-1"]]);
        break;
      case "cl-plus":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Content-Length", `+${Buffer.byteLength(body)}`]]);
        break;
      case "cl-hex":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Content-Length", `0x${Buffer.byteLength(body).toString(16)}`]]);
        break;
      case "cl-smaller":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Content-Length", String(Math.max(0, Buffer.byteLength(body) - 3))]]);
        break;
      case "cl-larger":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Content-Length", String(Buffer.byteLength(body) + 10)]]);
        break;
      case "te-and-cl":
        headers.push(["Transfer-Encoding", "chunked"]);
        break;
      case "te-unknown":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Transfer-Encoding", pick(["gzip", "chunked, gzip", "identity", "x", "chunked;q=1"], v)!]]);
        break;
      case "chunk-bad-size":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Transfer-Encoding", "chunked"]]);
        body = `${pick(["zz", "ffffffffffffffffffff", "-1", "", "0x2"], v)}\r\n${body}\r\n0\r\n\r\n`;
        break;
      case "chunk-extension":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Transfer-Encoding", "chunked"]]);
        body = `${Buffer.byteLength(body).toString(16)};${"e".repeat(v % 2 ? 10 : 20_000)}=1\r\n${body}\r\n0\r\n\r\n`;
        break;
      case "chunk-unterminated":
        headers = headers.filter(([n]) => n !== "Content-Length").concat([["Transfer-Encoding", "chunked"]]);
        body = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`;
        break;
      case "header-no-colon":
        headers.push(["X-Broken", "\u0000"]);
        headers.push(["No colon here", ""]);
        break;
      case "header-space-before-colon":
        headers.push(["X-Space ", "1"]);
        break;
      case "header-nul":
        headers.push(["X-Nul", "a\u0000b"]);
        break;
      case "header-obs-fold":
        headers.push(["X-Fold", `a\r\n folded`]);
        break;
      case "bare-lf":
        eol = "\n";
        break;
      case "bare-cr":
        headers.push(["X-Cr", "a\rb"]);
        break;
      case "header-long":
        headers.push(["X-Long", "l".repeat(pick([8_000, 70_000], v)!)]);
        break;
      case "headers-many":
        for (let i = 0; i < 3000; i++) headers.push([`X-H${i}`, "1"]);
        break;
      case "flip-byte":
      case "garbage":
      case "none":
        break;
      case "pipelined":
        tail = `GET /${op.version}/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-writer\r\n\r\n`;
        break;
      case "connect":
        method = "CONNECT";
        target = pick([`${target}`, "api.example.com:443", "127.0.0.1:22"], v)!;
        break;
      case "http09":
        whole = Buffer.from(`GET ${target}\r\n`);
        break;
      case "upgrade":
        headers.push(["Connection", "Upgrade"], ["Upgrade", pick(["websocket", "h2c", "HTTP/2.0", "x"], v)!]);
        break;
      case "expect":
        headers.push(["Expect", pick(["100-continue", "200-ok", "x"], v)!]);
        break;
    }
  }
  let bytes =
    whole ??
    Buffer.from(
      `${method} ${target}${version ? ` ${version}` : ""}${eol}${headers.map(([n, value]) => `${n}${n.includes(" ") && !n.endsWith(" ") ? "" : ":"} ${value}`).join(eol)}${eol}${eol}${body}${tail}`,
      "latin1",
    );
  if (recipe.mutations.includes("flip-byte")) {
    bytes = Buffer.from(bytes);
    const at = v % bytes.length;
    bytes[at] = bytes[at]! ^ (1 << (v % 8));
  }
  if (recipe.mutations.includes("garbage")) bytes = v % 2 ? Buffer.from(recipe.garbage) : Buffer.concat([bytes.subarray(0, v % bytes.length), Buffer.from(recipe.garbage)]);
  return { bytes, labels };
}
