// SPEC §12.5 "Services and `authorize` receive the principal too", over HTTP on the service
// generated from test/fixtures/service-context, on the store CANON_TEST_STORE names: every method
// of a service of one's own (`buildApp({ services })`) is told who asks (the principal, its tenant
// included, and the request id) by every route that reads or writes through it: a read by id,
// lists (cursor, offset, `?q=`), child lists and `list_under` lists (the parent's read and the
// page), the read before a PATCH, PUT, DELETE or action, and an export's job (with the principal
// and request id of the POST that made it). The services are the example of docs/hooks.md
// (test/fixtures/service-context-example.ts): each wrapped by `audited`, and tickets that hide
// urgent ones from principals without the `triage` scope; the example type-checks against the
// generated types.
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { download, exportsFolder, ndjson, settled } from "../exports/helpers.ts";
import { repoRoot } from "../support/cli.ts";
import { SPEC_COMPILER_OPTIONS, tscAsync } from "../support/tsc.ts";
import { call, startFixture, type Api } from "./helpers.ts";

type Obj = Record<string, any>;
const STORE = process.env.CANON_TEST_STORE ?? "memory";
const folder = exportsFolder();
let api: Api & { dir: string };
const audits: Obj[] = [];
let org: Obj;
let other: Obj;

before(async () => {
  let store: unknown;
  api = await startFixture("http-service-context", "test/fixtures/service-context", ["v1"], {
    exports: { directory: folder.directory, pageSize: 2 },
    wrapStore: (opened: unknown) => (store = opened),
    prepare: async (dir: string) => {
      copyFileSync(
        path.join(repoRoot, "test/fixtures/service-context-example.ts"),
        path.join(dir, "service-context-example.ts"),
      );
      const example = (await import(pathToFileURL(path.join(dir, "service-context-example.ts")).href)) as Obj;
      const generated = (await import(pathToFileURL(path.join(dir, "generated", "services.ts")).href)) as Obj;
      const entry = (await import(pathToFileURL(path.join(dir, "generated", "index.ts")).href)) as Obj;
      const defaults = generated.defaultServices(store) as Obj;
      defaults.tickets = new example.TriageTickets(store, generated.resourceSpecs.tickets);
      const services = Object.fromEntries(
        Object.entries(defaults).map(([name, service]) => [
          name,
          example.audited(name, service, (audit: Obj) => audits.push(audit)),
        ]),
      );
      return {
        services,
        // `Bearer triage` (and `triage.<org id>`): a principal who may see urgent tickets.
        authenticate: (request: Obj) => {
          const m = /^Bearer triage(?:\.([0-9a-f-]{36}))?$/.exec(String(request.headers.authorization ?? ""));
          if (!m) return entry.devAuthenticate(request);
          return { id: "triage", scopes: ["read", "write", "triage"], ...(m[1] ? { tenant: m[1] } : {}) };
        },
      };
    },
  });
  org = await send("dev-writer", "POST", "/v1/organizations", 201, ["organizations.create"], { name: "Acme" });
  other = await send("dev-writer", "POST", "/v1/organizations", 201, ["organizations.create"], { name: "Bolt" });
});

after(async () => {
  await api?.close();
  folder.remove();
});

/**
 * One request as `auth`, which must answer `status` after calling exactly the service methods
 * `calls` (in any order, each as often as listed), each told the request's principal and id.
 */
async function send(auth: string, method: string, url: string, status: number, calls: string[], body?: Obj): Promise<Obj> {
  audits.length = 0;
  const res = await call(api, method, url, { auth, ...(body === undefined ? {} : { body }) });
  assert.equal(res.status, status, `${method} ${url}: ${res.status} ${res.text.slice(0, 300)}`);
  const requestId = res.headers.get("x-request-id");
  const made = audits.map((a) => `${a.service}.${a.method}`);
  assert.deepEqual([...made].sort(), [...calls].sort(), `${method} ${url}: the service calls`);
  // A dev token's principal is the token (`dev-writer.<org id>`), with the org as its tenant.
  const tenant = auth.split(".")[1];
  const id = auth.startsWith("triage") ? "triage" : auth;
  for (const audit of audits) {
    const what = `${method} ${url}: ${audit.service}.${audit.method}`;
    assert.ok(audit.principal, `${what} is told the principal`);
    assert.equal(audit.principal.id, id, what);
    assert.equal(audit.principal.tenant, tenant, `${what}: the principal's tenant`);
    assert.ok(Array.isArray(audit.principal.scopes), what);
    assert.equal(audit.requestId, requestId, `${what}: the request id`);
  }
  return res.body as Obj;
}

for (const who of ["tenant", "platform"] as const) {
  describe(`every route tells the service who asks: a ${who} principal (${STORE})`, () => {
    let auth: string;
    let ticket: Obj;
    let agent: Obj;
    const tenantOnly = (body: Obj) => (who === "platform" ? { organization_id: org.id, ...body } : body);

    before(async () => {
      auth = who === "tenant" ? `dev-writer.${org.id}` : "dev-writer";
      agent = await send(auth, "POST", "/v1/agents", 201, ["agents.create"], tenantOnly({ name: "Ann" }));
      ticket = await send(auth, "POST", "/v1/tickets", 201, ["tickets.create"], tenantOnly({ subject: "Printer jam", assignee_id: agent.id }));
      await send(auth, "POST", "/v1/notes", 201, ["notes.create"], tenantOnly({ ticket_id: ticket.id, text: "toner" }));
    });

    test("a read by id", async () => {
      const read = await send(auth, "GET", `/v1/tickets/${ticket.id}`, 200, ["tickets.get"]);
      assert.equal(read.id, ticket.id);
      await send(auth, "GET", `/v1/organizations/${org.id}`, 200, ["organizations.get"]);
    });

    test("lists: cursor, sorted, filtered, ?q=, offset", async () => {
      const ids = (page: Obj) => page.data.map((r: Obj) => r.id);
      assert.ok(ids(await send(auth, "GET", "/v1/tickets", 200, ["tickets.list"])).includes(ticket.id));
      assert.ok(ids(await send(auth, "GET", "/v1/tickets?sort=-priority,subject&status=new", 200, ["tickets.list"])).includes(ticket.id));
      assert.ok(ids(await send(auth, "GET", "/v1/tickets?q=printer", 200, ["tickets.list"])).includes(ticket.id));
      assert.ok(ids(await send(auth, "GET", "/v1/agents", 200, ["agents.page"])).includes(agent.id));
      await send(auth, "GET", "/v1/organizations", 200, ["organizations.list"]);
      await send(auth, "GET", "/v1/notes?q=toner", 200, ["notes.list"]);
    });

    test("child lists and list_under lists: the parent's read and the page", async () => {
      const under = await send(auth, "GET", `/v1/organizations/${org.id}/tickets`, 200, ["organizations.get", "tickets.list"]);
      assert.ok(under.data.some((r: Obj) => r.id === ticket.id));
      const assigned = await send(auth, "GET", `/v1/agents/${agent.id}/tickets`, 200, ["agents.get", "tickets.list"]);
      assert.deepEqual(assigned.data.map((r: Obj) => r.id), [ticket.id]);
      // An offset child list: the parent's read, then its page; with ?q=, a cursor page.
      const notes = await send(auth, "GET", `/v1/tickets/${ticket.id}/notes`, 200, ["tickets.get", "notes.page"]);
      assert.equal(notes.data.length, 1);
      await send(auth, "GET", `/v1/tickets/${ticket.id}/notes?q=toner`, 200, ["tickets.get", "notes.list"]);
      // A parent that is not found is read with who asks too (404 before the page).
      await send(auth, "GET", `/v1/tickets/01890a5d-ac96-774b-bcce-b302099a8057/notes`, 404, ["tickets.get"]);
    });

    test("the read before a PATCH, PUT, action and DELETE, and the write", async () => {
      await send(auth, "PATCH", `/v1/tickets/${ticket.id}`, 200, ["tickets.get", "tickets.update"], { status: "open" });
      await send(auth, "PUT", `/v1/tickets/${ticket.id}`, 200, ["tickets.get", "tickets.update"], tenantOnly({ subject: "Printer jam", priority: "high" }));
      await send(auth, "POST", `/v1/tickets/${ticket.id}/escalations`, 201, ["tickets.get", "ticketEscalations.create"], { reason: "loud" });
      const gone = await send(auth, "POST", "/v1/tickets", 201, ["tickets.create"], tenantOnly({ subject: "to delete" }));
      await send(auth, "DELETE", `/v1/tickets/${gone.id}`, 204, ["tickets.get", "tickets.remove"]);
    });

    test("an export's job reads with the principal and request id of the POST that made it", async () => {
      audits.length = 0;
      const res = await call(api, "POST", "/v1/exports", { auth, body: { resource: "tickets", format: "ndjson" } });
      assert.equal(res.status, 201, res.text);
      const requestId = res.headers.get("x-request-id");
      const job = await settled(api, "v1", (res.body as Obj).id, auth);
      assert.equal(job.status, "succeeded", JSON.stringify(job));
      const reads = audits.filter((a) => a.requestId === requestId);
      assert.ok(reads.length >= 1, "the job's pages were read through the service");
      assert.ok(
        audits.every((a) => a.requestId === requestId && a.service === "tickets" && a.method === "list"),
        JSON.stringify(audits.map((a) => [a.service, a.method, a.requestId])),
      );
      for (const read of reads) {
        assert.equal(read.principal.id, auth);
        assert.equal(read.principal.tenant, who === "tenant" ? org.id : undefined);
        assert.deepEqual(read.principal.scopes, ["read", "write"]);
      }
      const lines = ndjson((await download(api, job.download_url, auth)).text);
      assert.ok(lines.some((r) => r.id === ticket.id));
    });
  });
}

describe(`a service of one's own hides records by the principal (${STORE})`, () => {
  let urgent: Obj;
  let plain: Obj;

  before(async () => {
    urgent = await send("dev-writer", "POST", "/v1/tickets", 201, ["tickets.create"], { organization_id: other.id, subject: "Fire", priority: "urgent" });
    plain = await send("dev-writer", "POST", "/v1/tickets", 201, ["tickets.create"], { organization_id: other.id, subject: "Fire drill" });
    await send("dev-writer", "POST", "/v1/notes", 201, ["notes.create"], { organization_id: other.id, ticket_id: urgent.id, text: "smoke" });
  });

  test("lists, ?q=, child lists and reads by id hide what the service hides; the triage principal sees it", async () => {
    const ids = (page: Obj) => page.data.map((r: Obj) => r.id);
    for (const [auth, sees] of [
      ["dev-writer", false],
      [`dev-writer.${other.id}`, false],
      ["triage", true],
      [`triage.${other.id}`, true],
    ] as const) {
      const listed = ids(await send(auth, "GET", "/v1/tickets?q=fire&limit=100", 200, ["tickets.list"]));
      assert.deepEqual(listed.includes(urgent.id), sees, `${auth}: ?q=`);
      assert.ok(listed.includes(plain.id), auth);
      const under = ids(await send(auth, "GET", `/v1/organizations/${other.id}/tickets?limit=100`, 200, ["organizations.get", "tickets.list"]));
      assert.deepEqual(under.includes(urgent.id), sees, `${auth}: child list`);
      await send(auth, "GET", `/v1/tickets/${urgent.id}`, sees ? 200 : 404, ["tickets.get"]);
      await send(auth, "GET", `/v1/tickets/${urgent.id}/notes`, sees ? 200 : 404, ["tickets.get", ...(sees ? ["notes.page"] : [])]);
      await send(auth, "PATCH", `/v1/tickets/${urgent.id}`, sees ? 200 : 404, ["tickets.get", ...(sees ? ["tickets.update"] : [])], { status: "open" });
    }
  });

  test("an export holds what its principal's list shows", async () => {
    for (const [auth, sees] of [
      ["dev-writer", false],
      ["triage", true],
    ] as const) {
      const res = await call(api, "POST", "/v1/exports", { auth, body: { resource: "tickets", q: "fire" } });
      assert.equal(res.status, 201, res.text);
      const job = await settled(api, "v1", (res.body as Obj).id, auth);
      const lines = ndjson((await download(api, job.download_url, auth)).text);
      assert.deepEqual(lines.some((r) => r.id === urgent.id), sees, auth);
      assert.ok(lines.some((r) => r.id === plain.id), auth);
    }
  });
});

test("docs/hooks.md shows the example as test/fixtures/service-context-example.ts has it", () => {
  const doc = readFileSync(path.join(repoRoot, "docs/hooks.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Services of your own"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, "the section has a ts block");
  const file = new Set(readFileSync(path.join(repoRoot, "test/fixtures/service-context-example.ts"), "utf8").split("\n"));
  for (const line of block.split("\n")) {
    if (line === "" || line.includes("likewise")) continue;
    assert.ok(file.has(line), `the example file has the doc's line: ${line}`);
  }
});

test(
  "a service written against the documented interface type-checks against the generated types",
  { skip: STORE !== "memory" && "a type check: the memory run covers it, the store changes nothing" },
  async () => {
    const program = path.join(api.dir, "own-services.ts");
    writeFileSync(
      program,
      `import { buildApp, devAuthenticate, MemoryStore } from "./generated/index.ts";
import {
  type CursorQuery,
  type EventOf,
  type ListPage,
  type OffsetQuery,
  type ReadContext,
  type ResourceService,
  type StoredRecord,
  type Values,
  type WriteContext,
} from "./generated/runtime/index.ts";
import { defaultServices, resourceSpecs, storeReferences } from "./generated/services.ts";
import type { NoteValues } from "./generated/values.ts";
import { audited, TriageTickets, type Audit } from "./service-context-example.ts";

/** Every method, its parameters written out as docs/hooks.md names them. */
class Notes implements ResourceService<NoteValues> {
  readonly readers: string[] = [];
  constructor(private readonly inner: ResourceService<NoteValues>) {}
  list(query: CursorQuery, context?: ReadContext): Promise<ListPage<NoteValues>> {
    if (context) this.readers.push(\`\${context.principal.id}/\${context.principal.tenant ?? "platform"}/\${context.requestId}\`);
    return this.inner.list(query, context);
  }
  page(query: OffsetQuery, context?: ReadContext): Promise<{ records: StoredRecord<NoteValues>[]; total: number }> {
    return this.inner.page(query, context);
  }
  get(id: string, where?: Values, context?: ReadContext): Promise<StoredRecord<NoteValues> | null> {
    return this.inner.get(id, where, context);
  }
  create(values: NoteValues, publish?: EventOf<StoredRecord<NoteValues>>, context?: WriteContext): Promise<StoredRecord<NoteValues>> {
    return this.inner.create(values, publish, context);
  }
  update(current: StoredRecord<NoteValues>, values: NoteValues, publish?: EventOf<StoredRecord<NoteValues>>, context?: WriteContext): Promise<StoredRecord<NoteValues> | null> {
    return this.inner.update(current, values, publish, context);
  }
  remove(current: StoredRecord<NoteValues>, publish?: EventOf<StoredRecord<NoteValues>>, context?: WriteContext): Promise<boolean> {
    return this.inner.remove(current, publish, context);
  }
}

const store = new MemoryStore({ references: storeReferences });
const log: Audit[] = [];
const defaults = defaultServices(store);
// A write's context is a read's too: the handlers pass it to the read before the write.
const written: WriteContext = { principal: { id: "a", scopes: [] }, requestId: "r", replace: true };
const read: ReadContext = written;
// @ts-expect-error a read context names the request
const anonymous: ReadContext = { principal: { id: "a", scopes: [] } };
export const app = buildApp({
  authenticate: devAuthenticate,
  store,
  services: {
    tickets: audited("tickets", new TriageTickets(store, resourceSpecs.tickets), (a) => log.push(a)),
    notes: new Notes(defaults.notes),
    agents: audited("agents", defaults.agents, (a) => log.push(a)),
  },
});
export { read, anonymous };
`,
    );
    const checked = await tscAsync(path.join(api.dir, "tsconfig.services.json"), SPEC_COMPILER_OPTIONS, [program]);
    assert.equal(checked.code, 0, checked.output);
  },
);
