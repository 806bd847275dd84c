import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, beforeEach, describe, test } from "node:test";
import fc from "fast-check";
import { stringify } from "yaml";
import { runFrontEnd } from "../generator/pipeline.ts";
import { bin, canon, repoRoot, snapshot, workspace } from "./support/cli.ts";

// Issue 7.4: the generator under bad input never crashes; every bad definition gets
// diagnostics with locations. Runs in-process (the CLI is tested on a sample below).
const RUNS = Number(process.env.CANON_FUZZ_RUNS ?? (process.env.CANON_FUZZ_FULL ? 2000 : 150));

const showcase = Object.fromEntries(
  ["api.yaml", "orders.yaml", "users.yaml", "products.yaml", "invoices.yaml"].map((f) => [f, readFileSync(path.join(repoRoot, "definitions", f), "utf8")]),
);

function writeFolder(dir: string, files: Record<string, string>): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
}

// What was tried, by test: printed after the run (docs/reliability.md quotes it).
const tried = new Map<string, { cases: number; refused: number; diagnostics: number }>();
let current = "";
beforeEach((t) => {
  current = t.name;
});
after(() => {
  const lines = [...tried].map(([name, c]) => `  ${String(c.cases).padStart(6)} cases, ${String(c.refused).padStart(6)} refused with errors, ${String(c.diagnostics).padStart(7)} diagnostics  ${name}`);
  const total = [...tried.values()].reduce((a, c) => a + c.cases, 0);
  console.log(`\n== the generator under fuzzed definitions (${RUNS} runs per property): ${total} definition folders\n${lines.join("\n")}\n`);
});
function count(cases: number, refused: number, diagnostics: number): void {
  const c = tried.get(current) ?? { cases: 0, refused: 0, diagnostics: 0 };
  tried.set(current, { cases: c.cases + cases, refused: c.refused + refused, diagnostics: c.diagnostics + diagnostics });
}

/** Runs the front end; it must return diagnostics, never throw, and every diagnostic has a location. */
async function mustDiagnose(dir: string): Promise<number> {
  const result = await runFrontEnd(dir, { today: "2026-11-21" });
  const errors = result.diagnostics.filter((d) => d.severity === "error").length;
  count(1, errors > 0 ? 1 : 0, result.diagnostics.length);
  for (const d of result.diagnostics) {
    assert.ok(d.location.file.length > 0 && d.location.line >= 1 && d.location.column >= 1, JSON.stringify(d));
    assert.ok(d.rule && d.message && d.fix, JSON.stringify(d));
  }
  return result.diagnostics.filter((d) => d.severity === "error").length;
}

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constantFrom("uuid", "string", "integer", "enum", "object", "array", "v1", "v2", "orders", "users", "-1", "", "__proto__"),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom("type", "fields", "items", "values", "resource", "parent", "references", "renamed", "added", "removed", "__proto__", "constructor")),
      tie("value"),
      { maxKeys: 5 },
    ),
  ),
})).value;

describe("the generator under fuzzed definitions", () => {
  const dir = path.join(repoRoot, "test", ".tmp", `fuzz-${process.pid}`);

  test("random bytes and random text as a resource file", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: "binary", maxLength: 400 })), async (text) => {
        writeFolder(dir, { "api.yaml": showcase["api.yaml"]!, "things.yaml": text });
        assert.ok((await mustDiagnose(dir)) >= 1);
      }),
      { numRuns: RUNS },
    );
  });

  test("valid YAML of wrong shapes, in resource files and in api.yaml", async () => {
    await fc.assert(
      fc.asyncProperty(json, json, async (resource, api) => {
        writeFolder(dir, { "api.yaml": stringify(api), "things.yaml": stringify(resource), "orders.yaml": showcase["orders.yaml"]! });
        await mustDiagnose(dir);
      }),
      { numRuns: RUNS },
    );
  });

  test("mutations of the showcase: a key's value replaced by anything", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(showcase)), fc.nat(), json, async (file, pick, value) => {
        const lines = showcase[file]!.split("\n");
        const candidates = lines.map((l, i) => [l, i] as const).filter(([l]) => /^\s*[a-z_$]+:/.test(l));
        const [line, index] = candidates[pick % candidates.length]!;
        const indent = /^\s*/.exec(line)![0];
        const key = line.trim().split(":")[0];
        lines[index] = `${indent}${key}: ${JSON.stringify(value)}`;
        writeFolder(dir, { ...showcase, [file]: lines.join("\n") });
        await mustDiagnose(dir);
      }),
      { numRuns: RUNS },
    );
  });

  test("cycles in parents and references, and self-references", async () => {
    const ring = (n: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => {
          const name = ["alphas", "betas", "gammas", "deltas"][i]!;
          const next = ["alphas", "betas", "gammas", "deltas"][(i + 1) % n]!;
          const field = `${next.slice(0, -1)}_id`;
          return [`${name}.yaml`, `resource: ${name}\nparent: ${next}\nfields:\n  ${field}: { type: uuid, references: ${next} }\n`];
        }),
      );
    for (const n of [1, 2, 3, 4]) {
      writeFolder(dir, { "api.yaml": showcase["api.yaml"]!, ...ring(n) });
      assert.ok((await mustDiagnose(dir)) >= 1, `a parent ring of ${n} is refused`);
    }
  });

  test("huge files: many resources, a huge field list, deep nesting, alias bombs", async () => {
    const many = Array.from({ length: 3000 }, (_, i) => `  f${"x".repeat(i % 7)}_${String.fromCharCode(97 + (i % 26))}${i % 2 ? "" : "y"}: { type: string }`);
    const deep = `resource: things\nfields:\n  a: ${"{ type: object, fields: { b: ".repeat(200)}{ type: string }${" } }".repeat(200)}\n`;
    const bomb = `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n`;
    for (const text of [`resource: things\nfields:\n${many.join("\n")}\n`, deep, bomb, "x".repeat(2_000_000)]) {
      writeFolder(dir, { "api.yaml": showcase["api.yaml"]!, "things.yaml": text });
      await mustDiagnose(dir);
    }
  });

  test("through the CLI: bad definitions give diagnostics and exit 1, no stack trace, output untouched", () => {
    const ws = workspace("fuzz-cli", "definitions");
    assert.equal(canon(["generate"], ws).code, 0);
    const before = snapshot(path.join(ws, "generated"));
    for (const text of ["{", "resource: [", "- 1\n- 2", "resource: orders\nfields: 7", "\u0000\u0001"]) {
      writeFileSync(path.join(ws, "definitions", "zzz.yaml"), text);
      const run = canon(["generate"], ws);
      assert.equal(run.code, 1, run.stderr);
      assert.doesNotMatch(run.stderr, /\n\s+at .*\(.*:\d+:\d+\)/, "no stack trace");
      assert.match(run.stderr, /zzz\.yaml:\d+:\d+ error /);
      count(1, 1, (run.stderr.match(/ error /g) ?? []).length);
    }
    assert.deepEqual(snapshot(path.join(ws, "generated")), before);
  });
});

function withoutSql(files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).filter(([f]) => !f.startsWith("sql/")));
}

describe("a generate killed at any moment", () => {
  test("SIGKILL during generate leaves the previous output or the new one, whole", async () => {
    const ws = workspace("sigkill", "definitions");
    const out = path.join(ws, "generated");
    const orders = path.join(ws, "definitions", "orders.yaml");
    const original = readFileSync(orders, "utf8");
    // Two definition states that differ in many files: with and without one more field.
    const changed = original.replace("  note: {", "  channel: { type: string, max_length: 20, optional: true }\n  note: {");
    assert.equal(canon(["generate"], ws).code, 0);
    const states = new Map<string, Record<string, string>>();
    states.set("original", snapshot(out));
    writeFileSync(orders, changed);
    assert.equal(canon(["generate", "--out", "expected-changed"], ws).code, 0);
    states.set("changed", snapshot(path.join(ws, "expected-changed")));
    rmSync(path.join(ws, "expected-changed"), { recursive: true });

    // How long a full generate takes here, so that the kills spread over all of it, writes included.
    writeFileSync(orders, original);
    const started = performance.now();
    assert.equal(canon(["generate"], ws).code, 0);
    const duration = performance.now() - started;
    const attempts = 8;
    for (let attempt = 0; attempt < attempts; attempt++) {
      writeFileSync(orders, attempt % 2 === 0 ? changed : original);
      const child = spawn(process.execPath, [bin, "generate"], { cwd: ws, stdio: "ignore" });
      const exited = new Promise((r) => child.once("exit", r));
      await new Promise((r) => setTimeout(r, (duration * (attempt + 0.5)) / attempts));
      child.kill("SIGKILL");
      await exited;
      // The next run finishes or discards the interrupted write before comparing: check writes nothing else.
      const checkOriginal = (writeFileSync(orders, original), canon(["check"], ws).code);
      const checkChanged = (writeFileSync(orders, changed), canon(["check"], ws).code);
      assert.ok(checkOriginal === 0 || checkChanged === 0, `attempt ${attempt}: the output is one whole state`);
      // sql/ carries the migration history (its files depend on earlier output), so it is left out here.
      const now = withoutSql(snapshot(out));
      assert.ok(
        JSON.stringify(now) === JSON.stringify(withoutSql(states.get("original")!)) ||
          JSON.stringify(now) === JSON.stringify(withoutSql(states.get("changed")!)),
        `attempt ${attempt}: the output is exactly the old or the new output`,
      );
      assert.ok(!Object.keys(snapshot(out)).some((f) => f.includes(".canon-")), "no temporary file or journal is left");
      count(1, 0, 0);
    }
  });
});
