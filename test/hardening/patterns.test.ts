// Hardening, issue 14.1: no `pattern` lets a request hold the service. Lint refuses a pattern
// that can backtrack catastrophically (test/lint.test.ts); this suite attacks every pattern
// that passes, in the showcase and in the fixtures, through the generated zod validators:
// long runs of each character a pattern accepts, alternations of two, near-matches built from
// valid values, each ending in a character that makes the match fail late. No validation may
// take more than a few milliseconds. A control proves the measure would see a backtracking
// pattern. Quick by default; CANON_FUZZ_FULL=1 tries longer inputs and more samples.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, test } from "node:test";
import fc from "fast-check";
import { z } from "zod";
import { generate } from "../../generator/generate.ts";
import { saferPattern } from "../../generator/lint/patterns/rewrite.ts";
import { repoRoot } from "../support/cli.ts";
import { expectError, startApp } from "../http/helpers.ts";

const FULL = process.env.CANON_FUZZ_FULL === "1";
/** Lengths of the hostile runs: the attack of issue 14 needed 31 characters; a body may hold 64 KiB. */
const LENGTHS = FULL ? [31, 300, 3_000, 30_000, 60_000] : [31, 1_000, 20_000];
const SAMPLES = FULL ? 40 : 8;
/** The slowest validation allowed, in milliseconds (the fastest of three tries of each input). */
const LIMIT_MS = 5;
const SUFFIXES = ["!", "\u0000", " ", "-", "@", ".", "aA0", ""];
const ALPHABET = [...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)), "\t", "\n", "\u00e9", "\u00a0", "\u2028", "\u0000"];

const tmp = path.join(repoRoot, "test", ".tmp", `patterns-${process.pid}`);
after(() => rmSync(tmp, { recursive: true, force: true }));

interface Target {
  where: string;
  pattern: RegExp;
  schema: z.ZodType;
}

/** Every string schema with a `regex` check inside `schema`, with where it is. */
function patternSchemas(schema: z.ZodType, where: string, out: Target[] = [], seen = new Set<unknown>()): Target[] {
  if (seen.has(schema)) return out;
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Record<string, any> } })._zod.def;
  if (def.type === "string") {
    for (const check of def.checks ?? []) {
      const c = check._zod.def;
      if (c.check === "string_format" && c.format === "regex") out.push({ where, pattern: c.pattern as RegExp, schema });
    }
  }
  if (def.type === "object") for (const [key, value] of Object.entries(def.shape as Record<string, z.ZodType>)) patternSchemas(value, `${where}.${key}`, out, seen);
  for (const inner of ["innerType", "element", "in", "out"]) if (def[inner]) patternSchemas(def[inner], where, out, seen);
  return out;
}

/** Every validator module of an output folder, and the schemas it exports. */
async function targetsOf(out: string): Promise<Target[]> {
  const targets: Target[] = [];
  const files = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) => f.split(path.sep).pop() === "validators.ts");
  for (const file of files.sort()) {
    const module = (await import(pathToFileURL(path.join(out, file)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (value instanceof z.ZodType) patternSchemas(value, `${file.split(path.sep).join("/")} ${name}`, targets);
    }
  }
  return targets;
}

/** Hostile inputs for one pattern: runs of what it accepts, pairs, and near-matches of valid values. */
function hostileInputs(pattern: RegExp, seed: number): string[] {
  const accepted = ALPHABET.filter((c) => new RegExp(pattern.source.replace(/^\^/, "").replace(/\$$/, "")).test(c) || /[\w\s-]/.test(c));
  const inputs = new Set<string>();
  const valid = fc.sample(fc.stringMatching(pattern, { size: "small" }), { numRuns: SAMPLES, seed });
  for (const n of LENGTHS) {
    for (const c of accepted) for (const end of SUFFIXES.slice(0, 3)) inputs.add(c.repeat(n) + end);
    for (let i = 0; i + 1 < accepted.length; i += 7) inputs.add((accepted[i]! + accepted[i + 1]!).repeat(n / 2) + "!");
    for (const v of valid) {
      if (v.length === 0) continue;
      for (const end of SUFFIXES) {
        inputs.add(v.repeat(Math.ceil(n / v.length)) + end);
        inputs.add(v.slice(0, -1).repeat(Math.ceil(n / v.length)) + end);
        inputs.add(v + v.slice(-1).repeat(n) + end);
      }
    }
  }
  return [...inputs];
}

/** The fastest of three validations of `input`, in milliseconds. */
function timeOf(schema: z.ZodType, input: string): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    schema.safeParse(input);
    best = Math.min(best, performance.now() - start);
    if (best < LIMIT_MS / 10) break;
  }
  return best;
}

function attack(targets: Target[]): { tried: number; slowest: { ms: number; where: string; input: string } } {
  let tried = 0;
  let slowest = { ms: 0, where: "", input: "" };
  targets.forEach((t, i) => {
    for (const input of hostileInputs(t.pattern, 1_000 + i)) {
      tried++;
      const ms = timeOf(t.schema, input);
      if (ms > slowest.ms) slowest = { ms, where: `${t.where} ${t.pattern}`, input: input.length > 40 ? `${JSON.stringify(input.slice(0, 20))}… (${input.length} characters)` : JSON.stringify(input) };
    }
  });
  return { tried, slowest };
}

function report(name: string, targets: Target[], result: ReturnType<typeof attack>): void {
  const patterns = new Set(targets.map((t) => t.pattern.source));
  process.stdout.write(
    `# ${name}: ${result.tried} hostile inputs against ${targets.length} validators of ${patterns.size} patterns (${[...patterns].join(" ")}); slowest ${result.slowest.ms.toFixed(2)} ms: ${result.slowest.where} on ${result.slowest.input}\n`,
  );
  assert.ok(result.slowest.ms <= LIMIT_MS, `validation took ${result.slowest.ms.toFixed(1)} ms: ${result.slowest.where} on ${result.slowest.input}`);
}

describe("patterns under attack, through the generated validators", () => {
  test("the measure sees a backtracking pattern (control): issue 14's pattern takes far longer than the limit", () => {
    // Each more letter doubles its time: the input grows until it is past the limit, which a
    // backtracking pattern reaches within a few letters on any machine (22 letters took 17 ms on a
    // quiet CI machine, 40 under load), and a linear one never would.
    const schema = z.string().regex(/^(\w+\s?)*$/);
    let ms = 0;
    let letters = 18;
    for (; letters <= 30 && ms <= LIMIT_MS * 4; letters++) ms = timeOf(schema, `${"a".repeat(letters)}!`);
    assert.ok(ms > LIMIT_MS * 4, `the control took ${ms.toFixed(1)} ms with ${letters - 1} letters`);
  });

  test("the showcase's patterns (generated/): every validator of every version", async () => {
    const targets = await targetsOf(path.join(repoRoot, "generated"));
    assert.ok(new Set(targets.map((t) => t.pattern.source)).size >= 3, "orders.code, orders.currency and products.sku at least");
    assert.ok(targets.some((t) => t.where.includes("ListQuery")), "filters too");
    report("showcase", targets, attack(targets));
  });

  test("the fixtures' patterns, generated and attacked the same way", async () => {
    const targets: Target[] = [];
    for (const fixture of ["test/fixtures/good/nested", "test/fixtures/compat/base"]) {
      const out = path.join(tmp, fixture.replace(/\//g, "-"));
      const result = await generate({ definitions: path.join(repoRoot, fixture), out, write: true, cacheFile: null, today: "2026-11-21" });
      assert.ok(result.diff, result.diagnostics.map((d) => d.message).join("\n"));
      targets.push(...(await targetsOf(out)));
    }
    assert.ok(targets.some((t) => t.pattern.source === "^[0-9]{5}$") && targets.some((t) => t.pattern.source === "^[0-9-]{10,17}$"));
    report("fixtures", targets, attack(targets));
  });

  test("the rewrites lint offers for the broken corpus's patterns run in linear time too", () => {
    const text = readFileSync(path.join(repoRoot, "test/fixtures/broken/pattern-backtracking/notes.yaml"), "utf8");
    const rewrites = [...text.matchAll(/pattern: '([^']*)'/g)].map((m) => saferPattern(m[1]!)).filter((p): p is string => p !== null);
    assert.ok(rewrites.includes(String.raw`^(\w+(\s\w+)*\s?)?$`), rewrites.join(" "));
    const targets = rewrites.map((p) => ({ where: "rewrite", pattern: new RegExp(p), schema: z.string().regex(new RegExp(p)) }));
    report("rewrites", targets, attack(targets));
  });

  test("over HTTP: a long near-match in a filter and in a body answers 400 at once", async () => {
    const api = await startApp();
    try {
      for (const value of ["A".repeat(3_000) + "!", "ORD-" + "0".repeat(3_000) + "!"]) {
        const started = performance.now();
        await expectError(api, "GET", `/v2/orders?currency=${encodeURIComponent(value)}`, 400, "VALIDATION_ERROR");
        await expectError(api, "POST", "/v2/products", 400, "VALIDATION_ERROR", { body: { name: "x", sku: "A".repeat(30_000) + "!", price_cents: 1 } });
        assert.ok(performance.now() - started < 1_000, "answered within a second on a loaded machine");
      }
    } finally {
      await api.close();
    }
  });
});
