// Migrations as differences between schema snapshots: each kind of change gives the statements
// it should, and every migration of a sequence runs on real PostgreSQL (PGlite), twice.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { migrationBetween } from "../../generator/emit/sql/diff.ts";
import { replayMigrations, snapshotFrom } from "../../generator/emit/sql/replay.ts";
import { collectionPlans, identifier, SNAPSHOT_FORMAT, snapshotOf, systemTables, type SchemaSnapshot } from "../../generator/emit/sql/snapshot.ts";
import { runFrontEnd } from "../../generator/pipeline.ts";
import { openDriver, readMigrations, type SqlDriver } from "../../generated/runtime/sql-store.ts";
import { workspace } from "../support/cli.ts";

const API = "title: Diff API\nbase_url: https://api.example.com\nversions:\n  v1: {}\n";

let root: string;
let step = 0;
/** The snapshot of definitions given as `{ file: yaml }`. */
async function snapshotOfFiles(files: Record<string, string>): Promise<SchemaSnapshot> {
  const dir = path.join(root, `step-${++step}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "api.yaml"), API);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const front = await runFrontEnd(dir, { today: "2026-01-01" });
  assert.ok(front.model, front.diagnostics.map((d) => d.message).join("\n"));
  return snapshotOf(collectionPlans(front.model), systemTables(front.model));
}

const authors = (extra = "") => `resource: authors
search: [name]
fields:
  name: { type: string, max_length: 100 }
${extra}`;
const books = (extra = "") => `resource: books
parent: authors
filters: [genre]
fields:
  author_id: { type: uuid, references: authors }
  title: { type: string, max_length: 200 }
  genre: { type: enum, values: [novel, poetry] }
${extra}`;

describe("migrations between snapshots", () => {
  let db: SqlDriver;
  before(async () => {
    root = workspace("sql-diff");
    db = await openDriver("pglite:memory://");
  });
  after(() => db.close());

  /** Applies a migration twice: it must run, and running it again must change nothing. */
  async function apply(statements: string[]): Promise<void> {
    const text = statements.join("\n");
    await db.exec(text);
    await db.exec(text);
  }

  test("from nothing, then each kind of change, applied in turn on PGlite", async () => {
    const s1 = await snapshotOfFiles({ "authors.yaml": authors(), "books.yaml": books() });
    const m1 = migrationBetween(null, s1)!;
    assert.equal(m1.name, "initial");
    const text1 = m1.statements.join("\n");
    assert.ok(text1.indexOf('create table if not exists "authors"') < text1.indexOf('create table if not exists "books"'), "referenced tables first");
    await apply(m1.statements);
    await db.exec(`insert into authors (id, created_at, updated_at, name) values ('01890a5d-ac96-774b-bcce-b302099a8057', now(), now(), 'Ann')`);
    await db.exec(
      `insert into books (id, created_at, updated_at, author_id, title, genre) values ('01890a5d-ac96-774b-bcce-b302099a8058', now(), now(), '01890a5d-ac96-774b-bcce-b302099a8057', 'T', 'novel')`,
    );
    assert.equal(migrationBetween(s1, s1), null, "no change, no migration");

    // New fields: one required with a default, one required without (nullable for the rows that exist), one optional;
    // changed limits and enum values; a new filter; a new unique field.
    const s2 = await snapshotOfFiles({
      "authors.yaml": authors("  country: { type: string, max_length: 2, default: 'NL' }\n  born: { type: date }\n"),
      "books.yaml": books("  pages: { type: integer, minimum: 1, optional: true }\n  isbn: { type: string, unique: true, optional: true }\n")
        .replace("max_length: 200", "max_length: 300")
        .replace("[novel, poetry]", "[novel, poetry, essay]")
        .replace("filters: [genre]", "filters: [genre, pages]"),
    });
    const m2 = migrationBetween(s1, s2)!;
    const text2 = m2.statements.join("\n");
    assert.match(text2, /add column if not exists "country" text not null default 'NL'/);
    assert.match(text2, /add column if not exists "born" date[,;]/, "required without a default: nullable for the rows that exist");
    assert.match(text2, /drop constraint if exists "books_title_check";\nalter table "books" add constraint "books_title_check" check \(char_length\("title"\) <= 300\)/);
    assert.match(text2, /'novel', 'poetry', 'essay'/);
    assert.match(text2, /create index if not exists "books_pages_id_idx"/);
    // A unique string is unique by its normalized key (runtime/unique.ts): an index on an expression.
    assert.match(text2, /add column if not exists "isbn" text/);
    assert.match(text2, /create unique index if not exists "books_isbn_key" on "books" using btree \(\(normalize\(btrim\("isbn", U&'[^']+'\), NFC\)\)\)/);
    assert.doesNotMatch(text2, /create table/);
    await apply(m2.statements);
    assert.deepEqual(await db.query("select country, born from authors"), [{ country: "NL", born: null }]);
    await db.exec(`update books set genre = 'essay'`);

    // A field leaves, one becomes optional, a filter goes, the search field changes, a resource leaves.
    const s3 = await snapshotOfFiles({
      "authors.yaml": authors("  country: { type: string, max_length: 2, default: 'NL', optional: true }\n").replace("search: [name]", "search: [country]"),
    });
    const m3 = migrationBetween(s2, s3)!;
    const text3 = m3.statements.join("\n");
    assert.match(text3, /alter table "authors" alter column "born" drop not null|-- born left the definitions/);
    assert.match(text3, /drop index if exists "authors_name_trgm_idx"/);
    assert.match(text3, /create index if not exists "authors_country_trgm_idx"/);
    assert.match(text3, /-- books \(books\) left the definitions; the table and its data stay\./);
    assert.doesNotMatch(text3, /drop table|drop column/);
    await apply(m3.statements);
    assert.equal((await db.query("select count(*)::int as n from books"))[0]!.n, 1, "the data stays");
  });

  test("an optional nullable reference kept as jsonb by an older canon becomes a uuid column with its foreign key", async () => {
    const files = {
      "tickets.yaml": "resource: tickets\nfields:\n  subject: { type: string }\n",
      "audits.yaml": "resource: audits\nfields:\n  ticket_id: { type: uuid, references: tickets, optional: true, nullable: true, on_delete: cascade }\n  text: { type: string }\n",
    };
    const now = await snapshotOfFiles(files);
    const column = now.tables.find((t) => t.name === "audits")!.columns.find((c) => c.name === "ticket_id")!;
    assert.equal(column.type, "uuid");
    assert.equal(column.notNull, false);
    assert.deepEqual(column.references, { name: "audits_ticket_id_fkey", table: "tickets", onDelete: "cascade" });
    // As canon wrote it before: a wrapped JSON value, its check on the JSON, no foreign key.
    const older = structuredClone(now);
    const was = older.tables.find((t) => t.name === "audits")!.columns.find((c) => c.name === "ticket_id")!;
    was.type = "jsonb";
    delete was.references;
    was.check = {
      name: "audits_ticket_id_check",
      expression: `case when "ticket_id" is null or jsonb_typeof("ticket_id") = 'null' then true when jsonb_typeof("ticket_id") = 'string' then true else false end`,
    };
    await db.exec("create schema wrapped_ref; set search_path to wrapped_ref, public");
    try {
      await apply(migrationBetween(null, older)!.statements);
      const ticket = "01890a5d-ac96-774b-bcce-b302099a8001";
      const gone = "01890a5d-ac96-774b-bcce-b302099a8002";
      await db.exec(`insert into tickets (id, created_at, updated_at, subject) values ('${ticket}', now(), now(), 'T')`);
      const audit = (id: string, value: string) =>
        db.exec(`insert into audits (id, created_at, updated_at, ticket_id, text) values ('01890a5d-ac96-774b-bcce-b302099a81${id}', now(), now(), ${value}, '${id}')`);
      await audit("10", `'"${ticket}"'::jsonb`);
      await audit("11", `'null'::jsonb`);
      await audit("12", "null");
      await audit("13", `'"${gone}"'::jsonb`);
      const m = migrationBetween(older, now)!;
      const text = m.statements.join("\n");
      assert.match(text, /alter column "ticket_id" type uuid using \(to_jsonb\("ticket_id"\) #>> '\{\}'\)::uuid/);
      assert.match(text, /add constraint "audits_ticket_id_fkey" foreign key \("ticket_id"\) references "tickets" \("id"\) on delete cascade/);
      await apply(m.statements);
      const rows = await db.query(`select text, ticket_id::text as ticket_id from audits order by text`);
      // JSON null is NULL now; an id of a record gone (there was no foreign key) names nothing.
      assert.deepEqual(rows, [
        { text: "10", ticket_id: ticket },
        { text: "11", ticket_id: null },
        { text: "12", ticket_id: null },
        { text: "13", ticket_id: null },
      ]);
      // The database keeps the reference: its on_delete runs.
      await db.exec(`delete from tickets where id = '${ticket}'`);
      assert.deepEqual((await db.query(`select text from audits order by text`)).map((r) => r.text), ["11", "12", "13"]);
    } finally {
      await db.exec("set search_path to public");
    }
  });

  test("references in a cycle: tables first, then the foreign keys", async () => {
    const s = await snapshotOfFiles({
      "teams.yaml": "resource: teams\nfields:\n  name: { type: string }\n  captain_id: { type: uuid, references: players, optional: true }\n",
      "players.yaml": "resource: players\nfields:\n  name: { type: string }\n  team_id: { type: uuid, references: teams, optional: true }\n",
    });
    const m = migrationBetween(null, s)!;
    const text = m.statements.join("\n");
    assert.match(text, /alter table "(teams|players)" add constraint "(teams_captain_id|players_team_id)_fkey" foreign key/);
    await db.exec('create schema cycle; set search_path to cycle, public');
    try {
      await apply(m.statements);
    } finally {
      await db.exec("set search_path to public");
    }
  });

  test("composite unique (SPEC §12.3): an index added, changed and dropped with the definitions, text compared normalized", async () => {
    const members = (unique = "") => `resource: members
${unique}fields:
  org_id: { type: uuid }
  email: { type: string, format: email, max_length: 100 }
  handle: { type: string, max_length: 50 }
  badge: { type: integer, optional: true }
`;
    const insert = (id: string, email: string, handle: string, badge = "null") =>
      db.exec(`insert into members (id, created_at, updated_at, org_id, email, handle, badge) values ('01890a5d-ac96-774b-bcce-b302099a80${id}', now(), now(), '01890a5d-ac96-774b-bcce-b302099a8000', '${email}', '${handle}', ${badge})`);
    const violation = async (run: Promise<unknown>) => {
      const error = (await run.then(() => null, (e: unknown) => e)) as { code?: string; constraint?: string } | null;
      assert.equal(error?.code, "23505", "a unique violation");
      return error.constraint;
    };
    const c1 = await snapshotOfFiles({ "members.yaml": members() });
    await apply(migrationBetween(null, c1)!.statements);
    await insert("01", "ann@x.org", "ann");

    const c2 = await snapshotOfFiles({ "members.yaml": members("unique: [[org_id, email], [handle, badge]]\n") });
    const m2 = migrationBetween(c1, c2)!;
    assert.equal(m2.name, "index_members_org_id_email_unique_and_more");
    const text2 = m2.statements.join("\n");
    assert.match(text2, /create unique index if not exists "members_org_id__email_unique" on "members" using btree \("org_id", \(translate\(normalize\(btrim\("email", U&'[^']+'\), NFC\), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'\)\)\);/);
    assert.match(text2, /create unique index if not exists "members_handle__badge_unique" on "members" using btree \(\(normalize\(btrim\("handle", U&'[^']+'\), NFC\)\), "badge"\);/);
    await apply(m2.statements);
    assert.equal(migrationBetween(c2, c2), null, "no change, no migration");
    assert.equal(await violation(insert("02", "Ann@X.org", "bea")), "members_org_id__email_unique");
    await insert("03", "bea@x.org", "ann"); // badge null in both: NULLs are distinct
    await insert("04", "cy@x.org", "cy", "1");
    assert.equal(await violation(insert("05", "dee@x.org", " cy", "1")), "members_handle__badge_unique");

    // The list changes: the old index goes, the new one comes; a list dropped drops its index.
    const c3 = await snapshotOfFiles({ "members.yaml": members("unique: [[org_id, handle, badge]]\n") });
    const text3 = migrationBetween(c2, c3)!.statements.join("\n");
    assert.match(text3, /create unique index if not exists "members_org_id__handle__badge_unique"/);
    assert.match(text3, /drop index if exists "members_org_id__email_unique";/);
    assert.match(text3, /drop index if exists "members_handle__badge_unique";/);
    await apply(migrationBetween(c2, c3)!.statements);
    await insert("06", "Ann@X.org", "eve");
    const c4 = await snapshotOfFiles({ "members.yaml": members() });
    const m4 = migrationBetween(c3, c4)!;
    assert.deepEqual(m4.statements, ['drop index if exists "members_org_id__handle__badge_unique";']);
    await apply(m4.statements);
  });

  test("tenancy (SPEC §12.4): a reference's (tenant, reference, id) and (reference, id) indexes and its statistics come and go with it, and replay as written", async () => {
    const files = (assignee: boolean) => ({
      "organizations.yaml": "resource: organizations\nfields:\n  name: { type: string }\n",
      "categories.yaml": "resource: categories\nfields:\n  name: { type: string }\n",
      "agents.yaml": "resource: agents\nfields:\n  organization_id: { type: uuid, references: organizations, tenant: true }\n  name: { type: string }\n",
      "tickets.yaml":
        "resource: tickets\nfilters: [status]\nfields:\n  organization_id: { type: uuid, references: organizations, tenant: true }\n  status: { type: enum, values: [open, closed] }\n" +
        "  category_id: { type: uuid, references: categories, list_under: true }\n" +
        (assignee ? "  assignee_id: { type: uuid, references: agents, optional: true, list_under: true }\n" : ""),
    });
    const replays = (...migrations: Array<{ statements: string[] }>) => {
      const replay = replayMigrations(migrations.map((m, i) => ({ name: `000${i + 1}_m.sql`, text: `${m.statements.join("\n")}\n` })));
      assert.equal(replay.applied, migrations.length, replay.failure?.message);
      return replay.model;
    };
    const statistics = async () => (await db.query(`select stxname as n from pg_statistic_ext where stxnamespace = current_schema()::regnamespace order by 1`)).map((r) => r.n);
    await db.exec("create schema tenant_refs; set search_path to tenant_refs, public");
    try {
      const t1 = await snapshotOfFiles(files(false));
      const m1 = migrationBetween(null, t1)!;
      const text1 = m1.statements.join("\n");
      assert.match(text1, /create index if not exists "tickets_organization_id_status_id_idx" on "tickets" using btree \("organization_id", "status", "id"\);/);
      // A shared collection's record is named by every tenant's records: the tenant leads its index too, and the reference tells it not.
      assert.match(text1, /create index if not exists "tickets_organization_id_category_id_id_idx" on "tickets" using btree \("organization_id", "category_id", "id"\);/);
      assert.match(text1, /create index if not exists "tickets_category_id_id_idx" on "tickets" using btree \("category_id", "id"\);/);
      assert.doesNotMatch(text1, /statistics/);
      await apply(m1.statements);

      const t2 = await snapshotOfFiles(files(true));
      const m2 = migrationBetween(t1, t2)!;
      assert.deepEqual(m2.statements, [
        'alter table "tickets" add column if not exists "assignee_id" uuid constraint "tickets_assignee_id_fkey" references "agents" ("id") on delete no action;',
        'create index if not exists "tickets_assignee_id_id_idx" on "tickets" using btree ("assignee_id", "id");',
        'create index if not exists "tickets_organization_id_assignee_id_id_idx" on "tickets" using btree ("organization_id", "assignee_id", "id");',
        'create statistics if not exists "tickets_organization_id_assignee_id_stat" (dependencies) on "organization_id", "assignee_id" from "tickets";',
        'analyze "tickets";',
      ]);
      await apply(m2.statements);
      assert.deepEqual(await statistics(), ["tickets_organization_id_assignee_id_stat"]);
      assert.equal(migrationBetween(snapshotFrom(replays(m1, m2), 1, [t2]), t2), null, "the migrations create the snapshot's schema");
      // A new table gets its statistics with its indexes, and is not analyzed (it has no rows).
      const fresh = migrationBetween(null, t2)!.statements;
      assert.ok(fresh.includes('create statistics if not exists "tickets_organization_id_assignee_id_stat" (dependencies) on "organization_id", "assignee_id" from "tickets";'));
      assert.ok(!fresh.some((x) => x.startsWith("analyze")));

      const m3 = migrationBetween(t2, t1)!;
      for (const name of ["tickets_assignee_id_id_idx", "tickets_organization_id_assignee_id_id_idx"])
        assert.ok(m3.statements.includes(`drop index if exists "${name}";`), m3.statements.join("\n"));
      assert.ok(m3.statements.includes('drop statistics if exists "tickets_organization_id_assignee_id_stat";'), m3.statements.join("\n"));
      await apply(m3.statements);
      assert.deepEqual(await statistics(), []);
      assert.equal(migrationBetween(snapshotFrom(replays(m1, m2, m3), 1, [t1]), t1), null, "the migrations create the snapshot's schema");
    } finally {
      await db.exec("set search_path to public");
    }
  });

  test("a many-to-many array's on_delete or target changed (SPEC §12.3): the link table's foreign key is replaced, and the migration replays as written", async () => {
    const tags = "resource: tags\nfields:\n  name: { type: string }\n";
    const labels = "resource: labels\nfields:\n  name: { type: string }\n";
    const notes = (items: string) => `resource: notes\nfields:\n  text: { type: string }\n  tag_ids: { type: array, items: { type: uuid, ${items} }, max_items: 10, default: [] }\n`;
    const replays = (...migrations: Array<{ statements: string[] }>) => {
      const replay = replayMigrations(migrations.map((m, i) => ({ name: `000${i + 1}_m.sql`, text: `${m.statements.join("\n")}\n` })));
      assert.equal(replay.applied, migrations.length, replay.failure?.message);
      return replay.model;
    };
    const a = await snapshotOfFiles({ "tags.yaml": tags, "labels.yaml": labels, "notes.yaml": notes("references: tags") });
    const m1 = migrationBetween(null, a)!;
    for (const [items, target] of [["references: tags, on_delete: cascade", "tags"], ["references: labels", "labels"]] as const) {
      const b = await snapshotOfFiles({ "tags.yaml": tags, "labels.yaml": labels, "notes.yaml": notes(items) });
      const m2 = migrationBetween(a, b)!;
      assert.ok(m2.statements.some((x) => x.includes(`add constraint`) && x.includes(`references "${target}" ("row_id")`)), m2.statements.join("\n"));
      assert.equal(migrationBetween(snapshotFrom(replays(m1, m2), 1, [b]), b), null, "the migrations create the snapshot's schema");
    }
  });

  test("a field that leaves keeps its values and loses its constraints; those an older canon left are lifted by the next migration", async () => {
    const tags = "resource: tags\nfields:\n  name: { type: string }\n";
    const cards = (extra: string) => `resource: cards\nfields:\n  title: { type: string }\n${extra}`;
    const gone = "  code: { type: string, max_length: 5 }\n  rank: { type: integer, minimum: 0, unique: true, optional: true }\n  tag_id: { type: uuid, references: tags }\n";
    const replays = (...migrations: Array<{ statements: string[] }>) => {
      const replay = replayMigrations(migrations.map((m, i) => ({ name: `000${i + 1}_m.sql`, text: `${m.statements.join("\n")}\n` })));
      assert.equal(replay.applied, migrations.length, replay.failure?.message);
      return replay.model;
    };
    const a = await snapshotOfFiles({ "tags.yaml": tags, "cards.yaml": cards(gone) });
    const b = await snapshotOfFiles({ "tags.yaml": tags, "cards.yaml": cards("") });
    const m1 = migrationBetween(null, a)!;
    const m2 = migrationBetween(a, b)!;
    for (const name of ["cards_code_check", "cards_rank_check", "cards_rank_key", "cards_tag_id_fkey"])
      assert.ok(m2.statements.includes(`alter table "cards" drop constraint if exists "${name}";`), `${name}:\n${m2.statements.join("\n")}`);
    assert.ok(m2.statements.includes(`alter table "cards" alter column "code" drop not null;`));
    assert.equal(migrationBetween(snapshotFrom(replays(m1, m2), 1, [b]), b), null, "the migrations create the snapshot's schema");
    await db.exec("create schema leaving; set search_path to leaving, public");
    try {
      await apply(m1.statements);
      const tag = "01890a5d-ac96-774b-bcce-b302099a8101";
      await db.exec(`insert into tags (id, created_at, updated_at, name) values ('${tag}', now(), now(), 't')`);
      await db.exec(`insert into cards (id, created_at, updated_at, title, code, rank, tag_id) values ('01890a5d-ac96-774b-bcce-b302099a8102', now(), now(), 'c', 'abc', 1, '${tag}')`);
      await apply(m2.statements);
      // The values stay; the tag no longer held by a field no version shows.
      assert.deepEqual(await db.query(`select code, rank from cards`), [{ code: "abc", rank: 1 }]);
      await db.exec(`delete from tags where id = '${tag}'`);
      // An older canon lifted only `not null`: replayed, the columns it left keep their constraints, and the next migration lifts them.
      const older = { name: m2.name, statements: m2.statements.filter((x) => !x.includes("drop constraint")) };
      const created = snapshotFrom(replays(m1, older), 1, [b]);
      const repair = migrationBetween(created, b)!;
      assert.deepEqual(repair.statements.filter((x) => !x.startsWith("--")).sort(), m2.statements.filter((x) => x.includes("drop constraint")).sort());
      assert.equal(migrationBetween(snapshotFrom(replays(m1, older, repair), 1, [b]), b), null, "the repair creates the snapshot's schema");
    } finally {
      await db.exec("set search_path to public");
    }
  });

  test("long names stay within PostgreSQL's 63 bytes, distinct", () => {
    const a = identifier(`${"x".repeat(70)}_a_key`);
    const b = identifier(`${"x".repeat(70)}_b_key`);
    assert.ok(a.length <= 63 && b.length <= 63 && a !== b);
    assert.equal(identifier("orders_code_key"), "orders_code_key");
  });
});

// Found by a sweep of the release workflow: a released migration checked out with CRLF line
// endings (git's autocrlf), or given an indented comment by a reviewer, stopped generate and check
// with "canon cannot read".
test("the showcase's migrations replay the same with CRLF line endings and indented comments", () => {
  const dir = path.join(import.meta.dirname, "..", "..", "generated", "sql");
  const files = readdirSync(dir)
    .filter((n) => /^\d{4}_.*\.sql$/.test(n))
    .sort()
    .map((name) => ({ name, text: readFileSync(path.join(dir, name), "utf8") }));
  assert.ok(files.length >= 10);
  const snapshot = JSON.parse(readFileSync(path.join(dir, "schema.json"), "utf8")) as SchemaSnapshot;
  const as = (list: typeof files) => {
    const replay = replayMigrations(list);
    assert.equal(replay.applied, list.length, replay.failure?.message);
    return snapshotFrom(replay.model, SNAPSHOT_FORMAT, [snapshot]);
  };
  const edited = files.map((f) => ({ name: f.name, text: f.text.replace(/\n\n/g, "\n\n  -- reviewed\n").replace(/\n/g, "\r\n") }));
  assert.notEqual(edited[0]!.text, files[0]!.text);
  assert.deepEqual(as(edited), as(files));
});

test("readMigrations reads a CRLF checkout as the same migrations: the same text and checksum, so a store migrated from LF files takes them", () => {
  const dir = path.join(import.meta.dirname, "..", "..", "generated", "sql");
  const crlf = workspace("migrations-crlf");
  for (const name of readdirSync(dir).filter((n) => /^\d{4}_.*\.sql$/.test(n))) {
    writeFileSync(path.join(crlf, name), readFileSync(path.join(dir, name), "utf8").replace(/\n/g, "\r\n"));
  }
  assert.deepEqual(readMigrations(crlf), readMigrations(dir));
});
