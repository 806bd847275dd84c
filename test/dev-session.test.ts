// `canon dev` regenerates with a session (generator/session.ts): what its runs keep from one to
// the next (parsed definitions, formatted files, the output folder as written, remembered
// results) must never change what is written. After each edit, the output a session wrote is
// exactly what a fresh `canon generate` writes.
import assert from "node:assert/strict";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { openapiDocument } from "../generator/emit/openapi/document.ts";
import { generate } from "../generator/generate.ts";
import { closeSession, createSession } from "../generator/session.ts";
import { canon, workspace } from "./support/cli.ts";

const today = "2026-11-21";

test("a dev session's regeneration after each edit writes exactly what a fresh generate writes", { timeout: 300_000 }, async (t) => {
  const dir = workspace("dev-session", "definitions");
  const definitions = path.join(dir, "definitions");
  const out = path.join(dir, "generated");
  const products = path.join(definitions, "products.yaml");
  const original = readFileSync(products, "utf8");
  const session = createSession();
  t.after(() => closeSession(session));
  const run = () => generate({ definitions, out, write: true, today, cacheFile: null, cwd: dir, session });

  const api = path.join(definitions, "api.yaml");
  const users = path.join(definitions, "users.yaml");
  const edits: Array<[string, string, string?]> = [
    ["the first run", original],
    // A new route: an action, with the migration of its table.
    ["an action", `${original}actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n`],
    // A new optional field beside it, and then a second action.
    [
      "a field",
      original.replace(/(  name: .*\n)/, "$1  subtitle: { type: string, max_length: 80, optional: true }\n") +
        `actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n`,
    ],
    ["an error", `${original}  broken: { type: nonsense }\n`],
    // A breaking change to the published versions: refused, as a fresh generate refuses it.
    ["a breaking change", original.replace(/  homepage: .*\n/, "")],
    [
      "the fix of the error, with a second action",
      original.replace(/(  name: .*\n)/, "$1  subtitle: { type: string, max_length: 80, optional: true }\n") +
        `actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n  ratings:\n    fields:\n      stars: { type: integer, minimum: 1, maximum: 5 }\n`,
    ],
    // Settings of the API and its versions, which every resource's part of a document reads.
    // (v2 is deprecated in favour of v3, published: every v2 operation is now marked deprecated.)
    ["the API's settings", readFileSync(api, "utf8").replace("  v2: {}", "  v2:\n    deprecated: 2026-11-01\n    sunset: 2027-12-31").replace("requests: 600", "requests: 500"), api],
    // Another resource, one that others refer to and list under.
    ["a parent resource", readFileSync(users, "utf8").replace(/^fields:\n/m, "fields:\n  nickname: { type: string, max_length: 40, optional: true }\n"), users],
  ];
  for (const [what, text, file = products] of edits) {
    writeFileSync(file, text);
    const result = await run();
    if (what === "an error") {
      assert.equal(result.diff, null, "a definition error writes nothing");
      continue;
    }
    if (what === "a breaking change") {
      assert.equal(result.diff, null, "a breaking change writes nothing");
      const fresh = await generate({ definitions, out, write: false, today, cacheFile: null, cwd: dir });
      assert.ok(result.diagnostics.some((d) => d.rule === "breaking-change"));
      assert.deepEqual(result.diagnostics, fresh.diagnostics, "the same breaking changes as a fresh generate");
      continue;
    }
    assert.ok(result.diff, `${what}: ${result.diagnostics.map((d) => d.message).join("; ")}`);
    // A fresh run of the whole pipeline, without the session, over a copy of what the session wrote.
    const copy = path.join(dir, `fresh-${edits.findIndex(([w]) => w === what)}`);
    cpSync(out, copy, { recursive: true });
    const fresh = await generate({ definitions, out: copy, write: false, today, cacheFile: null, cwd: dir });
    assert.ok(fresh.diff, what);
    assert.deepEqual({ added: fresh.diff.added, changed: fresh.diff.changed, stale: fresh.diff.stale }, { added: [], changed: [], stale: [] }, `${what}: the session wrote what a fresh generate writes`);
    assert.deepEqual(result.files, fresh.files, `${what}: the same files`);
    assert.deepEqual(result.diagnostics, fresh.diagnostics, `${what}: the same diagnostics`);
    // The gate judges the documents built on this thread; the emit thread wrote their texts.
    for (const version of result.model!.versions) {
      const written = result.files.find((f) => f.path === `${version.name}/openapi.json`)!.content;
      assert.equal(`${JSON.stringify(openapiDocument(result.model!, version), null, 2)}\n`, written, `${what}: ${version.name}'s document as the gate sees it`);
    }
    // And in a new process, where nothing is remembered from the runs before (util/memo.ts).
    const checked = canon(["check", "--definitions", definitions, "--out", copy, "--today", today], dir);
    assert.equal(checked.code, 0, `${what}: ${checked.stdout}${checked.stderr}`);
  }
});

test("a dev session reads a generated file again once it is edited by hand and emitted anew", async (t) => {
  const dir = workspace("dev-session-hand", "definitions");
  const definitions = path.join(dir, "definitions");
  const out = path.join(dir, "generated");
  const session = createSession();
  t.after(() => closeSession(session));
  const run = () => generate({ definitions, out, write: true, today, cacheFile: null, cwd: dir, session });
  assert.ok((await run()).diff);
  // A file removed by hand is written again by the next run of the session.
  const entry = path.join(out, "index.ts");
  const text = readFileSync(entry, "utf8");
  rmSync(entry);
  const again = await run();
  assert.deepEqual(again.diff?.added, ["index.ts"]);
  assert.equal(readFileSync(entry, "utf8"), text);
});

test("a dev session whose emit thread stopped starts another and writes the same output", async (t) => {
  const dir = workspace("dev-session-thread", "definitions");
  const definitions = path.join(dir, "definitions");
  const out = path.join(dir, "generated");
  const session = createSession();
  t.after(() => closeSession(session));
  const run = () => generate({ definitions, out, write: true, today, cacheFile: null, cwd: dir, session });
  const first = await run();
  assert.ok(first.diff && session.thread);
  const stopped = session.thread;
  await stopped.close();
  const again = await run();
  assert.ok(again.diff, again.diagnostics.map((d) => d.message).join("; "));
  assert.notEqual(session.thread, stopped, "a new thread");
  assert.deepEqual(again.files, first.files);
});
