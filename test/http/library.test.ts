// SPEC §5 rows the showcase cannot show, on the service generated from
// test/fixtures/openapi (a library): an action with `response: 204`, a body limit set in
// api.yaml, an offset child collection, read-only and write-only fields, nested arrays of
// objects, nullable values. Every response is checked against that service's own documents.
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import {
  detailFields,
  expectError,
  expectStatus,
  listen,
  loadContract,
  UNKNOWN_ID,
  UUID_V7,
  type Api,
} from "./helpers.ts";

type Obj = Record<string, any>;

let api: Api;
let dir = "";
const published: Obj[] = [];
before(async () => {
  dir = workspace("http-library", "test/fixtures/openapi");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const app = await entry.buildApp({
    authenticate: entry.devAuthenticate,
    rateLimit: false,
    events: { publish: (event: Obj) => void published.push(event) },
  });
  api = await listen(app, loadContract("library", out, ["v1", "v2"]));
});
after(async () => {
  await api?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function createAuthor(overrides: Obj = {}): Promise<Obj> {
  return (await expectStatus(api, "POST", "/v2/authors", 201, { body: { name: "Ursula", ...overrides } })).body as Obj;
}

describe("an action with response: 204", () => {
  test("answers 204 with an empty body, publishes its event, and 404s for an unknown target", async () => {
    const author = await createAuthor();
    const before = published.length;
    const res = await expectStatus(api, "POST", `/v2/authors/${author.id}/reviews`, 204, { body: { note: "Please review" } });
    assert.equal(res.text, "");
    const events = published.slice(before);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, "author.review.created");
    assert.match(events[0]!.id, UUID_V7);
    assert.equal(events[0]!.data.author_id, author.id);
    assert.equal(events[0]!.data.note, "Please review");
    await expectError(api, "POST", `/v2/authors/${UNKNOWN_ID}/reviews`, 404, "NOT_FOUND", { body: { note: "x" } });
    await expectError(api, "POST", `/v1/authors/not-an-id/reviews`, 400, "VALIDATION_ERROR", { body: { note: "x" } });
    const bad = await expectError(api, "POST", `/v2/authors/${author.id}/reviews`, 400, "VALIDATION_ERROR", { body: { note: 5, extra: 1 } });
    assert.deepEqual(detailFields(bad), ["extra", "note"]);
  });
});

describe("the body limit of api.yaml", () => {
  test("a body over body_limit (2048 bytes) answers 400; one under it is read", async () => {
    const over = JSON.stringify({ name: "x".repeat(2100) });
    const error = await expectError(api, "POST", "/v2/authors", 400, "VALIDATION_ERROR", { body: over, headers: { "content-type": "application/json" } });
    assert.deepEqual(detailFields(error), ["body"]);
    const under = JSON.stringify({ name: "x".repeat(1900) });
    const read = await expectError(api, "POST", "/v2/authors", 400, "VALIDATION_ERROR", { body: under, headers: { "content-type": "application/json" } });
    assert.deepEqual(detailFields(read), ["name"], "read, and the field's own max_length applies");
  });
});

describe("fields", () => {
  test("nullable enum, number with a default, date; PUT replaces", async () => {
    const author = await createAuthor({ genre: null, born: "1929-10-21" });
    assert.equal(author.genre, null);
    assert.equal(author.rating, 0);
    assert.equal(author.born, "1929-10-21");
    const replaced = await expectStatus(api, "PUT", `/v2/authors/${author.id}`, 200, { body: { name: "Le Guin", genre: "fiction", rating: 4.5 } });
    assert.equal(replaced.body.genre, "fiction");
    assert.equal(replaced.body.rating, 4.5);
    assert.ok(!("born" in replaced.body));
    const error = await expectError(api, "POST", "/v2/authors", 400, "VALIDATION_ERROR", {
      body: { name: "A", genre: "poetry", born: "1929-13-40", rating: 6 },
    });
    assert.deepEqual(detailFields(error), ["born", "genre", "rating"]);
  });

  test("read-only fields are refused by name; write-only fields are accepted and never shown", async () => {
    const author = await createAuthor();
    const ro = await expectError(api, "POST", "/v2/book-copies", 400, "VALIDATION_ERROR", {
      body: { author_id: author.id, shelf: "A1", barcode: "123", row_id: 1 },
    });
    assert.deepEqual(detailFields(ro), ["barcode", "row_id"]);
    const copy = (await expectStatus(api, "POST", "/v2/book-copies", 201, { body: { author_id: author.id, shelf: "A1", secret: "s3cr3t-value" } }))
      .body as Obj;
    assert.ok(!("secret" in copy));
    assert.deepEqual(copy.loans, []);
    const read = await expectStatus(api, "GET", `/v2/book-copies/${copy.id}`, 200);
    assert.doesNotMatch(read.text, /s3cr3t-value|"secret"/);
    const eventText = JSON.stringify(published);
    assert.doesNotMatch(eventText, /s3cr3t-value/, "events carry no write-only value");
  });

  test("nested arrays of objects: defaults inside items, details named by dotted path", async () => {
    const author = await createAuthor();
    const copy = (await expectStatus(api, "POST", "/v2/book-copies", 201, {
      body: { author_id: author.id, shelf: "B2", loans: [{ borrower: "Ged" }, { borrower: "Tenar", returned: true }] },
    })).body as Obj;
    assert.deepEqual(copy.loans, [
      { borrower: "Ged", returned: false },
      { borrower: "Tenar", returned: true },
    ]);
    const error = await expectError(api, "PATCH", `/v2/book-copies/${copy.id}`, 400, "VALIDATION_ERROR", {
      body: { loans: [{ borrower: 1 }, { returned: "no", extra: true }] },
    });
    assert.deepEqual(detailFields(error), ["loans.0.borrower", "loans.1.borrower", "loans.1.extra", "loans.1.returned"]);
    const tooMany = await expectError(api, "PATCH", `/v2/book-copies/${copy.id}`, 400, "VALIDATION_ERROR", {
      body: { loans: Array.from({ length: 6 }, () => ({ borrower: "x" })) },
    });
    assert.deepEqual(detailFields(tooMany), ["loans"]);
  });
});

describe("an offset child collection", () => {
  test("/v2/authors/{id}/book-copies pages with totals; ?q= switches to cursor mode; unknown parent 404", async () => {
    const author = await createAuthor();
    const other = await createAuthor();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await expectStatus(api, "POST", "/v2/book-copies", 201, { body: { author_id: author.id, shelf: i < 3 ? "LOW" : "HIGH" } })).body.id);
    }
    await expectStatus(api, "POST", "/v2/book-copies", 201, { body: { author_id: other.id, shelf: "LOW" } });
    const page = (await expectStatus(api, "GET", `/v2/authors/${author.id}/book-copies?per_page=3&page=3`, 200)).body;
    assert.deepEqual(page.pagination, { page: 3, per_page: 3, total: 7, total_pages: 3 });
    assert.deepEqual(
      page.data.map((c: Obj) => c.id),
      ids.slice(6),
    );
    const filtered = (await expectStatus(api, "GET", `/v2/authors/${author.id}/book-copies?shelf=LOW`, 200)).body;
    assert.equal(filtered.pagination.total, 3);
    const searched = (await expectStatus(api, "GET", `/v2/authors/${author.id}/book-copies?q=high&limit=2`, 200)).body;
    assert.deepEqual(Object.keys(searched.pagination).sort(), ["has_more", "next_cursor"]);
    assert.equal(searched.data.length, 2);
    assert.equal(searched.pagination.has_more, true);
    await expectError(api, "GET", `/v2/authors/${UNKNOWN_ID}/book-copies`, 404, "NOT_FOUND");
    const bad = await expectError(api, "GET", `/v2/authors/${author.id}/book-copies?page=0&per_page=101`, 400, "VALIDATION_ERROR");
    assert.deepEqual(detailFields(bad), ["page", "per_page"]);
  });
});
