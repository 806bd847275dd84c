// Tenancy in the store's own write statements (SPEC §12.4), on every store, over the store
// generated from test/fixtures/tenancy (with `boards`, a tenant-scoped resource holding an array
// of tickets, added here): an update, a delete (with its cascade) and each write of `writeAll`
// given another tenant's `where` write nothing, change no revision and keep no event; given the
// record's own tenant they write as before, and what a delete takes along is held to the tenant.
// The store is called directly, without the read by id that the handlers do first: the condition
// is in the write itself.
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { createEvent } from "../../runtime/events.ts";
import type { Store, StoredRecord } from "../../runtime/store.ts";
import { newId } from "../../runtime/uuid.ts";
import { canon, workspace } from "../support/cli.ts";
import { dropSchemas, freshSchema, POSTGRES_URL, preparePostgres } from "./stores.ts";

type Obj = Record<string, any>;

let sql: Obj;
let dir = "";
before(async () => {
  dir = workspace("store-tenant-writes", "test/fixtures/tenancy");
  writeFileSync(
    path.join(dir, "definitions", "boards.yaml"),
    `resource: boards
fields:
  organization_id: { type: uuid, references: organizations, tenant: true }
  name: { type: string, max_length: 100 }
  ticket_ids: { type: array, items: { type: uuid, references: tickets, on_delete: cascade }, max_items: 20, default: [] }
`,
  );
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  sql = (await import(
    new URL("sql/index.ts", pathToFileURL(path.join(dir, "generated") + path.sep)).href
  )) as Obj;
});

const schemas: string[] = [];
after(async () => {
  await dropSchemas(schemas);
  rmSync(dir, { recursive: true, force: true });
});

const targets: Array<[string, () => Promise<[string, Obj]>]> = [
  ["memory", async () => ["memory", {}]],
  ["pglite", async () => ["pglite:memory://", {}]],
  [
    "postgres",
    async () => {
      await preparePostgres();
      const schema = freshSchema("canon_tenant_writes");
      schemas.push(schema);
      return [POSTGRES_URL, { schema }];
    },
  ],
];

const none = { unique: [] };
const publish = (type: string) => (record: StoredRecord, collection: string) =>
  createEvent(type, collection, { id: record.id, ...record.values });

function record(values: Obj): StoredRecord {
  const now = new Date().toISOString();
  return { id: newId(), created_at: now, updated_at: now, revision: 1, values };
}

for (const [name, target] of targets) {
  describe(`tenant condition in write statements: ${name}`, () => {
    let store: Store;
    const seen: Obj[] = [];
    let A: StoredRecord;
    let B: StoredRecord;
    before(async () => {
      const [url, options] = await target();
      store = (await sql.openStore(url, options)) as Store;
      store.subscribe({ publish: (event) => void seen.push(event) });
      A = await store.insert({
        collection: "organizations",
        record: record({ name: "Acme" }),
        constraints: none,
      });
      B = await store.insert({
        collection: "organizations",
        record: record({ name: "Bolt" }),
        constraints: none,
      });
    });
    after(() => store?.close());

    const ticket = (org: StoredRecord, subject: string) =>
      store.insert({
        collection: "tickets",
        record: record({ organization_id: org.id, subject, priority: "normal", status: "new", tag_ids: [] }),
        constraints: none,
      });
    const asB = () => ({ organization_id: B.id });

    test("update and delete with another tenant's where change nothing; with the record's own they write", async () => {
      const t = await ticket(A, "printer on fire");
      const events = seen.length;
      const changed = { ...t.values, subject: "mine now" };
      assert.equal(
        await store.update({
          collection: "tickets",
          id: t.id,
          values: changed,
          expectedRevision: 1,
          constraints: none,
          publish: publish("ticket.updated"),
          current: t,
          where: asB(),
        }),
        null,
      );
      assert.equal(
        await store.update({
          collection: "tickets",
          id: t.id,
          values: changed,
          expectedRevision: 1,
          constraints: none,
          publish: publish("ticket.updated"),
          where: asB(),
        }),
        null,
      );
      assert.equal(
        await store.delete({
          collection: "tickets",
          id: t.id,
          expectedRevision: 1,
          publish: publish("ticket.deleted"),
          current: t,
          where: asB(),
        }),
        false,
      );
      assert.equal(
        await store.delete({ collection: "tickets", id: t.id, expectedRevision: 1, where: asB() }),
        false,
      );
      // The tenant collection's key is `id`: B's principal cannot write A's record either.
      assert.equal(
        await store.update({
          collection: "organizations",
          id: A.id,
          values: { name: "taken" },
          expectedRevision: 1,
          constraints: none,
          current: A,
          where: { id: B.id },
        }),
        null,
      );
      const after = await store.get("tickets", t.id);
      assert.equal(after?.revision, 1);
      assert.equal(after?.values.subject, "printer on fire");
      assert.equal((await store.get("organizations", A.id))?.values.name, "Acme");
      assert.equal(seen.length, events, "no event for a write that wrote nothing");
      // A stale revision of the right tenant is still a conflict, not a missing record.
      await assert.rejects(
        store.update({
          collection: "tickets",
          id: t.id,
          values: changed,
          expectedRevision: 7,
          constraints: none,
          where: { organization_id: A.id },
        }),
        { status: 409 },
      );
      const own = await store.update({
        collection: "tickets",
        id: t.id,
        values: changed,
        expectedRevision: 1,
        constraints: none,
        publish: publish("ticket.updated"),
        current: t,
        where: { organization_id: A.id },
      });
      assert.equal(own?.values.subject, "mine now");
      assert.equal(own?.revision, 2);
      assert.equal(
        await store.delete({
          collection: "tickets",
          id: t.id,
          expectedRevision: 2,
          publish: publish("ticket.deleted"),
          current: own!,
          where: { organization_id: A.id },
        }),
        true,
      );
      assert.equal(await store.get("tickets", t.id), null);
    });

    test("a delete that cascades, with another tenant's where, deletes nothing", async () => {
      const C = await store.insert({
        collection: "organizations",
        record: record({ name: "Cone" }),
        constraints: none,
      });
      const t = await store.insert({
        collection: "tickets",
        record: record({
          organization_id: C.id,
          subject: "x",
          priority: "normal",
          status: "new",
          tag_ids: [],
        }),
        constraints: none,
      });
      const comment = await store.insert({
        collection: "comments",
        record: record({ organization_id: C.id, ticket_id: t.id, body: "on it" }),
        constraints: none,
      });
      const events = seen.length;
      assert.equal(
        await store.delete({
          collection: "organizations",
          id: C.id,
          expectedRevision: 1,
          publish: publish("organization.deleted"),
          current: C,
          where: { id: B.id },
        }),
        false,
      );
      assert.equal(
        await store.delete({
          collection: "tickets",
          id: t.id,
          expectedRevision: 1,
          publish: publish("ticket.deleted"),
          current: t,
          where: asB(),
        }),
        false,
      );
      assert.ok(await store.get("organizations", C.id));
      assert.ok(await store.get("tickets", t.id));
      assert.ok(await store.get("comments", comment.id));
      assert.equal(seen.length, events);
      assert.equal(
        await store.delete({
          collection: "tickets",
          id: t.id,
          expectedRevision: 1,
          publish: publish("ticket.deleted"),
          current: t,
          where: { organization_id: C.id },
        }),
        true,
      );
      assert.equal(await store.get("comments", comment.id), null);
    });

    test("a tenant's delete takes along only its own tenant's records, and refuses to reach another's (422, nothing changed)", async () => {
      // A comment and a board of B under A's ticket: the API never writes them (references are
      // checked within the tenant, and a record stays in its tenant); the store is called
      // directly. A's delete would take B's comment along, or change B's board: it is refused
      // (SPEC §12.4, a tenant changes only its tenant's records), on every store alike. Once B's
      // records no longer name the ticket, the delete's statements match A only.
      const t = await ticket(A, "cascade scope");
      const own = await store.insert({
        collection: "comments",
        record: record({ organization_id: A.id, ticket_id: t.id, body: "A's" }),
        constraints: none,
      });
      const stray = await store.insert({
        collection: "comments",
        record: record({ organization_id: B.id, ticket_id: t.id, body: "B's" }),
        constraints: none,
      });
      const other = await ticket(A, "kept");
      const board = await store.insert({
        collection: "boards",
        record: record({ organization_id: A.id, name: "A's", ticket_ids: [t.id, other.id] }),
        constraints: none,
      });
      const strayBoard = await store.insert({
        collection: "boards",
        record: record({ organization_id: B.id, name: "B's", ticket_ids: [t.id] }),
        constraints: none,
      });
      const events = seen.length;
      // The delete's events: `.deleted`, and `.updated` for a record whose array lost the ticket (`updated:<collection>`).
      const deleted = (r: StoredRecord, collection: string) =>
        createEvent(collection.startsWith("updated:") ? "updated" : "deleted", collection, {
          id: r.id,
          ...r.values,
        });
      const remove = () =>
        store.delete({
          collection: "tickets",
          id: t.id,
          expectedRevision: 1,
          publish: deleted,
          current: t,
          where: { organization_id: A.id },
          tenant: A.id,
        });
      const refused = async (collection: string, records: ReadonlyArray<readonly [string, StoredRecord]>) => {
        await assert.rejects(remove(), (error: Error) =>
          error.message.startsWith(`Records of ${collection} of another tenant refer to this record`),
        );
        for (const [name, r] of records)
          assert.deepEqual(await store.get(name, r.id), r, `${name} ${r.id} unchanged`);
        assert.equal(seen.length, events, "no event");
      };
      await refused("comments", [
        ["tickets", t],
        ["comments", own],
        ["comments", stray],
        ["boards", board],
        ["boards", strayBoard],
      ]);
      assert.equal(await store.delete({ collection: "comments", id: stray.id, expectedRevision: 1 }), true);
      await refused("boards", [
        ["tickets", t],
        ["comments", own],
        ["boards", board],
        ["boards", strayBoard],
      ]);
      const strayMoved = await store.update({
        collection: "boards",
        id: strayBoard.id,
        values: { ...strayBoard.values, ticket_ids: [] },
        expectedRevision: 1,
        constraints: none,
        current: strayBoard,
      });
      assert.ok(strayMoved);
      assert.equal(await remove(), true);
      const kept = seen.slice(events).map((e) => [e.type, e.data.id]);
      assert.deepEqual(
        kept.map(([, id]) => id).sort(),
        [t.id, own.id, board.id].sort(),
        "events of A's ticket, its comment and its board only",
      );
      assert.deepEqual(
        kept.find(([, id]) => id === board.id),
        ["updated", board.id],
      );
      assert.equal(await store.get("comments", own.id), null);
      const boardAfter = await store.get("boards", board.id);
      assert.deepEqual([boardAfter?.values.ticket_ids, boardAfter?.revision], [[other.id], 2]);
      assert.deepEqual(await store.get("boards", strayBoard.id), strayMoved, "B's board untouched");
    });

    test("writeAll: an update or expect with another tenant's where is a record that is not there", async () => {
      const t = await ticket(A, "writeAll");
      const events = seen.length;
      const action = record({ ticket_id: t.id, reason: "late" });
      const changed = { ...t.values, status: "open" };
      assert.equal(
        await store.writeAll([
          {
            update: {
              collection: "tickets",
              id: t.id,
              values: changed,
              expectedRevision: 1,
              constraints: none,
              publish: publish("ticket.updated"),
              current: t,
              where: asB(),
            },
          },
          {
            insert: {
              collection: "tickets/escalations",
              record: action,
              constraints: none,
              publish: publish("ticket.escalation.created"),
            },
          },
        ]),
        null,
      );
      assert.equal(
        await store.writeAll([
          { expect: { collection: "tickets", id: t.id, revision: 1, where: asB() } },
          {
            insert: {
              collection: "tickets/escalations",
              record: action,
              constraints: none,
              publish: publish("ticket.escalation.created"),
            },
          },
        ]),
        null,
      );
      assert.equal((await store.get("tickets", t.id))?.revision, 1);
      assert.equal(await store.get("tickets/escalations", action.id), null);
      assert.equal(seen.length, events);
      const written = await store.writeAll([
        { expect: { collection: "tickets", id: t.id, revision: 1, where: { organization_id: A.id } } },
        {
          insert: {
            collection: "tickets/escalations",
            record: action,
            constraints: none,
            publish: publish("ticket.escalation.created"),
          },
        },
      ]);
      assert.equal(written?.length, 2);
    });
  });
}
