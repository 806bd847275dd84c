// The generated client in a browser: v1/client.ts and v2/client.ts with their types stripped
// (Node's module.stripTypeScriptTypes: the files hold only erasable syntax and import nothing at
// run time) are served by a small static server on one origin and loaded in headless Chromium,
// whose page calls the showcase service on ANOTHER origin, allowed by buildApp({ cors }). The
// page writes what it saw into the DOM, which Chromium's --dump-dom prints.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { stripTypeScriptTypes } from "node:module";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import * as v2 from "../../generated/v2/client.ts";
import { repoRoot } from "../support/cli.ts";
import { startShowcase, UNKNOWN_ID, type Service } from "./helpers.ts";

const run = promisify(execFile);
const chromium = ["chromium", "chromium-browser", "google-chrome"].find((name) => spawnSync("which", [name]).status === 0);
// CI installs Debian's chromium (.ci/run); there the test must run. Elsewhere it is skipped when absent.
const skip = !chromium && !process.env.CI ? "chromium is not installed (apt-get install chromium)" : false;

/** The page's script: every call it makes, and what it saw, written into #result as JSON. */
function pageScript(service: string, closed: string): string {
  return `
import { createClient, ConflictError, NotFoundError, NetworkError, ValidationError } from "./v2/client.js";
import { createClient as createV1 } from "./v1/client.js";
const out = {};
try {
  const api = createClient({ baseUrl: ${JSON.stringify(service)}, token: "dev-writer" });
  const first = await api.products.list({ limit: 2 }).withResponse();
  out.firstPage = { size: first.data.data.length, hasMore: first.data.pagination.has_more, requestId: first.requestId };
  out.walked = [];
  for await (const product of api.products.list({ limit: 2, category: "books" })) out.walked.push(product.sku);
  const created = await api.products.create({ sku: "BROWSER-1", name: "From the page", price_cents: 5 }).withResponse();
  out.created = { status: created.status, location: created.headers.get("location"), etag: created.etag };
  const updated = await api.products.update(created.data.id, { name: "Renamed" }, { ifMatch: created.etag }).withResponse();
  out.updated = { name: updated.data.name, etagChanged: updated.etag !== created.etag };
  try { await api.products.update(created.data.id, { name: "Stale" }, { ifMatch: created.etag }); } catch (e) { out.stale = { conflict: e instanceof ConflictError, status: e.status }; }
  try { await api.products.get(${JSON.stringify(UNKNOWN_ID)}); } catch (e) { out.missing = { notFound: e instanceof NotFoundError, requestId: e.requestId }; }
  try { await api.products.list({ limit: 1000 }); } catch (e) { out.invalid = { validation: e instanceof ValidationError, fields: e.details.map((d) => d.field) }; }
  await api.products.delete(created.data.id, { ifMatch: updated.etag });
  const notices = [];
  const old = createV1({ baseUrl: ${JSON.stringify(service)}, token: "dev-reader", onDeprecation: (n) => notices.push(n) });
  out.v1Count = (await old.products.list()).data.length;
  out.deprecation = notices.map((n) => ({ version: n.version, sunset: n.sunset && n.sunset.toISOString(), successor: n.successor }));
  const blocked = createClient({ baseUrl: ${JSON.stringify(closed)}, token: "dev-reader", maxRetries: 0 });
  try { await blocked.products.list(); out.blocked = "answered"; } catch (e) { out.blocked = e instanceof NetworkError ? "NetworkError" : String(e); }
} catch (error) {
  out.error = String(error && error.stack || error);
}
document.getElementById("result").textContent = JSON.stringify(out);
`;
}

describe("the generated client in headless Chromium, from a page on another origin", { skip }, () => {
  let service: Service;
  let closed: Service;
  let pages: Server;
  let pageOrigin: string;

  before(async () => {
    // The page's origin first: the service names it.
    const strip = (version: string) => stripTypeScriptTypes(readFileSync(path.join(repoRoot, "generated", version, "client.ts"), "utf8"));
    const files = new Map<string, string>([
      ["/v1/client.js", strip("v1")],
      ["/v2/client.js", strip("v2")],
    ]);
    pages = createServer((request, response) => {
      const body = request.url === "/" ? `<!doctype html><pre id="result">pending</pre><script type="module" src="/main.js"></script>` : files.get(request.url ?? "");
      if (body === undefined) return void response.writeHead(404).end();
      response.writeHead(200, { "content-type": request.url === "/" ? "text/html" : "text/javascript" }).end(body);
    });
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    service = await startShowcase({ cors: { origins: [pageOrigin] } });
    closed = await startShowcase();
    files.set("/main.js", pageScript(service.base, closed.base));
    const api = v2.createClient({ baseUrl: service.base, token: "dev-writer" });
    for (let i = 0; i < 5; i++) await api.products.create({ sku: `BOOK-${i}`, name: `Book ${i}`, price_cents: 100, category: "books" });
    await api.products.create({ sku: "GAME-1", name: "Game", price_cents: 100, category: "games" });
  });
  after(async () => {
    await service.close();
    await closed.close();
    await new Promise((resolve) => pages.close(resolve));
  });

  test("lists, walks, writes with If-Match, typed errors, deprecation notices; a service without CORS is unreachable", async () => {
    assert.ok(chromium, "chromium must be installed in CI");
    assert.notEqual(new URL(pageOrigin).origin, new URL(service.base).origin, "the page is on another origin");
    const { stdout } = await run(
      chromium,
      ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=30000", "--dump-dom", `${pageOrigin}/`],
      { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const text = /<pre id="result">([^<]*)<\/pre>/.exec(stdout)?.[1];
    assert.ok(text && text !== "pending", `the page wrote no result:\n${stdout.slice(0, 2000)}`);
    const out = JSON.parse(text.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"));
    assert.equal(out.error, undefined, out.error);
    assert.equal(out.firstPage.size, 2);
    assert.equal(out.firstPage.hasMore, true);
    assert.match(out.firstPage.requestId, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    assert.deepEqual(out.walked, ["BOOK-0", "BOOK-1", "BOOK-2", "BOOK-3", "BOOK-4"]);
    assert.equal(out.created.status, 201);
    assert.match(out.created.location, /^\/v2\/products\//);
    assert.ok(out.created.etag, "ETag is readable across origins");
    assert.deepEqual(out.updated, { name: "Renamed", etagChanged: true });
    assert.deepEqual(out.stale, { conflict: true, status: 409 });
    assert.equal(out.missing.notFound, true);
    assert.match(out.missing.requestId, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    assert.deepEqual(out.invalid, { validation: true, fields: ["limit"] });
    assert.equal(out.v1Count, 6);
    assert.deepEqual(out.deprecation, [{ version: "v1", sunset: "2027-06-30T00:00:00.000Z", successor: "https://api.example.com/v2/products" }]);
    assert.equal(out.blocked, "NetworkError", "without CORS for the page's origin, the browser keeps the answer from the page");
  });
});
