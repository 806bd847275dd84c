import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { CanonFiles, createEmitContext, emitAll, readOutputFolder } from "../generator/emit/index.ts";
import { IMPORTS } from "../generator/emit/shared/imports.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { repoRoot } from "./support/cli.ts";

test("precompiled templates from the cache emit exactly what compiled templates emit", async (t) => {
  const cacheDir = mkdtempSync(path.join(tmpdir(), "canon-templates-"));
  t.after(() => rmSync(cacheDir, { recursive: true, force: true }));
  const front = await runFrontEnd(path.join(repoRoot, "definitions"), { today: "2026-11-21" });
  assert.ok(front.model);
  const none = readOutputFolder(path.join(cacheDir, "none"));
  const plain = emitAll(front.model, createEmitContext(undefined, none));
  const first = emitAll(front.model, createEmitContext(undefined, none, cacheDir));
  const cached = readdirSync(cacheDir).filter((f) => f.startsWith("template-"));
  assert.ok(cached.length >= 8, `one precompiled file per template (${cached.length})`);
  // A second context reads them instead of compiling.
  const second = emitAll(front.model, createEmitContext(undefined, none, cacheDir));
  assert.deepEqual(first, plain);
  assert.deepEqual(second, plain);
  // The cached form is really what renders: replaced by hand, the replacement shows. (It keeps
  // the imports marker, which the emitters of most templates replace with the planned imports.)
  // Files are named by a hash of the template: each is tampered in turn until one renders a whole
  // file (some templates render a piece of another file, which its emitter frames).
  const original = new Map(cached.map((f) => [f, readFileSync(path.join(cacheDir, f), "utf8")]));
  let shown = false;
  for (const file of cached) {
    writeFileSync(
      path.join(cacheDir, file),
      `{ main: function () { return ${JSON.stringify(`tampered\n${IMPORTS}\n`)}; }, compiler: [8, '>= 4.3.0'], useData: true }`,
    );
    const third = emitAll(front.model, createEmitContext(undefined, none, cacheDir));
    writeFileSync(path.join(cacheDir, file), original.get(file)!);
    if (third.some((f) => f.content.startsWith("tampered\n"))) {
      shown = true;
      break;
    }
  }
  assert.ok(shown, "the cached form is what renders");
});

test("canon's own type names are found once per context, not by each emitter of each version (no engine here)", async () => {
  const front = await runFrontEnd(path.join(repoRoot, "definitions"), { today: "2026-11-21" });
  assert.ok(front.model);
  const context = createEmitContext(undefined, readOutputFolder(path.join(tmpdir(), "canon-no-output")));
  const first = context.canonTypeNames();
  assert.ok(first.has("Store") && first.has("Client") && first.has("Record"), "the runtime's, the client's and TypeScript's names");
  emitAll(front.model, context);
  // The same set, not one found again (some 90 of canon's files read each time).
  assert.equal(context.canonTypeNames(), first);
  // Contexts over one session's canon files share it.
  const files = new CanonFiles();
  assert.equal(createEmitContext(undefined, undefined, undefined, files).canonTypeNames(), createEmitContext(undefined, undefined, undefined, files).canonTypeNames());
});

test("every view a template is rendered with is JSON data, so its JSON text can key the rendered text", async () => {
  const front = await runFrontEnd(path.join(repoRoot, "definitions"), { today: "2026-11-21" });
  assert.ok(front.model);
  const context = createEmitContext(undefined, readOutputFolder(path.join(repoRoot, "test", ".tmp", "no-output")));
  const problems: string[] = [];
  const check = (value: unknown, where: string): void => {
    if (Array.isArray(value)) return value.forEach((v, i) => check(v, `${where}[${i}]`));
    if (value !== null && typeof value === "object") {
      if (Object.getPrototypeOf(value) !== Object.prototype) problems.push(`${where} is a ${value.constructor?.name}`);
      for (const [k, v] of Object.entries(value)) check(v, `${where}.${k}`);
      return;
    }
    const plain = value === undefined || value === null || ["string", "boolean"].includes(typeof value) || Number.isFinite(value);
    if (!plain) problems.push(`${where} is ${String(value)}`);
  };
  const render = context.render.bind(context);
  let views = 0;
  context.render = (name, data) => {
    views++;
    check(data, name);
    return render(name, data);
  };
  emitAll(front.model, context);
  assert.ok(views > 20, `${views} views`);
  assert.deepEqual(problems, []);
});
