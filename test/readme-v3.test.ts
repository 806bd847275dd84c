// The README's v3 walk-through (SPEC §12 on the showcase) runs as written: its shell block is
// taken from README.md and run with bash against the showcase served on loopback (the memory
// store, or the one CANON_TEST_STORE names), with only the port changed; each answer it prints
// is checked.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { repoRoot } from "./support/cli.ts";
import { startApp, type Api } from "./http/helpers.ts";

type Obj = Record<string, any>;
let api: Api;
before(async () => {
  api = await startApp({ exports: { directory: path.join(repoRoot, "test", ".tmp", `readme-exports-${process.pid}`) } });
});
after(() => api?.close());

function v3Block(): string {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### v3: what real APIs declare"));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block, "README has the v3 shell block");
  return block[1]!;
}

test("README: the v3 curl walk-through works as written", { skip: spawnSync("sh", ["-c", "command -v jq && command -v curl"]).status !== 0 && "jq or curl missing" }, async () => {
  const script = v3Block().replaceAll("http://127.0.0.1:3000", api.base);
  // Asynchronously: the service answers from this process.
  const run = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script.replace(/^curl /gm, "curl -w '\\n' ")], { encoding: "utf8" });
  const answers = run.stdout.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as Obj);
  const [orders, products, invoice, approved, unapproved, conflict, missing, badSort, exported, cancellation, cancelled, again, v2Cancellation, early, payment, shipment, late] = answers;
  assert.equal(answers.length, 17, run.stdout);
  assert.equal(orders!.data.length, 1);
  assert.deepEqual(orders!.data[0].metadata, { "crm.id": "A-17" });
  assert.deepEqual(products!.data.map((p: Obj) => p.price), ["19.99"]);
  assert.equal(invoice!.number, 1);
  assert.deepEqual(approved!.data.map((i: Obj) => i.id), [invoice!.id]);
  assert.deepEqual(unapproved!.data, []);
  assert.equal(conflict!.error.code, "CONFLICT");
  assert.deepEqual(conflict!.error.details.map((d: Obj) => d.field), ["order_id", "number"]);
  assert.equal(missing!.error.code, "BUSINESS_RULE_VIOLATION");
  assert.deepEqual(missing!.error.details.map((d: Obj) => d.field), ["product_ids.0"]);
  assert.deepEqual(badSort!.error.details.map((d: Obj) => d.field), ["sort"]);
  assert.equal(exported!.sort, "-placed_at");
  // v3's cancellations cancel the order (SPEC §12.5): a new revision, and its order.updated event.
  const orderId = cancellation!.order_id as string;
  assert.equal(typeof cancellation!.id, "string");
  assert.deepEqual(cancelled, { status: "cancelled" });
  const read = await fetch(`${api.base}/v3/orders/${orderId}`, { headers: { authorization: "Bearer dev-writer" } });
  const order = (await read.json()) as Obj;
  assert.equal(order.status, "cancelled");
  assert.notEqual(read.headers.get("etag"), null);
  assert.notEqual(order.updated_at, order.created_at);
  const events = (await (await fetch(`${api.base}/v3/events?limit=100`, { headers: { authorization: "Bearer dev-writer" } })).json()) as Obj;
  const updated = events.data.filter((e: Obj) => e.type === "order.updated" && e.data.id === orderId);
  assert.equal(updated.length, 1, JSON.stringify(events.data.map((e: Obj) => e.type)));
  assert.equal(updated[0].data.status, "cancelled");
  // A second cancellation is refused naming the field; nothing is created.
  assert.equal(again!.error.code, "BUSINESS_RULE_VIOLATION");
  assert.deepEqual(again!.error.details.map((d: Obj) => d.field), ["status"]);
  // v2 keeps its cancellations as published: a record, whatever the order's status.
  assert.equal(v2Cancellation!.order_id, orderId);
  const list = (await (await fetch(`${api.base}/v3/events?limit=100`, { headers: { authorization: "Bearer dev-writer" } })).json()) as Obj;
  assert.equal(list.data.filter((e: Obj) => e.type === "order.updated" && e.data.id === orderId).length, 1, "v2's cancellation changed nothing");
  // The machine refuses pending → shipped, naming the values pending may take.
  assert.equal(early!.error.code, "BUSINESS_RULE_VIOLATION");
  assert.deepEqual(early!.error.details.map((d: Obj) => d.field), ["status"]);
  assert.match(JSON.stringify(early!.error.details[0]), /paid/);
  assert.match(JSON.stringify(early!.error.details[0]), /cancelled/);
  const second = payment!.order_id as string;
  assert.equal(shipment!.carrier, "DHL");
  // A shipped order is not cancelled: 422 naming status, no cancellation created.
  assert.equal(late!.error.code, "BUSINESS_RULE_VIOLATION");
  assert.deepEqual(late!.error.details.map((d: Obj) => d.field), ["status"]);
  const shipped = (await (await fetch(`${api.base}/v3/orders/${second}`, { headers: { authorization: "Bearer dev-writer" } })).json()) as Obj;
  assert.equal(shipped.status, "shipped");
  const v2Read = (await (await fetch(`${api.base}/v2/orders/${second}`, { headers: { authorization: "Bearer dev-writer" } })).json()) as Obj;
  assert.equal(v2Read.status, "shipped", "one status is stored: v2 reads what v3 did");
});
