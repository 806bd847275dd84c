// What a cold `canon generate` recalls from the engine's records besides the units of emission
// (generator/engine.ts): each definition file's parse and validation (load.ts, validate.ts), whose
// YAML document is parsed only when a diagnostic points into the file, and the changes at each
// path of CHANGES.md (compat/remembered.ts). The output and the diagnostics are those of a run
// without records.
import assert from "node:assert/strict";
import { readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { generate } from "../generator/generate.ts";
import { workspace } from "./support/cli.ts";

const today = "2026-11-21";

/** The files as paths and texts (a file recalled by its size and time reads its text when asked). */
const texts = (files: ReadonlyArray<{ path: string; content: string }>) => files.map(({ path, content }) => ({ path, content }));

test("a cold generate with records reports the same diagnostics, at the same lines, as one without, and writes the same files", { timeout: 300_000 }, async () => {
  const dir = workspace("engine-recall", "definitions");
  const definitions = path.join(dir, "definitions");
  const cacheFile = path.join(dir, "cache", "format.json");
  const run = (out: string, cache: string | null) => generate({ definitions, out: path.join(dir, out), write: true, today, cacheFile: cache, cwd: dir });
  assert.ok((await run("out", cacheFile)).model, "the showcase generates");

  // One resource changed: files, CHANGES.md included, are those of a run without records, and
  // the unchanged definition files came from the records.
  const products = path.join(definitions, "products.yaml");
  writeFileSync(products, readFileSync(products, "utf8").replace(/^description: .*$/m, "description: Products, described again."));
  const changed = await run("out", cacheFile);
  const fresh = await run("fresh", null);
  assert.deepEqual(texts(changed.files), texts(fresh.files));
  assert.ok(changed.files.some((f) => /CHANGES\.md$/.test(f.path)));
  // The changed resource's units and the layout of its files are computed; the others' recalled.
  assert.ok(changed.units!.recalled > 3 * changed.units!.computed, `recalled ${changed.units!.recalled}, computed ${changed.units!.computed}`);
  // Once more: this run recalls the changes at each unchanged path of CHANGES.md that the run
  // before recorded (a first run records none of them).
  writeFileSync(products, readFileSync(products, "utf8").replace(/^description: .*$/m, "description: Products, described a third time."));
  const again = await run("out", cacheFile);
  assert.deepEqual(texts(again.files), texts((await run("fresh", null)).files));

  // users.yaml removed: orders.yaml and invoices.yaml, unchanged and recalled from the records,
  // now reference a collection that is not defined. Their diagnostics point into them exactly
  // where a run that parses them says.
  rmSync(path.join(definitions, "users.yaml"));
  const broken = await run("out", cacheFile);
  const reference = await run("fresh", null);
  assert.equal(broken.model, null);
  const located = (d: (typeof broken.diagnostics)[number]) => ({ rule: d.rule, message: d.message, file: d.location.file, line: d.location.line, column: d.location.column });
  const found = broken.diagnostics.map(located);
  assert.deepEqual(found, reference.diagnostics.map(located));
  const intoOrders = found.filter((d) => d.file.endsWith("orders.yaml") && d.rule === "reference-unknown");
  assert.ok(intoOrders.length > 0, `a reference-unknown in orders.yaml: ${JSON.stringify(found)}`);
  assert.ok(intoOrders.every((d) => d.line > 1), "located at the reference, not at the top of the file");
});

test("a file the records name with the size and time the output folder's file still has is recalled unread; an edited one is read, found changed and written again", { timeout: 300_000 }, async () => {
  const dir = workspace("engine-stat", "definitions");
  const definitions = path.join(dir, "definitions");
  const out = path.join(dir, "out");
  const cacheFile = path.join(dir, "cache", "format.json");
  const run = () => generate({ definitions, out, write: true, today, cacheFile, cwd: dir });
  const products = path.join(definitions, "products.yaml");
  const describe = (text: string) => writeFileSync(products, readFileSync(products, "utf8").replace(/^description: .*$/m, `description: ${text}`));
  await run(); // records without sizes and times
  describe("Products, once.");
  await run(); // the unchanged files read and hashed: their records take their sizes and times
  describe("Products, twice.");
  const third = await run();
  const unread = third.files.filter((f) => (f as { onDisk?: boolean }).onDisk);
  // Every file of the resources left as they were (their routes, types and validators, in every version).
  const others = third.files.filter((f) => /^v\d+\/(orders|users|invoices)\//.test(f.path));
  assert.ok(others.length >= 9, others.map((f) => f.path).join(", "));
  assert.deepEqual(others.filter((f) => !unread.includes(f)).map((f) => f.path), []);
  assert.equal(third.diff!.unchanged + third.diff!.changed.length, third.files.length);
  assert.deepEqual(texts(third.files), texts((await generate({ definitions, out: path.join(dir, "fresh"), write: true, today, cacheFile: null, cwd: dir })).files));

  // A hand edit that keeps the size changes the time: the file is read, its hash differs, and it is written again.
  const victim = unread.find((f) => f.path.endsWith("routes.ts"))!;
  const file = path.join(out, victim.path);
  const original = readFileSync(file, "utf8");
  writeFileSync(file, original.replace("return", "retUrn"));
  describe("Products, three times.");
  const fourth = await run();
  assert.ok(fourth.diff!.changed.includes(victim.path), fourth.diff!.changed.join(", "));
  assert.equal(readFileSync(file, "utf8"), original);

  // A file whose time is not older than the records' own (a write in the same tick of a coarse clock) is read.
  const records = path.join(dir, "cache", "engine.json");
  const other = third.files.find((f) => (f as { onDisk?: boolean }).onDisk && f.path !== victim.path && f.path.endsWith("validators.ts"))!;
  const at = statSync(records).mtime;
  utimesSync(path.join(out, other.path), at, at);
  describe("Products, four times.");
  const fifth = await run();
  const again = fifth.files.find((f) => f.path === other.path) as { onDisk?: boolean; content: string };
  assert.ok(!again.onDisk, "a racy file is read");
  assert.equal(again.content, readFileSync(path.join(out, other.path), "utf8"));
});
