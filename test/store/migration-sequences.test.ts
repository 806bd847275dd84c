// Definitions evolved over many releases, as a team evolving a real API would: each scenario is a
// sequence of definition edits, each generated and released, and applied to one database that
// holds records written through the generated service at every step. After every step:
//  1. the migration applies on the populated database (or refuses with one line naming the
//     table, field and record, having changed nothing, when the scenario says it must);
//  2. the database has the catalog (tables, columns, types, defaults, nullability, checks,
//     indexes, constraints, foreign keys, link tables) of a fresh database migrated from a
//     fresh output generated from the step's definitions alone;
//  3. the records read back through the generated SQL store hold the values the scenario
//     expects (none dropped or rounded);
//  4. the memory store of the same output, given those records, reads them back the same.
// PGlite by default; CANON_TEST_STORE=postgres runs the same sequences on the PostgreSQL server.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test } from "node:test";
import { openDriver, migrate, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { releaseCommand } from "../../generator/commands/release.ts";
import { workspace } from "../support/cli.ts";
import { catalog } from "./catalog.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Obj = Record<string, any>;
const TARGET = process.env.CANON_TEST_STORE === "postgres" ? "postgres" : "pglite";
const API = "title: Sweep API\nbase_url: https://api.example.com\nversions:\n";

interface Step {
  /** The versions of api.yaml (default `v1: {}`). */
  versions?: string;
  /** The resource files of this release (api.yaml aside); a file left out is removed. */
  defs: Record<string, string>;
  /** The migration is refused, with this one-line message (`$name` is a record's id), and changes nothing… */
  refuse?: RegExp | ((ids: Record<string, string>) => RegExp);
  /** …until this SQL is run on the database (`$name` is a record's id). */
  fix?: string;
  /** Records created over HTTP after migrating (`$name` in a string: the id of the record posted `as` name). */
  post?: Array<{ as: string; path: string; body: Obj }>;
  /** Deletes over HTTP after posting (`$name` in the path), each answering `status`. */
  remove?: Array<{ path: string; status: number }>;
  /** What the store reads back after migrating (and posting), by collection: each record's values, in id order (only the keys given). */
  expect?: Record<string, Array<{ id: string } & Obj>>;
}

interface Scenario {
  name: string;
  /** A known bug the scenario finds, not fixed yet: the test runs and reports, without failing the suite. */
  todo?: string;
  steps: Step[];
}

const substitute = (value: unknown, ids: Record<string, string>): any => {
  if (typeof value === "string") return value.replace(/\$([a-z0-9_]+)/g, (m, name: string) => ids[name] ?? m);
  if (Array.isArray(value)) return value.map((v) => substitute(v, ids));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ids)]));
  return value;
};

/** A database of the target: PGlite in memory, or a fresh schema of the server. */
async function database(schemas: string[]): Promise<{ db: SqlDriver; url: string }> {
  if (TARGET === "pglite") return { db: await openDriver("pglite:memory://"), url: "pglite:memory://" };
  await preparePostgres();
  const schema = freshSchema("sweepf_seq");
  schemas.push(schema);
  return { db: await openDriver(POSTGRES_URL, { schema }), url: POSTGRES_URL };
}

/** The driver, with a close that leaves it open (each step's store closes its own). */
const kept = (db: SqlDriver): SqlDriver => ({ ...db, kind: db.kind, query: db.query.bind(db), exec: db.exec.bind(db), transaction: db.transaction.bind(db), close: async () => {} }) as SqlDriver;

function writeDefinitions(dir: string, defs: Record<string, string>, versions = "  v1: {}\n"): void {
  const folder = path.join(dir, "definitions");
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, "api.yaml"), `${API}${versions}`);
  for (const [file, text] of Object.entries(defs)) writeFileSync(path.join(folder, file), text);
}

/** `canon release` (which generates first, breaking changes let through), in this process. */
async function release(dir: string): Promise<void> {
  // What it prints (each file written, the release) is kept, and shown only when it fails.
  const printed: string[] = [];
  const writes = [process.stdout.write, process.stderr.write];
  process.stdout.write = process.stderr.write = ((chunk: string | Uint8Array) => printed.push(String(chunk)) > 0) as typeof process.stdout.write;
  let code: number;
  try {
    code = await releaseCommand({ definitions: path.join(dir, "definitions"), out: path.join(dir, "generated"), allowBreaking: true });
  } finally {
    [process.stdout.write, process.stderr.write] = writes as [typeof process.stdout.write, typeof process.stderr.write];
  }
  assert.equal(code, 0, printed.filter((l) => !/^\s+(added|changed|removed) /.test(l)).join(""));
}

/** The catalog, without the schema's name (index definitions name it). */
const schemaOf = async (db: SqlDriver) => (await catalog(db)).map((l) => l.replace(/ ON [a-z0-9_]+\./, " ON "));

let freshDb: Promise<SqlDriver> | undefined;
let freshSchemas = 0;

/** The catalog of a fresh database migrated by an output generated from `defs` alone (a schema of its own in one database). */
async function freshCatalog(name: string, step: Step, schemas: string[]): Promise<string[]> {
  const dir = workspace(`${name}-fresh`);
  writeDefinitions(dir, step.defs, step.versions);
  await release(dir);
  // PGlite: one database (it takes seconds to open), a schema per output; PostgreSQL: a schema (and pool) per output.
  let db: SqlDriver;
  if (TARGET === "pglite") {
    freshDb ??= database(schemas).then((d) => d.db);
    db = await freshDb;
    await db.exec(`create schema "sweepf_fresh_${++freshSchemas}"; set search_path to "sweepf_fresh_${freshSchemas}"`);
  } else db = (await database(schemas)).db;
  try {
    await migrate(db, readMigrations(path.join(dir, "generated", "sql")));
    return await schemaOf(db);
  } finally {
    if (TARGET === "postgres") await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const collections = (expect: Step["expect"]) => Object.keys(expect ?? {});

async function run(scenario: Scenario, schemas: string[]): Promise<void> {
  const slug = scenario.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 40);
  const dir = workspace(`seq-${slug}`);
  const { db, url } = await database(schemas);
  const ids: Record<string, string> = {};
  try {
    for (const [index, step] of scenario.steps.entries()) {
      const where = `${scenario.name}, step ${index + 1}`;
      writeDefinitions(dir, step.defs, step.versions);
      await release(dir);
      // Each step's output in a folder of its own, so that its modules are imported afresh.
      const out = path.join(dir, `step-${index + 1}`);
      cpSync(path.join(dir, "generated"), out, { recursive: true });
      const sql = (await import(pathToFileURL(path.join(out, "sql", "index.ts")).href)) as Obj;
      const entry = (await import(pathToFileURL(path.join(out, "index.ts")).href)) as Obj;
      if (step.refuse) {
        const before = await catalog(db);
        const pattern = typeof step.refuse === "function" ? step.refuse(ids) : step.refuse;
        await assert.rejects(sql.storeOn(kept(db), url), (error: Error) => {
          assert.match(error.message, pattern, `${where}: ${error.message}`);
          assert.doesNotMatch(error.message, /\n/, `${where}: one line`);
          return true;
        });
        assert.deepEqual(await catalog(db), before, `${where}: a refused migration changed the schema`);
        if (step.fix) await db.exec(substitute(step.fix, ids));
      }
      let store: Obj;
      try {
        store = await sql.storeOn(kept(db), url);
      } catch (error) {
        throw new Error(`${where}: the migration failed: ${(error as Error).message}`, { cause: error });
      }
      const app = await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store, logger: false });
      try {
        const read: Record<string, Obj[]> = {};
        for (const collection of collections(step.expect)) {
          read[collection] = (await store.list(collection, { where: {}, limit: 1000 })).records;
          const got = read[collection]!.map((r: Obj) => {
            const want = step.expect![collection]!.find((e) => substitute(e.id, ids) === r.id);
            const shown: Obj = { id: r.id };
            for (const key of Object.keys(want ?? r.values)) if (key !== "id") shown[key] = r.values[key];
            return shown;
          });
          assert.deepEqual(got, substitute(step.expect![collection], ids), `${where}: ${collection} read back`);
        }
        // The memory store of the same output, given the records the SQL store reads, reads them back the same.
        const memory = await sql.openStore("memory");
        for (const collection of collections(step.expect))
          for (const record of read[collection]!) await memory.insert({ collection, record, constraints: { unique: [] } });
        for (const collection of collections(step.expect)) {
          const mine = (await memory.list(collection, { where: {}, limit: 1000 })).records;
          assert.deepEqual(mine, read[collection], `${where}: ${collection} read back by the memory store`);
        }
        await memory.close();
        for (const p of step.post ?? []) {
          const res = await app.inject({
            method: "POST",
            url: substitute(p.path, ids),
            headers: { authorization: "Bearer dev-writer", "content-type": "application/json" },
            payload: JSON.stringify(substitute(p.body, ids)),
          });
          assert.equal(res.statusCode, 201, `${where}: POST ${p.path} ${res.body}`);
          ids[p.as] = JSON.parse(res.body).id;
        }
        for (const d of step.remove ?? []) {
          const res = await app.inject({ method: "DELETE", url: substitute(d.path, ids), headers: { authorization: "Bearer dev-writer" } });
          assert.equal(res.statusCode, d.status, `${where}: DELETE ${d.path} ${res.body}`);
        }
      } finally {
        await app.close();
      }
      const fresh = await freshCatalog(`seq-${slug}-${index + 1}`, step, schemas);
      // What leaves the definitions stays (docs/store.md, "Migrations"): a removed resource's table,
      // a removed field's column, nullable; what is on them is compared.
      const tables = new Set(fresh.map((l) => /^column ([^.]+)\./.exec(l)?.[1]).filter(Boolean));
      const migrated = (await schemaOf(db)).filter((l) => {
        const column = /^column ([^.]+)\.(\S+) (.*)$/.exec(l);
        if (column) return tables.has(column[1]!) && (fresh.some((f) => f.startsWith(`column ${column[1]}.${column[2]} `)) || / not null/.test(column[3]!));
        const on = /^constraint (\S+) /.exec(l)?.[1] ?? / ON (\S+) /.exec(l)?.[1];
        return on === undefined || tables.has(on);
      });
      assert.deepEqual(
        { migrated: migrated.filter((l) => !fresh.includes(l)), fresh: fresh.filter((l) => !migrated.includes(l)) },
        { migrated: [], fresh: [] },
        `${where}: the migrated schema is not that of a fresh database`,
      );
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const V2 = "  v1: {}\n  v2: {}\n";
const DRAFT = "  v1: { draft: true }\n";
const res = (name: string, fields: string, extra = "") => `resource: ${name}\n${extra}fields:\n${fields}`;

export const scenarios: Scenario[] = [
  {
    name: "fields added, renamed, made optional, required with a default, removed",
    steps: [
      {
        defs: { "items.yaml": res("items", "  name: { type: string, max_length: 50 }\n  qty: { type: integer, minimum: 0 }\n") },
        post: [
          { as: "a", path: "/v1/items", body: { name: "alpha", qty: 3 } },
          { as: "b", path: "/v1/items", body: { name: "beta", qty: 0 } },
        ],
      },
      {
        versions: V2,
        defs: { "items.yaml": res("items", "  title: { type: string, max_length: 50, renamed: { in: v2, from: name } }\n  qty: { type: integer, minimum: 0 }\n  note: { type: string, max_length: 20, optional: true, added: v2 }\n") },
        expect: { items: [{ id: "$a", title: "alpha", qty: 3 }, { id: "$b", title: "beta", qty: 0 }] },
        post: [{ as: "c", path: "/v2/items", body: { title: "gamma", qty: 1 } }],
      },
      {
        versions: V2,
        defs: { "items.yaml": res("items", "  title: { type: string, max_length: 50, renamed: { in: v2, from: name } }\n  qty: { type: integer, minimum: 0, optional: true }\n  note: { type: string, max_length: 20, default: \"none\", added: v2 }\n") },
        expect: { items: [{ id: "$a", title: "alpha", qty: 3, note: "none" }, { id: "$b", title: "beta", qty: 0, note: "none" }, { id: "$c", title: "gamma", qty: 1, note: "none" }] },
        post: [{ as: "d", path: "/v2/items", body: { title: "delta" } }],
      },
      {
        versions: V2,
        defs: { "items.yaml": res("items", "  title: { type: string, max_length: 50, renamed: { in: v2, from: name } }\n  note: { type: string, max_length: 20, default: \"none\", added: v2 }\n") },
        expect: { items: [{ id: "$a", title: "alpha" }, { id: "$b", title: "beta" }, { id: "$c", title: "gamma" }, { id: "$d", title: "delta" }] },
      },
    ],
  },
  {
    name: "optional made required with a default, nullable, and back",
    steps: [
      {
        defs: { "items.yaml": res("items", "  name: { type: string, max_length: 50 }\n  level: { type: integer, optional: true }\n  code: { type: string, max_length: 10 }\n") },
        post: [
          { as: "a", path: "/v1/items", body: { name: "a", code: "x" } },
          { as: "b", path: "/v1/items", body: { name: "b", level: 7, code: "y" } },
        ],
      },
      {
        defs: { "items.yaml": res("items", "  name: { type: string, max_length: 50 }\n  level: { type: integer, default: 1 }\n  code: { type: string, max_length: 10, nullable: true }\n") },
        expect: { items: [{ id: "$a", level: 1, code: "x" }, { id: "$b", level: 7, code: "y" }] },
        post: [{ as: "c", path: "/v1/items", body: { name: "c", code: null } }],
      },
      {
        defs: { "items.yaml": res("items", "  name: { type: string, max_length: 50 }\n  level: { type: integer, default: 1, nullable: true, optional: true }\n  code: { type: string, max_length: 10, nullable: true, optional: true }\n") },
        expect: { items: [{ id: "$a", level: 1, code: "x" }, { id: "$b", level: 7, code: "y" }, { id: "$c", level: 1, code: null }] },
      },
      {
        defs: { "items.yaml": res("items", "  name: { type: string, max_length: 50 }\n  level: { type: integer, default: 1 }\n  code: { type: string, max_length: 10, default: \"z\" }\n") },
        expect: { items: [{ id: "$a", level: 1, code: "x" }, { id: "$b", level: 7, code: "y" }, { id: "$c", level: 1, code: "z" }] },
      },
    ],
  },
  {
    name: "string to enum and back, enum values added and removed",
    steps: [
      {
        defs: { "items.yaml": res("items", "  status: { type: string, max_length: 20 }\n") },
        post: [
          { as: "a", path: "/v1/items", body: { status: "open" } },
          { as: "b", path: "/v1/items", body: { status: "closed" } },
        ],
      },
      {
        defs: { "items.yaml": res("items", "  status: { type: enum, values: [open, closed, held] }\n") },
        expect: { items: [{ id: "$a", status: "open" }, { id: "$b", status: "closed" }] },
        post: [{ as: "c", path: "/v1/items", body: { status: "held" } }],
      },
      {
        defs: { "items.yaml": res("items", "  status: { type: enum, values: [open, closed] }\n") },
        refuse: (ids) => new RegExp(`items\\.status.*${ids.c}`),
        fix: `update "items" set "status" = 'open' where "id" = '$c'`,
        expect: { items: [{ id: "$a", status: "open" }, { id: "$b", status: "closed" }, { id: "$c", status: "open" }] },
      },
      {
        defs: { "items.yaml": res("items", "  status: { type: string, max_length: 4 }\n") },
        refuse: (ids) => new RegExp(`items\\.status.*${ids.b}`),
        fix: `update "items" set "status" = 'open' where "id" = '$b'`,
        expect: { items: [{ id: "$a", status: "open" }, { id: "$b", status: "open" }, { id: "$c", status: "open" }] },
      },
    ],
  },
  {
    name: "numbers: integer to number to decimal and back",
    steps: [
      {
        defs: { "items.yaml": res("items", "  qty: { type: integer }\n  price: { type: number }\n") },
        post: [
          { as: "a", path: "/v1/items", body: { qty: 3, price: 2.5 } },
          { as: "b", path: "/v1/items", body: { qty: 9007199254740991, price: 0.1 } },
        ],
      },
      {
        defs: { "items.yaml": res("items", "  qty: { type: number }\n  price: { type: decimal, precision: 10, scale: 2 }\n") },
        expect: { items: [{ id: "$a", qty: 3, price: "2.50" }, { id: "$b", qty: 9007199254740991, price: "0.10" }] },
        post: [{ as: "c", path: "/v1/items", body: { qty: 1.5, price: "7.25" } }],
      },
      {
        defs: { "items.yaml": res("items", "  qty: { type: integer }\n  price: { type: number }\n") },
        refuse: (ids) => new RegExp(`items\\.qty.*${ids.c}`),
        fix: `update "items" set "qty" = 2 where "id" = '$c'`,
        expect: { items: [{ id: "$a", qty: 3, price: 2.5 }, { id: "$b", qty: 9007199254740991, price: 0.1 }, { id: "$c", qty: 2, price: 7.25 }] },
      },
    ],
  },
  {
    name: "date to datetime and back",
    steps: [
      {
        defs: { "items.yaml": res("items", "  day: { type: date }\n") },
        post: [{ as: "a", path: "/v1/items", body: { day: "2026-03-01" } }],
      },
      {
        defs: { "items.yaml": res("items", "  day: { type: datetime }\n") },
        expect: { items: [{ id: "$a", day: "2026-03-01T00:00:00Z" }] },
        post: [{ as: "b", path: "/v1/items", body: { day: "2026-04-02T10:30:00+02:00" } }],
      },
      {
        defs: { "items.yaml": res("items", "  day: { type: date }\n") },
        refuse: (ids) => new RegExp(`items\\.day.*${ids.b}`),
        fix: `update "items" set "day" = '2026-04-02T00:00:00Z' where "id" = '$b'`,
        expect: { items: [{ id: "$a", day: "2026-03-01" }, { id: "$b", day: "2026-04-02" }] },
      },
    ],
  },
  {
    name: "limits tightened and loosened; unique and composite unique added and removed",
    steps: [
      {
        defs: { "items.yaml": res("items", "  code: { type: string, max_length: 20 }\n  qty: { type: integer, minimum: 0, maximum: 100 }\n  shelf: { type: string, max_length: 5 }\n") },
        post: [
          { as: "a", path: "/v1/items", body: { code: "abcdefghij", qty: 50, shelf: "s1" } },
          { as: "b", path: "/v1/items", body: { code: "abc", qty: 5, shelf: "s1" } },
        ],
      },
      {
        defs: { "items.yaml": res("items", "  code: { type: string, max_length: 5, unique: true }\n  qty: { type: integer, minimum: 0, maximum: 10 }\n  shelf: { type: string, max_length: 5 }\n", "unique: [[shelf, qty]]\n") },
        refuse: (ids) => new RegExp(`items\\.(code|qty).*${ids.a}`),
        fix: `update "items" set "code" = 'abcde', "qty" = 10 where "id" = '$a'`,
        expect: { items: [{ id: "$a", code: "abcde", qty: 10 }, { id: "$b", code: "abc", qty: 5 }] },
      },
      {
        defs: { "items.yaml": res("items", "  code: { type: string, max_length: 50 }\n  qty: { type: integer, minimum: 0 }\n  shelf: { type: string, max_length: 5 }\n") },
        expect: { items: [{ id: "$a", code: "abcde" }, { id: "$b", code: "abc" }] },
        post: [{ as: "c", path: "/v1/items", body: { code: "abc", qty: 5, shelf: "s1" } }],
      },
      {
        defs: { "items.yaml": res("items", "  code: { type: string, max_length: 50 }\n  qty: { type: integer, minimum: 0 }\n  shelf: { type: string, max_length: 5 }\n", "unique: [[shelf, code]]\n") },
        refuse: /items/,
        fix: `update "items" set "code" = 'abd' where "id" = '$c'`,
        expect: { items: [{ id: "$a", code: "abcde" }, { id: "$b", code: "abc" }, { id: "$c", code: "abd" }] },
      },
    ],
  },
  {
    name: "references added and removed, on_delete changed; a uuid array made a relation and back",
    steps: [
      {
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n  tag_id: { type: uuid, optional: true }\n  tag_ids: { type: array, items: { type: uuid }, max_items: 5, default: [] }\n"),
        },
        post: [
          { as: "t1", path: "/v1/tags", body: { label: "one" } },
          { as: "t2", path: "/v1/tags", body: { label: "two" } },
          { as: "a", path: "/v1/items", body: { name: "a", tag_id: "$t1", tag_ids: ["$t2", "$t1"] } },
        ],
      },
      {
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n  tag_id: { type: uuid, references: tags, optional: true }\n  tag_ids: { type: array, items: { type: uuid, references: tags }, max_items: 5, default: [] }\n"),
        },
        expect: { tags: [{ id: "$t1", label: "one" }, { id: "$t2", label: "two" }], items: [{ id: "$a", tag_id: "$t1", tag_ids: ["$t2", "$t1"] }] },
      },
      {
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n  tag_id: { type: uuid, references: tags, optional: true, nullable: true, on_delete: cascade }\n  tag_ids: { type: array, items: { type: uuid, references: tags, on_delete: cascade }, max_items: 5, default: [] }\n"),
        },
        expect: { tags: [{ id: "$t1", label: "one" }, { id: "$t2", label: "two" }], items: [{ id: "$a", tag_id: "$t1", tag_ids: ["$t2", "$t1"] }] },
      },
      {
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n  tag_id: { type: uuid, optional: true }\n  tag_ids: { type: array, items: { type: uuid }, max_items: 5, default: [] }\n"),
        },
        expect: { tags: [{ id: "$t1", label: "one" }, { id: "$t2", label: "two" }], items: [{ id: "$a", tag_id: "$t1", tag_ids: ["$t2", "$t1"] }] },
      },
    ],
  },
  {
    name: "list_under, sort keys and tenant added; a resource renamed away and removed",
    steps: [
      {
        defs: {
          "orgs.yaml": res("orgs", "  name: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  org_id: { type: uuid, references: orgs }\n  name: { type: string, max_length: 20 }\n  rank: { type: integer, default: 0 }\n"),
          "notes.yaml": res("notes", "  text: { type: string, max_length: 20 }\n"),
        },
        post: [
          { as: "o", path: "/v1/orgs", body: { name: "acme" } },
          { as: "a", path: "/v1/items", body: { org_id: "$o", name: "a", rank: 2 } },
          { as: "n", path: "/v1/notes", body: { text: "hello" } },
        ],
      },
      {
        defs: {
          "orgs.yaml": res("orgs", "  name: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  org_id: { type: uuid, references: orgs, list_under: true }\n  name: { type: string, max_length: 20 }\n  rank: { type: integer, default: 0 }\n", "sort: [rank, name]\nfilters: [rank]\n"),
        },
        expect: { orgs: [{ id: "$o", name: "acme" }], items: [{ id: "$a", org_id: "$o", name: "a", rank: 2 }] },
      },
      {
        defs: {
          "orgs.yaml": res("orgs", "  name: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  org_id: { type: uuid, references: orgs, tenant: true }\n  name: { type: string, max_length: 20 }\n  rank: { type: integer, default: 0 }\n", "sort: [rank, name]\nfilters: [rank]\nunique: [[org_id, name]]\n"),
        },
        expect: { orgs: [{ id: "$o", name: "acme" }], items: [{ id: "$a", org_id: "$o", name: "a", rank: 2 }] },
      },
    ],
  },
  {
    name: "a child resource given a parent",
    steps: [
      {
        defs: {
          "posts.yaml": res("posts", "  title: { type: string, max_length: 20 }\n"),
          "comments.yaml": res("comments", "  post_id: { type: uuid, references: posts }\n  body: { type: string, max_length: 20 }\n"),
        },
        post: [
          { as: "p", path: "/v1/posts", body: { title: "p" } },
          { as: "c", path: "/v1/comments", body: { post_id: "$p", body: "hi" } },
        ],
      },
      {
        defs: {
          "posts.yaml": res("posts", "  title: { type: string, max_length: 20 }\n"),
          "comments.yaml": res("comments", "  post_id: { type: uuid, references: posts }\n  body: { type: string, max_length: 20 }\n", "parent: posts\n"),
        },
        expect: { posts: [{ id: "$p", title: "p" }], comments: [{ id: "$c", post_id: "$p", body: "hi" }] },
      },
    ],
  },
  {
    name: "references and a relation removed: what they named can be deleted",
    steps: [
      {
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n  tag_id: { type: uuid, references: tags }\n  tag_ids: { type: array, items: { type: uuid, references: tags }, max_items: 5, default: [] }\n"),
        },
        post: [
          { as: "t1", path: "/v1/tags", body: { label: "one" } },
          { as: "t2", path: "/v1/tags", body: { label: "two" } },
          { as: "t3", path: "/v1/tags", body: { label: "three" } },
          { as: "a", path: "/v1/items", body: { name: "a", tag_id: "$t1", tag_ids: ["$t2", "$t3"] } },
        ],
        remove: [{ path: "/v1/tags/$t1", status: 422 }, { path: "/v1/tags/$t2", status: 422 }],
      },
      {
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n"),
        },
        expect: { items: [{ id: "$a", name: "a" }], tags: [{ id: "$t1", label: "one" }, { id: "$t2", label: "two" }, { id: "$t3", label: "three" }] },
        remove: [{ path: "/v1/tags/$t1", status: 204 }, { path: "/v1/tags/$t2", status: 204 }],
      },
      {
        // The relation comes back: its links kept, but for those to records deleted meanwhile.
        defs: {
          "tags.yaml": res("tags", "  label: { type: string, max_length: 20 }\n"),
          "items.yaml": res("items", "  name: { type: string, max_length: 20 }\n  tag_ids: { type: array, items: { type: uuid, references: tags }, max_items: 5, default: [] }\n"),
        },
        expect: { items: [{ id: "$a", tag_ids: ["$t3"] }], tags: [{ id: "$t3", label: "three" }] },
        remove: [{ path: "/v1/tags/$t3", status: 422 }],
      },
    ],
  },
  // SPEC §12 edits a helpdesk team makes over time: each migrates keeping every value, or is refused naming what to change.
  {
    name: "helpdesk: tenant added to a draft version's resource (a record without one refused), its child made tenant-scoped (filled from its parent), a new tenant field without a parent refused",
    steps: [
      {
        versions: DRAFT,
        defs: {
          "organizations.yaml": res("organizations", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  organization_id: { type: uuid, references: organizations, optional: true }\n  code: { type: string, max_length: 10, unique: true }\n  subject: { type: string, max_length: 50 }\n"),
          "comments.yaml": res("comments", "  ticket_id: { type: uuid, references: tickets }\n  body: { type: string, max_length: 50 }\n", "parent: tickets\n"),
          "macros.yaml": res("macros", "  name: { type: string, max_length: 20 }\n"),
        },
        post: [
          { as: "o", path: "/v1/organizations", body: { name: "acme" } },
          { as: "p", path: "/v1/organizations", body: { name: "other" } },
          { as: "a", path: "/v1/tickets", body: { organization_id: "$o", code: "T-1", subject: "printer" } },
          { as: "b", path: "/v1/tickets", body: { code: "T-2", subject: "mail" } },
          { as: "c", path: "/v1/comments", body: { ticket_id: "$a", body: "on it" } },
          { as: "g", path: "/v1/macros", body: { name: "close" } },
          { as: "h", path: "/v1/macros", body: { name: "open" } },
        ],
      },
      {
        versions: DRAFT,
        defs: {
          "organizations.yaml": res("organizations", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  code: { type: string, max_length: 10, unique: true }\n  subject: { type: string, max_length: 50 }\n", "sort: [subject]\n"),
          "comments.yaml": res("comments", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  ticket_id: { type: uuid, references: tickets }\n  body: { type: string, max_length: 50 }\n", "parent: tickets\n"),
          "macros.yaml": res("macros", "  name: { type: string, max_length: 20 }\n"),
        },
        refuse: (ids) => new RegExp(`tickets\\.organization_id is the tenant field of tickets now, and record ${ids.b} has no value for it: give the records that lack a value one`),
        fix: `update "tickets" set "organization_id" = '$p' where "id" = '$b'`,
        expect: { tickets: [{ id: "$a", organization_id: "$o", code: "T-1" }, { id: "$b", organization_id: "$p", code: "T-2" }], comments: [{ id: "$c", organization_id: "$o" }] },
        // Unique within the tenant now: another tenant may use T-1.
        post: [{ as: "d", path: "/v1/tickets", body: { organization_id: "$p", code: "T-1", subject: "vpn" } }],
      },
      {
        versions: DRAFT,
        defs: {
          "organizations.yaml": res("organizations", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  code: { type: string, max_length: 10, unique: true }\n  subject: { type: string, max_length: 50 }\n", "sort: [subject]\n"),
          "comments.yaml": res("comments", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  ticket_id: { type: uuid, references: tickets }\n  body: { type: string, max_length: 50 }\n", "parent: tickets\n"),
          "macros.yaml": res("macros", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  name: { type: string, max_length: 20, unique: true }\n"),
        },
        refuse: (ids) => new RegExp(`macros\\.organization_id is the tenant field of macros now, and record ${ids.g < ids.h ? ids.g : ids.h} has no tenant: add the field as optional in a release of its own`),
        fix: `delete from "macros"`,
        expect: { macros: [], tickets: [{ id: "$a", organization_id: "$o" }, { id: "$b", organization_id: "$p" }, { id: "$d", organization_id: "$p" }] },
        post: [{ as: "m", path: "/v1/macros", body: { organization_id: "$o", name: "close" } }],
      },
    ],
  },
  {
    name: "helpdesk: a composite unique added over rows that repeat it (refused, naming the key), then removed",
    steps: [
      {
        defs: { "agents.yaml": res("agents", "  team: { type: string, max_length: 20 }\n  email: { type: string, format: email, max_length: 50 }\n  level: { type: integer, optional: true }\n") },
        post: [
          { as: "a", path: "/v1/agents", body: { team: "l1", email: "ann@example.com" } },
          { as: "b", path: "/v1/agents", body: { team: "l1", email: "ANN@example.com" } },
          { as: "c", path: "/v1/agents", body: { team: "l2", email: "ann@example.com" } },
        ],
      },
      {
        defs: { "agents.yaml": res("agents", "  team: { type: string, max_length: 20 }\n  email: { type: string, format: email, max_length: 50 }\n  level: { type: integer, optional: true }\n", "unique: [[team, email], [team, level]]\n") },
        refuse: /agents_team__email_unique.*\(team, email\)=\(l1, ann@example\.com\) is duplicated.*remove or change the records that repeat it/,
        fix: `update "agents" set "email" = 'bea@example.com' where "id" = '$b'`,
        expect: { agents: [{ id: "$a", email: "ann@example.com" }, { id: "$b", email: "bea@example.com" }, { id: "$c", email: "ann@example.com" }] },
      },
      {
        defs: { "agents.yaml": res("agents", "  team: { type: string, max_length: 20 }\n  email: { type: string, format: email, max_length: 50 }\n  level: { type: integer, optional: true }\n") },
        expect: { agents: [{ id: "$a", team: "l1" }, { id: "$b", team: "l1" }, { id: "$c", team: "l2" }] },
        post: [{ as: "d", path: "/v1/agents", body: { team: "l1", email: "Ann@example.com" } }],
      },
    ],
  },
  {
    name: "helpdesk: a uuid reference made a many-to-many array and back",
    steps: [
      {
        defs: {
          "agents.yaml": res("agents", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  subject: { type: string, max_length: 20 }\n  watcher: { type: uuid, references: agents, optional: true }\n"),
        },
        post: [
          { as: "x", path: "/v1/agents", body: { name: "x" } },
          { as: "y", path: "/v1/agents", body: { name: "y" } },
          { as: "a", path: "/v1/tickets", body: { subject: "a", watcher: "$x" } },
          { as: "b", path: "/v1/tickets", body: { subject: "b" } },
        ],
      },
      {
        defs: {
          "agents.yaml": res("agents", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  subject: { type: string, max_length: 20 }\n  watcher: { type: array, items: { type: uuid, references: agents }, max_items: 5, default: [], list_under: true }\n"),
        },
        expect: { tickets: [{ id: "$a", watcher: ["$x"] }, { id: "$b", watcher: [] }] },
        post: [{ as: "c", path: "/v1/tickets", body: { subject: "c", watcher: ["$y"] } }],
      },
      {
        defs: {
          "agents.yaml": res("agents", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  subject: { type: string, max_length: 20 }\n  watcher: { type: uuid, references: agents, optional: true }\n"),
        },
        expect: { tickets: [{ id: "$a", watcher: "$x" }, { id: "$b" }, { id: "$c", watcher: "$y" }] },
      },
      {
        defs: {
          "agents.yaml": res("agents", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  subject: { type: string, max_length: 20 }\n  watcher: { type: array, items: { type: uuid, references: agents }, max_items: 5, default: [] }\n"),
        },
        expect: { tickets: [{ id: "$a", watcher: ["$x"] }, { id: "$b", watcher: [] }, { id: "$c", watcher: ["$y"] }] },
        post: [{ as: "d", path: "/v1/tickets", body: { subject: "d", watcher: ["$x", "$y"] } }],
      },
      {
        defs: {
          "agents.yaml": res("agents", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res("tickets", "  subject: { type: string, max_length: 20 }\n  watcher: { type: uuid, references: agents, optional: true }\n"),
        },
        refuse: (ids) => new RegExp(`tickets\\.watcher.*${ids.d}`),
        fix: `delete from "tickets__watcher" where "position" = 2`,
        expect: { tickets: [{ id: "$a", watcher: "$x" }, { id: "$b" }, { id: "$c", watcher: "$y" }, { id: "$d", watcher: "$x" }] },
      },
    ],
  },
  {
    name: "helpdesk: sort keys (nullable, enum, decimal, datetime) and list_under added, on a child and a tenant-scoped resource",
    steps: [
      {
        defs: {
          "organizations.yaml": res("organizations", "  name: { type: string, max_length: 20 }\n"),
          "agents.yaml": res("agents", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  name: { type: string, max_length: 20 }\n"),
          "tags.yaml": res("tags", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res(
            "tickets",
            "  organization_id: { type: uuid, references: organizations, tenant: true }\n  assignee_id: { type: uuid, references: agents, optional: true }\n  priority: { type: enum, values: [low, normal, high], default: normal }\n  due_at: { type: datetime, optional: true }\n  cost: { type: decimal, precision: 8, scale: 2, optional: true, nullable: true }\n  tag_ids: { type: array, items: { type: uuid, references: tags }, max_items: 5, default: [] }\n",
          ),
          "notes.yaml": res("notes", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  ticket_id: { type: uuid, references: tickets }\n  body: { type: string, max_length: 20 }\n  rank: { type: integer, optional: true }\n", "parent: tickets\n"),
        },
        post: [
          { as: "o", path: "/v1/organizations", body: { name: "acme" } },
          { as: "g", path: "/v1/agents", body: { organization_id: "$o", name: "g" } },
          { as: "t", path: "/v1/tags", body: { name: "t" } },
          { as: "a", path: "/v1/tickets", body: { organization_id: "$o", assignee_id: "$g", priority: "high", due_at: "2026-05-01T10:00:00Z", cost: "12.50", tag_ids: ["$t"] } },
          { as: "b", path: "/v1/tickets", body: { organization_id: "$o", cost: null } },
          { as: "n", path: "/v1/notes", body: { organization_id: "$o", ticket_id: "$a", body: "x", rank: 2 } },
        ],
      },
      {
        defs: {
          "organizations.yaml": res("organizations", "  name: { type: string, max_length: 20 }\n"),
          "agents.yaml": res("agents", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  name: { type: string, max_length: 20 }\n"),
          "tags.yaml": res("tags", "  name: { type: string, max_length: 20 }\n"),
          "tickets.yaml": res(
            "tickets",
            "  organization_id: { type: uuid, references: organizations, tenant: true }\n  assignee_id: { type: uuid, references: agents, optional: true, list_under: true }\n  priority: { type: enum, values: [low, normal, high], default: normal }\n  due_at: { type: datetime, optional: true }\n  cost: { type: decimal, precision: 8, scale: 2, optional: true, nullable: true }\n  tag_ids: { type: array, items: { type: uuid, references: tags }, max_items: 5, default: [], list_under: true }\n",
            "sort: [priority, due_at, cost, updated_at]\nfilters: [priority, due_at, cost]\n",
          ),
          "notes.yaml": res("notes", "  organization_id: { type: uuid, references: organizations, tenant: true }\n  ticket_id: { type: uuid, references: tickets }\n  body: { type: string, max_length: 20 }\n  rank: { type: integer, optional: true }\n", "parent: tickets\nsort: [rank, body]\n"),
        },
        expect: {
          tickets: [{ id: "$a", priority: "high", due_at: "2026-05-01T10:00:00Z", cost: "12.50", tag_ids: ["$t"] }, { id: "$b", priority: "normal", cost: null, tag_ids: [] }],
          notes: [{ id: "$n", rank: 2 }],
        },
      },
    ],
  },
  {
    name: "helpdesk: a map's item max_length loosened and tightened, decimals widened (a column, a wrapped value, a map's values), transitions added",
    steps: [
      {
        defs: {
          "tickets.yaml": res(
            "tickets",
            "  labels: { type: map, items: { type: string, max_length: 10 }, max_items: 5, default: {} }\n  price: { type: decimal, precision: 6, scale: 2 }\n  fee: { type: decimal, precision: 5, scale: 1, optional: true, nullable: true }\n  rates: { type: map, items: { type: decimal, precision: 4, scale: 2 }, max_items: 5, optional: true }\n  status: { type: enum, values: [new, open, closed], default: new }\n",
          ),
        },
        post: [
          { as: "a", path: "/v1/tickets", body: { labels: { team: "network" }, price: "1234.50", fee: "12.5", rates: { base: "1.25" }, status: "open" } },
          { as: "b", path: "/v1/tickets", body: { price: "0.10", fee: null } },
        ],
      },
      {
        defs: {
          "tickets.yaml": res(
            "tickets",
            "  labels: { type: map, items: { type: string, max_length: 40 }, max_items: 5, default: {} }\n  price: { type: decimal, precision: 12, scale: 4 }\n  fee: { type: decimal, precision: 8, scale: 3, optional: true, nullable: true }\n  rates: { type: map, items: { type: decimal, precision: 7, scale: 3 }, max_items: 5, optional: true }\n  status: { type: enum, values: [new, open, closed], default: new, transitions: { new: [open], open: [closed], closed: [open] } }\n",
          ),
        },
        expect: {
          tickets: [
            { id: "$a", labels: { team: "network" }, price: "1234.5000", fee: "12.500", rates: { base: "1.250" }, status: "open" },
            { id: "$b", labels: {}, price: "0.1000", fee: null, status: "new" },
          ],
        },
        post: [{ as: "c", path: "/v1/tickets", body: { labels: { team: "a-long-team-name" }, price: "1.0001" } }],
      },
      {
        defs: {
          "tickets.yaml": res(
            "tickets",
            "  labels: { type: map, items: { type: string, max_length: 10 }, max_items: 5, default: {} }\n  price: { type: decimal, precision: 12, scale: 4 }\n  fee: { type: decimal, precision: 8, scale: 3, optional: true, nullable: true }\n  rates: { type: map, items: { type: decimal, precision: 7, scale: 3 }, max_items: 5, optional: true }\n  status: { type: enum, values: [new, open, closed], default: new, transitions: { new: [open], open: [closed], closed: [open] } }\n",
          ),
        },
        refuse: (ids) => new RegExp(`tickets\\.labels cannot take its new limits: record ${ids.c} holds`),
        fix: `update "tickets" set "labels" = '{"team": "short"}' where "id" = '$c'`,
        expect: {
          tickets: [
            { id: "$a", labels: { team: "network" }, price: "1234.5000" },
            { id: "$b", labels: {}, price: "0.1000" },
            { id: "$c", labels: { team: "short" }, price: "1.0001" },
          ],
        },
      },
    ],
  },
];

describe(`migration sequences on ${TARGET}`, () => {
  const schemas: string[] = [];
  after(async () => {
    await (await freshDb)?.close();
    if (TARGET === "postgres") await dropSchemas(schemas);
  });
  for (const scenario of scenarios) test(scenario.name, { todo: scenario.todo }, async () => run(scenario, schemas));
});
