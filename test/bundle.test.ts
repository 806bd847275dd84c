// bin/bundle.js: canon runs as one esbuild bundle when the bundle is fresh. In a copy of canon
// (its sources, templates, runtime and bin, over this repository's node_modules): the first run
// makes the bundle, a run after an edit of a source makes a new one, CANON_BUNDLE=0 runs the
// sources, and the bundle and the sources generate the same bytes, `dev`'s and the formatter's
// worker threads included (their scripts are entries of the bundle).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { repoRoot, snapshot, workspace } from "./support/cli.ts";

const minuteAgo = new Date(Date.now() - 60_000);

function copyOfCanon(dir: string): string {
  const root = path.join(dir, "canon");
  mkdirSync(root, { recursive: true });
  for (const entry of ["bin", "generator", "runtime", "templates", "schema", "package.json"]) {
    cpSync(path.join(repoRoot, entry), path.join(root, entry), { recursive: true });
  }
  // As a checkout a minute ago: a file changed within two seconds of a build makes the bundle stale.
  const age = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) age(file);
      utimesSync(file, minuteAgo, minuteAgo);
    }
  };
  age(root);
  // Its own node_modules folder (the bundle is made in node_modules/.cache), of this repository's packages.
  mkdirSync(path.join(root, "node_modules"));
  for (const name of readdirSync(path.join(repoRoot, "node_modules"))) {
    if (name !== ".cache") symlinkSync(path.join(repoRoot, "node_modules", name), path.join(root, "node_modules", name));
  }
  return root;
}

function run(root: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [path.join(root, "bin", "canon.js"), ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", CANON_BUNDLE: "", ...env },
  });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const bundles = (root: string) => path.join(root, "node_modules", ".cache", "canon", "bundle");
const current = (root: string) => JSON.parse(readFileSync(path.join(bundles(root), "current.json"), "utf8")) as { dir: string; inputs: Array<[string, number, number]> };

describe("the CLI bundle (bin/bundle.js)", () => {
  test("made on the first run, made again after an edit, and generating what the sources generate", () => {
    const dir = workspace("bundle");
    after(() => rmSync(dir, { recursive: true, force: true }));
    const root = copyOfCanon(dir);
    const project = path.join(dir, "project");
    cpSync(path.join(repoRoot, "definitions"), path.join(project, "definitions"), { recursive: true });

    assert.equal(run(root, ["--version"], project).code, 0);
    const first = current(root);
    assert.ok(existsSync(path.join(bundles(root), first.dir, "main.js")), "the first run made the bundle");
    for (const worker of ["thread-worker.js", "worker.js"]) assert.ok(existsSync(path.join(bundles(root), first.dir, worker)), worker);
    const inputs = first.inputs.map(([file]) => file);
    assert.ok(inputs.includes("generator/cli/main.ts") && inputs.some((f) => f.includes("node_modules/zod/")), "canon's modules and zod are inside");
    assert.ok(!inputs.some((f) => /node_modules\/(fastify|prettier|pg)\//.test(f)), "fastify, prettier and pg are loaded from node_modules");

    // A fresh bundle is used as it is.
    assert.equal(run(root, ["--version"], project).code, 0);
    assert.equal(current(root).dir, first.dir);

    // The bundle and the sources write the same output (in two folders, each from nothing).
    const bundled = run(root, ["generate", "--out", "bundled"], project);
    assert.equal(bundled.code, 0, bundled.stderr);
    rmSync(path.join(project, "node_modules"), { recursive: true, force: true });
    const sources = run(root, ["generate", "--out", "sources"], project, { CANON_BUNDLE: "0" });
    assert.equal(sources.code, 0, sources.stderr);
    assert.deepEqual(snapshot(path.join(project, "bundled")), snapshot(path.join(project, "sources")));
    assert.equal(current(root).dir, first.dir, "CANON_BUNDLE=0 neither uses nor makes a bundle");

    // An edit of one of canon's sources: the next run makes a new bundle, which has the edit.
    const edited = path.join(root, "generator", "cli", "output.ts");
    appendFileSync(edited, "\nexport const editedForTheBundleTest = 1;\n");
    utimesSync(edited, minuteAgo, new Date(Date.now() - 30_000));
    assert.equal(run(root, ["--version"], project).code, 0);
    const second = current(root);
    assert.notEqual(second.dir, first.dir, "a stale bundle is made again");
    assert.ok(existsSync(path.join(bundles(root), first.dir, "main.js")), "the last bundle stays for runs still loading it");
  });
});
