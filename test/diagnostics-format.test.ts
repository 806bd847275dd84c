// Diagnostics as data: `--format json` and `--format github` on generate, check and lint, and
// the programmatic API (generate, check, lint) with diagnostics in its results.
import assert from "node:assert/strict";
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { check, generate, lint } from "../generator/api.ts";
import { canon, repoRoot, snapshot, workspace } from "./support/cli.ts";

const broken = path.join(repoRoot, "test", "fixtures", "schema-and-lint");

/** A workspace whose definitions have a schema problem and lint problems in one file. */
function brokenWorkspace(name: string): string {
  const dir = workspace(name);
  cpSync(broken, path.join(dir, "definitions"), { recursive: true });
  return dir;
}

const recordKeys = ["column", "file", "fix", "line", "message", "rule", "severity"];

describe("--format", () => {
  for (const command of ["lint", "generate", "check"]) {
    test(`${command} --format json prints one array of { file, line, column, severity, rule, message, fix } on stdout`, () => {
      const dir = brokenWorkspace(`format-json-${command}`);
      const run = canon([command, "--format", "json"], dir);
      assert.equal(run.code, 1, run.stderr);
      const records = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
      assert.ok(Array.isArray(records));
      for (const r of records) assert.deepEqual(Object.keys(r).sort(), recordKeys);
      // Schema and lint problems of the same file, in one run.
      assert.deepEqual(
        records.map((r) => `${r.file}:${r.line}:${r.column} ${r.rule}`),
        [
          "definitions/tasks.yaml:3:13 schema",
          "definitions/tasks.yaml:5:26 unknown-key",
          "definitions/tasks.yaml:6:3 field-name",
          "definitions/tasks.yaml:7:21 field-id-type",
          "definitions/tasks.yaml:9:3 path-no-verb",
        ],
      );
      const name = records.find((r) => r.rule === "field-name")!;
      assert.match(String(name.fix), /rename it "task_created_at"/, "the fix is not the reserved created_at");
      assert.doesNotMatch(String(name.fix), /rename it "created_at"/);
      assert.match(String(records.find((r) => r.rule === "path-no-verb")!.fix), /"completions"/);
    });

    test(`${command} --format github prints an annotation per diagnostic`, () => {
      const dir = brokenWorkspace(`format-github-${command}`);
      const run = canon([command, "--format", "github"], dir);
      assert.equal(run.code, 1);
      const annotations = run.stdout.split("\n").filter((l) => l.startsWith("::"));
      assert.equal(annotations.length, 5, run.stdout);
      assert.match(annotations[0]!, /^::error file=definitions\/tasks\.yaml,line=3,col=13,title=schema::pagination: .*%0Afix: /);
      assert.ok(annotations.every((a) => !a.slice(2).includes("\n")));
    });
  }

  test("json on success is an empty array; an unknown format is a usage error", () => {
    const dir = workspace("format-ok", "definitions");
    const run = canon(["generate", "--format", "json"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), []);
    assert.match(run.stderr, /canon generate: \d+ added/, "progress goes to stderr");
    assert.equal(canon(["lint", "--format", "xml"], dir).code, 2);
  });

  test("check --format github fails on a hand-edited generated file, pointing at the edited line", () => {
    const dir = workspace("format-drift", "definitions");
    assert.equal(canon(["generate"], dir).code, 0);
    const file = path.join(dir, "generated", "v2", "users", "routes.ts");
    const lines = readFileSync(file, "utf8").split("\n");
    lines[9] = `${lines[9]} // edited`;
    writeFileSync(file, lines.join("\n"));
    const run = canon(["check", "--format", "github"], dir);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^::error file=generated\/v2\/users\/routes\.ts,line=10,col=1,title=output-drift::differs from what canon generate writes/m);
    const json = canon(["check", "--format", "json"], dir);
    assert.equal(json.code, 1);
    assert.deepEqual(
      (JSON.parse(json.stdout) as Array<{ file: string; rule: string; line: number }>).map((r) => [r.file, r.rule, r.line]),
      [["generated/v2/users/routes.ts", "output-drift", 10]],
    );
  });
});

describe("programmatic API", () => {
  test("lint, generate and check return diagnostics as data", async () => {
    const bad = brokenWorkspace("api-broken");
    const linted = await lint({ cwd: bad });
    assert.equal(linted.ok, false);
    assert.deepEqual(
      linted.diagnostics.map((d) => d.rule),
      ["schema", "unknown-key", "field-name", "field-id-type", "path-no-verb"],
    );
    assert.equal(linted.diagnostics[0]!.file, "definitions/tasks.yaml");
    const refused = await generate({ cwd: bad });
    assert.equal(refused.ok, false);
    assert.deepEqual(refused.added, []);

    const dir = workspace("api-good", "definitions");
    const generated = await generate({ cwd: dir });
    assert.equal(generated.ok, true, JSON.stringify(generated.diagnostics));
    assert.ok(generated.added.includes("v2/openapi.json"));
    const before = snapshot(path.join(dir, "generated"));
    assert.deepEqual((await check({ cwd: dir })).ok, true);
    appendFileSync(path.join(dir, "generated", "v1", "index.ts"), "// edited\n");
    const checked = await check({ cwd: dir });
    assert.equal(checked.ok, false);
    assert.deepEqual(checked.differs, ["v1/index.ts"]);
    assert.deepEqual(
      checked.diagnostics.map((d) => [d.file, d.rule]),
      [["generated/v1/index.ts", "output-drift"]],
    );
    assert.notDeepEqual(snapshot(path.join(dir, "generated")), before);
  });
});
