// A differential random test across the stores (SPEC §12: every key "behaves the same on every
// store"): the acceptance helpdesk (test/fixtures/acceptance-helpdesk, every key of §12) is
// generated once and served three times at once, on the memory store, on PGlite and on a fresh
// schema of the PostgreSQL server. One seeded random sequence of requests drives all three:
// creates (with and without Idempotency-Key, some repeated), PATCH and PUT (transitions allowed,
// refused and the same value, If-Match), actions with requires/sets, deletes (restrict, cascade,
// many-to-many), lists with random sort, operator filters and q, cursor walks and offset pages,
// child and list_under lists, exports (NDJSON and CSV) and the events feed, as platform and
// tenant principals. What legitimately differs (ids, timestamps, ETags, cursors, download links)
// is normalised: every UUID becomes a symbol by its order of first appearance, which is the same
// on every store when they behave the same. Then the statuses, bodies, the headers that matter
// (Location, ETag, Idempotent-Replayed, Retry-After, Content-Type) and record order are compared
// with the memory store's; every response is also checked against the fixture's OpenAPI document
// (the envelope of every error included), and a 500 is a failure on its own. An oracle written
// from SPEC §12 alone checks the memory store's lists and export files (so that a fault all
// stores share shows too): the records the path, filters and q select, in the order of `sort`
// (enum order, code points, nulls last, id last), offset pages by place and total, and walks
// with writes between their pages visiting each unchanged record once.
// CANON_DIFF_SEED and CANON_DIFF_STEPS change the run (look for more with other seeds: a failure
// names its step; CANON_DIFF_TRACE=1 prints every request and page).
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";
import { exportsFolder } from "../exports/helpers.ts";
import { checkRawResponse, listen, loadContract, type Api, type Contract, type Res } from "../http/helpers.ts";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Obj = Record<string, any>;

const SEED = Number(process.env.CANON_DIFF_SEED ?? 20261127);
const STEPS = Number(process.env.CANON_DIFF_STEPS ?? 800);
const STORES = ["memory", "pglite", "postgres"] as const;

// ---------------------------------------------------------------------------------------
// The three services

interface Side {
  name: string;
  api: Api;
  /** A real UUID to its symbol, and back. */
  sym: Map<string, string>;
  real: Map<string, string>;
  /** The latest body seen of each record (by real id), and its latest ETag. */
  seen: Map<string, Obj>;
  etag: Map<string, string>;
  /** The events the app published to its sink. */
  published: Obj[];
  /** The data of the last list page this store answered. */
  lastBody?: Obj[];
}

const sides: Side[] = [];
const schemas: string[] = [];
const closers: Array<() => Promise<void>> = [];
const folders: Array<{ remove(): void }> = [];
let dir = "";

before(async () => {
  dir = workspace("stores-differential", "test/fixtures/acceptance-helpdesk");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
  const contract: Contract = loadContract("stores-differential", out, ["v1"]);
  await preparePostgres();
  for (const name of STORES) {
    let store: { close(): Promise<void> };
    if (name === "postgres") {
      const schema = freshSchema("canon_differential");
      schemas.push(schema);
      store = await sql.openStore(POSTGRES_URL, { schema });
    } else store = await sql.openStore(name === "pglite" ? "pglite:memory://" : "memory");
    const folder = exportsFolder();
    folders.push(folder);
    const published: Obj[] = [];
    const app = await entry.buildApp({
      authenticate: entry.devAuthenticate,
      events: { publish: (event: Obj) => void published.push(event) },
      rateLimit: false,
      store,
      // Two records a page: the exports' keyset pages (sort, nulls, ties) are walked too.
      exports: { directory: folder.directory, pageSize: 2 },
    });
    const api = await listen(app, contract);
    closers.push(async () => {
      await api.close();
      await store.close();
    });
    sides.push({ name, api, sym: new Map(), real: new Map(), seen: new Map(), etag: new Map(), published });
  }
});

after(async () => {
  for (const close of closers) await close();
  await dropSchemas(schemas);
  for (const folder of folders) folder.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------
// Randomness

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(SEED);
const chance = (p: number) => random() < p;
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
function pick<T>(values: readonly T[]): T {
  return values[Math.floor(random() * values.length)]!;
}
function some<T>(values: readonly T[], max: number): T[] {
  const pool = [...values];
  const out: T[] = [];
  const n = int(0, Math.min(max, pool.length));
  for (let i = 0; i < n; i++) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  return out;
}

// ---------------------------------------------------------------------------------------
// Symbols and normalisation

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP_KEYS = new Set(["created_at", "updated_at", "occurred_at", "expires_at", "finished_at", "started_at"]);

function symbolOf(side: Side, id: string): string {
  let s = side.sym.get(id);
  if (!s) {
    s = `#${side.sym.size}`;
    side.sym.set(id, s);
    side.real.set(s, id);
  }
  return s;
}
const symbolize = (side: Side, text: string) => text.replace(UUID, (id) => symbolOf(side, id));

/** Remembers the records a body shows (latest body by id), for timestamps in later requests. */
function remember(side: Side, value: unknown): void {
  if (Array.isArray(value)) return value.forEach((v) => remember(side, v));
  if (!value || typeof value !== "object") return;
  const o = value as Obj;
  if (typeof o.id === "string" && typeof o.created_at === "string") side.seen.set(o.id, o);
  for (const v of Object.values(o)) remember(side, v);
}

function normalise(side: Side, value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => normalise(side, v));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(side, v, k)]));
  }
  if (typeof value === "string") {
    if (TIMESTAMP_KEYS.has(key.replace(/\[\w+\]$/, ""))) return "<time>";
    if (key === "next_cursor") return "<cursor>";
    if (key === "download_url") return "<url>";
    return symbolize(side, value);
  }
  return value;
}

/** `⟦#3⟧` the real id of symbol #3 on this store; `⟦ts:#3:created_at⟧` its timestamp; `⟦etag:#3⟧` its ETag. */
function substitute(side: Side, text: string, encode: boolean): string {
  return text.replace(/⟦([^⟧]+)⟧/g, (_, token: string) => {
    const parts = token.split(":");
    let value: string;
    if (parts[0] === "ts") {
      const id = side.real.get(parts[1]!) ?? "";
      value = String(side.seen.get(id)?.[parts[2]!] ?? "2026-01-01T00:00:00.000Z");
    } else if (parts[0] === "etag") {
      value = side.etag.get(side.real.get(parts[1]!) ?? "") ?? '"none"';
    } else {
      value = side.real.get(token) ?? "01890a5d-ac96-774b-bcce-b302099a8057";
    }
    return encode ? encodeURIComponent(value) : value;
  });
}

// ---------------------------------------------------------------------------------------
// Requests, sent to every store and compared

interface Request {
  method: string;
  url: string;
  body?: unknown;
  auth?: string;
  headers?: Record<string, string>;
}
interface Answer {
  res: Res;
  /** What is compared across stores. */
  shape: Obj;
}

const findings: string[] = [];
let step = 0;
function finding(text: string): void {
  if (findings.length < 200) findings.push(`step ${step}: ${text}`.slice(0, 2000));
}
const describe = (r: Request) =>
  `${r.method} ${r.url}${r.auth && r.auth !== "dev-writer" ? ` as ${r.auth}` : ""}${r.body === undefined ? "" : ` ${JSON.stringify(r.body)}`}${r.headers ? ` ${JSON.stringify(r.headers)}` : ""}`;

async function sendOne(side: Side, r: Request): Promise<Answer> {
  const url = substitute(side, r.url, true);
  const headers: Record<string, string> = { authorization: `Bearer ${substitute(side, r.auth ?? "dev-writer", false)}` };
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k] = substitute(side, v, false);
  let body: string | undefined;
  if (r.body !== undefined) {
    body = substitute(side, JSON.stringify(r.body), false);
    headers["content-type"] = "application/json";
  }
  const response = await fetch(side.api.base + url, { method: r.method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text !== "" && /json/.test(response.headers.get("content-type") ?? "")) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  const res: Res = { status: response.status, headers: response.headers, text, body: parsed, template: null };
  try {
    checkRawResponse(side.api.contract, { method: r.method, target: url }, res);
  } catch (error) {
    finding(`${side.name}: ${describe(r)}: not what the document says: ${(error as Error).message.slice(0, 600)}`);
  }
  if (res.status >= 500) finding(`${side.name}: ${describe(r)} → ${res.status} ${text.slice(0, 300)}`);
  remember(side, parsed);
  if (Array.isArray((parsed as Obj | undefined)?.data)) side.lastBody = (parsed as Obj).data as Obj[];
  const etag = response.headers.get("etag");
  if (etag && parsed && typeof (parsed as Obj).id === "string") side.etag.set((parsed as Obj).id, etag);
  const contentType = response.headers.get("content-type") ?? "";
  const shape: Obj = {
    status: res.status,
    body: parsed !== undefined ? normalise(side, parsed) : contentType.includes("csv") ? normaliseCsv(side, text) : text,
    location: symbolize(side, response.headers.get("location") ?? ""),
    etag: etag === null ? null : symbolize(side, etag),
    replayed: response.headers.get("idempotent-replayed"),
    retryAfter: response.headers.get("retry-after"),
    contentType: contentType.replace(/\s+/g, ""),
  };
  if (/ndjson/.test(contentType)) {
    shape.body = text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const record = JSON.parse(line) as Obj;
        remember(side, record);
        return normalise(side, record);
      });
  }
  return { res, shape };
}

function normaliseCsv(side: Side, text: string): string {
  return symbolize(side, text).replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, "<time>");
}

function diff(a: unknown, b: unknown, at = ""): string | null {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${at}: ${a.length} items vs ${b.length}: ${JSON.stringify(a).slice(0, 500)} vs ${JSON.stringify(b).slice(0, 500)}`;
    for (let i = 0; i < a.length; i++) {
      const d = diff(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
  }
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = diff((a as Obj)[k], (b as Obj)[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at}: ${JSON.stringify(a)?.slice(0, 500)} vs ${JSON.stringify(b)?.slice(0, 500)}`;
}

/** Compares one value per store with the memory store's. */
function compare(label: string, values: unknown[]): void {
  for (let i = 1; i < values.length; i++) {
    const d = diff(values[0], values[i]);
    if (d) finding(`${sides[i]!.name} differs from memory: ${label}: ${d}`);
  }
}

/** Sends `r` to every store at once; compares; returns the memory store's answer (normalised). */
async function send(r: Request): Promise<Obj> {
  const before = sides.map((side) => side.published.length);
  const answers = await Promise.all(sides.map((side) => sendOne(side, r)));
  if (r.method !== "GET") {
    const made = sides.map((side, i) => side.published.slice(before[i]).map((e) => normalise(side, { type: e.type, data: e.data })) as Obj[]);
    compare(`the events of ${describe(r)}`, made);
    checkEvents(r, answers[0]!.shape, made[0]!);
  }
  // Each write in a millisecond of its own on every store: a fast store would otherwise give two
  // writes one time where a slower one gives two, and a sort on created_at or updated_at whose
  // ties go to the next key would differ for no fault of either.
  if (r.method !== "GET") await new Promise((ok) => setTimeout(ok, 2));
  compare(describe(r), answers.map((a) => a.shape));
  if (process.env.CANON_DIFF_TRACE) console.log(`${step} ${answers[0]!.shape.status} ${describe(r).slice(0, 200)}`);
  return answers[0]!.shape;
}

const SINGULAR: Record<string, string> = {
  organizations: "organization", agents: "agent", contacts: "contact", tags: "tag", "sla-policies": "sla-policy",
  tickets: "ticket", comments: "comment", "time-entries": "time-entry", escalations: "escalation", resolutions: "resolution",
};

/**
 * The events a write published (SPEC §5, §12.3, §12.5, §12.7), on the memory store: none for an
 * error or a replay; a create's `.created`, an update's `.updated`, with the record as answered;
 * an action's `<singular>.<action>.created` and, as it `sets`, the record's `.updated`; a delete's
 * `.deleted` first, then only what it took along (`.deleted`) or changed (`.updated`).
 */
function checkEvents(r: Request, shape: Obj, made: Obj[]): void {
  const path = r.url.split("?")[0]!.split("/");
  const what = `the events of ${describe(r)} (${shape.status})`;
  const types = made.map((e) => e.type as string);
  if (shape.status >= 300 || shape.replayed === "true") {
    if (made.length) finding(`${what}: ${JSON.stringify(types)}, none expected`);
    return;
  }
  const collection = path[2]!;
  if (collection === "exports") return;
  const singular = SINGULAR[collection]!;
  if (r.method === "POST" && path.length === 3) {
    if (diff(made, [{ type: `${singular}.created`, data: shape.body }])) finding(`${what}: ${JSON.stringify(made).slice(0, 600)}`);
  } else if (r.method === "POST") {
    const action = `${singular}.${SINGULAR[path[4]!]}.created`;
    // Beside each other, in either order (SPEC §12.5 names no order; every store makes the same).
    const own = made.find((e) => e.type === action);
    if (types.length !== 2 || !types.includes(`${singular}.updated`) || !own || diff(own.data, shape.body))
      finding(`${what}: ${JSON.stringify(made).slice(0, 600)}`);
  } else if (r.method === "PATCH" || r.method === "PUT") {
    if (diff(made, [{ type: `${singular}.updated`, data: shape.body }])) finding(`${what}: ${JSON.stringify(made).slice(0, 600)}`);
  } else if (r.method === "DELETE") {
    const id = `#${path[3]}`.replace(/^#⟦(#\d+)⟧$/, "$1");
    if (types[0] !== `${singular}.deleted` || made[0]!.data.id !== id || types.slice(1).some((t) => !t.endsWith(".deleted") && !t.endsWith(".updated")))
      finding(`${what}: ${JSON.stringify(types)}`);
  }
}

// ---------------------------------------------------------------------------------------
// The model: what the memory store answered, in symbols

interface Rec {
  sym: string;
  body: Obj;
  deleted: boolean;
}
const COLLECTIONS = ["organizations", "agents", "contacts", "tags", "sla-policies", "tickets", "comments", "time-entries"] as const;
type Collection = (typeof COLLECTIONS)[number];
const model = new Map<Collection, Rec[]>(COLLECTIONS.map((c) => [c, []]));
const keys: Array<{ key: string; url: string; body: unknown; auth: string; first?: Obj }> = [];

/** SPEC §12.7: a repeat of a kept 2xx answer is that answer (status, body, Location, ETag) with `Idempotent-Replayed: true`. */
function checkReplay(first: Obj | undefined, again: Obj, what: string): void {
  if (!first || first.status < 200 || first.status > 299) return;
  const kept = { ...first, replayed: "true" };
  const d = diff(kept, again);
  if (d) finding(`memory: the repeat of ${what} is not the kept answer: ${d}`);
}

const live = (c: Collection) => model.get(c)!.filter((r) => !r.deleted);
const ref = (sym: string) => `⟦${sym}⟧`;
/** A record of the collection, now and then a deleted one or one of another tenant. */
function anyOf(c: Collection, org?: string): Rec | undefined {
  const all = model.get(c)!;
  if (all.length === 0) return undefined;
  if (chance(0.06)) return pick(all);
  const own = live(c).filter((r) => !org || !r.body.organization_id || r.body.organization_id === org || chance(0.05));
  return own.length ? pick(own) : pick(all);
}
function record(c: Collection, shape: Obj): void {
  const list = model.get(c)!;
  const sym = shape.body?.id as string | undefined;
  if (!sym) return;
  const existing = list.find((r) => r.sym === sym);
  if (existing) existing.body = shape.body;
  else list.push({ sym, body: shape.body, deleted: false });
}

function principal(org?: string): { auth: string; org?: string } {
  const orgs = live("organizations");
  if (orgs.length === 0 || chance(0.45)) return { auth: chance(0.9) ? "dev-writer" : "dev-reader" };
  const o = org && chance(0.8) ? org : pick(orgs).sym;
  return { auth: `${chance(0.93) ? "dev-writer" : "dev-reader"}.${ref(o)}`, org: o };
}

// ---------------------------------------------------------------------------------------
// Values: small pools, so that sorts tie, filters hit and unique values collide

const NAMES = ["Ada", "ada", "Bob", "Émile", "Ärger", "zed", "Zoë", "amy", "Ａlpha", "bob", "a_b", "50%", "Ada,Lovelace", "E\u0301mile", "𝒜da", "İnfo", "Straße", "STRASSE"];
const SUBJECTS = ["Printer down", "printer jam", "VPN slow", "Login fails", "Ärger mit Drucker", "refund", "REFUND please", "50% off", "a_b test", "back\\_slash"];
const EMAILS = ["a@x.test", "B@x.test", "b@x.test", "c@y.test", "d@y.test", "İ@x.test", "i@x.test"];
const PRIORITIES = ["low", "normal", "high", "urgent"];
const STATUSES = ["new", "open", "pending", "solved", "closed"];
const DATES = ["2026-01-15", "2026-02-28", "2025-12-31", "2026-01-15"];
const DATETIMES = [null, "2026-12-01T10:00:00Z", "2026-12-01T10:00:00.123Z", "2026-12-01T12:00:00.000+02:00", "2026-11-30T23:59:59.999Z", "2027-01-01T00:00:00.000001Z"];
const BUDGETS = ["0", "0.5", "12.50", "99999.99", "100.1", "12.5", "100000", "-1", "1.234", 5];
const HOURS = ["1.00", "0.25", "2.5", "999.99", "0.01", "1", "0", "1000"];
const CREDITS = ["0.00", "10.50", "10.5", "99999.99", "100000.00", "100000.01", 3];
const MAP_KEYS = ["a", "b.c", "x-y", "Z_9", "bad key"];

function map(): Obj {
  const m: Obj = {};
  for (const k of some(MAP_KEYS, 3)) m[k] = pick(["v", "", "ü", "long".repeat(3)]);
  return m;
}

function tenantField(p: { org?: string }, body: Obj, org?: string): void {
  if (p.org) {
    if (chance(0.1)) body.organization_id = ref(chance(0.5) ? p.org : (anyOf("organizations")?.sym ?? p.org));
  } else if (org && chance(0.92)) body.organization_id = ref(org);
}

function createBody(c: Collection, p: { org?: string }): Obj | undefined {
  const org = p.org ?? anyOf("organizations")?.sym;
  const b: Obj = {};
  switch (c) {
    case "organizations":
      b.name = `${pick(NAMES)} ${int(1, 3)}`;
      if (chance(0.6)) b.plan = pick(["free", "team", "enterprise"]);
      return b;
    case "tags":
      b.name = `${pick(["bug", "billing", "vip", "Bug", "ürgent", "u\u0308rgent", "ｂug", "İnfo", "info", "ß", "SS", "ẞ"])}`;
      if (chance(0.5)) b.color = pick(["#ff0000", "#00ff00", "#FF0000"]);
      return b;
    case "agents":
      tenantField(p, b, org);
      b.name = pick(NAMES);
      b.email = pick(EMAILS);
      if (chance(0.6)) b.role = pick(["agent", "lead", "admin"]);
      if (chance(0.4)) b.active = chance(0.5);
      return b;
    case "contacts":
      tenantField(p, b, org);
      b.name = pick(NAMES);
      b.email = pick(EMAILS);
      if (chance(0.6)) b.phone = pick([null, "+1 555 0100", "555-0100", "0100"]);
      if (chance(0.4)) b.metadata = map();
      return b;
    case "sla-policies": {
      b.organization_id = ref(org ?? "#0");
      b.name = pick(["Gold", "Silver"]);
      b.priority = pick(PRIORITIES);
      b.first_response_minutes = pick([5, 30, 60, 60, 240]);
      b.resolution_hours = pick([0.5, 1, 2.5, 24]);
      b.credit = pick(CREDITS);
      return b;
    }
    case "tickets": {
      tenantField(p, b, org);
      const contact = anyOf("contacts", org);
      if (!contact) return undefined;
      b.contact_id = ref(contact.sym);
      Object.assign(b, ticketFields(org, true));
      return b;
    }
    case "comments": {
      const ticket = anyOf("tickets", p.org);
      if (!ticket) return undefined;
      b.ticket_id = ref(ticket.sym);
      if (chance(0.5)) b.author_id = chance(0.3) ? null : ref(anyOf("agents", ticket.body.organization_id)?.sym ?? "#0");
      b.position = int(1, 4);
      b.body = pick(["hello", "Hi again", "ürgent"]);
      if (chance(0.5)) b.public = chance(0.5);
      return b;
    }
    case "time-entries": {
      const ticket = anyOf("tickets", p.org);
      const agent = anyOf("agents", ticket?.body.organization_id);
      if (!ticket || !agent) return undefined;
      b.ticket_id = ref(ticket.sym);
      b.agent_id = ref(agent.sym);
      b.hours = pick(HOURS);
      b.work_date = pick(DATES);
      if (chance(0.4)) b.billable = chance(0.5);
      if (chance(0.3)) b.note = "n";
      return b;
    }
  }
}

function ticketFields(org: string | undefined, creating: boolean): Obj {
  const b: Obj = {};
  const near = live("agents").filter((a) => !org || a.body.organization_id === org || chance(0.05));
  if (chance(0.5)) b.assignee_id = chance(0.3) || near.length === 0 ? null : ref(pick(near).sym);
  if (chance(0.2)) {
    const sla = anyOf("sla-policies", org);
    if (sla) b.sla_policy_id = ref(sla.sym);
  }
  if (creating || chance(0.5)) b.subject = pick(SUBJECTS);
  if (chance(creating ? 0.4 : 0.6)) b.status = pick(STATUSES);
  if (chance(0.5)) b.priority = pick(PRIORITIES);
  if (chance(0.4)) b.due_at = pick(DATETIMES);
  if (chance(0.4)) b.opened_on = pick(DATES);
  if (chance(0.4)) b.score = int(0, 11);
  if (chance(0.3)) b.escalated = chance(0.5);
  if (chance(0.5)) b.budget = pick(BUDGETS);
  if (chance(0.5)) {
    const tags = model.get("tags")!.filter((t) => !t.deleted || chance(0.1));
    const ids = some(tags, 3).map((t) => ref(t.sym));
    if (ids.length && chance(0.05)) ids.push(ids[0]!);
    b.tag_ids = ids;
  }
  if (chance(0.3)) b.watcher_ids = some(near, 2).map((a) => ref(a.sym));
  if (chance(0.2)) {
    const contact = anyOf("contacts", org);
    if (contact) b.requester = { contact_id: ref(contact.sym), channel: pick(["email", "phone", "web"]) };
  }
  if (chance(0.2)) b.custom_fields = map();
  return b;
}

// ---------------------------------------------------------------------------------------
// Operations

const PARENT: Partial<Record<Collection, string>> = { comments: "tickets", "time-entries": "tickets", "sla-policies": "organizations" };

async function create(c: Collection): Promise<void> {
  if (chance(0.08) && keys.length) {
    // A repeat of an earlier keyed POST: the same body (a replay), or another body (422).
    const k = pick(keys);
    const other = chance(0.3);
    const again = await send({ method: "POST", url: k.url, auth: k.auth, headers: { "idempotency-key": k.key }, body: other ? { ...(k.body as Obj), name: "Other" } : k.body });
    if (!other) checkReplay(k.first, again, `POST ${k.url} (key ${k.key})`);
    else if (k.first && k.first.status < 300 && (again.status !== 422 || again.body?.error?.details?.[0]?.field !== "Idempotency-Key"))
      finding(`memory: the key ${k.key} again with another body answered ${again.status} ${JSON.stringify(again.body).slice(0, 200)}, not 422 naming Idempotency-Key`);
    return;
  }
  const p = c === "organizations" || c === "tags" ? (chance(0.85) ? { auth: "dev-writer" } : principal()) : principal();
  const body = createBody(c, p);
  if (!body) return;
  const r: Request = { method: "POST", url: `/v1/${c}`, auth: p.auth, body };
  if (chance(0.3)) {
    const key = `k-${step}-${int(0, 1e6)}`;
    r.headers = { "idempotency-key": key };
    keys.push({ key, url: r.url, body, auth: p.auth });
  }
  const shape = await send(r);
  if (r.headers) keys.at(-1)!.first = shape;
  if (shape.status === 201) record(c, shape);
  if (r.headers && chance(0.3)) checkReplay(shape, await send(r), `POST ${r.url}`);
}

async function read(c: Collection): Promise<void> {
  const rec = anyOf(c);
  if (!rec) return;
  const p = principal(rec.body.organization_id);
  const shape = await send({ method: "GET", url: `/v1/${c}/${ref(rec.sym)}`, auth: p.auth });
  if (shape.status === 200) record(c, shape);
}

async function patch(c: Collection): Promise<void> {
  const rec = anyOf(c);
  if (!rec) return;
  const org = rec.body.organization_id as string | undefined;
  const p = principal(org);
  let body: Obj;
  if (c === "tickets") {
    body = ticketFields(org, false);
    if (chance(0.2)) body.status = rec.body.status;
  } else {
    body = createBody(c, p) ?? {};
    delete body.organization_id;
    delete body.ticket_id;
    for (const k of Object.keys(body)) if (chance(0.5)) delete body[k];
  }
  // Now and then a move to another tenant (the platform may; a tenant may not).
  if (org && chance(0.06)) body.organization_id = ref(anyOf("organizations")?.sym ?? org);
  if (c === "tickets" && chance(0.15)) {
    // PUT: the whole record.
    const full: Obj = { ...createBody("tickets", { org }), ...body };
    // The whole record: its tenant field too, which the platform must give (a tenant's is filled).
    if (org && chance(0.85)) full.organization_id = ref(org);
    else delete full.organization_id;
    const shape = await send({ method: "PUT", url: `/v1/tickets/${ref(rec.sym)}`, auth: p.auth, body: full });
    if (shape.status === 200) record(c, shape);
    return;
  }
  const headers = chance(0.15) ? { "if-match": pick([`⟦etag:${rec.sym}⟧`, `⟦etag:${rec.sym}⟧`, '"stale.1"', "*", `W/⟦etag:${rec.sym}⟧`]) } : undefined;
  const shape = await send({ method: "PATCH", url: `/v1/${c}/${ref(rec.sym)}`, auth: p.auth, body, ...(headers ? { headers } : {}) });
  if (shape.status === 200) record(c, shape);
}

async function action(): Promise<void> {
  const rec = anyOf("tickets");
  if (!rec) return;
  const org = rec.body.organization_id as string | undefined;
  const p = principal(org);
  const name = pick(["escalations", "resolutions"]);
  const body: Obj = name === "escalations" ? { agent_id: ref(anyOf("agents", org)?.sym ?? "#0"), reason: "r" } : { note: "done" };
  const r: Request = { method: "POST", url: `/v1/tickets/${ref(rec.sym)}/${name}`, auth: p.auth, body };
  if (chance(0.3)) r.headers = { "idempotency-key": `a-${step}` };
  const first = await send(r);
  if (r.headers && chance(0.4)) checkReplay(first, await send(r), `POST ${r.url}`);
  const shape = await send({ method: "GET", url: `/v1/tickets/${ref(rec.sym)}` });
  if (shape.status === 200) record("tickets", shape);
}

async function remove(c: Collection): Promise<void> {
  const rec = anyOf(c);
  if (!rec) return;
  const p = chance(0.7) ? { auth: "dev-writer" } : principal(rec.body.organization_id);
  const headers = chance(0.15) ? { "if-match": pick([`⟦etag:${rec.sym}⟧`, '"stale.1"']) } : undefined;
  const shape = await send({ method: "DELETE", url: `/v1/${c}/${ref(rec.sym)}`, auth: p.auth, ...(headers ? { headers } : {}) });
  if (shape.status === 204) rec.deleted = true;
}

// Lists: what each collection sorts and filters by.
interface Listing {
  sort: string[];
  filters: Array<[string, () => string]>;
  search: boolean;
  offset: boolean;
}
const isoOf = (c: Collection, key: "created_at" | "updated_at") => () => {
  const rec = anyOf(c);
  return rec ? `⟦ts:${rec.sym}:${key}⟧` : "2026-01-01T00:00:00Z";
};
const ranges = (field: string, value: () => string): Array<[string, () => string]> =>
  ["gt", "gte", "lt", "lte"].map((op) => [`${field}[${op}]`, value] as [string, () => string]);
const LISTINGS: Record<Collection, Listing> = {
  organizations: { sort: ["name", "plan", "created_at"], filters: [["plan", () => pick(["free", "team"])], ["plan[in]", () => "team,enterprise"], ...ranges("created_at", isoOf("organizations", "created_at"))], search: true, offset: false },
  agents: { sort: ["name", "role"], filters: [["role", () => pick(["agent", "lead"])], ["role[in]", () => pick(["lead,admin", "agent"])], ["active", () => pick(["true", "false"])], ...ranges("created_at", isoOf("agents", "created_at"))], search: true, offset: false },
  contacts: { sort: ["name", "created_at"], filters: [["name", () => pick(NAMES)], ["name[in]", () => some(NAMES, 3).join(",")], ["phone[null]", () => pick(["true", "false"])], ["phone", () => pick(["0100", "555-0100"])], ...ranges("updated_at", isoOf("contacts", "updated_at")), ...ranges("created_at", isoOf("contacts", "created_at"))], search: true, offset: true },
  tags: { sort: ["name"], filters: [], search: false, offset: false },
  "sla-policies": { sort: ["priority", "first_response_minutes"], filters: [["priority", () => pick(PRIORITIES)], ["priority[in]", () => "high,urgent"], ["first_response_minutes[in]", () => "5,60"], ...ranges("first_response_minutes", () => String(pick([5, 30, 60]))), ["credit", () => pick(["10.5", "10.50", "0"])], ...ranges("credit", () => pick(["10.5", "0", "99999.99"]))], search: false, offset: false },
  tickets: {
    sort: ["priority", "updated_at", "due_at"],
    filters: [
      ["status", () => pick(STATUSES)],
      ["status[in]", () => some(STATUSES, 3).join(",") || "open"],
      ["priority[in]", () => "low,urgent"],
      ["escalated", () => pick(["true", "false"])],
      ["assignee_id[null]", () => pick(["true", "false"])],
      ["due_at[null]", () => pick(["true", "false"])],
      ["budget[null]", () => pick(["true", "false"])],
      ["score[null]", () => pick(["true", "false"])],
      ["opened_on[null]", () => pick(["true", "false"])],
      ["budget", () => pick(["12.5", "12.50", "0", "0.50"])],
      ...ranges("budget", () => pick(["12.5", "0", "100.10", "99999.99"])),
      ...ranges("due_at", () => pick(["2026-12-01T10:00:00Z", "2026-12-01T10:00:00.123Z", "2026-12-01T09:59:59.9999Z", "2026-12-01T11:00:00+01:00"])),
      ["opened_on", () => pick(DATES)],
      ...ranges("opened_on", () => pick(DATES)),
      ["score", () => String(int(0, 10))],
      ["score[in]", () => "0,5,10"],
      ...ranges("score", () => String(int(0, 10))),
      ...ranges("created_at", isoOf("tickets", "created_at")),
    ],
    search: true,
    offset: false,
  },
  comments: { sort: ["position", "created_at"], filters: [["public", () => pick(["true", "false"])], ["author_id[null]", () => pick(["true", "false"])], ...ranges("created_at", isoOf("comments", "created_at"))], search: false, offset: false },
  "time-entries": { sort: ["hours", "work_date", "created_at"], filters: [["billable", () => pick(["true", "false"])], ["hours", () => pick(["1", "1.00", "0.25"])], ...ranges("hours", () => pick(["0.25", "1", "2.50"])), ["work_date", () => pick(DATES)], ...ranges("work_date", () => pick(DATES)), ...ranges("created_at", isoOf("time-entries", "created_at"))], search: false, offset: true },
};
const SEARCH_TERMS = ["printer", "ärg", "ÄRG", "ada", "REFUND", "zoë", "x.test", "b@x", "vpn", "Ａl", "50%", "a_b", "%%%", "___", "\\_\\", "0% ", "straße", "STRASSE", "İnf", "inf", "𝒜da", "émi", "ÉMI"];

function query(c: Collection, forExport = false): { params: string[]; sort?: string; filters: Obj; q?: string } {
  const l = LISTINGS[c];
  const params: string[] = [];
  let sort: string | undefined;
  const filters: Obj = {};
  let q: string | undefined;
  if (chance(0.7) && l.sort.length) {
    const keys = some(l.sort, 3);
    if (chance(0.05)) keys.push(pick(["id", "subject", "nope"]));
    if (keys.length) sort = keys.map((k) => (chance(0.5) ? `-${k}` : k)).join(",");
    if (sort) params.push(`sort=${sort}`);
  }
  for (const [name, value] of some(l.filters, 2)) {
    const v = value();
    params.push(`${name}=${v.startsWith("⟦") ? v : encodeURIComponent(v)}`);
    filters[name] = v;
  }
  if ((l.search || forExport) && chance(0.25)) {
    q = pick(SEARCH_TERMS);
    params.push(`q=${encodeURIComponent(q)}`);
  }
  return { params, ...(sort ? { sort } : {}), filters, ...(q ? { q } : {}) };
}

/** The lists a collection is served on: its own, under its parent, under a record its list_under field names. */
function listUrls(c: Collection): string[] {
  const urls = [`/v1/${c}`];
  const parent = PARENT[c];
  if (parent) {
    const p = anyOf(parent as Collection);
    if (p) urls.push(`/v1/${parent}/${ref(p.sym)}/${c}`);
  }
  const under: Array<[Collection, Collection]> = [["tickets", "contacts"], ["tickets", "agents"], ["tickets", "tags"], ["time-entries", "agents"]];
  for (const [child, owner] of under) {
    if (child !== c) continue;
    const o = anyOf(owner);
    if (o) urls.push(`/v1/${owner}/${ref(o.sym)}/${c}`);
  }
  return urls;
}

async function list(c: Collection): Promise<void> {
  const url = pick(listUrls(c));
  const { params, sort, filters, q } = query(c);
  const owner = /^\/v1\/[a-z-]+\/⟦(#\d+)⟧/.exec(url)?.[1];
  const ownerOrg = owner ? [...model.values()].flat().find((r) => r.sym === owner)?.body.organization_id : undefined;
  const p = principal(ownerOrg ?? (owner && live("organizations").some((o) => o.sym === owner) ? owner : undefined));
  const oracle = { c, url, sort, filters, q, auth: p.auth };
  const resolved = Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, substitute(sides[0]!, String(v), false)]));
  if (LISTINGS[c].offset && q === undefined && chance(0.8)) {
    const [perPage, page] = [int(1, 4), int(1, 3)];
    params.push(`per_page=${perPage}`, `page=${page}`);
    const shape = await send({ method: "GET", url: `${url}?${params.join("&")}`, auth: p.auth });
    if (shape.status === 200) await check(oracle, sides[0]!.lastBody as Obj[], { page, perPage, total: shape.body.pagination.total });
    return;
  }
  params.push(`limit=${int(1, 4)}`);
  const target = `${url}?${params.join("&")}`;
  if (chance(0.3)) {
    // Writes between the pages: every record that does not change during the walk is visited once.
    const before = await everything(c, p.auth);
    const seen = await walkAll(target, p.auth, { mutate: () => pick([() => create(c), () => patch(c), () => remove(c)])() });
    const after = await everything(c, p.auth);
    if (seen && before && after) checkWalk({ ...oracle, filters: resolved }, seen, before, after);
    return;
  }
  const seen = await walkAll(target, p.auth, { misuse: chance(0.15) });
  if (seen) await check({ ...oracle, filters: resolved }, seen);
}

/**
 * Follows next_cursor on each store, in step (page i everywhere, then page i + 1); compares the
 * pages. Now and then reuses a cursor with another sort, filter, q or tenant (400 naming
 * `cursor`), and with `mutate`, now and then writes between two pages (on every store at once).
 * Returns the memory store's records when every page answered 200.
 */
async function walkAll(url: string, auth: string, options: { misuse?: boolean; mutate?: () => Promise<void> } = {}): Promise<Obj[] | null> {
  const state = sides.map(() => ({ out: [] as Obj[], seen: [] as Obj[], ok: true, next: url as string | null }));
  const misuse = options.misuse ? pick(["sort", "filter", "q", "tenant"] as const) : undefined;
  for (let i = 0; i < 100 && state.some((s) => s.next !== null); i++) {
    await Promise.all(
      sides.map(async (side, k) => {
        const st = state[k]!;
        if (st.next === null) return;
        const a = await sendOne(side, { method: "GET", url: st.next, auth });
        st.out.push(a.shape);
        if (process.env.CANON_DIFF_TRACE) console.log(`${step} ${side.name} ${a.res.status} ${st.next.slice(0, 160)} ${a.res.status === 200 ? JSON.stringify(((a.res.body as Obj).data as Obj[]).map((r) => [side.sym.get(r.id), r.updated_at, r.due_at, r.priority])) : a.res.text.slice(0, 200)}`);
        if (a.res.status !== 200) st.ok = false;
        else st.seen.push(...((a.res.body as Obj).data as Obj[]));
        const cursor = a.res.status === 200 ? ((a.res.body as Obj)?.pagination?.next_cursor as string | null) : null;
        if (cursor && misuse && i === 0) {
          let other = url;
          let as = auth;
          if (misuse === "sort") other = url.includes("sort=-") ? url.replace("sort=-", "sort=") : url.includes("sort=") ? url.replace("sort=", "sort=-") : `${url}&sort=-created_at`;
          else if (misuse === "filter") other = `${url}&created_at[gte]=2000-01-01T00:00:00Z`;
          else if (misuse === "q") other = url.includes("q=") ? url.replace("q=", "q=zzz") : `${url}&q=zzzz`;
          else as = auth.startsWith("dev-writer.") || auth.startsWith("dev-reader.") ? "dev-writer" : `dev-writer.${ref(live("organizations")[0]?.sym ?? "#0")}`;
          const wrong = await sendOne(side, { method: "GET", url: `${other}&cursor=${encodeURIComponent(cursor)}`, auth: as });
          st.out.push({ misuse, status: wrong.shape.status, field: (wrong.res.body as Obj)?.error?.details?.[0]?.field });
        }
        st.next = cursor ? `${url}&cursor=${encodeURIComponent(cursor)}` : null;
      }),
    );
    if (options.mutate && state.some((s) => s.next !== null) && chance(0.35)) await options.mutate();
  }
  compare(`walk ${url}${auth !== "dev-writer" ? ` as ${auth}` : ""}${options.mutate ? " (with writes between pages)" : ""}`, state.map((s) => s.out));
  return state[0]!.ok ? state[0]!.seen : null;
}

// ---------------------------------------------------------------------------------------
// The oracle: what a list must hold, from SPEC §12 alone, checked on the memory store's answer
// (the others are compared with it): every visible record of the collection, narrowed by the
// path, the filters and q, in the order of `sort` (enum order, code points, nulls last, id last
// in the direction of the last key).

const ENUMS: Record<string, string[]> = {
  plan: ["free", "team", "enterprise"],
  role: ["agent", "lead", "admin"],
  priority: PRIORITIES,
  status: STATUSES,
};
const KINDS: Record<string, "enum" | "string" | "decimal" | "number" | "date" | "time" | "bool" | "uuid"> = {
  plan: "enum", role: "enum", priority: "enum", status: "enum",
  name: "string", subject: "string", phone: "string",
  credit: "decimal", budget: "decimal", hours: "decimal",
  first_response_minutes: "number", score: "number", position: "number",
  opened_on: "date", work_date: "date",
  due_at: "time", created_at: "time", updated_at: "time",
  active: "bool", escalated: "bool", public: "bool", billable: "bool",
  assignee_id: "uuid", author_id: "uuid",
};
const SEARCHED: Partial<Record<Collection, string[]>> = { organizations: ["name"], agents: ["name"], contacts: ["name", "email"], tickets: ["subject"] };
const UNDER: Record<string, string> = {
  "tickets/comments": "ticket_id", "tickets/time-entries": "ticket_id", "organizations/sla-policies": "organization_id",
  "contacts/tickets": "contact_id", "agents/tickets": "assignee_id", "tags/tickets": "tag_ids", "agents/time-entries": "agent_id",
};

function codePoints(a: string, b: string): number {
  const x = Array.from(a, (ch) => ch.codePointAt(0)!);
  const y = Array.from(b, (ch) => ch.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}
function valueOrder(key: string, a: unknown, b: unknown): number {
  switch (KINDS[key]) {
    case "enum":
      return ENUMS[key]!.indexOf(String(a)) - ENUMS[key]!.indexOf(String(b));
    case "decimal":
    case "number":
      return Number(a) - Number(b);
    case "time":
      return Date.parse(String(a)) - Date.parse(String(b));
    case "bool":
      return Number(a === true) - Number(b === true);
    default:
      return codePoints(String(a), String(b));
  }
}
function sortOrder(sort: string | undefined): (a: Obj, b: Obj) => number {
  const keys = (sort ?? "").split(",").filter((k) => k !== "").map((k) => ({ key: k.replace(/^-/, ""), desc: k.startsWith("-") }));
  return (a, b) => {
    for (const { key, desc } of keys) {
      const [x, y] = [a[key] ?? null, b[key] ?? null];
      if (x === null && y === null) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const d = valueOrder(key, x, y);
      if (d !== 0) return desc ? -d : d;
    }
    const d = codePoints(String(a.id), String(b.id));
    return keys.at(-1)?.desc ? -d : d;
  };
}
function matches(record: Obj, param: string, raw: string): boolean {
  const [, field, op] = /^([a-z_]+)(?:\[(\w+)\])?$/.exec(param)!;
  const value = record[field!] ?? null;
  if (op === "null") return (value === null) === (raw === "true");
  if (value === null) return false;
  if (op === "in") return raw.split(",").some((v) => valueOrder(field!, value, v) === 0 && (KINDS[field!] !== "string" || value === v));
  if (KINDS[field!] === "bool") return value === (raw === "true");
  const d = valueOrder(field!, value, raw);
  if (KINDS[field!] === "time") {
    // Times compare to the millisecond (the stores keep milliseconds).
    const [x, y] = [Date.parse(String(value)), Date.parse(raw)];
    return op === "gt" ? x > y : op === "gte" ? x >= y : op === "lt" ? x < y : op === "lte" ? x <= y : x === y;
  }
  if (op === "gt") return d > 0;
  if (op === "gte") return d >= 0;
  if (op === "lt") return d < 0;
  if (op === "lte") return d <= 0;
  return d === 0 && (KINDS[field!] !== "string" || value === raw);
}

/** Every record of `c` the principal sees, through the memory store alone. */
async function everything(c: Collection, auth: string): Promise<Obj[] | null> {
  const side = sides[0]!;
  const out: Obj[] = [];
  if (LISTINGS[c].offset) {
    for (let page = 1; page < 50; page++) {
      const a = await sendOne(side, { method: "GET", url: `/v1/${c}?per_page=100&page=${page}`, auth });
      if (a.res.status !== 200) return null;
      out.push(...((a.res.body as Obj).data as Obj[]));
      if (page >= (a.res.body as Obj).pagination.total_pages) return out;
    }
    return out;
  }
  let next: string | null = `/v1/${c}?limit=100`;
  while (next) {
    const a = await sendOne(side, { method: "GET", url: next, auth });
    if (a.res.status !== 200) return null;
    out.push(...((a.res.body as Obj).data as Obj[]));
    const cursor = (a.res.body as Obj).pagination.next_cursor as string | null;
    next = cursor ? `/v1/${c}?limit=100&cursor=${encodeURIComponent(cursor)}` : null;
  }
  return out;
}

interface Oracle {
  c: Collection;
  url: string;
  sort?: string;
  filters: Obj;
  q?: string;
  auth: string;
}

/** Case folded one character at a time, as PostgreSQL's lower() in a UTF-8 database (docs/store.md): `İ` is `i`. */
function fold(text: string): string {
  return Array.from(text, (ch) => {
    const lower = ch.toLowerCase();
    return Array.from(lower).length === 1 ? lower : ch === "İ" ? "i" : ch;
  }).join("");
}

/** The records of `all` the list `o` holds (by the path, filters, and q when it is ASCII), in its order; `exact` false when q is not. */
function narrowed(o: Oracle, all: Obj[]): { want: Obj[]; exact: boolean } {
  const side = sides[0]!;
  let want = all;
  const under = /^\/v1\/([a-z-]+)\/⟦(#\d+)⟧\/([a-z-]+)$/.exec(o.url);
  if (under) {
    const field = UNDER[`${under[1]}/${under[3]}`]!;
    const id = side.real.get(under[2]!);
    want = want.filter((r) => (Array.isArray(r[field]) ? r[field].includes(id) : r[field] === id));
  }
  for (const [param, raw] of Object.entries(o.filters)) {
    const value = substitute(side, String(raw), false);
    want = want.filter((r) => matches(r, param, value));
  }
  let exact = true;
  if (o.q !== undefined) {
    const term = fold(o.q.trim());
    if (/^[\x20-\x7e]+$/.test(o.q)) want = want.filter((r) => (SEARCHED[o.c] ?? []).some((f) => fold(String(r[f] ?? "")).includes(term)));
    else exact = false;
  }
  return { want: [...want].sort(sortOrder(o.sort)), exact };
}

/** A walk with writes between its pages: each record unchanged from start to end that the list holds is visited once, in order; none it does not hold. */
function checkWalk(o: Oracle, got: Obj[], before: Obj[], after: Obj[]): void {
  const side = sides[0]!;
  const then = new Map(before.map((r) => [r.id as string, JSON.stringify(r)]));
  const unchanged = after.filter((r) => then.get(r.id) === JSON.stringify(r));
  const stable = new Set(unchanged.map((r) => r.id as string));
  const { want, exact } = narrowed(o, unchanged);
  const wanted = new Set(want.map((r) => r.id as string));
  const label = `oracle (writes during the walk): GET ${o.url} sort=${o.sort ?? ""} filters=${JSON.stringify(o.filters)}${o.q ? ` q=${o.q}` : ""} as ${o.auth}`;
  const counts = new Map<string, number>();
  for (const r of got) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
  const sym = (id: string) => symbolOf(side, id);
  for (const id of wanted) {
    if (!exact && !counts.has(id)) continue;
    if (counts.get(id) !== 1) finding(`${label}: unchanged ${sym(id)} visited ${counts.get(id) ?? 0} times; walk ${JSON.stringify(got.map((r) => sym(r.id)))}`);
  }
  for (const id of stable) if (!wanted.has(id) && counts.has(id)) finding(`${label}: ${sym(id)} is not in this list but the walk shows it`);
  const order = got.filter((r) => wanted.has(r.id)).map((r) => sym(r.id));
  const expected = want.filter((r) => counts.has(r.id)).map((r) => sym(r.id));
  if (diff(order, expected)) finding(`${label}: unchanged records in the order ${JSON.stringify(order)}, the oracle wants ${JSON.stringify(expected)}`);
}

/** A list's records (a walk's, a page's or an export's) against the oracle; an offset page by its place and `total`. */
async function check(o: Oracle, got: Obj[], offset?: { page: number; perPage: number; total: number }): Promise<void> {
  const side = sides[0]!;
  const all = await everything(o.c, o.auth);
  if (!all) return;
  let { want, exact } = narrowed(o, all);
  const ids = (rs: Obj[]) => rs.map((r) => symbolOf(side, r.id));
  if (!exact) {
    // Case folding beyond ASCII is the store's: there the answer must only be among the candidates, in order.
    const allowed = new Set(want.map((r) => r.id as string));
    want = want.filter((r) => got.some((g) => g.id === r.id));
    if (got.some((r) => !allowed.has(r.id))) finding(`oracle: GET ${o.url} q=${o.q}: a record outside the list`);
  }
  const label = `oracle: GET ${o.url} sort=${o.sort ?? ""} filters=${JSON.stringify(o.filters)}${o.q ? ` q=${o.q}` : ""} as ${o.auth}`;
  if (offset) {
    if (offset.total !== want.length) finding(`${label}: total ${offset.total}, the oracle counts ${want.length}`);
    want = want.slice((offset.page - 1) * offset.perPage, offset.page * offset.perPage);
  }
  if (process.env.CANON_DIFF_TRACE) console.log(`oracle ${label} ${got.length}/${want.length}/${all.length}`);
  if (diff(ids(got), ids(want))) finding(`${label}: got ${JSON.stringify(ids(got))}, the oracle wants ${JSON.stringify(ids(want))}`);
}

async function exportRun(): Promise<void> {
  const c = pick(["tickets", "contacts", "time-entries"] as const);
  const { sort, filters, q } = query(c, true);
  const jsonFilters: Obj = {};
  for (const [k, v] of Object.entries(filters)) {
    if (k.endsWith("[in]")) jsonFilters[k] = String(v).split(",").map((x) => (/^\d+$/.test(x) ? Number(x) : x));
    else if (k.endsWith("[null]") || v === "true" || v === "false") jsonFilters[k] = v === "true";
    else if (/^(score|first_response_minutes)/.test(k)) jsonFilters[k] = Number(v);
    else jsonFilters[k] = v;
  }
  const body: Obj = { resource: c, ...(sort ? { sort } : {}), ...(Object.keys(jsonFilters).length ? { filters: jsonFilters } : {}), ...(q ? { q } : {}) };
  if (c === "tickets" && chance(0.5)) body.format = "csv";
  const p = principal();
  const auth = p.auth.replace("dev-reader", "dev-writer");
  const key = chance(0.3) ? { "idempotency-key": `x-${step}` } : undefined;
  let fileRecords: Obj[] | undefined;
  const results = await Promise.all(
    sides.map(async (side) => {
      const created = await sendOne(side, { method: "POST", url: "/v1/exports", auth, body, ...(key ? { headers: key } : {}) });
      const out: Obj[] = [{ ...created.shape, body: { ...(created.shape.body as Obj), status: "<status>", record_count: "<n>" } }];
      if (created.res.status !== 201) return out;
      let job = created.res.body as Obj;
      for (let i = 0; i < 400 && (job.status === "pending" || job.status === "running"); i++) {
        await new Promise((ok) => setTimeout(ok, 25));
        job = (await sendOne(side, { method: "GET", url: `/v1/exports/${job.id}`, auth })).res.body as Obj;
      }
      out.push(normalise(side, job) as Obj);
      if (key) {
        const again = await sendOne(side, { method: "POST", url: "/v1/exports", auth, body, headers: key });
        out.push({ ...again.shape, body: { ...(again.shape.body as Obj), status: "<status>", record_count: "<n>" } });
      }
      if (job.status === "succeeded") {
        const link = String(job.download_url);
        const url = link.startsWith("/") ? link : new URL(link).pathname + new URL(link).search;
        const file = await sendOne(side, { method: "GET", url, auth });
        out.push(file.shape);
        if (side === sides[0] && body.format !== "csv" && file.res.status === 200) {
          const records = file.res.text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Obj);
          fileRecords = records;
        }
      }
      return out;
    }),
  );
  compare(`export ${JSON.stringify(body)} as ${auth}`, results);
  if (fileRecords) await check({ c, url: `/v1/${c}`, ...(sort ? { sort } : {}), filters, ...(q ? { q } : {}), auth }, fileRecords);
  if (process.env.CANON_DIFF_TRACE) console.log(`${step} export ${JSON.stringify(body)} ${JSON.stringify(results[0]).slice(0, 300)}`);
}

async function events(): Promise<void> {
  const p = principal();
  await walkAll("/v1/events?limit=100", p.auth, { misuse: chance(0.3) });
}

// ---------------------------------------------------------------------------------------

test(
  `every store answers the same seeded random requests the same (seed ${SEED}, ${STEPS} steps)`,
  { timeout: 600_000 },
  async () => {
    // A start: tenants, and a few records of each collection.
    for (let i = 0; i < 3; i++) await create("organizations");
    const start: Array<[Collection, number]> = [["tags", 5], ["agents", 8], ["contacts", 8], ["sla-policies", 4], ["tickets", 40], ["comments", 10], ["time-entries", 12]];
    for (const [c, n] of start) for (let i = 0; i < n; i++) await create(c);
    const ops: Array<[number, () => Promise<void>]> = [
      [30, () => create(pick(["agents", "contacts", "tags", "sla-policies", "tickets", "tickets", "tickets", "tickets", "comments", "time-entries", "agents", "contacts", "tickets", "comments", "time-entries"]))],
      [1, () => create("organizations")],
      [18, () => patch(pick(["tickets", "tickets", "tickets", "agents", "contacts", "sla-policies", "comments", "time-entries", "tags", "organizations"]))],
      [8, () => action()],
      [5, () => remove(pick(["tags", "tags", "agents", "contacts", "sla-policies", "tickets", "comments", "time-entries", "organizations"]))],
      [6, () => read(pick(COLLECTIONS))],
      [28, () => list(pick(["tickets", "tickets", "tickets", "contacts", "agents", "organizations", "tags", "sla-policies", "comments", "time-entries"]))],
      [3, () => exportRun()],
      [2, () => events()],
    ];
    const total = ops.reduce((s, [w]) => s + w, 0);
    for (step = 0; step < STEPS; step++) {
      let roll = random() * total;
      for (const [w, op] of ops) {
        roll -= w;
        if (roll < 0) {
          await op();
          break;
        }
      }
    }
    await events();
    await exportRun();
    assert.deepEqual(findings, [], `${findings.length} differences or breaches:\n${findings.slice(0, 40).join("\n\n")}`);
  },
);
