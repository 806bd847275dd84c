// Store.writeAll (SPEC §12.5, actions that act) on every store, over the store generated from
// test/fixtures/desk: several writes and their events kept as one, in order, or none of them.
import assert from "node:assert/strict";
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
before(async () => {
  const dir = workspace("store-write-all", "test/fixtures/desk");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  sql = (await import(new URL("sql/index.ts", pathToFileURL(path.join(dir, "generated") + path.sep)).href)) as Obj;
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets: Array<[string, () => Promise<[string, Obj]>]> = [
  ["memory", async () => ["memory", {}]],
  ["pglite", async () => ["pglite:memory://", {}]],
  [
    "postgres",
    async () => {
      await preparePostgres();
      const schema = freshSchema("canon_write_all");
      schemas.push(schema);
      return [POSTGRES_URL, { schema }];
    },
  ],
];

const none = { unique: [] };
/** A 409 of the generated runtime's own RecordChangedError (a ConflictError: the record changed meanwhile; a copy of the class). */
const conflict = { name: "RecordChangedError", status: 409, code: "CONFLICT" };
const publish = (type: string) => (record: StoredRecord, collection: string) => createEvent(type, collection, { id: record.id, ...record.values });

function record(values: Obj): StoredRecord {
  const now = new Date().toISOString();
  return { id: newId(), created_at: now, updated_at: now, revision: 1, values };
}

for (const [name, target] of targets) {
  describe(`Store.writeAll: ${name}`, () => {
    let store: Store;
    const seen: Obj[] = [];
    before(async () => {
      const [url, options] = await target();
      store = (await sql.openStore(url, options)) as Store;
      store.subscribe({ publish: (event) => void seen.push(event) });
    });
    after(() => store?.close());

    const ticket = () => store.insert({ collection: "tickets", record: record({ subject: "S", status: "new", escalated: false }), constraints: none, publish: publish("ticket.created") });

    test("an update and an insert are kept with their events, in the order of the writes", async () => {
      const t = await ticket();
      const start = seen.length;
      const note = record({ ticket_id: t.id, text: "hi" });
      const written = await store.writeAll([
        { update: { collection: "tickets", id: t.id, values: { ...t.values, status: "open" }, expectedRevision: t.revision, constraints: none, publish: publish("ticket.updated"), current: t } },
        { insert: { collection: "tickets/notes", record: note, constraints: none, publish: publish("ticket.note.created") } },
      ]);
      assert.ok(written);
      assert.equal(written[0]!.revision, t.revision + 1);
      assert.equal(written[0]!.values.status, "open");
      assert.equal(written[1]!.id, note.id);
      assert.deepEqual(seen.slice(start).map((e) => e.type), ["ticket.updated", "ticket.note.created"]);
      assert.equal((await store.get("tickets", t.id))!.values.status, "open");
      assert.ok(await store.get("tickets/notes", note.id));
    });

    test("a revision conflict keeps nothing: no insert, no event", async () => {
      const t = await ticket();
      const start = seen.length;
      const note = record({ ticket_id: t.id, text: "late" });
      await assert.rejects(
        store.writeAll([
          { update: { collection: "tickets", id: t.id, values: { ...t.values, status: "open" }, expectedRevision: t.revision + 5, constraints: none, publish: publish("ticket.updated"), current: t } },
          { insert: { collection: "tickets/notes", record: note, constraints: none, publish: publish("ticket.note.created") } },
        ]),
        conflict,
      );
      await assert.rejects(store.writeAll([{ expect: { collection: "tickets", id: t.id, revision: t.revision + 1 } }, { insert: { collection: "tickets/notes", record: note, constraints: none, publish: publish("ticket.note.created") } }]), conflict);
      assert.equal(await store.get("tickets/notes", note.id), null);
      assert.equal((await store.get("tickets", t.id))!.revision, t.revision);
      assert.equal(seen.length, start);
    });

    test("a failing later write rolls the earlier one back", async () => {
      const t = await ticket();
      const start = seen.length;
      const taken = record({ ticket_id: t.id, text: "one" });
      await store.insert({ collection: "tickets/notes", record: taken, constraints: none });
      await assert.rejects(
        store.writeAll([
          { update: { collection: "tickets", id: t.id, values: { ...t.values, status: "open" }, expectedRevision: t.revision, constraints: none, publish: publish("ticket.updated"), current: t } },
          { insert: { collection: "tickets/notes", record: { ...taken }, constraints: none, publish: publish("ticket.note.created") } },
        ]),
      );
      const now = (await store.get("tickets", t.id))!;
      assert.equal(now.revision, t.revision);
      assert.equal(now.values.status, "new");
      assert.equal(seen.length, start);
    });

    test("a delete goes with the other writes: kept with their events in order, or not at all", async () => {
      const t = await ticket();
      const start = seen.length;
      const other = record({ subject: "noted", status: "new", escalated: false });
      const written = await store.writeAll([
        { insert: { collection: "tickets", record: other, constraints: none, publish: publish("ticket.created") } },
        { delete: { collection: "tickets", id: t.id, expectedRevision: t.revision, publish: publish("ticket.deleted"), current: t } },
      ]);
      assert.ok(written);
      assert.equal(written[0]!.id, other.id);
      assert.equal(written[1]!.id, t.id, "a delete gives the record as it was");
      assert.deepEqual(seen.slice(start, start + 2).map((e) => [e.type, e.data.id]), [["ticket.created", other.id], ["ticket.deleted", t.id]]);
      assert.equal(await store.get("tickets", t.id), null);
      assert.ok(await store.get("tickets", other.id));
      // At a revision the record is no longer at: 409, the insert not kept either; gone: null.
      const u = await ticket();
      const after = seen.length;
      const never = record({ subject: "never", status: "new", escalated: false });
      await assert.rejects(
        store.writeAll([
          { insert: { collection: "tickets", record: never, constraints: none, publish: publish("ticket.created") } },
          { delete: { collection: "tickets", id: u.id, expectedRevision: u.revision + 1, publish: publish("ticket.deleted"), current: u } },
        ]),
        conflict,
      );
      assert.equal(await store.get("tickets", never.id), null);
      assert.ok(await store.get("tickets", u.id));
      assert.equal(seen.length, after);
      assert.equal(await store.writeAll([{ insert: { collection: "tickets", record: never, constraints: none } }, { delete: { collection: "tickets", id: t.id, expectedRevision: t.revision } }]), null);
      assert.equal(await store.get("tickets", never.id), null);
    });

    test("a record that is gone: null, nothing kept", async () => {
      const note = record({ ticket_id: newId(), text: "orphan" });
      assert.equal(await store.writeAll([{ expect: { collection: "tickets", id: note.values.ticket_id as string, revision: 1 } }, { insert: { collection: "tickets/notes", record: note, constraints: none } }]), null);
      assert.equal(await store.get("tickets/notes", note.id), null);
    });
  });
}
