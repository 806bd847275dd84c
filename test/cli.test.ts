import assert from "node:assert/strict";
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { canon, snapshot, workspace } from "./support/cli.ts";
import { GENERATED_HEADER } from "../generator/emit/emitter.ts";

describe("canon CLI", () => {
  test("--help lists every command", () => {
    const run = canon(["--help"]);
    assert.equal(run.code, 0);
    for (const command of ["init", "new", "generate", "check", "lint", "serve", "dev"]) {
      assert.match(run.stdout, new RegExp(`^  ${command}\\b`, "m"), `--help lists ${command}`);
    }
  });

  test("every command takes --definitions and --out (SPEC §3), lint, init and new too", () => {
    const dir = workspace("out-everywhere", "definitions");
    const lint = canon(["lint", "--definitions", "definitions", "--out", "generated"], dir);
    assert.equal(lint.code, 0, lint.stderr);
    const made = canon(["new", "widgets", "--definitions", "definitions", "--out", "generated"], dir);
    assert.equal(made.code, 0, made.stderr);
    assert.ok(existsSync(path.join(dir, "definitions", "widgets.yaml")));
    const init = canon(["init", "fresh", "--definitions", "definitions", "--out", "generated"], dir);
    assert.equal(init.code, 0, init.stderr);
    assert.equal(existsSync(path.join(dir, "generated")), false, "none of them writes the output");
  });

  test("a usage error exits 2", () => {
    assert.equal(canon(["frobnicate"]).code, 2);
    assert.equal(canon(["generate", "--no-such-flag"]).code, 2);
    assert.equal(canon(["new"]).code, 2);
  });

  test("generate writes the output, and a re-run that changes nothing writes nothing", () => {
    const dir = workspace("generate", "definitions");
    const first = canon(["generate"], dir);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /added +generated\/v2\/openapi\.json/);
    assert.match(first.stdout, /\(\d+ ms\)/);
    const file = path.join(dir, "generated", "v2", "orders", "routes.ts");
    const mtime = statSync(file).mtimeMs;
    const before = snapshot(path.join(dir, "generated"));
    const second = canon(["generate"], dir);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /up to date/);
    assert.equal(statSync(file).mtimeMs, mtime, "an unchanged file is not rewritten");
    assert.deepEqual(snapshot(path.join(dir, "generated")), before);
  });

  test("output is byte-identical across runs and folders, with or without the format cache", () => {
    const a = workspace("identical-a", "definitions");
    const b = workspace("identical-b", "definitions");
    assert.equal(canon(["generate"], a).code, 0);
    rmSync(path.join(a, "node_modules"), { recursive: true, force: true });
    assert.equal(canon(["generate", "--out", "again"], a).code, 0);
    assert.equal(canon(["generate"], b).code, 0);
    assert.deepEqual(snapshot(path.join(a, "generated")), snapshot(path.join(b, "generated")));
    assert.deepEqual(snapshot(path.join(a, "again")), snapshot(path.join(b, "generated")));
  });

  test("check lists edited, missing and stale files, and passes once generate has run", () => {
    const dir = workspace("check", "definitions");
    assert.equal(canon(["generate"], dir).code, 0);
    assert.equal(canon(["check"], dir).code, 0);
    const out = path.join(dir, "generated");
    appendFileSync(path.join(out, "v2", "orders", "types.ts"), "// edited\n");
    rmSync(path.join(out, "v1", "pagination.ts"));
    writeFileSync(path.join(out, "v2", "leftover.ts"), `${GENERATED_HEADER}\nexport {};\n`); // a file canon wrote earlier
    const before = snapshot(out);
    const run = canon(["check"], dir);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /differs +generated\/v2\/orders\/types\.ts/);
    assert.match(run.stderr, /missing +generated\/v1\/pagination\.ts/);
    assert.match(run.stderr, /stale +generated\/v2\/leftover\.ts/);
    assert.deepEqual(snapshot(out), before, "check writes nothing");
    const fix = canon(["generate"], dir);
    assert.equal(fix.code, 0);
    assert.match(fix.stdout, /removed +generated\/v2\/leftover\.ts/);
    assert.equal(existsSync(path.join(out, "v2", "leftover.ts")), false);
    assert.equal(canon(["check"], dir).code, 0);
  });

  test("a definition with errors writes nothing and reports every error with file:line:col", () => {
    const dir = workspace("broken", "definitions");
    assert.equal(canon(["generate"], dir).code, 0);
    const out = path.join(dir, "generated");
    const before = snapshot(out);
    const orders = path.join(dir, "definitions", "orders.yaml");
    writeFileSync(orders, readFileSync(orders, "utf8").replace("  note: {", "  customer_id: { type: integer }\n  note: {").replace("search: [note]", "search: [notes]"));
    appendFileSync(path.join(dir, "definitions", "users.yaml"), "  nickname: { type: string, max_lenght: 20 }\n");
    const run = canon(["generate"], dir);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /definitions\/orders\.yaml:\d+:\d+ error field-id-type "customer_id" ends in _id and must be type uuid/);
    assert.match(run.stderr, /definitions\/orders\.yaml:\d+:\d+ error filter-field/);
    assert.match(run.stderr, /definitions\/users\.yaml:\d+:\d+ error unknown-key .*max_lenght/);
    assert.match(run.stderr, /did you mean "max_length"/);
    assert.match(run.stderr, /nothing written/);
    assert.deepEqual(snapshot(out), before, "the output folder is untouched");
    assert.equal(canon(["lint"], dir).code, 1);
    assert.equal(canon(["check"], dir).code, 1);
  });

  test("lint prints diagnostics only and passes on the showcase", () => {
    const run = canon(["lint"]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
  });

  test("new writes a definition that generates cleanly, and refuses bad names and existing files", () => {
    const dir = workspace("new", "definitions");
    const ok = canon(["new", "orders-archives"], dir);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(existsSync(path.join(dir, "definitions", "orders-archives.yaml")));
    const child = canon(["new", "parcels", "--parent", "orders", "--pagination", "offset"], dir);
    assert.equal(child.code, 0, child.stderr);
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stderr);
    assert.ok(existsSync(path.join(dir, "generated", "v2", "orders-archives", "routes.ts")));
    const doc = JSON.parse(readFileSync(path.join(dir, "generated", "v2", "openapi.json"), "utf8"));
    assert.ok(doc.paths["/v2/orders/{id}/parcels"], "the child list of the new resource exists");

    const upper = canon(["new", "Orders"], dir);
    assert.equal(upper.code, 1);
    assert.match(upper.stderr, /path-lowercase/);
    const verb = canon(["new", "get-orders"], dir);
    assert.equal(verb.code, 1);
    assert.match(verb.stderr, /path-no-verb/);
    // A verb of the English lexicon, on no word list; a plural noun that is also a verb passes.
    const lexicon = canon(["new", "close-tickets"], dir);
    assert.equal(lexicon.code, 1);
    assert.match(lexicon.stderr, /path-no-verb.*contains the verb "close"/);
    assert.equal(canon(["new", "returns"], dir).code, 0);
    const singular = canon(["new", "invoice"], dir);
    assert.equal(singular.code, 1);
    assert.match(singular.stderr, /path-plural/);
    const again = canon(["new", "orders-archives"], dir);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists/);
  });

  test("new writes a child of a tenant-scoped resource, or of the tenant collection, that generates: its tenant field is there", () => {
    const dir = workspace("new-tenancy", "test/fixtures/tenancy");
    // comments is tenant-scoped (organization_id); organizations is the tenant collection.
    assert.equal(canon(["new", "reactions", "--parent", "comments"], dir).code, 0);
    assert.equal(canon(["new", "teams", "--parent", "organizations"], dir).code, 0);
    const reactions = readFileSync(path.join(dir, "definitions", "reactions.yaml"), "utf8");
    assert.match(reactions, /^ {2}comment_id: \{ type: uuid, references: comments \}$/m);
    assert.match(reactions, /^ {2}organization_id: \{ type: uuid, references: organizations, tenant: true \}$/m);
    const teams = readFileSync(path.join(dir, "definitions", "teams.yaml"), "utf8");
    assert.match(teams, /^ {2}organization_id: \{ type: uuid, references: organizations, tenant: true \}$/m);
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stdout + generated.stderr);
    rmSync(dir, { recursive: true, force: true });
  });

  test("init starts a new API in an empty folder, which then generates", () => {
    const dir = workspace("init");
    const run = canon(["init"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(existsSync(path.join(dir, "definitions", "api.yaml")));
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stderr);
    assert.ok(existsSync(path.join(dir, "generated", "v1", "openapi.json")));
    assert.equal(canon(["init"], dir).code, 1, "init refuses a folder that has definitions");
  });

  test("the committed showcase output matches the definitions (canon check)", () => {
    const run = canon(["check"]);
    assert.equal(run.code, 0, run.stderr);
  });
});
