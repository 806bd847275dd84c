// A delete that cascades to a collection the serving version does not have: the child's event
// is made through the newest version that has it, and the delete succeeds (never a 500).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canon, workspace } from "../support/cli.ts";
import { expectStatus, listen, loadContract, type Api } from "./helpers.ts";

type Obj = Record<string, any>;

let api: Api;
const published: Obj[] = [];
before(async () => {
  const dir = workspace("cascade-events", "test/fixtures/cascade-versions");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const out = pathToFileURL(path.join(dir, "generated") + path.sep);
  const entry = (await import(new URL("index.ts", out).href)) as Obj;
  const sql = (await import(new URL("sql/index.ts", out).href)) as Obj;
  const store = await sql.openStore("pglite:memory://");
  const events = { publish: (event: Obj) => void published.push(event) };
  api = await listen(await entry.buildApp({ authenticate: entry.devAuthenticate, rateLimit: false, store, events }), loadContract("cascade-versions", out, ["v1", "v2"]));
});
after(() => api?.close());

test("deleting a team through v1 publishes its notes' events as v2 shows them (v1 has no notes)", async () => {
  const team = (await expectStatus(api, "POST", "/v1/teams", 201, { body: { name: "Blue" } })).body as Obj;
  const note = (await expectStatus(api, "POST", "/v2/notes", 201, { body: { team_id: team.id, text: "hi" } })).body as Obj;
  await expectStatus(api, "GET", `/v1/notes/${note.id}`, 404);
  const start = published.length;
  await expectStatus(api, "DELETE", `/v1/teams/${team.id}`, 204);
  const events = published.slice(start);
  assert.deepEqual(events.map((e) => [e.type, e.data]), [["team.deleted", team], ["note.deleted", note]]);
  for (const event of events) assert.deepEqual((await expectStatus(api, "GET", `/v2/events/${event.id}`, 200)).body, event);
});
