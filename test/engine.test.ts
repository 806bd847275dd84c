// The engine (generator/engine.ts) owns canon's incremental work: each unit of emission is keyed
// by the slice of the model it reads. These tests change every field of a real model, one at a
// time, and check that a session's emission (its engine warm from the runs before) equals a fresh
// emission; and that the engine's records on disk, damaged or foreign, never change the output.
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { createEmitContext, emitAll } from "../generator/emit/index.ts";
import type { EmittedFile } from "../generator/emit/emitter.ts";
import { defineUnit, Engine } from "../generator/engine.ts";
import { generate, recordsFile } from "../generator/generate.ts";
import type { ApiModel } from "../generator/model/types.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { createSession } from "../generator/session.ts";
import { workspace } from "./support/cli.ts";

/** The files as paths and texts (a file recalled by its size and time reads its text when asked). */
const texts = (files: ReadonlyArray<{ path: string; content: string }>) => files.map(({ path, content }) => ({ path, content }));

const today = "2026-11-21";
const root = path.resolve(import.meta.dirname, "..");

type Leaf = string | number | boolean | null;
type Path = Array<string | number>;

/**
 * Every leaf of the model, one per place in its type: a path's array indices stand for any item
 * (`versions.*.resources.*.fields.*.name`), and the first leaf found at each such place is taken,
 * with every value the model holds there (a change to another of them keeps the model valid).
 */
function leavesByType(model: unknown): Array<{ path: Path; values: Leaf[] }> {
  const places = new Map<string, { path: Path; values: Set<string> }>();
  const walk = (value: unknown, at: Path, type: string) => {
    // Absent in the JSON of the model, as in a unit's key: nothing to change.
    if (value === undefined) return;
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...at, i], `${type}.*`));
    else if (typeof value === "object" && value !== null) for (const [key, inner] of Object.entries(value)) walk(inner, [...at, key], `${type}.${key}`);
    else {
      let place = places.get(type);
      if (!place) places.set(type, (place = { path: at, values: new Set() }));
      place.values.add(JSON.stringify(value));
    }
  };
  walk(model, [], "");
  return [...places.values()].map((p) => ({ path: p.path, values: [...p.values].map((v) => JSON.parse(v) as Leaf) }));
}

/** Another value for a leaf: one the model holds at the same place, or else one of the same type. */
function changed(value: Leaf, others: Leaf[]): Leaf | undefined {
  const other = others.find((o) => o !== value && (o === null) === (value === null));
  if (other !== undefined) return other;
  if (typeof value === "string") return `${value}x`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  return undefined;
}

function withLeaf(model: ApiModel, at: Path, value: Leaf): ApiModel {
  const copy = structuredClone(model) as unknown as Record<string | number, unknown>;
  let node = copy;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[at.at(-1)!] = value;
  return copy as unknown as ApiModel;
}

/** The files, or the error emitting threw. */
function attempt(emit: () => EmittedFile[]): EmittedFile[] | string {
  try {
    return emit();
  } catch (error) {
    return `threw: ${(error as Error).message}`;
  }
}

for (const [name, definitions] of [
  ["the showcase", path.join(root, "definitions")],
  ["the helpdesk fixture (SPEC §12 keys)", path.join(root, "test/fixtures/helpdesk")],
] as const) {
  test(`every field of ${name}'s model, changed alone: a session's emission equals a fresh one`, { timeout: 600_000 }, async () => {
    const front = await runFrontEnd(definitions, { today });
    assert.ok(front.model, "the definitions are valid");
    const model = front.model;
    const leaves = leavesByType(model);
    assert.ok(leaves.length > 150, `the model has ${leaves.length} places`);
    const session = createSession();
    const inSession = (m: ApiModel) => attempt(() => session.engine.within(() => emitAll(session.parts.intern(m), createEmitContext())));
    const fresh = (m: ApiModel) => attempt(() => new Engine().within(() => emitAll(m, createEmitContext())));
    assert.deepEqual(inSession(model), fresh(model));
    let compared = 0;
    let recomputed = 0;
    for (const { path: at, values } of leaves) {
      const value = values[0]!;
      const next = changed(value, values);
      if (next === undefined) continue;
      const mutated = withLeaf(model, at, next);
      const before = session.engine.computed;
      const warm = inSession(mutated);
      recomputed += session.engine.computed - before;
      assert.deepEqual(warm, fresh(mutated), `${at.join(".")}: ${JSON.stringify(value)} → ${JSON.stringify(next)}`);
      compared++;
    }
    assert.ok(compared > 150, `${compared} fields changed`);
    // The session did recall most of its units: the test compared an incremental run, not a full one.
    assert.ok(session.engine.recalled > recomputed, `recalled ${session.engine.recalled}, computed ${recomputed}`);
  });
}

test("a unit's slice may not hold a Map, a Set or a function (its JSON would hide them)", () => {
  // @ts-expect-error: a Map in the slice
  defineUnit("with a map", ({ names }: { names: Map<string, string> }) => names.size);
  // @ts-expect-error: a Set deep in the slice
  defineUnit("with a set", ({ a }: { a: { b: Set<string> } }) => a.b.size);
  const plain = defineUnit("plain", ({ names }: { names: Array<[string, string]> }) => names.length);
  assert.equal(new Engine().run(plain, { names: [["a", "b"]] }, undefined), 1);
});

test("the engine's records: a cold generate recalls units, and a damaged or foreign records file gives a fresh generate's output", { timeout: 300_000 }, async () => {
  const dir = workspace("engine-records", "definitions");
  const definitions = path.join(dir, "definitions");
  const cacheFile = path.join(dir, "cache", "format.json");
  const records = recordsFile(cacheFile);
  const run = (out: string, cache: string | null) => generate({ definitions, out: path.join(dir, out), write: true, today, cacheFile: cache, cwd: dir });
  const reference = await run("fresh", null);
  assert.ok(reference.model);
  const first = await run("out", cacheFile);
  assert.ok(existsSync(records), "the first run kept its records");
  assert.deepEqual(texts(first.files), texts(reference.files));
  // One resource changed: the next run recalls the others' units from disk.
  const products = path.join(definitions, "products.yaml");
  writeFileSync(products, readFileSync(products, "utf8").replace(/^description: .*$/m, "description: Products, described again."));
  const changedRun = await run("out", cacheFile);
  const changedFresh = await run("fresh", null);
  assert.deepEqual(texts(changedRun.files), texts(changedFresh.files));
  const units = changedRun.units!;
  // The changed resource's units and the layout of its files are computed; the other resources'
  // units are recalled, their files whole from the output folder (never laid out again).
  assert.ok(units.recalled > 3 * units.computed, `a new process recalled ${units.recalled} units from disk and computed ${units.computed}`);
  assert.ok(changedFresh.units!.computed > 4 * units.computed, `without records, ${changedFresh.units!.computed} units computed`);
  const text = readFileSync(records, "utf8");
  const damaged: Array<[string, string]> = [
    ["cut short", text.slice(0, Math.floor(text.length / 2))],
    ["one record changed", text.replace(/"text":"/, '"text":"// changed\\n')],
    ["from another canon", text.replace(/"canon":"/, '"canon":"another ')],
    ["a record left out", text.replace(/^.*\n/, "")],
    ["not JSON", "this is no records file\n{"],
    ["foreign JSON with a made-up header", `["a","b"]\n${JSON.stringify({ format: "canon-engine-records-2", canon: "x", count: 1, sha256: "y" })}\n`],
  ];
  for (const [what, content] of damaged) {
    writeFileSync(records, content);
    cpSync(path.join(dir, "fresh"), path.join(dir, "out"), { recursive: true });
    const result = await run("out", cacheFile);
    assert.deepEqual(texts(result.files), texts(changedFresh.files), what);
  }
  // A recalled file is read from the output folder, where its text must hash as recorded: a file
  // edited there by hand, or removed, is emitted and formatted again, never taken as it is.
  const types = path.join(dir, "out", "v2", "products", "types.ts");
  const edits: Array<[string, () => void]> = [
    ["edited by hand", () => writeFileSync(types, readFileSync(types, "utf8").replace("export ", "export  "))],
    ["removed", () => rmSync(types)],
  ];
  for (const [what, edit] of edits) {
    edit();
    const result = await run("out", cacheFile);
    assert.deepEqual(texts(result.files), texts(changedFresh.files), what);
    assert.equal(readFileSync(types, "utf8"), readFileSync(path.join(dir, "fresh", "v2", "products", "types.ts"), "utf8"), what);
    assert.ok(result.units!.recalled > 0 && result.units!.computed > 0, `${what}: recalled ${result.units!.recalled}, computed ${result.units!.computed}`);
  }
});
