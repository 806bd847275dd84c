// Collections named as everyday APIs name them, whose types have a name canon's generated code
// uses for its own: `stores` (Store, the runtime's store), `clients` (Client, the typed client's
// interface), `records` (TypeScript's Record), `errors` (Error, and the OpenAPI envelope's schema),
// `dates` (Date), `matches` (the runtime's Match), `queries` (the client's Query) and `events`
// (api.yaml has no event feed, whose path /vN/events would be refused: path-conflict), and an
// action of `cursors`, `pages` (CursorPage, the runtime's page type). Lint takes
// them, the output and the typed client compile under strict tsc with each record typed as the
// collection's own, and the service answers create, list and get of each over HTTP.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, test } from "node:test";
import { canon } from "./support/cli.ts";
import { suiteFixture } from "./support/fixture.ts";
import { SPEC_COMPILER_OPTIONS, tsc } from "./support/tsc.ts";
import { UNKNOWN_ID, expectError, expectStatus, startFixture } from "./http/helpers.ts";

const FIXTURE = "test/fixtures/everyday-names";

describe("everyday collection names", () => {
  test("lint takes them", () => {
    const run = canon(["lint", "--definitions", FIXTURE]);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  });

  const api = suiteFixture(() => startFixture("everyday-names", FIXTURE, ["v1"]));

  test("the output and a program using its typed client compile under strict tsc, each record typed as its collection's", () => {
    // Each line reads a field only the collection's own type has: were the client's `Store` the
    // runtime's store, or its `Client` the client's interface, this would not compile.
    const usage = path.join(api.dir, "usage.ts");
    writeFileSync(
      usage,
      [
        `import { createClient, type Client as ApiClient } from "./generated/v1/client.ts";`,
        `import type { Store } from "./generated/v1/stores/types.ts";`,
        `import type { Client } from "./generated/v1/clients/types.ts";`,
        `import type { Record } from "./generated/v1/records/types.ts";`,
        `import type { StoresPage } from "./generated/v1/pagination.ts";`,
        `const api: ApiClient = createClient({ baseUrl: "" });`,
        `const store: Store = await api.stores.get("x");`,
        `const name: string = store.name;`,
        `const client: Client = await api.clients.get("x");`,
        `const email: string = client.email;`,
        `const record: Record = await api.records.get("x");`,
        `const amount: number = record.amount_cents;`,
        `const attributes: globalThis.Record<string, string> | undefined = record.attributes;`,
        `const message: string = (await api.errors.get("x")).message;`,
        `const day: string = (await api.dates.get("x")).day;`,
        `const score: number = (await api.matches.get("x")).score;`,
        `const text: string = (await api.queries.get("x")).text;`,
        `const title: string = (await api.events.get("x")).title;`,
        `const reason: string = (await api.stores.closures.create("x", { reason: "y" })).reason;`,
        `const page: StoresPage = await api.stores.list();`,
        `const size: number = (await api.cursors.pages.create("x", { size: 2 })).size;`,
        `// @ts-expect-error the record of a store is no store of canon's runtime`,
        `const close: Store["close"] = undefined;`,
        `export const read = [name, email, amount, attributes, message, day, score, text, title, reason, page, size, close];`,
        "",
      ].join("\n"),
    );
    const result = tsc(path.join(api.dir, "tsconfig.usage.json"), SPEC_COMPILER_OPTIONS, [path.join(api.dir, "generated"), usage]);
    assert.equal(result.code, 0, result.output);
  });

  test("the types are imported under an alias only beside canon's own name", () => {
    const routes = readFileSync(path.join(api.dir, "generated/v1/stores/routes.ts"), "utf8");
    assert.match(routes, /import type \{ Store as StoreRecord, StoreClosure \} from "\.\/types\.ts";/, "sorted by the exported name");
    const types = readFileSync(path.join(api.dir, "generated/v1/stores/types.ts"), "utf8");
    assert.match(types, /^export interface Store \{/m);
    const client = readFileSync(path.join(api.dir, "generated/v1/client.ts"), "utf8");
    assert.match(client, /import type \{ Client as ClientRecord, ClientCreate, ClientUpdate \} from "\.\/clients\/types\.ts";/, "sorted by the exported name");
    const pagination = readFileSync(path.join(api.dir, "generated/v1/pagination.ts"), "utf8");
    assert.match(pagination, /import type \{ Store as StoreRecord \} from "\.\/stores\/types\.ts";/);
    assert.match(pagination, /import type \{ Event \} from "\.\/events\/types\.ts";/, "Event is no name of canon's here: imported as it is");
  });

  test("each collection is created, listed and read over HTTP, through the typed client", async () => {
    const { createClient } = (await import(pathToFileURL(path.join(api.dir, "generated/v1/client.ts")).href)) as {
      createClient(options: { baseUrl: string; token: string }): Record<string, Collection>;
    };
    const client = createClient({ baseUrl: api.base, token: "dev-writer" });
    const store = await client.stores!.create({ name: "Main street", tags: { floor: "1" } });
    const customer = await client.clients!.create({ store_id: store.id, name: "Ada", email: `ada-${process.pid}@example.com` });
    const bodies: Record<string, object> = {
      records: { client_id: customer.id, amount_cents: 1250, attributes: { till: "2" } },
      errors: { message: "paper jam", severity: "high" },
      dates: { day: "2025-03-01" },
      matches: { store_id: store.id, score: 0.5 },
      queries: { text: "opening hours" },
      events: { title: "Opening", starts_at: "2025-03-01T09:00:00Z" },
      cursors: { name: "feed" },
    };
    const created: Record<string, Obj> = { stores: store, clients: customer };
    for (const [collection, body] of Object.entries(bodies)) created[collection] = await client[collection]!.create(body);
    for (const [collection, record] of Object.entries(created)) {
      const read = await client[collection]!.get(record.id);
      assert.deepEqual(read, record, collection);
      const page = (await client[collection]!.list()) as { data: Obj[] };
      assert.deepEqual(
        page.data.map((r) => r.id),
        [record.id],
        collection,
      );
      // The same over plain HTTP, each answer checked against the version's OpenAPI document.
      const res = await expectStatus(api, "GET", `/v1/${collection}/${record.id}`, 200);
      assert.equal((res.body as Obj).id, record.id);
    }
    assert.equal((await client.stores!.closures!.create(store.id, { reason: "inventory" })).reason, "inventory");
    assert.equal((await client.cursors!.pages!.create(created.cursors!.id, { size: 2 })).size, 2);
  });

  test("an error answers with the envelope, whose schema yields its name to the collection errors", async () => {
    await expectError(api, "GET", `/v1/errors/${UNKNOWN_ID}`, 404, "NOT_FOUND");
    const document = api.contract.documents.get("v1") as { components: { schemas: Record<string, Obj>; responses: Record<string, Obj> } };
    assert.deepEqual(Object.keys(document.components.schemas.Error!.properties as object).sort(), ["created_at", "id", "message", "severity", "updated_at"]);
    assert.match(JSON.stringify(document.components.responses.NotFound), /#\/components\/schemas\/ApiError"/);
  });
});

/** A record as the service answers it. */
type Obj = { id: string; [field: string]: unknown };

/** A collection's class of the typed client, as the test calls it. */
interface Collection {
  create(body: object): Promise<Obj>;
  get(id: string): Promise<Obj>;
  list(): Promise<unknown>;
  closures?: { create(id: string, body: object): Promise<Obj> };
  pages?: { create(id: string, body: object): Promise<Obj> };
}
