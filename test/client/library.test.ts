// The client of definitions other than the showcase, over HTTP: a hyphenated collection
// (`api.bookCopies`), an offset child list walked page by page, an action answering 204, PUT.
import assert from "node:assert/strict";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { canon, workspace } from "../support/cli.ts";

type Obj = Record<string, any>;

describe("the client of the library fixture over HTTP", () => {
  let app: FastifyInstance;
  let client: Obj;
  let api: Obj;

  before(async () => {
    const dir = workspace("client-library-http", "test/fixtures/openapi");
    const run = canon(["generate"], dir);
    assert.equal(run.code, 0, run.stderr);
    const generated = (file: string) => pathToFileURL(path.join(dir, "generated", file)).href;
    const entry = (await import(generated("index.ts"))) as Obj;
    client = (await import(generated("v2/client.ts"))) as Obj;
    app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false });
    const baseUrl = await app.listen({ port: 0, host: "127.0.0.1" });
    api = client.createClient({ baseUrl, token: "dev-writer" });
  });
  after(() => app.close());

  test("hyphenated collection, offset child list, 204 action, PUT", async () => {
    const author = await api.authors.create({ name: "Ann" });
    assert.equal((await api.authors.replace(author.id, { name: "Anne" })).name, "Anne");
    assert.equal(await api.authors.reviews.create(author.id, { note: "fine" }), undefined);
    for (let i = 0; i < 25; i++) await api.bookCopies.create({ author_id: author.id, shelf: `S${i % 3}` });
    const first = await api.authors.bookCopies.list(author.id, { per_page: 10 });
    assert.deepEqual(first.pagination, { page: 1, per_page: 10, total: 25, total_pages: 3 });
    const shelves: string[] = [];
    for await (const copy of api.authors.bookCopies.list(author.id, { per_page: 10 })) shelves.push(copy.shelf);
    assert.equal(shelves.length, 25);
    let s0 = 0;
    for await (const _ of api.bookCopies.list({ shelf: "S0", per_page: 2 })) s0++;
    assert.equal(s0, 9);
    const copy = await api.bookCopies.get((first.data as Obj[])[0]!.id);
    assert.equal(copy.author_id, author.id);
    await assert.rejects(api.authors.reviews.create(author.id, { note: "x".repeat(201) }), client.ValidationError);
  });
});
