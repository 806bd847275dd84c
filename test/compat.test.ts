// Tests of the compatibility gate (generator/compat) and of CHANGES.md. Each case copies
// test/fixtures/compat/base, changes one thing in its YAML, and compares the v1 document the
// changed definitions give with the one the base gives: most in-process, a handful through
// `generate()` and the CLI.
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import prettier from "prettier";
import { compareDocuments } from "../generator/compat/compare.ts";
import { compatibilityGate } from "../generator/compat/gate.ts";
import type { Change, Json, JsonObject } from "../generator/compat/types.ts";
import { locateChange } from "../generator/compat/locate.ts";
import { OUTPUT_RULES } from "../generator/diagnostics/catalog.ts";
import { formatDiagnostic } from "../generator/diagnostics/diagnostic.ts";
import { changesEmitter } from "../generator/emit/changes/index.ts";
import { createEmitContext } from "../generator/emit/index.ts";
import { openapiDocument } from "../generator/emit/openapi/document.ts";
import { PRETTIER_OPTIONS } from "../generator/format/format.ts";
import { generate } from "../generator/generate.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { canon, repoRoot, snapshot, workspace } from "./support/cli.ts";

const base = path.join(repoRoot, "test/fixtures/compat/base");
const tmp = path.join(repoRoot, "test", ".tmp", `compat-${process.pid}`);
const today = "2026-11-21";

type Edit = (text: string) => string | null;

/** Replaces `from` (which must be there) by `to`. */
const replace =
  (from: string, to: string): Edit =>
  (text) => {
    assert.ok(text.includes(from), `the fixture contains ${JSON.stringify(from)}`);
    return text.replace(from, to);
  };
const remove: Edit = () => null;

/** A copy of the base definitions with some files edited (null: deleted); returns its folder. */
function variant(name: string, edits: Record<string, Edit> = {}): string {
  const dir = path.join(tmp, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(base, path.join(dir, "definitions"), { recursive: true });
  for (const [file, edit] of Object.entries(edits)) {
    const full = path.join(dir, "definitions", file);
    let text = "";
    try {
      text = readFileSync(full, "utf8");
    } catch {
      // a new file
    }
    const next = edit(text);
    if (next === null) rmSync(full);
    else writeFileSync(full, next);
  }
  return dir;
}

async function frontEnd(dir: string) {
  const front = await runFrontEnd(path.join(dir, "definitions"), { today, cwd: dir });
  assert.ok(front.model && front.definitions, front.diagnostics.map(formatDiagnostic).join("\n"));
  return { model: front.model, definitions: front.definitions };
}

/** The OpenAPI document of every version, as the OpenAPI emitter builds it. */
async function documents(dir: string): Promise<Map<string, Json>> {
  const { model } = await frontEnd(dir);
  return new Map(model.versions.map((v) => [v.name, openapiDocument(model, v) as Json]));
}

let published: Json;

async function changesOf(name: string, edits: Record<string, Edit>): Promise<Change[]> {
  const docs = await documents(variant(name, edits));
  return compareDocuments(published, docs.get("v1")!);
}

interface Expect {
  kind: Change["kind"];
  operationId?: string;
  part?: "request" | "response" | "parameter" | "operation";
  field?: string;
  keyword?: string;
}

function matches(c: Change, e: Expect): boolean {
  return (
    c.kind === e.kind &&
    (e.operationId === undefined || c.operation?.operationId === e.operationId) &&
    (e.part === undefined || c.part.in === e.part) &&
    (e.field === undefined || c.field === e.field || (c.part.in === "parameter" && c.part.name === e.field)) &&
    (e.keyword === undefined || c.keyword === e.keyword)
  );
}

const listing = (changes: Change[]) =>
  changes.map((c) => `${c.breaking ? "B" : " "} ${c.kind} ${c.operation?.operationId} ${c.part.in} ${c.text}`).join("\n");

const books = "books.yaml";
const actionBlock = "actions:\n  loans:\n    fields:\n      reader: { type: string, max_length: 100 }\n";

before(async () => {
  published = (await documents(variant("base"))).get("v1")!;
});
after(() => rmSync(tmp, { recursive: true, force: true }));

describe("breaking changes, on real pairs of definitions", () => {
  const cases: Array<[string, Record<string, Edit>, Expect]> = [
    ["a response field removed", { [books]: replace("  contact: { type: string }\n", "") }, { kind: "field-removed", operationId: "getBook", part: "response", field: "contact" }],
    ["a response field renamed", { [books]: replace("  contact:", "  email:") }, { kind: "field-renamed", operationId: "getBook", part: "response", field: "contact" }],
    ["a type changed: integer → number", { [books]: replace("pages: { type: integer", "pages: { type: number") }, { kind: "type-changed", operationId: "getBook", part: "response", field: "pages" }],
    ["a narrower format: date → datetime", { [books]: replace("published_on: { type: date }", "published_on: { type: datetime }") }, { kind: "format-changed", operationId: "getBook", field: "published_on" }],
    ["a format added to an input", { [books]: replace("contact: { type: string }", "contact: { type: string, format: email }") }, { kind: "format-changed", operationId: "createBook", part: "request", field: "contact" }],
    ["an enum value removed from an input", { [books]: replace("[fiction, poetry, drama]", "[fiction, poetry]") }, { kind: "enum-value-removed", operationId: "createBook", part: "request", field: "genre" }],
    ["an enum value removed from a query parameter", { [books]: replace("[fiction, poetry, drama]", "[fiction, poetry]") }, { kind: "enum-value-removed", operationId: "listBooks", part: "parameter", field: "genre" }],
    ["an enum value added to a response", { [books]: replace("[fiction, poetry, drama]", "[fiction, poetry, drama, essay]") }, { kind: "enum-value-added", operationId: "getBook", part: "response", field: "genre" }],
    ["an optional input made required", { [books]: replace("max_length: 100, optional: true }", "max_length: 100 }") }, { kind: "field-required", operationId: "createBook", part: "request", field: "note" }],
    ["a new required input", { [books]: replace("  note:", "  edition: { type: integer }\n  note:") }, { kind: "field-added", operationId: "createBook", part: "request", field: "edition" }],
    ["an operation removed", { [books]: replace("[list, read, create, update, delete]", "[list, read, create, update]") }, { kind: "operation-removed", operationId: "deleteBook" }],
    ["a path removed", { "authors.yaml": remove }, { kind: "path-removed", operationId: "listAuthors" }],
    ["a query parameter removed", { [books]: replace("filters: [genre, pages]\n", "") }, { kind: "parameter-removed", operationId: "listBooks", field: "genre" }],
    ["an action removed", { [books]: replace(actionBlock, "") }, { kind: "action-removed", operationId: "createBookLoan" }],
    ["a tighter max_length on input", { [books]: replace("max_length: 200", "max_length: 150") }, { kind: "limit-tightened", operationId: "createBook", field: "title", keyword: "maxLength" }],
    ["a tighter maximum on input", { [books]: replace("maximum: 5000", "maximum: 1000") }, { kind: "limit-tightened", operationId: "createBook", field: "pages", keyword: "maximum" }],
    ["a tighter pattern on input", { [books]: replace("{10,17}", "{13,17}") }, { kind: "limit-tightened", operationId: "createBook", field: "isbn", keyword: "pattern" }],
    ["the pagination mode changed", { [books]: replace("operations:", "pagination: offset\noperations:") }, { kind: "pagination-changed", operationId: "listBooks" }],
    ["a sort key removed (SPEC §12)", { [books]: replace("sort: [pages, genre]", "sort: [pages]") }, { kind: "enum-value-removed", operationId: "listBooks", part: "parameter", field: "sort" }],
    ["the values of an enum sort key put in another order (SPEC §12.1: an enum sorts in the order of its values)", { [books]: replace("[fiction, poetry, drama]", "[drama, fiction, poetry]") }, { kind: "sort-order-changed", operationId: "listBooks", part: "parameter", field: "sort", keyword: "enum" }],
    ["sorting removed altogether", { [books]: replace("sort: [pages, genre]\n", "") }, { kind: "parameter-removed", operationId: "listBooks", field: "sort" }],
    ["a filter removed: its operators go too", { [books]: replace("filters: [genre, pages]", "filters: [genre]") }, { kind: "parameter-removed", operationId: "listBooks", field: "pages[gte]" }],
    ["a value removed from an [in] filter's enum", { [books]: replace("[fiction, poetry, drama]", "[fiction, poetry]") }, { kind: "enum-value-removed", operationId: "listBooks", part: "parameter", field: "genre[in]" }],
    ["a composite unique constraint added (SPEC §12.3)", { [books]: replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[title, isbn]]\n") }, { kind: "unique-added", operationId: "createBook", part: "request", keyword: "x-canon-unique" }],
    ["a composite unique constraint widened to another list", { [books]: replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[title, contact]]\n") }, { kind: "unique-added", operationId: "updateBook", part: "request" }],
    ["transitions added to an enum field (SPEC §12.5)", { [books]: replace("values: [fiction, poetry, drama] }", "values: [fiction, poetry, drama], transitions: { fiction: [poetry] } }") }, { kind: "transitions-added", operationId: "updateBook", part: "request", field: "genre", keyword: "x-canon-transitions" }],
    ["a resource made tenant-scoped (SPEC §12.4)", { [books]: replace("  note:", "  author_id: { type: uuid, references: authors, tenant: true }\n  note:") }, { kind: "tenant-added", operationId: "createBook", part: "request", keyword: "x-canon-tenant" }],
    ["requires added to an action (SPEC §12.5)", { [books]: replace(actionBlock, `${actionBlock}    requires: { genre: [fiction] }\n`) }, { kind: "requires-added", operationId: "createBookLoan", part: "operation", keyword: "x-canon-requires" }],
    ["a status code removed", { [books]: replace("max_length: 100 }\n", "max_length: 100 }\n    response: 204\n") }, { kind: "status-removed", operationId: "createBookLoan" }],
  ];
  cases.forEach(([name, edits, expected], i) => {
    test(name, async () => {
      const changes = await changesOf(`break-${i}`, edits);
      assert.ok(
        changes.some((c) => c.breaking && matches(c, expected)),
        `expected a breaking ${expected.kind}, got:\n${listing(changes)}`,
      );
      for (const c of changes) assert.ok(c.text.length > 0 && c.pointer.startsWith("#/"), "each change has words and a pointer");
    });
  });

  test("a type changed to decimal or map is said as decimal or map, not as the JSON type that carries it (SPEC §12.6)", async () => {
    const decimal = await changesOf("to-decimal", { [books]: replace("pages: { type: integer, minimum: 1, maximum: 5000 }", "pages: { type: decimal, precision: 6, scale: 0 }") });
    const retyped = decimal.find((c) => c.breaking && c.kind === "type-changed" && c.operation?.operationId === "getBook" && c.field === "pages");
    assert.equal(retyped?.detail, "changed type from integer to decimal", listing(decimal));
    const map = await changesOf("to-map", { [books]: replace("note: { type: string, max_length: 100, optional: true }", "note: { type: map, items: { type: string }, optional: true }") });
    const mapped = map.find((c) => c.breaking && c.kind === "type-changed" && c.operation?.operationId === "getBook" && c.field === "note");
    assert.equal(mapped?.detail, "changed type from string to map", listing(map));
  });
});

describe("changes that break nothing", () => {
  const cases: Array<[string, Record<string, Edit>, Expect]> = [
    ["a new optional response field", { [books]: replace("  note:", "  subtitle: { type: string, optional: true }\n  note:") }, { kind: "field-added", operationId: "getBook", part: "response", field: "subtitle" }],
    ["a new endpoint", { [books]: replace("[list, read, create, update, delete]", "[list, read, create, update, replace, delete]") }, { kind: "operation-added", operationId: "replaceBook" }],
    ["a new resource", { "publishers.yaml": () => "resource: publishers\nfields:\n  name: { type: string }\n" }, { kind: "operation-added", operationId: "listPublishers" }],
    ["a new optional input", { [books]: replace("  note:", "  rating: { type: integer, default: 0 }\n  note:") }, { kind: "field-added", operationId: "createBook", part: "request", field: "rating" }],
    ["a looser input limit", { [books]: replace("max_length: 200", "max_length: 300") }, { kind: "limit-loosened", operationId: "createBook", field: "title", keyword: "maxLength" }],
    ["a sort key added (SPEC §12)", { [books]: replace("sort: [pages, genre]", "sort: [pages, genre, published_on]") }, { kind: "enum-value-added", operationId: "listBooks", part: "parameter", field: "sort" }],
    ["sorting added to a list", { "authors.yaml": replace("resource: authors\n", "resource: authors\nsort: [name]\n") }, { kind: "parameter-added", operationId: "listAuthors", field: "sort" }],
    ["a filter added, with its operators", { [books]: replace("filters: [genre, pages]", "filters: [genre, pages, published_on, created_at]") }, { kind: "parameter-added", operationId: "listBooks", field: "created_at[gte]" }],
    ["a required input made optional", { [books]: replace("contact: { type: string }", "contact: { type: string, default: '' }") }, { kind: "field-optional", operationId: "createBook", part: "request", field: "contact" }],
  ];
  cases.forEach(([name, edits, expected], i) => {
    test(name, async () => {
      const changes = await changesOf(`safe-${i}`, edits);
      assert.deepEqual(changes.filter((c) => c.breaking).map((c) => c.text), [], listing(changes));
      assert.ok(changes.some((c) => matches(c, expected)), `expected ${expected.kind}, got:\n${listing(changes)}`);
    });
  });

  // An action's rules dated by `rules_added` (SPEC §12.5): a published version keeps its action
  // as it was, and a read-only field's machine is shown from the version whose action sets it.
  const lentState = "  state: { type: enum, values: [open, lent], default: open, read_only: true, transitions: { open: [lent] } }\n  note:";
  const actingLoans = `${actionBlock}    requires: { state: [open] }\n    sets: { state: lent }\n`;
  const withV2 = replace("  v1: {}\n", "  v1: {}\n  v2: {}\n");
  test("requires, sets and a machine dated rules_added: v2 leave v1 as it was", async () => {
    const base = await changesOf("rules-base", { [books]: replace("  note:", lentState), "api.yaml": withV2 });
    const docs = await documents(
      variant("rules-dated", {
        [books]: (text) => replace(actionBlock, `${actingLoans}    rules_added: v2\n`)(replace("  note:", lentState)(text)!),
        "api.yaml": withV2,
      }),
    );
    const dated = compareDocuments(published, docs.get("v1")!);
    assert.deepEqual(dated.filter((c) => c.breaking).map((c) => c.text), [], listing(dated));
    assert.deepEqual(dated.map((c) => c.text), base.map((c) => c.text), "v1's document is the same as without the rules");
    assert.doesNotMatch(JSON.stringify(docs.get("v1")), /x-canon-(transitions|requires|sets)/);
    assert.match(JSON.stringify(docs.get("v2")), /"x-canon-requires":\{"state":\["open"\]\}/);
    assert.match(JSON.stringify(docs.get("v2")), /"x-canon-transitions":\{"open":\["lent"\]\}/);
  });

  test("the same rules without rules_added break v1: requires added, and the machine of the field its action now sets", async () => {
    const changes = await changesOf("rules-undated", {
      [books]: (text) => replace(actionBlock, actingLoans)(replace("  note:", lentState)(text)!),
      "api.yaml": withV2,
    });
    assert.ok(changes.some((c) => c.breaking && c.kind === "requires-added" && c.operation?.operationId === "createBookLoan"), listing(changes));
  });

  test("a new version leaves the published one as it was", async () => {
    const changes = await changesOf("new-version", { "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: {}\n") });
    assert.deepEqual(changes, []);
  });

  test("additionalProperties: false on a response record does not make a new optional field a break", () => {
    const doc = published as JsonObject;
    const schemas = ((doc.components as JsonObject).schemas as JsonObject);
    const book = schemas.Book as JsonObject;
    assert.equal(book.additionalProperties, false);
    const grown = structuredClone(doc);
    const grownBook = ((grown.components as JsonObject).schemas as JsonObject).Book as JsonObject;
    (grownBook.properties as JsonObject).extra = { type: "string" };
    const changes = compareDocuments(doc, grown);
    assert.ok(changes.length > 0 && changes.every((c) => !c.breaking && c.kind === "field-added"), listing(changes));
  });
});

describe("decimal and map fields (SPEC §12: a change to or from them breaks; wider precision or max_items does not)", () => {
  /** Books with one more field, `extra`, declared as given (before `note`). */
  const withExtra = (field: string): Record<string, Edit> => ({ [books]: replace("  note:", `  extra: ${field}\n  note:`) });
  /** The changes from the definitions with `before` to those with `after` (not from the base). */
  async function changesBetween(name: string, before: Record<string, Edit>, after: Record<string, Edit>): Promise<Change[]> {
    const a = (await documents(variant(`${name}-a`, before))).get("v1")!;
    const b = (await documents(variant(`${name}-b`, after))).get("v1")!;
    return compareDocuments(a, b);
  }
  const price = (options: string) => `{ type: decimal, ${options} }`;
  const meta = (options: string) => `{ type: map, items: { type: string }, ${options} }`;
  const ids = (references: string) => `{ type: array, items: { type: uuid${references} }, max_items: 10, optional: true }`;

  const breaking: Array<[string, string, string, Expect]> = [
    ["string → decimal (same JSON type, another value)", "{ type: string }", price("precision: 12, scale: 2"), { kind: "format-changed", operationId: "getBook", part: "response", field: "extra" }],
    ["decimal → string", price("precision: 12, scale: 2"), "{ type: string }", { kind: "format-changed", operationId: "createBook", part: "request", field: "extra" }],
    ["decimal → string, in a response", price("precision: 12, scale: 2"), "{ type: string }", { kind: "format-changed", operationId: "getBook", part: "response", field: "extra" }],
    ["number → decimal", "{ type: number }", price("precision: 12, scale: 2"), { kind: "type-changed", operationId: "getBook", field: "extra" }],
    ["object → map", "{ type: object, fields: { a: { type: string } } }", meta("max_items: 50"), { kind: "type-changed", operationId: "getBook", part: "response", field: "extra", keyword: "additionalProperties" }],
    ["map → object", meta("max_items: 50"), "{ type: object, fields: { a: { type: string } } }", { kind: "type-changed", operationId: "createBook", part: "request", field: "extra" }],
    ["string → map", "{ type: string }", meta("max_items: 50"), { kind: "type-changed", operationId: "getBook", field: "extra" }],
    ["a map's item type changed", meta("max_items: 50"), "{ type: map, items: { type: integer }, max_items: 50 }", { kind: "type-changed", operationId: "getBook", field: "extra.*" }],
    ["fewer keys in an input map", meta("max_items: 50"), meta("max_items: 20"), { kind: "limit-tightened", operationId: "createBook", field: "extra", keyword: "maxProperties" }],
    ["fewer fraction digits in an input decimal", price("precision: 12, scale: 2"), price("precision: 12, scale: 1"), { kind: "limit-tightened", operationId: "createBook", field: "extra", keyword: "x-scale" }],
    // SPEC §12.6: always `scale` fraction digits; "0.10" answered as "0.1000" fails the published pattern.
    ["more fraction digits: every answer changes form", price("precision: 12, scale: 2"), price("precision: 14, scale: 4"), { kind: "format-changed", operationId: "getBook", part: "response", field: "extra", keyword: "x-scale" }],
    ["fewer integer digits in an input decimal", price("precision: 12, scale: 2"), price("precision: 10, scale: 2"), { kind: "limit-tightened", operationId: "createBook", field: "extra", keyword: "x-precision" }],
    ["a higher minimum on an input decimal", price('precision: 12, scale: 2, minimum: "0"'), price('precision: 12, scale: 2, minimum: "0.01"'), { kind: "limit-tightened", operationId: "createBook", field: "extra", keyword: "x-minimum" }],
    ["a new maximum on an input decimal", price("precision: 12, scale: 2"), price('precision: 12, scale: 2, maximum: "100"'), { kind: "limit-tightened", operationId: "createBook", field: "extra", keyword: "x-maximum" }],
    // SPEC §12.3: an array of ids that becomes a relation refuses ids of no record, and repeated ids
    // (uniqueItems): one break, said as the reference (a published document without references says uniqueItems).
    ["an input array of ids becomes a relation (its ids must name records, each once)", ids(""), ids(", references: books"), { kind: "references-added", operationId: "createBook", field: "extra[]", keyword: "x-canon-references" }],
  ];
  breaking.forEach(([name, before, after, expected], i) => {
    test(`breaking: ${name}`, async () => {
      const changes = await changesBetween(`decimal-map-break-${i}`, withExtra(before), withExtra(after));
      assert.ok(changes.some((c) => c.breaking && matches(c, expected)), `expected a breaking ${expected.kind}, got:\n${listing(changes)}`);
    });
  });

  const safe: Array<[string, string, string, Expect]> = [
    ["a wider precision", price("precision: 12, scale: 2"), price("precision: 14, scale: 2"), { kind: "limit-loosened", operationId: "createBook", field: "extra", keyword: "x-precision" }],
    ["a higher maximum", price('precision: 12, scale: 2, maximum: "100"'), price('precision: 12, scale: 2, maximum: "100.5"'), { kind: "limit-loosened", operationId: "createBook", field: "extra", keyword: "x-maximum" }],
    ["more keys in a map", meta("max_items: 50"), meta("max_items: 100"), { kind: "limit-loosened", operationId: "createBook", field: "extra", keyword: "maxProperties" }],
    ["an array of ids that is no longer a relation", ids(", references: books"), ids(""), { kind: "references-removed", operationId: "createBook", field: "extra[]", keyword: "x-canon-references" }],
    ["a new optional decimal", "{ type: string, optional: true }", "{ type: string, optional: true }\n  amount: { type: decimal, precision: 12, scale: 2, optional: true }", { kind: "field-added", operationId: "createBook", field: "amount" }],
  ];
  safe.forEach(([name, before, after, expected], i) => {
    test(`not breaking: ${name}`, async () => {
      const changes = await changesBetween(`decimal-map-safe-${i}`, withExtra(before), withExtra(after));
      assert.deepEqual(changes.filter((c) => c.breaking).map((c) => c.text), [], listing(changes));
      assert.ok(changes.some((c) => matches(c, expected)), `expected ${expected.kind}, got:\n${listing(changes)}`);
    });
  });

  test("more fraction digits break the answers, not the inputs, and point at scale", async () => {
    const changes = await changesBetween("decimal-scale-sides", withExtra(price("precision: 12, scale: 2")), withExtra(price("precision: 14, scale: 4")));
    assert.ok(changes.some((c) => !c.breaking && matches(c, { kind: "limit-loosened", operationId: "createBook", part: "request", field: "extra", keyword: "x-scale" })), listing(changes));
    assert.ok(!changes.some((c) => c.breaking && c.part.in === "request"), listing(changes));
    const base = variant("decimal-scale-locate-a", withExtra(price("precision: 12, scale: 2")));
    const dir = variant("decimal-scale-locate-b", withExtra(price("precision: 14, scale: 4")));
    const result = await gate(dir, new Map([["v1", (await documents(base)).get("v1")!]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[format-changed]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    const line = readFileSync(path.join(dir, "definitions", books), "utf8").split("\n")[d.location.line - 1]!;
    assert.equal(line.indexOf("scale: ") + "scale: ".length, d.location.column - 1, formatDiagnostic(d));
  });

  test("the same decimal written with another minimum text (\"0\" and \"0.00\") changes nothing", async () => {
    const changes = await changesBetween("decimal-same", withExtra(price('precision: 12, scale: 2, minimum: "0"')), withExtra(price('precision: 12, scale: 2, minimum: "0.00"')));
    assert.deepEqual(changes, []);
  });

  // SPEC §12.3: every `references` is enforced (422 for an id of no such record), so the gate compares them (x-canon-references).
  describe("references", () => {
    const uuid = (options: string) => `{ type: uuid, optional: true${options} }`;
    const object = (options: string) => `{ type: object, optional: true, fields: { who: { type: uuid${options} } } }`;
    const refBreaking: Array<[string, string, string, Expect]> = [
      ["a free id made a reference", uuid(""), uuid(", references: authors"), { kind: "references-added", operationId: "createBook", part: "request", field: "extra", keyword: "x-canon-references" }],
      ["a reference to another collection", uuid(", references: authors"), uuid(", references: books"), { kind: "references-changed", operationId: "updateBook", part: "request", field: "extra" }],
      ["an array's ids made references", ids(""), ids(", references: authors"), { kind: "references-added", operationId: "createBook", field: "extra[]" }],
      ["an object field's reference changed", object(", references: authors"), object(", references: books"), { kind: "references-changed", operationId: "createBook", field: "extra.who" }],
    ];
    refBreaking.forEach(([name, before, after, expected], i) => {
      test(`breaking: ${name}`, async () => {
        const changes = await changesBetween(`references-break-${i}`, withExtra(before), withExtra(after));
        assert.ok(changes.some((c) => c.breaking && matches(c, expected)), `expected a breaking ${expected.kind}, got:\n${listing(changes)}`);
        // An output's id names the same record whatever it must reference.
        assert.ok(!changes.some((c) => c.kind.startsWith("references-") && c.part.in === "response"), listing(changes));
      });
    });

    test("an array's ids made references is one break, not also its uniqueItems (a document that names references)", async () => {
      const changes = await changesBetween("references-array-once", withExtra(ids("")), withExtra(ids(", references: authors")));
      assert.deepEqual([...new Set(changes.filter((c) => c.breaking).map((c) => c.kind))], ["references-added"], listing(changes));
    });

    test("on_delete changed either way breaks the records that hold the reference, at the on_delete option", async () => {
      for (const [before, after] of [["", ", on_delete: cascade"], [", on_delete: cascade", ", on_delete: restrict"]] as const) {
        const changes = await changesBetween(`on-delete-${after.length}`, withExtra(uuid(`, references: authors${before}`)), withExtra(uuid(`, references: authors${after}`)));
        assert.ok(changes.some((c) => c.breaking && matches(c, { kind: "on-delete-changed", operationId: "getBook", part: "response", field: "extra", keyword: "x-canon-on-delete" })), listing(changes));
        assert.ok(!changes.some((c) => c.part.in === "request" && c.kind === "on-delete-changed"), "compared on records only");
      }
      const base = variant("on-delete-locate-a", withExtra(uuid(", references: authors")));
      const dir = variant("on-delete-locate-b", withExtra(uuid(", references: authors, on_delete: cascade")));
      const result = await gate(dir, new Map([["v1", (await documents(base)).get("v1")!]]), await documents(dir));
      const d = result.diagnostics.find((x) => x.message.includes("[on-delete-changed]"));
      assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
      const line = readFileSync(path.join(dir, "definitions", books), "utf8").split("\n")[d.location.line - 1]!;
      assert.equal(line.indexOf("on_delete: ") + "on_delete: ".length, d.location.column - 1, formatDiagnostic(d));
      assert.match(d.message, /on_delete cascade instead of restrict: deleting the record it names now takes this record with it/);
      // A published document written before canon named on_delete compares none.
      const older = structuredClone((await documents(base)).get("v1")!) as JsonObject;
      const strip = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(strip);
        else if (node && typeof node === "object") {
          delete (node as JsonObject)["x-canon-on-delete"];
          Object.values(node).forEach(strip);
        }
      };
      strip(older);
      assert.deepEqual(compareDocuments(older, (await documents(dir)).get("v1")!).filter((c) => c.kind === "on-delete-changed"), []);
    });

    test("not breaking: a reference removed", async () => {
      const changes = await changesBetween("references-removed", withExtra(uuid(", references: authors")), withExtra(uuid("")));
      assert.deepEqual(changes.filter((c) => c.breaking).map((c) => c.text), [], listing(changes));
      assert.ok(changes.some((c) => matches(c, { kind: "references-removed", operationId: "createBook", field: "extra" })), listing(changes));
    });

    test("an action field's reference changed breaks the action", async () => {
      const action = (options: string) => ({ [books]: replace(actionBlock, `${actionBlock}      who: { type: uuid, optional: true${options} }\n`) });
      const a = (await documents(variant("references-action-a", action(", references: authors")))).get("v1")!;
      const b = (await documents(variant("references-action-b", action(", references: books")))).get("v1")!;
      const changes = compareDocuments(a, b);
      assert.ok(changes.some((c) => c.breaking && matches(c, { kind: "references-changed", operationId: "createBookLoan", field: "who" })), listing(changes));
    });

    test("a published document written before canon named references compares no reference", async () => {
      const a = (await documents(variant("references-old-a", withExtra(uuid(""))))).get("v1")! as JsonObject;
      const b = (await documents(variant("references-old-b", withExtra(uuid(", references: authors"))))).get("v1")!;
      const older = { ...a, info: { ...(a.info as JsonObject) } };
      delete (older.info as JsonObject)["x-canon-references"];
      assert.ok(compareDocuments(a, b).some((c) => c.kind === "references-added"));
      assert.deepEqual(compareDocuments(older, b).filter((c) => c.kind.startsWith("references-")), []);
      // An array's ids made references: without names to compare, its uniqueItems still tells.
      const arrays = await Promise.all([ids(""), ids(", references: authors")].map(async (field, i) => (await documents(variant(`references-old-array-${i}`, withExtra(field)))).get("v1")! as JsonObject));
      const olderArray = { ...arrays[0]!, info: { ...(arrays[0]!.info as JsonObject) } };
      delete (olderArray.info as JsonObject)["x-canon-references"];
      assert.ok(compareDocuments(olderArray, arrays[1]!).some((c) => c.breaking && c.keyword === "uniqueItems"));
    });

    test("the gate warns, once per version, when a published document does not name references yet", async () => {
      const dir = variant("references-warn", withExtra(uuid(", references: authors")));
      const fresh = await documents(dir);
      const old = structuredClone(fresh.get("v1")!) as JsonObject;
      delete (old.info as JsonObject)["x-canon-references"];
      (old.info as JsonObject).description = "an older text";
      const result = await gate(dir, new Map([["v1", old]]), fresh);
      const warnings = result.diagnostics.filter((d) => d.rule === "references-not-compared");
      assert.equal(warnings.length, 1, result.diagnostics.map(formatDiagnostic).join("\n"));
      assert.equal(warnings[0]!.severity, "warning");
      assert.deepEqual(result.broken, []);
      const named = await gate(dir, new Map([["v1", fresh.get("v1")!]]), fresh);
      assert.deepEqual(named.diagnostics, []);
    });

    test("the diagnostic points at the references option", async () => {
      const base = variant("references-locate-a", withExtra(uuid(", references: authors")));
      const dir = variant("references-locate-b", withExtra(uuid(", references: books")));
      const result = await gate(dir, new Map([["v1", (await documents(base)).get("v1")!]]), await documents(dir));
      const d = result.diagnostics.find((x) => x.message.includes("[references-changed]"));
      assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
      assert.equal(d.rule, "breaking-change");
      const line = readFileSync(path.join(dir, "definitions", books), "utf8").split("\n")[d.location.line - 1]!;
      assert.match(line, /extra: /, formatDiagnostic(d));
      assert.equal(line.indexOf("references: ") + "references: ".length, d.location.column - 1, `at the option's value: ${formatDiagnostic(d)}`);
      assert.match(d.message, /must name a record of books instead of authors/);
    });
  });
});

/** Every JSON Schema 2020-12 and OpenAPI 3.1 keyword, and the words of an OpenAPI document: each is also a field name. */
const KEYWORDS = [
  "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$defs", "$comment", "$vocabulary",
  "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "prefixItems", "items", "contains",
  "properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
  "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
  "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties",
  "minProperties", "required", "dependentRequired", "format", "contentEncoding", "contentMediaType", "contentSchema",
  "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples", "example", "summary",
  "nullable", "discriminator", "xml", "externalDocs", "definitions", "additionalItems",
  "operationId", "parameters", "requestBody", "responses", "content", "schema", "headers", "servers", "tags", "in",
  "name", "style", "explode", "allowReserved", "components", "paths", "security", "callbacks", "links", "mapping",
  "propertyName", "x-generated",
];

describe("the gate compares every field by name, whatever the name", () => {
  const schemasOf = (doc: Json) => ((doc as JsonObject).components as JsonObject).schemas as JsonObject;
  /** `doc` with `edit` applied to the properties of Book (the response) and BookCreate (the request body). */
  const edited = (doc: Json, edit: (properties: JsonObject, schema: JsonObject) => void): Json => {
    const copy = structuredClone(doc);
    for (const name of ["Book", "BookCreate"]) {
      const schema = schemasOf(copy)[name] as JsonObject;
      edit(schema.properties as JsonObject, schema);
    }
    return copy;
  };
  const breaks = (changes: Change[], kind: Change["kind"], field: string) =>
    changes.some((c) => c.breaking && c.kind === kind && c.field === field);

  for (const keyword of KEYWORDS) {
    test(`a published field named ${JSON.stringify(keyword)}: removing it and retyping it are refused, at the top and nested`, () => {
      const withField = edited(published, (properties, schema) => {
        properties[keyword] = { type: "string", description: "A field named after a keyword." };
        properties.meta = { type: "object", properties: { [keyword]: { type: "string" } }, required: [keyword] };
        schema.required = [...((schema.required as Json[] | undefined) ?? []), keyword, "meta"];
      });
      const removed = edited(withField, (properties, schema) => {
        delete properties[keyword];
        delete (properties.meta as JsonObject).properties;
        delete (properties.meta as JsonObject).required;
        (properties.meta as JsonObject).properties = { other: { type: "integer" } };
        schema.required = (schema.required as Json[]).filter((r) => r !== keyword);
      });
      const retyped = edited(withField, (properties) => {
        properties[keyword] = { type: "integer", description: "A field named after a keyword." };
        (((properties.meta as JsonObject).properties as JsonObject)[keyword] as JsonObject).type = "integer";
      });
      for (const [name, now, kind] of [["removed", removed, "field-removed"], ["retyped", retyped, "type-changed"]] as const) {
        const changes = compareDocuments(withField, now);
        for (const field of [keyword, `meta.${keyword}`]) {
          assert.ok(breaks(changes, kind, field), `${name} ${field}: expected a breaking ${kind}, got:\n${listing(changes)}`);
          assert.ok(
            changes.some((c) => c.breaking && c.kind === kind && c.field === field && c.operation?.operationId === "createBook"),
            `${name} ${field} in the request body:\n${listing(changes)}`,
          );
        }
      }
      assert.deepEqual(compareDocuments(withField, structuredClone(withField)), [], "the same document changes nothing");
    });
  }

  test("definitions with fields named after keywords: removing or retyping any of them is a breaking change", async () => {
    const names = KEYWORDS.filter((k) => /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/.test(k));
    assert.ok(names.length >= 30 && ["description", "summary", "example", "examples", "type", "properties", "items", "required", "enum", "format", "pattern", "default", "nullable", "title"].every((n) => names.includes(n)));
    // books.yaml already has `title`; every other name is added.
    const titleLine = "  title: { type: string, max_length: 200 }\n";
    const block = (type: string) =>
      names
        .filter((n) => n !== "title")
        .map((n) => `  ${n}: { type: ${type}, description: A field named ${n}. }\n`)
        .join("");
    const withFields = { [books]: replace("  note:", `${block("string")}  note:`) };
    const publishedWith = (await documents(variant("keywords", withFields))).get("v1")!;
    const removed = await documents(variant("keywords-removed", { [books]: replace(titleLine, "") }));
    const retyped = await documents(
      variant("keywords-retyped", { [books]: (text) => replace("  note:", `${block("integer")}  note:`)(replace(titleLine, "  title: { type: integer }\n")(text)!)! }),
    );
    // One at a time as well: the words the gate once skipped, each the only change.
    const alone = await Promise.all(
      ["description", "summary", "example", "examples"].map(async (n) => {
        const only = (type: string) => `  ${n}: { type: ${type}, description: A field named ${n}. }\n`;
        const from = `${block("string")}  note:`;
        return [
          [await documents(variant(`keyword-${n}-removed`, { [books]: replace("  note:", from.replace(only("string"), "")) })), "field-removed", [n]],
          [await documents(variant(`keyword-${n}-retyped`, { [books]: replace("  note:", from.replace(only("string"), only("integer"))) })), "type-changed", [n]],
        ] as const;
      }),
    );
    for (const [docs, kind, only] of [[removed, "field-removed", names], [retyped, "type-changed", names], ...alone.flat()] as const) {
      const changes = compareDocuments(publishedWith, docs.get("v1")!);
      if (only !== names) assert.equal(changes.filter((c) => c.breaking).length > 0, true, listing(changes));
      for (const n of only) {
        for (const operationId of ["getBook", "listBooks", "createBook"]) {
          assert.ok(
            changes.some((c) => c.breaking && c.kind === kind && c.field?.replace(/^data\[\]\./, "") === n && c.operation?.operationId === operationId),
            `${kind} of "${n}" in ${operationId}:\n${listing(changes)}`,
          );
        }
      }
    }
  });
});

/** Writes `docs` as the published output folder and runs the gate over `dir`'s definitions. */
async function gate(dir: string, docs: Map<string, Json>, fresh: Map<string, Json>, options: { today?: string; allowBreaking?: boolean } = {}) {
  const out = path.join(dir, "published");
  rmSync(out, { recursive: true, force: true });
  for (const [v, doc] of docs) {
    mkdirSync(path.join(out, v), { recursive: true });
    writeFileSync(path.join(out, v, "openapi.json"), JSON.stringify(doc));
  }
  const { model, definitions } = await frontEnd(dir);
  const files = [...fresh].map(([v, doc]) => ({ path: `${v}/openapi.json`, content: JSON.stringify(doc, null, 2) }));
  return compatibilityGate({ out, files, model, definitions, today: options.today ?? today, allowBreaking: options.allowBreaking ?? false });
}

function lineOf(dir: string, file: string, text: string): number {
  const lines = readFileSync(path.join(dir, "definitions", file), "utf8").split("\n");
  const i = lines.findIndex((l) => l.includes(text));
  assert.ok(i >= 0, `${file} has ${text}`);
  return i + 1;
}

describe("the gate's diagnostics point at the definition line", () => {
  const cases: Array<[string, Record<string, Edit>, string, string, RegExp]> = [
    ["renamed field: the new key", { [books]: replace("  contact:", "  email:") }, "  email:", "field-renamed", /renamed: \{ in: v2, from: contact \}/],
    ["tighter limit: the option", { [books]: replace("max_length: 200", "max_length: 150") }, "max_length: 150", "limit-tightened", /add v2 to versions/],
    ["removed operation: operations", { [books]: replace("[list, read, create, update, delete]", "[list, read, create, update]") }, "operations:", "operation-removed", /removed: v2/],
    ["pagination: its key", { [books]: replace("operations:", "pagination: offset\noperations:") }, "pagination:", "pagination-changed", /v2/],
    ["composite unique added: the unique key", { [books]: replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[title, isbn]]\n") }, "unique: [[title, isbn]]", "unique-added", /removed: v2/],
    ["transitions added: the option", { [books]: replace("values: [fiction, poetry, drama] }", "values: [fiction, poetry, drama], transitions: { fiction: [poetry] } }") }, "transitions:", "transitions-added", /removed: v2/],
    ["tenancy added: the resource's fields", { [books]: replace("  note:", "  author_id: { type: uuid, references: authors, tenant: true }\n  note:") }, "tenant: true", "tenant-added", /removed: v2/],
    ["requires added: the action's requires", { [books]: replace(actionBlock, `${actionBlock}    requires: { genre: [fiction] }\n`) }, "requires:", "requires-added", /added: v2/],
    ["action response: its key", { [books]: replace("max_length: 100 }\n", "max_length: 100 }\n    response: 204\n") }, "response: 204", "status-removed", /v2/],
    ["a sort key removed: sort, with a fix that can be followed", { [books]: replace("sort: [pages, genre]", "sort: [pages]") }, "sort: [pages]", "enum-value-removed", /put the field back in sort.*successor \(a resource of another name: two cannot share one\) marked `added: v2`/],
    ["an enum sort key reordered: the field's values, with a fix that can be followed", { [books]: replace("[fiction, poetry, drama]", "[drama, fiction, poetry]") }, "[drama, fiction, poetry]", "sort-order-changed", /keep the order of "genre"'s values in v1.*reordered one under a new name/],
  ];
  cases.forEach(([name, edits, line, kind, fix], i) => {
    test(name, async () => {
      const dir = variant(`locate-${i}`, edits);
      const result = await gate(dir, new Map([["v1", published]]), await documents(dir));
      const d = result.diagnostics.find((x) => x.message.includes(`[${kind}]`));
      assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
      // One diagnostic per break, for every operation and body it reaches (create and update alike).
      assert.equal(result.diagnostics.filter((x) => x.message.includes(`[${kind}]`)).length, 1, result.diagnostics.map(formatDiagnostic).join("\n"));
      assert.equal(d.rule, "breaking-change");
      assert.equal(d.severity, "error");
      assert.equal(d.location.file, "definitions/books.yaml");
      assert.equal(d.location.line, lineOf(dir, books, line), formatDiagnostic(d));
      assert.match(d.message, /^v1 is published/);
      assert.match(d.fix, fix);
      assert.deepEqual(result.broken, ["v1"]);
    });
  });

  // SPEC §12: making a resource tenant-scoped is breaking, a resource with no write body too
  // (`operations: [list, read]`): every tenant's principal then reads only its records. Its
  // records name the tenant field (`x-canon-tenant`), which the gate compares.
  test("a read-only resource made tenant-scoped breaks its published version, once (SPEC §12.4)", async () => {
    const readOnly = { "authors.yaml": replace("resource: authors\n", "resource: authors\noperations: [list, read]\n") };
    const publishedReadOnly = (await documents(variant("tenant-read-only-base", readOnly))).get("v1")!;
    const dir = variant("tenant-read-only", {
      "authors.yaml": replace("resource: authors\nfields:\n", "resource: authors\noperations: [list, read]\nfields:\n  book_id: { type: uuid, references: books, tenant: true }\n"),
    });
    const changes = compareDocuments(publishedReadOnly, (await documents(dir)).get("v1")!);
    assert.ok(changes.some((c) => c.breaking && matches(c, { kind: "tenant-added", operationId: "getAuthor", part: "response", keyword: "x-canon-tenant" })), listing(changes));
    const result = await gate(dir, new Map([["v1", publishedReadOnly]]), await documents(dir));
    const breaks = result.diagnostics.filter((d) => d.message.includes("[tenant-added]"));
    assert.equal(breaks.length, 1, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(breaks[0]!.location.line, lineOf(dir, "authors.yaml", "tenant: true"), formatDiagnostic(breaks[0]!));
    assert.deepEqual(result.broken, ["v1"]);
    // A document written before records named their tenant is compared on its write bodies only.
    const before = structuredClone(publishedReadOnly) as JsonObject;
    delete (before.info as JsonObject)["x-canon-tenant-records"];
    assert.ok(!compareDocuments(before, (await documents(dir)).get("v1")!).some((c) => c.kind === "tenant-added"));
  });

  test("a composite unique constraint removed, or its fields reordered, breaks nothing (SPEC §12.3)", async () => {
    const withList = (await documents(variant("unique-list", { [books]: replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[title, isbn]]\n") }))).get("v1")!;
    const reordered = (await documents(variant("unique-reordered", { [books]: replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[isbn, title]]\n") }))).get("v1")!;
    const removed = compareDocuments(withList, published);
    assert.ok(removed.some((c) => c.kind === "unique-removed" && !c.breaking && c.operation?.operationId === "createBook"), listing(removed));
    assert.deepEqual(removed.filter((c) => c.breaking).map((c) => c.text), [], listing(removed));
    assert.deepEqual(compareDocuments(withList, reordered).filter((c) => c.kind.startsWith("unique-")), []);
    // A list holding a published list's fields and more refuses no write the version took.
    const wider = (await documents(variant("unique-wider", { [books]: replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[title, isbn, pages]]\n") }))).get("v1")!;
    const widened = compareDocuments(withList, wider);
    assert.ok(widened.some((c) => c.kind === "unique-widened" && c.operation?.operationId === "createBook"), listing(widened));
    assert.deepEqual(widened.filter((c) => c.breaking).map((c) => c.text), [], listing(widened));
    // The other way, it refuses writes the published list allowed.
    assert.ok(compareDocuments(wider, withList).some((c) => c.kind === "unique-added" && c.breaking), listing(compareDocuments(wider, withList)));
  });

  test("transitions removed or allowing more targets, requires removed or taking more values, break nothing; forbidding more does (SPEC §12.5)", async () => {
    const genre = (machine: string) => ({ [books]: replace("values: [fiction, poetry, drama] }", `values: [fiction, poetry, drama], transitions: ${machine} }`) });
    const loans = (requires: string) => ({ [books]: replace(actionBlock, `${actionBlock}    requires: ${requires}\n`) });
    const v1 = async (name: string, edits: Record<string, Edit>) => (await documents(variant(name, edits))).get("v1")!;
    const machine = await v1("machine", genre("{ fiction: [poetry], poetry: [drama] }"));
    const wider = await v1("machine-wider", genre("{ fiction: [poetry, drama], poetry: [drama], drama: [fiction] }"));
    const narrower = await v1("machine-narrower", genre("{ fiction: [poetry] }"));
    const required = await v1("requires", loans("{ genre: [fiction, poetry] }"));
    const requiredMore = await v1("requires-more", loans("{ genre: [fiction, poetry, drama] }"));
    const requiredLess = await v1("requires-less", loans("{ genre: [fiction] }"));
    const breaks = (a: Json, b: Json) => compareDocuments(a, b).filter((c) => c.breaking);
    for (const [from, to] of [[machine, published], [machine, wider], [required, published], [required, requiredMore]] as const) {
      assert.deepEqual(breaks(from, to).map((c) => c.text), []);
    }
    const removed = compareDocuments(machine, published);
    assert.ok(removed.some((c) => c.kind === "transitions-removed" && c.operation?.operationId === "updateBook"), listing(removed));
    const narrowed = breaks(machine, narrower);
    assert.ok(narrowed.some((c) => c.kind === "transitions-narrowed" && c.field === "genre" && /from "poetry" to "drama"/.test(c.text)), listing(narrowed));
    const fewer = breaks(required, requiredLess);
    assert.ok(fewer.some((c) => c.kind === "requires-added" && c.operation?.operationId === "createBookLoan" && /"poetry"/.test(c.text)), listing(fewer));
  });

  test("sets added to a published action: a break on a field with transitions (they may refuse it), at the action's sets; a set removed breaks too (SPEC §12.5)", async () => {
    const machine = "values: [fiction, poetry, drama], transitions: { fiction: [poetry] } }";
    const withMachine = { [books]: replace("values: [fiction, poetry, drama] }", machine) };
    const before = (await documents(variant("sets-machine", withMachine))).get("v1")!;
    const setting = (text: string) => replace(actionBlock, `${actionBlock}    sets: { genre: poetry }\n`)(text);
    const dir = variant("sets-added", { [books]: (text) => setting(replace("values: [fiction, poetry, drama] }", machine)(text)!) });
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[sets-added]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(d.severity, "error");
    assert.equal(d.location.line, lineOf(dir, books, "sets: { genre: poetry }"), formatDiagnostic(d));
    assert.match(d.fix, /rules_added: v2/);
    assert.deepEqual(result.broken, ["v1"]);
    // Without a machine on the field the action refuses nothing new; a set removed no longer changes the record as published: a break.
    const plain = compareDocuments(published, (await documents(variant("sets-plain", { [books]: setting }))).get("v1")!);
    assert.ok(plain.some((c) => c.kind === "sets-added" && !c.breaking), listing(plain));
    assert.deepEqual(plain.filter((c) => c.breaking).map((c) => c.text), [], listing(plain));
    const removed = compareDocuments((await documents(dir)).get("v1")!, before);
    assert.ok(removed.some((c) => c.kind === "sets-removed" && c.breaking), listing(removed));
    const back = variant("sets-taken-away", withMachine);
    const taken = await gate(back, new Map([["v1", (await documents(dir)).get("v1")!]]), await documents(back));
    const gone = taken.diagnostics.find((x) => x.message.includes("[sets-removed]"));
    assert.ok(gone, taken.diagnostics.map(formatDiagnostic).join("\n"));
    assert.match(gone.fix, /put the sets back/);
  });

  test("a set changed to another value or another from breaks, machine or not: the published action no longer leaves the record as its document says (SPEC §12.5)", async () => {
    // loans sets `note` (no machine) to a value, or from the action's `reader`.
    const loans = (sets: string) => ({ [books]: replace(actionBlock, `${actionBlock}    sets: ${sets}\n`) });
    const before = (await documents(variant("sets-value-a", loans("{ note: lent }")))).get("v1")!;
    for (const [name, sets, said] of [
      ["sets-value-b", "{ note: returned }", /sets "note" to "returned" where the published action set "lent"/],
      ["sets-from", "{ note: { from: reader } }", /sets "note" to \{"from":"reader"\} where the published action set "lent"/],
    ] as const) {
      const dir = variant(name, loans(sets));
      const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
      const d = result.diagnostics.find((x) => x.message.includes("[sets-changed]"));
      assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
      assert.equal(d.severity, "error");
      assert.match(d.message, said);
      assert.equal(d.location.line, lineOf(dir, books, `sets: ${sets}`), formatDiagnostic(d));
      assert.match(d.fix, /keep what the action sets in v1 as it was.*add v2 to versions in api\.yaml and add a new action with the new sets and `added: v2`/);
      assert.deepEqual(result.broken, ["v1"]);
    }
    // A field newly set beside it (no machine) still breaks nothing.
    const more = compareDocuments(before, (await documents(variant("sets-value-more", loans("{ note: lent, title: lent }")))).get("v1")!);
    assert.deepEqual(more.filter((c) => c.breaking).map((c) => c.text), [], listing(more));
  });

  test("a map's values narrowed: located at its items, not at the resource's fields (SPEC §12.6)", async () => {
    const map = (items: string) => ({ [books]: replace("  note:", `  labels:\n    type: map\n    items: ${items}\n    max_items: 20\n    optional: true\n  note:`) });
    const before = (await documents(variant("map-wide", map("{ type: string, max_length: 200 }")))).get("v1")!;
    const dir = variant("map-narrow", map("{ type: string, max_length: 100 }"));
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[limit-tightened]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(d.location.line, lineOf(dir, books, "items: { type: string, max_length: 100 }"), formatDiagnostic(d));
    // Fewer keys: at its max_items, not at the field's key.
    const fewer = variant("map-fewer", { [books]: (text) => map("{ type: string, max_length: 200 }")[books](text)!.replace("max_items: 20", "max_items: 5") });
    const keys = await gate(fewer, new Map([["v1", before]]), await documents(fewer));
    const k = keys.diagnostics.find((x) => x.message.includes("[limit-tightened]"));
    assert.ok(k, keys.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(k.location.line, lineOf(fewer, books, "max_items: 5"), formatDiagnostic(k));
  });

  test("a decimal filter's tighter limit: one break at the field's option, its operators (price[gte]) said with it (SPEC §12.2, §12.6)", async () => {
    const priced = (minimum: string) => ({ [books]: (text: string) => replace("filters: [genre, pages]", "filters: [genre, pages, price]")(replace("  note:", `  price: { type: decimal, precision: 12, scale: 2, minimum: "${minimum}", optional: true }\n  note:`)(text)!) });
    const before = (await documents(variant("decimal-filter-a", priced("0")))).get("v1")!;
    const dir = variant("decimal-filter-b", priced("1"));
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const all = result.diagnostics.map(formatDiagnostic).join("\n");
    assert.equal(result.diagnostics.length, 1, all);
    const [d] = result.diagnostics;
    const line = readFileSync(path.join(dir, "definitions", books), "utf8").split("\n")[d!.location.line - 1]!;
    assert.equal(line.indexOf("minimum: ") + "minimum: ".length, d!.location.column - 1, all);
    assert.match(d!.message, /field "price" has minimum "1\.00" instead of "0\.00" \[limit-tightened\], in listBooks \(query parameters "price", "price\[gt\]", "price\[gte\]", "price\[lt\]", "price\[lte\]"\)/);
    // A filter removed: one break for the parameter and its operators.
    const removed = variant("filter-removed-once", { [books]: replace("filters: [genre, pages]", "filters: [genre]") });
    const gone = await gate(removed, new Map([["v1", published]]), await documents(removed));
    assert.equal(gone.diagnostics.length, 1, gone.diagnostics.map(formatDiagnostic).join("\n"));
    assert.match(gone.diagnostics[0]!.message, /query parameter "pages" was removed \[parameter-removed\], in listBooks \(query parameters "pages", "pages\[in\]", "pages\[gt\]"/);
  });

  test("a filter removed from an exportable resource: the export's filters are located at the resource's filters and said as a filter", async () => {
    const exported = { [books]: replace("filters: [genre, pages]", "export: true\nfilters: [genre, pages]") };
    const before = (await documents(variant("export-filters", exported))).get("v1")!;
    const dir = variant("export-filter-removed", { [books]: replace("filters: [genre, pages]", "export: true\nfilters: [genre]") });
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const all = result.diagnostics.map(formatDiagnostic).join("\n");
    assert.ok(result.diagnostics.length >= 2, all);
    for (const d of result.diagnostics) {
      assert.equal(d.location.file, "definitions/books.yaml", all);
      assert.equal(d.location.line, lineOf(dir, books, "filters:"), all);
    }
    const filter = result.diagnostics.find((d) => /export filter "pages"/.test(d.message));
    assert.ok(filter, all);
    assert.match(filter.message, /\[field-removed\], in .*createExport \(request body\)/);
    assert.match(filter.fix, /keep the filter "pages" in v1: put it back in filters/);
    assert.doesNotMatch(all, /put the field back/);
  });

  test("a version api.yaml lists but the output folder does not hold yet is where the fix makes the change, not one more after it", async () => {
    const dir = variant("fix-listed-version", { "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: {}\n"), [books]: replace("  contact:", "  email:") });
    const result = await gate(dir, new Map([["v1", published]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[field-renamed]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.match(d.fix, /make the change in v2 \(listed in api\.yaml, not published yet\) and write `renamed: \{ in: v2, from: contact \}` on "email"/);
    assert.doesNotMatch(d.fix, /v3/);
    // Followed, the fix passes.
    const followed = variant("fix-listed-version-followed", { "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: {}\n"), [books]: replace("  contact: { type: string }", "  email: { type: string, renamed: { in: v2, from: contact } }") });
    assert.deepEqual((await gate(followed, new Map([["v1", published]]), await documents(followed))).diagnostics.map(formatDiagnostic), []);
  });

  test("a list_under path removed (SPEC §12.3): at the field, with a fix that names list_under", async () => {
    const under = (option: string) => ({ [books]: replace("  note:", `  author_id: { type: uuid, references: authors, optional: true${option} }\n  note:`) });
    const before = (await documents(variant("list-under-a", under(", list_under: true")))).get("v1")!;
    const dir = variant("list-under-b", under(""));
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[path-removed]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(d.location.line, lineOf(dir, books, "  author_id:"), formatDiagnostic(d));
    assert.match(d.fix, /put `list_under: true` back on "author_id"/);
    assert.doesNotMatch(d.fix, /operations and actions/);
  });

  test("a list_under path removed where another field references the same collection: at the field that had list_under", async () => {
    // editor_id comes first and references authors too: the fix names co_author_ids, whose list_under made the path.
    const under = (option: string) => ({
      [books]: replace("  note:", `  editor_id: { type: uuid, references: authors, optional: true }\n  co_author_ids: { type: array, items: { type: uuid, references: authors }, max_items: 5, default: []${option} }\n  note:`),
    });
    const before = (await documents(variant("list-under-two-a", under(", list_under: true")))).get("v1")!;
    const dir = variant("list-under-two-b", under(""));
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[path-removed]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(d.location.line, lineOf(dir, books, "  co_author_ids:"), formatDiagnostic(d));
    assert.match(d.fix, /put `list_under: true` back on "co_author_ids"/);
    assert.doesNotMatch(d.fix, /editor_id/);
  });

  test("list_under moved to another field referencing the same collection: the same path answers other records, a break", async () => {
    const under = (editor: string, coAuthors: string) => ({
      [books]: replace("  note:", `  editor_id: { type: uuid, references: authors, optional: true${editor} }\n  co_author_ids: { type: array, items: { type: uuid, references: authors }, max_items: 5, default: []${coAuthors} }\n  note:`),
    });
    const before = (await documents(variant("list-under-moved-a", under("", ", list_under: true")))).get("v1")!;
    const dir = variant("list-under-moved-b", under(", list_under: true", ""));
    const result = await gate(dir, new Map([["v1", before]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[list-under-changed]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n") || "no diagnostic");
    assert.equal(d.severity, "error");
    assert.match(d.message, /the list \/v1\/authors\/\{id\}\/books holds the records whose "editor_id" names the record, no longer those whose "co_author_ids" does/);
    assert.equal(d.location.line, lineOf(dir, books, "  co_author_ids:"), formatDiagnostic(d));
    assert.match(d.fix, /put `list_under: true` back on "co_author_ids" and take it off the field that has it now/);
    // The list names its field in x-canon-list-under; a document published before that key is read by its description.
    const list = (doc: unknown) => (doc as { paths: Record<string, { get: Record<string, unknown> }> }).paths["/v1/authors/{id}/books"]!.get;
    assert.equal(list(before)["x-canon-list-under"], "co_author_ids");
    const older = structuredClone(before);
    delete list(older)["x-canon-list-under"];
    const fromOlder = await gate(dir, new Map([["v1", older]]), await documents(dir));
    assert.ok(fromOlder.diagnostics.some((x) => x.message.includes("[list-under-changed]") && x.message.includes('no longer those whose "co_author_ids" does')), fromOlder.diagnostics.map(formatDiagnostic).join("\n"));
  });

  test("one diagnostic per break, naming every operation it reaches", async () => {
    const dir = variant("grouped", { [books]: replace("  contact: { type: string }\n", "") });
    const result = await gate(dir, new Map([["v1", published]]), await documents(dir));
    assert.equal(result.diagnostics.length, 1, result.diagnostics.map(formatDiagnostic).join("\n"));
    const [d] = result.diagnostics;
    assert.match(d!.message, /field "contact" was removed \[field-removed\], in .*getBook.*\(response\); createBook and updateBook \(request body\)/);
  });

  test("--allow-breaking turns the breaks into warnings", async () => {
    const dir = variant("allowed", { [books]: replace("  contact:", "  email:") });
    const result = await gate(dir, new Map([["v1", published]]), await documents(dir), { allowBreaking: true });
    assert.ok(result.diagnostics.length > 0 && result.diagnostics.every((d) => d.severity === "warning"));
    assert.deepEqual(result.broken, ["v1"]);
  });
});

describe("removing a published version", () => {
  const deprecated = { "api.yaml": replace("  v1: {}\n", "  v1:\n    deprecated: 2026-09-01\n    sunset: 2027-06-30\n  v2: {}\n") };

  test("is refused before its sunset and accepted once the sunset date has come", async () => {
    const dir = variant("retire", deprecated);
    const docs = await documents(dir);
    const onlyV2 = new Map([["v2", docs.get("v2")!]]);
    const early = await gate(dir, docs, onlyV2, { today: "2027-06-29" });
    assert.deepEqual(early.diagnostics.map((d) => d.rule), ["version-removed-early"]);
    assert.match(early.diagnostics[0]!.message, /v1 is published and was removed .* before its sunset on 2027-06-30 \(today is 2027-06-29\)/);
    assert.match(early.diagnostics[0]!.fix, /until 2027-06-30/);
    const onTime = await gate(dir, docs, onlyV2, { today: "2027-06-30" });
    assert.deepEqual(onTime.diagnostics, []);
    assert.deepEqual(onTime.retired, ["v1"]);
  });

  test("a version that was never deprecated cannot be removed, except with --allow-breaking", async () => {
    const dir = variant("unpublish", { "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: {}\n") });
    const out = path.join(dir, "generated");
    const first = await generate({ definitions: path.join(dir, "definitions"), out, write: true, today });
    assert.ok(first.diff, first.diagnostics.map(formatDiagnostic).join("\n"));
    writeFileSync(path.join(dir, "definitions", "api.yaml"), readFileSync(path.join(base, "api.yaml"), "utf8"));
    const before = snapshot(out);
    const refused = await generate({ definitions: path.join(dir, "definitions"), out, write: true, today });
    assert.equal(refused.diff, null);
    assert.deepEqual(refused.diagnostics.map((d) => [d.rule, d.severity]), [["version-removed-early", "error"]]);
    assert.match(refused.diagnostics[0]!.message, /v2 is published .* never deprecated/);
    assert.deepEqual(snapshot(out), before, "a refused run writes nothing");
    const allowed = await generate({ definitions: path.join(dir, "definitions"), out, write: true, today, allowBreaking: true });
    assert.ok(allowed.diff);
    assert.deepEqual(allowed.diagnostics.map((d) => [d.rule, d.severity]), [["version-removed-early", "warning"]]);
    assert.ok(allowed.diff.stale.includes("v2/openapi.json"));
  });
});

describe("breaks that come from canon itself", () => {
  test("a published document that an older canon wrote is held to, through generate()", async () => {
    const dir = variant("release");
    const definitions = path.join(dir, "definitions");
    const out = path.join(dir, "generated");
    assert.ok((await generate({ definitions, out, write: true, today })).diff);
    // As if the release that published v1 had a template that allowed pages of 200 and
    // returned a `links` object on every book: the current templates changed both.
    const file = path.join(out, "v1", "openapi.json");
    const doc = JSON.parse(readFileSync(file, "utf8")) as JsonObject;
    const components = doc.components as JsonObject;
    (((components.parameters as JsonObject).limit as JsonObject).schema as JsonObject).maximum = 200;
    const book = (components.schemas as JsonObject).Book as JsonObject;
    (book.properties as JsonObject).links = { type: "object" };
    writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    const before = snapshot(out);
    const result = await generate({ definitions, out, write: true, today });
    assert.equal(result.diff, null, "nothing is written");
    assert.deepEqual(snapshot(out), before);
    const messages = result.diagnostics.map(formatDiagnostic).join("\n");
    assert.match(messages, /breaking-change v1 is published .*query parameter "limit" has maximum 100 instead of 200 \[limit-tightened\], in listBooks/);
    assert.match(messages, /breaking-change v1 is published .*field "links" was removed \[field-removed\]/);
  });
});

// Found by the acceptance run of SPEC §12: an enum sort key's values reordered reorder a
// published list; the gate said nothing (an enum's order is no change to its values).
test("an enum's values reordered break only where a list sorts by it; values added keep the others' order", async () => {
  const unsorted = replace("sort: [pages, genre]", "sort: [pages]");
  const before = (await documents(variant("enum-order-unsorted-a", { [books]: unsorted }))).get("v1")!;
  const after = (await documents(variant("enum-order-unsorted-b", { [books]: (t) => replace("[fiction, poetry, drama]", "[drama, fiction, poetry]")(unsorted(t)!) }))).get("v1")!;
  const changes = compareDocuments(before, after);
  assert.deepEqual(changes.filter((c) => c.breaking).map((c) => c.text), [], listing(changes));
  const reordered = await changesOf("enum-order-sorted", { [books]: replace("[fiction, poetry, drama]", "[drama, fiction, poetry]") });
  const change = reordered.find((c) => c.kind === "sort-order-changed");
  assert.ok(change?.breaking, listing(reordered));
  assert.match(change.text, /query parameter "sort" sorts "genre" in another order: "drama" < "fiction" < "poetry" instead of "fiction" < "poetry" < "drama"/);
  const dir = variant("enum-order-cli", { [books]: replace("[fiction, poetry, drama]", "[drama, fiction, poetry]") });
  const front = await frontEnd(dir);
  const source = readFileSync(path.join(dir, "definitions", books), "utf8").split("\n");
  const at = locateChange(front.definitions, front.model, "v1", change);
  assert.match(source[at.line - 1]!, /values: \[drama, fiction, poetry\]/, "the diagnostic points at the enum's values");
  const added = await changesOf("enum-order-added", { [books]: replace("[fiction, poetry, drama]", "[essay, fiction, poetry, drama]") });
  assert.ok(!added.some((c) => c.kind === "sort-order-changed"), listing(added));
});

// Found by the acceptance run of SPEC §12: a sort key removed was worded `field "[]" no longer has
// the value "genre"`: the items of the `sort` parameter have no field name to show.
test("a sort key removed names the sort parameter, not a field \"[]\"", async () => {
  const dir = variant("sort-key-words", { [books]: replace("sort: [pages, genre]", "sort: [pages]") });
  const result = await gate(dir, new Map([["v1", published]]), await documents(dir));
  const messages = result.diagnostics.map(formatDiagnostic).join("\n");
  assert.match(messages, /breaking-change v1 is published .*query parameter "sort" no longer takes the sort key "genre" \[enum-value-removed\], in listBooks/);
  assert.doesNotMatch(messages, /field "\[\]"/);
  // One break per key, not one per value ("genre" and "-genre").
  assert.equal(result.diagnostics.filter((d) => /sort/.test(d.message)).length, 1, messages);
});

// Found by a sweep of the gate: an export filter's operator renamed with its field printed a fix
// naming the operator (`renamed: { in: v2, from: pages[gt] }` on "leaves[gt]").
test("a filter field of an exportable resource renamed in place: the fix names the field, never an operator", async () => {
  const exportable = (t: string) => t.replace("operations: [list, read, create, update, delete]", "operations: [list, read, create, update, delete]\nexport: true");
  const dir = variant("export-filter-renamed-base", { [books]: exportable });
  const base = (await documents(dir)).get("v1")!;
  const renamed = variant("export-filter-renamed", {
    [books]: (t) => exportable(t).replace("filters: [genre, pages]", "filters: [genre, leaves]").replace("sort: [pages, genre]", "sort: [leaves, genre]").replace("  pages: {", "  leaves: {"),
  });
  const result = await gate(renamed, new Map([["v1", base]]), await documents(renamed));
  const fixes = result.diagnostics.map((d) => d.fix).join("\n");
  assert.match(fixes, /`renamed: \{ in: v2, from: pages \}` on "leaves"/);
  assert.doesNotMatch(fixes, /pages\[|leaves\[/);
  const messages = result.diagnostics.map(formatDiagnostic).join("\n");
  // One diagnostic for the filter and its operators, one for the sort key (the list's and the export's), one for the field.
  assert.equal(result.diagnostics.filter((d) => /\[parameter-renamed\]/.test(d.message)).length, 1, messages);
  assert.equal(result.diagnostics.filter((d) => /\[sort-key-renamed\]/.test(d.message)).length, 1, messages);
  assert.match(messages, /query parameter "sort" takes "leaves" where it took "pages" \(its field was renamed\) \[sort-key-renamed\], in listBooks \(query parameter "sort"\); createExport \(request body\)/);
  assert.doesNotMatch(messages, /\[enum-value-removed\]/);
});

// Found by a sweep of the gate: the fix of a required field removed in a new version without a
// default said to mark it removed, which it already was.
test("a required field removed in a new version, without a default: the fix names the default, and a default passes", async () => {
  const removed = (extra: string) => (t: string) => t.replace("  contact: { type: string }", `  contact: { type: string, removed: v2${extra} }`);
  const api = replace("  v1: {}\n", "  v1: {}\n  v2: {}\n");
  const dir = variant("field-optional-fix", { "api.yaml": api, [books]: removed("") });
  const result = await gate(dir, new Map([["v1", published]]), await documents(dir));
  const messages = result.diagnostics.map(formatDiagnostic).join("\n");
  assert.match(messages, /field "contact" may now be absent \[field-optional\]/);
  assert.match(messages, /fix: keep "contact" in every answer of v1: a field a later version leaves out .* needs a default/);
  const fixed = variant("field-optional-fixed", { "api.yaml": api, [books]: removed(", default: unknown") });
  const passed = await gate(fixed, new Map([["v1", published]]), await documents(fixed));
  assert.deepEqual(passed.diagnostics.map(formatDiagnostic), []);
});

// Found by a sweep of the gate over SPEC §12: an export's `sort` was a free string in the
// document, so a sort key removed from an exportable resource broke its published exports (400)
// without a word from the gate.
test("a sort key removed from an exportable resource: one break, for its list and its exports, at sort; a key added breaks nothing", async () => {
  const exportable = (t: string) => t.replace("operations: [list, read, create, update, delete]", "operations: [list, read, create, update, delete]\nexport: true");
  const dir = variant("sort-key-export-base", { [books]: exportable });
  const base = (await documents(dir)).get("v1")!;
  const removed = variant("sort-key-export-removed", { [books]: (t) => exportable(t).replace("sort: [pages, genre]", "sort: [pages]") });
  const result = await gate(removed, new Map([["v1", base]]), await documents(removed));
  const messages = result.diagnostics.map(formatDiagnostic).join("\n");
  assert.equal(result.diagnostics.length, 1, messages);
  assert.match(messages, /books\.yaml:\d+:\d+ error breaking-change .*no longer takes the sort key "genre" \[enum-value-removed\], in listBooks \(query parameter "sort"\); createExport \(request body\)/);
  assert.match(messages, /put the field back in sort/);
  const sortLine = readFileSync(path.join(removed, "definitions", books), "utf8").split("\n").findIndex((l) => l.startsWith("sort:")) + 1;
  assert.equal(result.diagnostics[0]!.location.line, sortLine);
  const added = variant("sort-key-export-added", { [books]: (t) => exportable(t).replace("sort: [pages, genre]", "sort: [pages, genre, title]") });
  const fine = await gate(added, new Map([["v1", base]]), await documents(added));
  assert.deepEqual(fine.diagnostics.map(formatDiagnostic), []);
  const changes = compareDocuments(base, (await documents(added)).get("v1")!);
  assert.ok(changes.some((c) => !c.breaking && c.operation?.operationId === "createExport" && /takes the new sort key "title"/.test(c.text)), listing(changes));
});

describe("CHANGES.md", () => {
  test("each version after the first says what a client of the one before changes", async () => {
    const dir = variant("changes", {
      "api.yaml": replace("  v1: {}\n", "  v1:\n    deprecated: 2026-09-01\n    sunset: 2027-06-30\n  v2: {}\n"),
      [books]: (text) =>
        text
          .replace("  contact:", "  email:")
          .replace("email: { type: string }", "email: { type: string, renamed: { in: v2, from: contact } }")
          .replace("  note: { type: string, max_length: 100, optional: true }", "  note: { type: string, max_length: 100, optional: true, removed: v2 }\n  subtitle: { type: string, optional: true, added: v2 }"),
    });
    const { model } = await frontEnd(dir);
    const files = changesEmitter.emit(model, createEmitContext());
    assert.deepEqual(files.map((f) => f.path), ["v2/CHANGES.md"]);
    const text = files[0]!.content;
    // Written as is (prettier takes seconds on a large one), so it must already be in prettier's form.
    assert.equal(await prettier.format(text, { ...PRETTIER_OPTIONS, parser: "markdown" }), text);
    assert.match(text, /^<!-- Generated by canon/);
    assert.match(text, /# Library API: from v1 to v2/);
    assert.match(text, /deprecated since 2026-09-01 and goes away on 2027-06-30/);
    const [must, rest] = text.split("## What else changed");
    assert.match(must!, /### `GET \/v2\/books\/\{id\}` \(getBook\)\n\n- Response 200: field `contact` was renamed `email`\.\n- Response 200: field `note` was removed\./);
    assert.match(rest!, /Response 200: field `subtitle` is new \(optional\)\./);
    assert.doesNotMatch(rest!, /contact/);
  });

  test("a field renamed that is a filter and a sort key: its parameters and its sort key are said renamed, not removed and new", async () => {
    const dir = variant("changes-filter-renamed", {
      "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: {}\n"),
      [books]: (text) =>
        text
          .replace("filters: [genre, pages]", "filters: [kind, pages]")
          .replace("sort: [pages, genre]", "sort: [pages, kind]")
          .replace("  genre: { type: enum,", "  kind: { renamed: { in: v2, from: genre }, type: enum,"),
    });
    const { model } = await frontEnd(dir);
    const text = changesEmitter.emit(model, createEmitContext())[0]!.content;
    const [must, rest] = text.split("## What else changed");
    assert.match(must!, /- Query parameter `genre` was renamed `kind`\./);
    assert.match(must!, /- Query parameter `genre\[in\]` was renamed `kind\[in\]`\./);
    assert.match(must!, /- Query parameter `sort` takes `kind` where it took `genre` \(its field was renamed\)\./);
    assert.doesNotMatch(text, /no longer has the value|genre` was removed/);
    assert.doesNotMatch(rest!, /kind/);
    // Renamed without `renamed:` inside the published v1: a break whose fix is the rename.
    const inPlace = variant("gate-filter-renamed", {
      [books]: (t) => t.replace("filters: [genre, pages]", "filters: [kind, pages]").replace("sort: [pages, genre]", "sort: [pages, kind]").replace("  genre: {", "  kind: {"),
    });
    const result = await gate(inPlace, new Map([["v1", published]]), await documents(inPlace));
    const messages = result.diagnostics.map(formatDiagnostic).join("\n");
    assert.match(messages, /query parameter "genre" was renamed "kind" \[parameter-renamed\], in listBooks/);
    assert.match(messages, /write `renamed: \{ in: v2, from: genre \}` on "kind"/);
    assert.match(messages, /query parameter "sort" takes "kind" where it took "genre" \(its field was renamed\) \[sort-key-renamed\]/);
  });

  test("a change met in both pages of an offset list (its own and the ?q= cursor page) is said once", async () => {
    const dir = variant("changes-offset-search", {
      "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: {}\n"),
      [books]: (text) =>
        text
          .replace("operations: [list, read, create, update, delete]\n", "operations: [list, read, create, update, delete]\npagination: offset\nsearch: [title]\n")
          .replace("  note: { type: string, max_length: 100, optional: true }", "  note: { type: string, max_length: 100, optional: true }\n  subtitle: { type: string, optional: true, added: v2 }"),
    });
    const { model } = await frontEnd(dir);
    const text = changesEmitter.emit(model, createEmitContext())[0]!.content;
    const list = text.split("### `GET /v2/books` (listBooks)\n\n")[1]!.split("\n\n")[0]!;
    assert.equal(list, "- Response 200: field `data[].subtitle` is new (optional).");
  });

  test("the showcase's v2/CHANGES.md is committed and names the v1 → v2 changes", () => {
    const text = readFileSync(path.join(repoRoot, "generated/v2/CHANGES.md"), "utf8");
    assert.match(text, /^<!-- Generated by canon/);
    assert.match(text, /field `due_cents` was renamed `amount_due_cents`/);
    assert.match(text, /field `legacy_ref` was removed/);
    assert.match(text, /field `gift_wrap` is new/);
  });
});

describe("the CLI", () => {
  test("generate and check refuse a break with the version, operation, field, kind, file:line:col and fix; --allow-breaking lets it through loudly", () => {
    const dir = variant("cli");
    assert.equal(canon(["generate"], dir).code, 0);
    const out = path.join(dir, "generated");
    const published = snapshot(out);
    writeFileSync(path.join(dir, "definitions", books), readFileSync(path.join(base, books), "utf8").replace("  contact:", "  email:"));
    const line = lineOf(dir, books, "  email:");
    const diagnostic = new RegExp(
      `definitions/books\\.yaml:${line}:3 error breaking-change v1 is published and this breaks its clients: field "contact" was renamed "email" \\[field-renamed\\], in .*getBook.*\\n  fix: .*add v2 to versions in api\\.yaml and write \`renamed: \\{ in: v2, from: contact \\}\` on "email"`,
    );
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 1);
    assert.match(generated.stderr, diagnostic);
    assert.match(generated.stderr, /refused: published versions never break/);
    assert.deepEqual(snapshot(out), published, "nothing written");
    const checked = canon(["check"], dir);
    assert.equal(checked.code, 1);
    assert.match(checked.stderr, diagnostic);
    const allowed = canon(["generate", "--allow-breaking"], dir);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /warning breaking-change v1/);
    assert.match(allowed.stderr, /WARNING: --allow-breaking: .*BREAK the published v1/);
    assert.match(allowed.stderr, /only for a version that has never shipped/);
  });

  test("a break of an action's field, an object's field or a map's values: the fix versions the action or the top-level field (they take no removed), and following it passes", () => {
    const v2 = (text: string) => text.replace("  v1: {}\n", "  v1: {}\n  v2: {}\n");
    const shipping = (values: string, extra = "") => `  shipping: { type: object, optional: true${extra}, fields: { mode: { type: enum, values: ${values} } } }\n`;
    const labels = (items: string, extra = "") => `  labels: { type: map, items: ${items}, max_items: 10, optional: true${extra} }\n`;
    const cases: Array<{ name: string; published: string; changed: string; fix: RegExp; followed: string }> = [
      {
        name: "action",
        published: actionBlock,
        changed: actionBlock.replace("max_length: 100", "max_length: 50"),
        fix: /keep the field "reader" of the action "loans" in v1 as it was: .*add v2 to versions in api\.yaml and add a new action with the changed field and `added: v2`/,
        followed: `${actionBlock}  renewals:\n    added: v2\n    fields:\n      reader: { type: string, max_length: 50 }\n`,
      },
      {
        name: "object",
        published: `${shipping("[post, courier]")}${actionBlock}`,
        changed: `${shipping("[post]")}${actionBlock}`,
        fix: /keep "shipping\.mode" of v1 as it was: .*mark "shipping" `removed: v2` and add the changed one under a new name with `added: v2`/,
        followed: `${shipping("[post, courier]", ", removed: v2")}${shipping("[post]", ", added: v2").replace("shipping", "delivery")}${actionBlock}`,
      },
      {
        name: "map",
        published: `${labels("{ type: string }")}${actionBlock}`,
        changed: `${labels("{ type: integer }")}${actionBlock}`,
        fix: /keep the values of "labels" of v1 as they were: .*mark "labels" `removed: v2` and add the changed one under a new name with `added: v2`/,
        followed: `${labels("{ type: string }", ", removed: v2")}${labels("{ type: integer }", ", added: v2").replace("labels", "counts")}${actionBlock}`,
      },
    ];
    for (const c of cases) {
      const dir = variant(`versioned-owner-${c.name}`, { [books]: replace(actionBlock, c.published) });
      assert.equal(canon(["generate"], dir).code, 0);
      const file = path.join(dir, "definitions", books);
      const text = readFileSync(file, "utf8");
      writeFileSync(file, text.replace(c.published, c.changed));
      const refused = canon(["generate"], dir);
      assert.equal(refused.code, 1, `${c.name}: ${refused.stderr}`);
      assert.match(refused.stderr, /error breaking-change v1 is published/, c.name);
      assert.match(refused.stderr, c.fix, `${c.name}: ${refused.stderr}`);
      // Following the fix: v2 in api.yaml, the change made where the fix says.
      writeFileSync(file, text.replace(c.published, c.followed));
      writeFileSync(path.join(dir, "definitions", "api.yaml"), v2(readFileSync(path.join(dir, "definitions", "api.yaml"), "utf8")));
      const followed = canon(["generate"], dir);
      assert.equal(followed.code, 0, `${c.name}: ${followed.stderr}`);
      assert.equal(canon(["check"], dir).code, 0, c.name);
    }
  });

  test("the showcase's published documents, as committed before the route record (\"Get an user\"), take the corrected summaries as non-breaking", () => {
    // Before the route record, a second article rule wrote "an user" into the summaries of the
    // published v1 (and v2, v3) documents. A summary is prose, not contract: the gate lets the
    // fix through, and generate rewrites the documents.
    const dir = workspace("compat-summaries", "definitions");
    const out = path.join(dir, "generated");
    cpSync(path.join(repoRoot, "generated"), out, { recursive: true });
    let before = 0;
    for (const version of ["v1", "v2", "v3"]) {
      const file = path.join(out, version, "openapi.json");
      const text = readFileSync(file, "utf8");
      const old = text.replace(/("summary": "[^"]*\b)a user"/g, (_, head: string) => `${head}an user"`);
      assert.notEqual(old, text, `${version} has a summary naming a user`);
      before += old.split("an user").length - 1;
      writeFileSync(file, old);
    }
    assert.ok(before >= 15, `the old documents said "an user" ${before} times`);
    const checked = canon(["check"], dir);
    assert.equal(checked.code, 1, "check sees the documents differ");
    assert.doesNotMatch(checked.stderr, /breaking-change/);
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stderr);
    assert.doesNotMatch(generated.stderr, /breaking-change|allow-breaking/);
    for (const version of ["v1", "v2", "v3"]) {
      const text = readFileSync(path.join(out, version, "openapi.json"), "utf8");
      assert.doesNotMatch(text, /an user/);
      assert.match(text, /"summary": "Get a user"/);
    }
    assert.equal(canon(["check"], dir).code, 0);
    rmSync(dir, { recursive: true, force: true });
  });

  test("a draft version (draft: true) takes any change; removing draft publishes it, and from then on the gate holds it", () => {
    const dir = variant("draft", { "api.yaml": replace("  v1: {}\n", "  v1: {}\n  v2: { draft: true }\n") });
    assert.equal(canon(["generate"], dir).code, 0);
    const out = path.join(dir, "generated");
    const doc = JSON.parse(readFileSync(path.join(out, "v2", "openapi.json"), "utf8"));
    assert.equal(doc.info["x-canon-draft"], true);
    assert.match(doc.info.description, /\*\*Draft\*\*/);
    assert.equal((JSON.parse(readFileSync(path.join(out, "v1", "openapi.json"), "utf8")).info as JsonObject)["x-canon-draft"], undefined);
    // A resource added in the draft v2, then changed and removed again: nothing of v1 changes, and v2 may change in any way.
    const books2 = path.join(dir, "definitions", books);
    const original = readFileSync(books2, "utf8");
    const publishers = path.join(dir, "definitions", "publishers.yaml");
    writeFileSync(publishers, "resource: publishers\nadded: v2\nfields:\n  name: { type: string, max_length: 200 }\n");
    const first = canon(["generate"], dir);
    assert.equal(first.code, 0, first.stderr);
    writeFileSync(publishers, "resource: publishers\nadded: v2\nfields:\n  title: { type: string, max_length: 20 }\n");
    const second = canon(["generate"], dir);
    assert.equal(second.code, 0, `a renamed field and a tighter limit in the draft v2 pass: ${second.stderr}`);
    rmSync(publishers);
    const third = canon(["generate"], dir);
    assert.equal(third.code, 0, `a resource of the draft v2 removed: ${third.stderr}`);
    // A break of the published v1 names the draft as the place for the change.
    writeFileSync(books2, original.replace("  contact:", "  email:"));
    const refused = canon(["generate"], dir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /breaking-change v1 is published[\s\S]*fix: .*make the change in the draft v2/);
    // Publish v2 (remove draft): accepted; from then on a break of v2 is refused.
    writeFileSync(books2, original);
    writeFileSync(publishers, "resource: publishers\nadded: v2\nfields:\n  name: { type: string, max_length: 200 }\n");
    assert.equal(canon(["generate"], dir).code, 0);
    writeFileSync(path.join(dir, "definitions", "api.yaml"), readFileSync(path.join(dir, "definitions", "api.yaml"), "utf8").replace("  v2: { draft: true }\n", "  v2: {}\n"));
    const published = canon(["generate"], dir);
    assert.equal(published.code, 0, published.stderr);
    rmSync(publishers);
    const broken = canon(["generate"], dir);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /breaking-change v2 is published/);
    writeFileSync(publishers, "resource: publishers\nadded: v2\nfields:\n  name: { type: string, max_length: 200 }\n");
    // …and marking it a draft again does not reopen it.
    writeFileSync(path.join(dir, "definitions", "api.yaml"), readFileSync(path.join(dir, "definitions", "api.yaml"), "utf8").replace("  v2: {}\n", "  v2: { draft: true }\n"));
    const reopened = canon(["generate"], dir);
    assert.equal(reopened.code, 1);
    assert.match(reopened.stderr, /error version-draft-published v2 is published/);
    // The summary names what was refused, not a break of the contract.
    assert.match(reopened.stderr, /canon generate: refused: v2 is published and cannot become a draft again \(draft: true\): remove draft: true/);
    assert.doesNotMatch(reopened.stderr, /published versions never break/);
    // --allow-breaking lets a break of a version that never shipped through; it does not unpublish one.
    const before = snapshot(out);
    for (const command of ["generate", "check"]) {
      const forced = canon([command, "--allow-breaking"], dir);
      assert.equal(forced.code, 1, `${command} --allow-breaking: ${forced.stdout}`);
      assert.match(forced.stderr, /api\.yaml:\d+:\d+ error version-draft-published v2 is published/);
      assert.match(forced.stderr, /--allow-breaking does not reopen a published version/);
      assert.doesNotMatch(forced.stderr, /WARNING: --allow-breaking/);
    }
    assert.deepEqual(snapshot(out), before, "nothing written: v2's document is still no draft's");
  });

  test("lint warns about a near sunset, and fails on it only with --fail-on-sunset", () => {
    const fixture = path.join("test", "fixtures", "broken", "sunset-near");
    const plain = canon(["lint", "--definitions", fixture, "--today", "2026-11-21"]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stderr, /warning sunset-near the sunset of v1 is on 2026-12-01, in 10 days/);
    const strict = canon(["lint", "--definitions", fixture, "--today", "2026-11-21", "--fail-on-sunset"]);
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /error sunset-near/);
    const early = canon(["lint", "--definitions", fixture, "--today", "2026-06-01", "--fail-on-sunset"]);
    assert.equal(early.code, 0, early.stderr);
    assert.equal(canon(["lint", "--definitions", fixture, "--today", "2026-13-01"]).code, 2);
  });
});

test("docs/rules.md documents the gate's rules, and docs/versioning.md the rules of versions", () => {
  const rules = readFileSync(path.join(repoRoot, "docs/rules.md"), "utf8");
  for (const [rule, { severity }] of Object.entries(OUTPUT_RULES)) assert.match(rules, new RegExp(`^### ${rule} \\(${severity}\\)$`, "m"), rule);
  const versioning = readFileSync(path.join(repoRoot, "docs/versioning.md"), "utf8");
  for (const text of ["--allow-breaking", "--fail-on-sunset", "CHANGES.md", "amount_due_cents"]) assert.ok(versioning.includes(text), text);
});

describe("retiring a version", () => {
  test("retired: true removes v1 only once its sunset has passed", () => {
    const ws = workspace("retire", "definitions");
    assert.equal(canon(["generate"], ws).code, 0);
    const api = path.join(ws, "definitions", "api.yaml");
    writeFileSync(api, readFileSync(api, "utf8").replace("    sunset: 2027-06-30", "    sunset: 2027-06-30\n    retired: true"));
    const early = canon(["generate", "--today", "2026-11-21"], ws);
    assert.equal(early.code, 1, early.stdout);
    assert.match(early.stderr, /api\.yaml:9:14 error version-sunset v1 is retired before its sunset on 2027-06-30 \(today is 2026-11-21\)/);
    assert.match(early.stderr, /remove retired: true from v1/);
    assert.ok(existsSync(path.join(ws, "generated", "v1", "openapi.json")), "nothing was removed");
    const late = canon(["generate", "--today", "2027-07-01"], ws);
    assert.equal(late.code, 0, late.stderr);
    assert.equal(existsSync(path.join(ws, "generated", "v1")), false, "v1 is gone");
    assert.ok(existsSync(path.join(ws, "generated", "v2", "openapi.json")));
    // v1's own files go; v2's guide for late v1 clients stays, and says v1 is retired.
    assert.doesNotMatch(late.stdout, /removed +generated\/v2\//);
    const guide = readFileSync(path.join(ws, "generated", "v2", "CHANGES.md"), "utf8");
    assert.match(guide, /# Storefront API: from v1 to v2/);
    assert.match(guide, /v1 is retired: it was deprecated on 2026-09-01 and its sunset, 2027-06-30, has passed, so `\/v1\/` paths answer 404/);
    assert.match(guide, /field `due_cents` was renamed `amount_due_cents`/);
    assert.doesNotMatch(guide, /goes away on 2027-06-30 \(its sunset\): move before then/);
    assert.equal(canon(["check", "--today", "2027-07-01"], ws).code, 0);
    // The output no longer holds v1's document, but the definitions still say it is retired early:
    // a check run before the sunset (CI, on the real date) refuses an output generated with a later --today.
    const ci = canon(["check", "--today", "2026-11-21"], ws);
    assert.equal(ci.code, 1, ci.stdout);
    assert.match(ci.stderr, /v1 is retired before its sunset/);
  });
});

describe("retired: true against the published document's sunset", () => {
  const api = (versions: string) => replace("  v1: {}\n", versions);

  test("a sunset moved earlier in api.yaml, then retired: said as retired before the published sunset (not removed), at retired, with a summary that says so", () => {
    const dir = variant("retire-moved", { "api.yaml": api("  v1:\n    deprecated: 2026-09-01\n    sunset: 2027-06-30\n  v2: {}\n") });
    assert.equal(canon(["generate", "--today", today], dir).code, 0);
    const file = path.join(dir, "definitions", "api.yaml");
    // The lint rule (version-sunset) measures api.yaml's own dates, which now say the sunset has passed.
    writeFileSync(file, readFileSync(file, "utf8").replace("    deprecated: 2026-09-01\n    sunset: 2027-06-30\n", "    deprecated: 2026-06-01\n    sunset: 2026-09-01\n    retired: true\n"));
    const before = snapshot(path.join(dir, "generated"));
    for (const command of ["generate", "check"]) {
      const run = canon([command, "--today", today], dir);
      assert.equal(run.code, 1, run.stdout);
      assert.match(run.stderr, /api\.yaml:9:14 error version-removed-early v1 is published and marked retired: true before the sunset its published document announces, 2027-06-30 \(today is 2026-11-21\); api\.yaml now says sunset: 2026-09-01/);
      assert.match(run.stderr, /fix: remove retired: true from v1 and put back sunset: 2027-06-30 .*retire it on or after 2027-06-30/);
      assert.match(run.stderr, new RegExp(`canon ${command}: refused: v1 is retired \\(retired: true\\) before its sunset on 2027-06-30`));
      assert.doesNotMatch(run.stderr, /removed from the definitions|published versions never break/);
    }
    assert.deepEqual(snapshot(path.join(dir, "generated")), before);
  });

  test("a version published without a deprecation, then deprecated and retired at once: its clients had no notice", () => {
    const dir = variant("retire-unannounced", { "api.yaml": api("  v1: {}\n  v2: {}\n") });
    assert.equal(canon(["generate", "--today", today], dir).code, 0);
    const file = path.join(dir, "definitions", "api.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace("  v1: {}\n", "  v1:\n    deprecated: 2026-01-01\n    sunset: 2026-06-01\n    retired: true\n"));
    const run = canon(["generate", "--today", today], dir);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /api\.yaml:9:14 error version-removed-early v1 is published and marked retired: true, but its published document never announced a deprecation or sunset/);
    assert.match(run.stderr, /canon generate: refused: v1 is retired \(retired: true\), but its published document never announced a deprecation or sunset/);
    assert.doesNotMatch(run.stderr, /removed from the definitions|published versions never break/);
  });
});

describe("a published sunset is a promise (conventions §9.9)", () => {
  const api = (versions: string) => replace("  v1: {}\n", versions);

  test("moved earlier than the published document announced: refused at sunset, even where api.yaml's dates are valid; a later sunset is accepted", () => {
    const dir = variant("sunset-earlier", { "api.yaml": api("  v1:\n    deprecated: 2026-11-21\n    sunset: 2027-03-01\n  v2: {}\n") });
    assert.equal(canon(["generate", "--today", today], dir).code, 0);
    const file = path.join(dir, "definitions", "api.yaml");
    const published = readFileSync(file, "utf8");
    const before = snapshot(path.join(dir, "generated"));
    // 92 days after the deprecation written: lint's version-sunset is satisfied, and the sunset has
    // passed, so without the gate the next run could retire v1 months before its promised date.
    writeFileSync(file, published.replace("    deprecated: 2026-11-21\n    sunset: 2027-03-01\n", "    deprecated: 2026-07-01\n    sunset: 2026-10-01\n"));
    for (const command of ["generate", "check"]) {
      const run = canon([command, "--today", today], dir);
      assert.equal(run.code, 1, run.stdout);
      assert.match(run.stderr, /api\.yaml:8:13 error version-sunset-earlier v1 is published with its sunset on 2027-03-01, and this moves it earlier to 2026-10-01/);
      assert.match(run.stderr, /fix: put back sunset: 2027-03-01 on v1/);
      assert.match(run.stderr, new RegExp(`canon ${command}: refused: v1's sunset may not come before 2027-03-01, the date its published document promised its clients`));
    }
    assert.deepEqual(snapshot(path.join(dir, "generated")), before, "nothing written");
    writeFileSync(file, published.replace("    sunset: 2027-03-01\n", "    sunset: 2027-04-01\n"));
    const later = canon(["generate", "--today", today], dir);
    assert.equal(later.code, 0, later.stderr);
  });

  test("a deprecation first announced with a sunset under 90 days from today (dates written in the past) is refused; 90 days is accepted", () => {
    const dir = variant("sunset-backdated", { "api.yaml": api("  v1: {}\n  v2: {}\n") });
    assert.equal(canon(["generate", "--today", today], dir).code, 0);
    const file = path.join(dir, "definitions", "api.yaml");
    const published = readFileSync(file, "utf8");
    writeFileSync(file, published.replace("  v1: {}\n", "  v1:\n    deprecated: 2026-06-01\n    sunset: 2026-09-01\n"));
    const run = canon(["generate", "--today", today], dir);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /api\.yaml:8:13 error version-sunset-earlier v1 is published and this run first announces its deprecation, with a sunset on 2026-09-01: less than 90 days from today \(2026-11-21\)/);
    assert.match(run.stderr, /fix: give v1 a sunset on 2027-02-19 or later/);
    assert.match(run.stderr, /canon generate: refused: v1's sunset may not come before 2027-02-19, 90 days from today/);
    writeFileSync(file, published.replace("  v1: {}\n", "  v1:\n    deprecated: 2026-11-21\n    sunset: 2027-02-19\n"));
    const onTime = canon(["generate", "--today", today], dir);
    assert.equal(onTime.code, 0, onTime.stderr);
  });
});

describe("a resource made exportable (SPEC §8)", () => {
  const exportBooks = { [books]: replace("fields:", "export: true\nfields:") };
  const exportAuthors = (written: string) => replace("fields:", `${written}\nfields:`);

  test("in a published version, or with another format: no break (a job echoes what its caller asked for); a change inside one export's own schemas still breaks", async () => {
    const before = (await documents(variant("export-books", exportBooks))).get("v1")!;
    const dir = variant("export-authors", { ...exportBooks, "authors.yaml": exportAuthors("export: { formats: [ndjson, csv] }") });
    const grown = await documents(dir);
    const mapping = (doc: Json) => Object.keys((doc as any).components.schemas.ExportCreate.discriminator.mapping).sort();
    assert.deepEqual(mapping(grown.get("v1")!), ["authors", "books"]);
    // The comparison alone sees the shared schemas change; the gate knows they echo the request.
    assert.ok(compareDocuments(before, grown.get("v1")!).some((c) => c.breaking && c.kind === "enum-value-added"));
    const result = await gate(dir, new Map([["v1", before]]), grown);
    assert.deepEqual(result.diagnostics.map(formatDiagnostic), []);
    const csv = variant("export-books-csv", { [books]: replace("fields:", "export: { formats: [ndjson, csv] }\nfields:") });
    assert.deepEqual((await gate(csv, new Map([["v1", before]]), await documents(csv))).diagnostics.map(formatDiagnostic), []);
    // A filter dropped from books (its export's own filters) breaks, new collection or not.
    const narrowed = variant("export-authors-narrowed", { [books]: (text) => replace("filters: [genre, pages]", "filters: [genre]")(exportBooks[books](text)!), "authors.yaml": exportAuthors("export: true") });
    const broken = await gate(narrowed, new Map([["v1", before]]), await documents(narrowed));
    assert.ok(broken.diagnostics.some((d) => d.rule === "breaking-change" && /export filter "pages/.test(d.message)), broken.diagnostics.map(formatDiagnostic).join("\n"));
  });

  test("an export taken away, or a format of it: a break at the resource, with a fix that names the export and its formats", async () => {
    const authors = { "authors.yaml": exportAuthors("export: true") };
    const csvBooks = { ...authors, [books]: replace("fields:", "export: { formats: [ndjson, csv] }\nfields:") };
    const before = (await documents(variant("export-books-both", csvBooks))).get("v1")!;
    // export removed: at books.yaml (its resource: line, the export key being gone), not at api.yaml's v1.
    const gone = variant("export-books-gone", authors);
    const removed = await gate(gone, new Map([["v1", before]]), await documents(gone));
    const all = removed.diagnostics.map(formatDiagnostic).join("\n");
    const member = removed.diagnostics.find((d) => /no longer takes BookExportCreate/.test(d.message));
    assert.ok(member, all);
    assert.equal(member.location.file, "definitions/books.yaml", all);
    assert.equal(member.location.line, lineOf(gone, books, "resource: books"), all);
    assert.match(member.fix, /keep the export of "books" in v1: put `export` back on the resource/);
    const media = removed.diagnostics.find((d) => /text\/csv is no longer answered/.test(d.message));
    assert.ok(media, all);
    assert.match(media.fix, /put the format back in `export: \{ formats \}` of the resources that offered it/);
    assert.doesNotMatch(all, /mark the change there with added, removed or renamed/);
    // a format dropped: at the export key, said as the export's formats, not as a field to version.
    const fewer = variant("export-books-ndjson", { ...authors, [books]: replace("fields:", "export: { formats: [ndjson] }\nfields:") });
    const narrowed = await gate(fewer, new Map([["v1", before]]), await documents(fewer));
    const format = narrowed.diagnostics.find((d) => /"format" no longer has the value "csv"/.test(d.message));
    assert.ok(format, narrowed.diagnostics.map(formatDiagnostic).join("\n"));
    assert.equal(format.location.line, lineOf(fewer, books, "export:"));
    assert.match(format.fix, /keep the formats of the export of "books" in v1: put the format back in its `export: \{ formats \}`/);
    // the only export taken away: /v1/exports goes, said as the exports.
    const none = variant("export-none");
    const nothing = await gate(none, new Map([["v1", before]]), await documents(none));
    const path = nothing.diagnostics.find((d) => /the path \/v1\/exports was removed/.test(d.message));
    assert.ok(path, nothing.diagnostics.map(formatDiagnostic).join("\n"));
    assert.match(path.fix, /keep v1's exports: put `export` back on the resources that had it/);
  });

  test("dated with added: the published version's document is unchanged, the new version offers it", async () => {
    const before = (await documents(variant("export-books-2", exportBooks))).get("v1")!;
    const dir = variant("export-authors-added", {
      ...exportBooks,
      "api.yaml": replace("  v1: {}", "  v1: {}\n  v2: {}"),
      "authors.yaml": exportAuthors("export: { added: v2 }"),
    });
    const docs = await documents(dir);
    assert.deepEqual(docs.get("v1"), before);
    const mapping = (doc: Json) => Object.keys((doc as any).components.schemas.ExportCreate.discriminator.mapping).sort();
    assert.deepEqual(mapping(docs.get("v2")!), ["authors", "books"]);
    const result = await gate(dir, new Map([["v1", before]]), docs);
    assert.deepEqual(result.diagnostics.map(formatDiagnostic), []);
  });

  test("added names a version in which the resource exists, after its first", async () => {
    for (const [added, pattern] of [["v3", /is not a version of api.yaml/], ["v1", /not after the resource's first version/]] as const) {
      const dir = variant(`export-added-${added}`, { "api.yaml": replace("  v1: {}", "  v1: {}\n  v2: {}"), "authors.yaml": exportAuthors(`export: { added: ${added} }`) });
      const front = await runFrontEnd(path.join(dir, "definitions"), { today, cwd: dir });
      const d = front.diagnostics.find((x) => x.rule === "version-ref");
      assert.ok(d, front.diagnostics.map(formatDiagnostic).join("\n"));
      assert.match(d.message, pattern);
      assert.equal(d.location.line, lineOf(dir, "authors.yaml", "export:"));
    }
  });
});

describe("a field made unique (unique: true)", () => {
  const uniqueIsbn = { [books]: replace("  isbn: { type: string,", "  isbn: { type: string, unique: true,") };

  test("in a published version: a break at the field's unique, as a composite list's (rows may repeat a value; a write the version took now answers 409)", async () => {
    const dir = variant("unique-field", uniqueIsbn);
    const result = await gate(dir, new Map([["v1", published]]), await documents(dir));
    const d = result.diagnostics.find((x) => x.message.includes("[unique-added]"));
    assert.ok(d, result.diagnostics.map(formatDiagnostic).join("\n"));
    assert.match(d.message, /new unique field "isbn"/);
    assert.equal(d.location.line, lineOf(dir, books, "unique: true"));
    assert.match(d.fix, /removed: v2/);
    assert.deepEqual(result.broken, ["v1"]);
    // Taken away again: it only accepts more.
    const removed = compareDocuments((await documents(dir)).get("v1")!, published);
    assert.ok(removed.some((c) => c.kind === "unique-removed" && !c.breaking), listing(removed));
    assert.deepEqual(removed.filter((c) => c.breaking).map((c) => c.text), []);
  });

  test("a new optional field that is unique breaks nothing: no write of the published version sets it; with a default, every write does", async () => {
    const isbn = "  contact: { type: string }\n";
    const fresh = await changesOf("unique-new-field", { [books]: replace(isbn, `${isbn}  barcode: { type: string, max_length: 40, optional: true, unique: true }\n`) });
    assert.deepEqual(fresh.filter((c) => c.breaking).map((c) => c.text), [], listing(fresh));
    assert.ok(fresh.some((c) => c.kind === "unique-added" && !c.breaking && /the new field "barcode": it refuses no write that leaves it out/.test(c.text)), listing(fresh));
    const composite = await changesOf("unique-new-field-composite", { [books]: (text) => replace("sort: [pages, genre]\n", "sort: [pages, genre]\nunique: [[title, shelf]]\n")(replace(isbn, `${isbn}  shelf: { type: string, max_length: 40, optional: true }\n`)(text)!) });
    assert.deepEqual(composite.filter((c) => c.breaking).map((c) => c.text), [], listing(composite));
    const defaulted = await changesOf("unique-new-field-default", { [books]: replace(isbn, `${isbn}  barcode: { type: string, max_length: 40, default: "none", unique: true }\n`) });
    assert.ok(defaulted.some((c) => c.kind === "unique-added" && c.breaking && c.operation?.operationId === "createBook"), listing(defaulted));
  });

  test("a document written before canon listed unique fields does not compare them", async () => {
    const old = structuredClone(published) as Record<string, any>;
    delete old.info["x-canon-unique-fields"];
    const changes = compareDocuments(old, (await documents(variant("unique-field-old", uniqueIsbn))).get("v1")!);
    assert.deepEqual(changes.filter((c) => c.breaking).map((c) => c.text), [], listing(changes));
  });
});
