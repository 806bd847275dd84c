// The store contract over HTTP on every store (memory, PGlite, a PostgreSQL server), on the
// service generated from test/fixtures/clubs: references with each on_delete behaviour, unique
// text compared normalized, and odd input, each answered the same way on every store.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { detailFields, expectError, expectStatus, listen, loadContract, type Api } from "../http/helpers.ts";
import { dropSchemas, storeTargets } from "./stores.ts";

type Obj = Record<string, any>;

let out: URL;
before(() => {
  const dir = workspace("store-contract", "test/fixtures/clubs");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  out = pathToFileURL(path.join(dir, "generated") + path.sep);
});

const schemas: string[] = [];
after(() => dropSchemas(schemas));

const targets = storeTargets(schemas);

let n = Math.floor(Math.random() * 100_000);
const next = () => ++n;

for (const target of targets) {
  describe(`store contract over HTTP: ${target.name}`, () => {
    let api: Api;
    const published: Obj[] = [];
    before(async () => {
      const entry = (await import(new URL("index.ts", out).href)) as Obj;
      const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
      const { url, options } = await target.target();
      const store = await sql.openStore(url, options);
      api = await listen(await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store, events: { publish: (event: Obj) => void published.push(event) } }), loadContract(`clubs-${target.name}`, out, ["v1"]));
    });
    after(() => api?.close());

    const team = async (extra: Obj = {}) => (await expectStatus(api, "POST", "/v1/teams", 201, { body: { name: `Team ${next()}`, ...extra } })).body as Obj;
    const member = async (teamId: string) => (await expectStatus(api, "POST", "/v1/members", 201, { body: { team_id: teamId, name: `Member ${next()}` } })).body as Obj;
    const project = async (leadId: string, sponsorId?: string) =>
      (await expectStatus(api, "POST", "/v1/projects", 201, { body: { lead_id: leadId, title: `Project ${next()}`, ...(sponsorId ? { sponsor_id: sponsorId } : {}) } })).body as Obj;

    describe("odd input: stored and read back identically, or 400 naming the field, the same on every store", () => {
      test("a NUL character or an unpaired surrogate answers 400 naming the field (body and query)", async () => {
        // A leading byte-order mark too: PGlite's reader drops it from every value it reads.
        for (const [field, value] of [["motto", "a\u0000b"], ["name", "x\ud800y"], ["motto", "\udc00"], ["name", "end\ud83d"], ["motto", "\ufeffBOM"]] as const) {
          const error = await expectError(api, "POST", "/v1/teams", 400, "VALIDATION_ERROR", { body: { name: `Team ${next()}`, [field]: value } });
          assert.deepEqual(detailFields(error), [field], JSON.stringify(value));
        }
        const t = await team();
        const error = await expectError(api, "PATCH", `/v1/teams/${t.id}`, 400, "VALIDATION_ERROR", { body: { motto: "\u0000" } });
        assert.deepEqual(detailFields(error), ["motto"]);
        const query = await expectError(api, "GET", `/v1/teams?q=${encodeURIComponent("ab\u0000c")}`, 400, "VALIDATION_ERROR");
        assert.deepEqual(detailFields(query), ["q"]);
      });

      test("year 0000 in a date answers 400 naming the field; 0001-01-01 and 9999-12-31 are kept as sent", async () => {
        const error = await expectError(api, "POST", "/v1/teams", 400, "VALIDATION_ERROR", { body: { name: `Team ${next()}`, founded: "0000-01-01" } });
        assert.deepEqual(detailFields(error), ["founded"]);
        for (const founded of ["0001-01-01", "9999-12-31", "2024-02-29"]) {
          const t = await team({ founded });
          assert.equal(t.founded, founded);
          assert.equal(((await expectStatus(api, "GET", `/v1/teams/${t.id}`, 200)).body as Obj).founded, founded);
        }
      });

      test("very long text, astral characters, combining marks and other odd text are read back exactly", async () => {
        const long = "𝄞 naïve café — ".repeat(2000) + "end"; // 44 KB of UTF-8: most of the 64 KiB body limit
        for (const motto of [long, "emoji 😀👩‍👩‍👧 and\u200b zero-width", "tabs\tand\nnewlines\r\n", "  surrounding spaces  ", "'; drop table teams; --", "\\%_ like patterns", "inner\ufeffBOM", "e\u0301 NFD kept"]) {
          const t = await team({ motto });
          assert.equal(t.motto, motto);
          assert.equal(((await expectStatus(api, "GET", `/v1/teams/${t.id}`, 200)).body as Obj).motto, motto);
        }
      });
    });

    describe("unique text compares normalized: NFC, surrounding white space trimmed, emails without ASCII case", () => {
      test("café in NFC then in NFD, or with spaces around it, answers 409 naming the field; the value kept is the value sent", async () => {
        const tag = next();
        const nfc = `Caf\u00e9 ${tag}`;
        const first = await team({ name: nfc });
        assert.equal(first.name, nfc);
        for (const name of [`Cafe\u0301 ${tag}`, `  ${nfc}\u00a0`, `\u3000Cafe\u0301 ${tag}\n`]) {
          const error = await expectError(api, "POST", "/v1/teams", 409, "CONFLICT", { body: { name } });
          assert.deepEqual(detailFields(error), ["name"], JSON.stringify(name));
        }
        // Other text is other text: case matters outside emails.
        const upper = await team({ name: `CAF\u00c9 ${tag}` });
        assert.equal(upper.name, `CAF\u00c9 ${tag}`);
        // An update to a taken value conflicts too; to its own value (renormalized) it does not.
        const error = await expectError(api, "PATCH", `/v1/teams/${upper.id}`, 409, "CONFLICT", { body: { name: `Cafe\u0301 ${tag}` } });
        assert.deepEqual(detailFields(error), ["name"]);
        const renamed = await expectStatus(api, "PATCH", `/v1/teams/${first.id}`, 200, { body: { name: `Cafe\u0301 ${tag}` } });
        assert.equal((renamed.body as Obj).name, `Cafe\u0301 ${tag}`);
      });

      test("Ann@X.org after ann@x.org answers 409; the stored email keeps its case", async () => {
        const tag = next();
        const first = await team({ contact: `ann${tag}@x.org` });
        assert.equal(first.contact, `ann${tag}@x.org`);
        for (const contact of [`Ann${tag}@X.org`, `ANN${tag}@X.ORG`]) {
          const error = await expectError(api, "POST", "/v1/teams", 409, "CONFLICT", { body: { name: `Team ${next()}`, contact } });
          assert.deepEqual(detailFields(error), ["contact"], contact);
        }
        const other = await team({ contact: `Bob${tag}@X.org` });
        assert.equal(other.contact, `Bob${tag}@X.org`);
        // Once the first is deleted, its email is free again, in any case.
        await expectStatus(api, "DELETE", `/v1/teams/${first.id}`, 204);
        const again = await team({ contact: `ANN${tag}@x.org` });
        assert.equal(again.contact, `ANN${tag}@x.org`);
      });
    });

    describe("on_delete", () => {
      test("restrict (the default): deleting a record another still refers to answers 422 naming the referring collection; nothing is deleted", async () => {
        const t = await team();
        const lead = await member(t.id);
        const p = await project(lead.id);
        const error = await expectError(api, "DELETE", `/v1/members/${lead.id}`, 422, "BUSINESS_RULE_VIOLATION");
        assert.match(error.message, /projects/);
        assert.deepEqual(error.details, [{ field: "id", issue: "is referred to by records of projects" }]);
        await expectStatus(api, "GET", `/v1/members/${lead.id}`, 200);
        // Through a cascade too: deleting the team would delete the member a project leads.
        const start = published.length;
        const viaTeam = await expectError(api, "DELETE", `/v1/teams/${t.id}`, 422, "BUSINESS_RULE_VIOLATION");
        assert.deepEqual(published.slice(start), [], "a delete refused within its cascade publishes nothing");
        assert.deepEqual(viaTeam.details, [{ field: "id", issue: "is referred to by records of projects" }]);
        await expectStatus(api, "GET", `/v1/teams/${t.id}`, 200);
        await expectStatus(api, "GET", `/v1/members/${lead.id}`, 200);
        // Once nothing refers to it, it goes.
        await expectStatus(api, "DELETE", `/v1/projects/${p.id}`, 204);
        await expectStatus(api, "DELETE", `/v1/members/${lead.id}`, 204);
        await expectStatus(api, "GET", `/v1/members/${lead.id}`, 404);
      });

      test("restrict declared on a parent field: a member with badges cannot be deleted, nor its team", async () => {
        const t = await team();
        const m = await member(t.id);
        const badge = (await expectStatus(api, "POST", "/v1/badges", 201, { body: { member_id: m.id, label: "gold" } })).body as Obj;
        const error = await expectError(api, "DELETE", `/v1/members/${m.id}`, 422, "BUSINESS_RULE_VIOLATION");
        assert.deepEqual(error.details, [{ field: "id", issue: "is referred to by records of badges" }]);
        await expectError(api, "DELETE", `/v1/teams/${t.id}`, 422, "BUSINESS_RULE_VIOLATION");
        await expectStatus(api, "DELETE", `/v1/badges/${badge.id}`, 204);
        await expectStatus(api, "DELETE", `/v1/teams/${t.id}`, 204);
        await expectStatus(api, "GET", `/v1/members/${m.id}`, 404);
      });

      test("cascade: a parent's children go with it (the default for a parent field), and so do records declaring on_delete: cascade", async () => {
        const t = await team();
        const other = await team();
        const members = [await member(t.id), await member(t.id)];
        const otherLead = await member(other.id);
        const sponsored = await project(otherLead.id, t.id);
        const unsponsored = await project(otherLead.id);
        const shown = [
          ...members.map((m) => ["member.deleted", m]),
          ["project.deleted", sponsored],
        ];
        const start = published.length;
        await expectStatus(api, "DELETE", `/v1/teams/${t.id}`, 204);
        // Every record the delete took along publishes its .deleted event, kept with the delete.
        const events = published.slice(start);
        assert.deepEqual(events[0]!.type, "team.deleted");
        assert.deepEqual(events[0]!.data, t);
        assert.deepEqual(
          events.slice(1).map((e) => [e.type, e.data]).sort((a, b) => a[1].id.localeCompare(b[1].id)),
          shown.sort((a: Obj, b: Obj) => a[1].id.localeCompare(b[1].id)),
        );
        for (const event of events) assert.deepEqual((await expectStatus(api, "GET", `/v1/events/${event.id}`, 200)).body, event);
        await expectStatus(api, "GET", `/v1/teams/${t.id}`, 404);
        for (const m of members) await expectStatus(api, "GET", `/v1/members/${m.id}`, 404);
        await expectStatus(api, "GET", `/v1/projects/${sponsored.id}`, 404);
        await expectStatus(api, "GET", `/v1/projects/${unsponsored.id}`, 200);
        await expectStatus(api, "GET", `/v1/members/${otherLead.id}`, 200);
        assert.deepEqual(((await expectStatus(api, "GET", `/v1/teams/${t.id}/members`, 404)).body as Obj).error.code, "NOT_FOUND");
      });

      test("a record both cascaded and restricting within one delete does not hold it: a project sponsored by the team and led by its member goes with the team", async () => {
        const t = await team();
        const lead = await member(t.id);
        const p = await project(lead.id, t.id);
        await expectStatus(api, "DELETE", `/v1/teams/${t.id}`, 204);
        await expectStatus(api, "GET", `/v1/projects/${p.id}`, 404);
        await expectStatus(api, "GET", `/v1/members/${lead.id}`, 404);
      });
    });
  });
}
