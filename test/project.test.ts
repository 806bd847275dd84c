// canon in a user's project: `canon init` makes it ready (package.json, tsconfig.json,
// .gitignore, starter definitions the README's next steps build on), and a setup canon cannot
// run in (an old Node, a CommonJS package) stops every command with one line and exit 2.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { bin, canon, repoRoot, workspace } from "./support/cli.ts";

const json = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, any>;

/** A Node older than 24 on this machine (the system one), or null. */
function oldNode(): string | null {
  for (const candidate of ["/usr/bin/node", "/usr/local/bin/node"]) {
    if (!existsSync(candidate)) continue;
    const version = spawnSync(candidate, ["--version"], { encoding: "utf8" }).stdout.trim();
    if (Number(/^v(\d+)/.exec(version)?.[1]) < 24) return candidate;
  }
  return null;
}

describe("canon in a project", () => {
  test("--version prints the package's version", () => {
    const run = canon(["--version"]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout.trim(), json(path.join(repoRoot, "package.json")).version);
  });

  test("on a Node below 24 every command stops with one line naming what to change (exit 2)", { skip: oldNode() === null && "no Node below 24 here" }, () => {
    const node = oldNode()!;
    for (const args of [["--version"], ["init"], ["generate"], ["serve"]]) {
      const run = spawnSync(node, [bin, ...args], { cwd: repoRoot, encoding: "utf8" });
      assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
      assert.equal(run.stdout, "");
      const lines = run.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, `one line, no stack trace: ${run.stderr}`);
      assert.match(lines[0]!, /needs Node\.js 24 or newer, this is Node\.js \d+.*npm install --save-dev node@24/);
    }
  });

  test("in a CommonJS package every command but init stops with one line; init makes it a module", () => {
    const dir = workspace("project-cjs");
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "legacy", version: "1.0.0", type: "commonjs" }, null, 2));
    for (const args of [["new", "orders"], ["generate"], ["check"], ["lint"], ["serve", "--port", "0"], ["dev", "--port", "0"]]) {
      const run = canon(args, dir);
      assert.equal(run.code, 2, `${args[0]}: ${run.stdout}${run.stderr}`);
      assert.equal(run.stderr.trimEnd().split("\n").length, 1, `one line: ${run.stderr}`);
      assert.match(run.stderr, /package\.json has "type": "commonjs"; .*set "type": "module"/);
    }
    assert.equal(existsSync(path.join(dir, "definitions")), false, "nothing was written");
    const init = canon(["init"], dir);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /"type": "module" \(was "commonjs"\)/);
    assert.equal(json(path.join(dir, "package.json")).type, "module");
    assert.equal(canon(["lint"], dir).code, 0);
  });

  test("init in a CommonJS package with require() code asks nothing, says what the switch to ESM means first, and keeps its dev script", () => {
    const dir = workspace("project-cjs-require");
    writeFileSync(
      path.join(dir, "package.json"),
      `${JSON.stringify({ name: "legacy", version: "1.0.0", main: "index.js", scripts: { dev: "nodemon index.js", start: "node index.js" } }, null, 2)}\n`,
    );
    writeFileSync(path.join(dir, "index.js"), 'const util = require("./lib/util.js");\nconsole.log(util.name);\n');
    spawnSync("mkdir", ["-p", path.join(dir, "lib"), path.join(dir, "node_modules", "dep")]);
    writeFileSync(path.join(dir, "lib", "util.js"), 'module.exports = { name: "util" };\n');
    writeFileSync(path.join(dir, "lib", "plain.js"), "export const x = 1;\n");
    writeFileSync(path.join(dir, "node_modules", "dep", "index.js"), "module.exports = 1;\n");
    // No standard input at all: init must not wait for an answer.
    const run = spawnSync(process.execPath, [bin, "init"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    const out = run.stdout;
    // The notice comes first, before the lines that say what was changed.
    const notice = out.indexOf('package.json has no "type"');
    assert.ok(notice >= 0, out);
    assert.ok(notice < out.indexOf("canon init:\n"), `the notice precedes the changes:\n${out}`);
    assert.match(out, /Node loads every \.js file as an ES module, where require\(\) and module\.exports do not exist: index\.js, lib\/util\.js will fail/);
    assert.doesNotMatch(out, /plain\.js|node_modules\/dep/);
    assert.match(out, /rename it to \.cjs/);
    // The user's dev script stays; canon's loop is offered as npx canon dev.
    const pkg = json(path.join(dir, "package.json"));
    assert.equal(pkg.scripts.dev, "nodemon index.js");
    assert.equal(pkg.type, "module");
    assert.match(out, /kept your script "dev" \("nodemon index\.js"\); run canon's as npx canon dev/);
    assert.match(out, /next: .*npx canon dev: npm run dev runs your own dev script/);
    assert.doesNotMatch(out, /or npm run dev\)/);
    // What the notice says is what happens: the require() code no longer runs as .js, and runs once renamed.
    const broken = spawnSync(process.execPath, ["index.js"], { cwd: dir, encoding: "utf8" });
    assert.notEqual(broken.status, 0);
    assert.match(broken.stderr, /require is not defined in ES module scope/);
    spawnSync("mv", [path.join(dir, "index.js"), path.join(dir, "index.cjs")]);
    spawnSync("mv", [path.join(dir, "lib", "util.js"), path.join(dir, "lib", "util.cjs")]);
    writeFileSync(path.join(dir, "index.cjs"), 'const util = require("./lib/util.cjs");\nconsole.log(util.name);\n');
    const renamed = spawnSync(process.execPath, ["index.cjs"], { cwd: dir, encoding: "utf8" });
    assert.equal(renamed.status, 0, renamed.stderr);
  });

  test("init in a CommonJS package without require() code says nothing of yours changes", () => {
    const dir = workspace("project-cjs-plain");
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "plain", version: "1.0.0" }));
    const run = canon(["init"], dir);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /No \.js file here uses require\(\) or module\.exports/);
    assert.match(run.stdout, /or npm run dev\)/);
  });

  test("--out in a CommonJS package is refused too", () => {
    const dir = workspace("project-cjs-out", "definitions");
    const legacy = path.join(dir, "legacy");
    spawnSync("mkdir", ["-p", legacy]);
    writeFileSync(path.join(legacy, "package.json"), JSON.stringify({ name: "legacy" }));
    const run = canon(["generate", "--out", "legacy/generated"], dir);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /legacy\/package\.json has no "type"/);
  });

  test("init in an empty folder sets up the project, and the README's next steps work", () => {
    const dir = workspace("project-empty");
    const init = canon(["init"], dir);
    assert.equal(init.code, 0, init.stderr);
    const pkg = json(path.join(dir, "package.json"));
    assert.equal(pkg.type, "module");
    assert.equal(pkg.engines.node, ">=24");
    assert.deepEqual(pkg.scripts, { generate: "canon generate", check: "canon check", dev: "canon dev" });
    const tsconfig = json(path.join(dir, "tsconfig.json"));
    assert.deepEqual(
      { ...tsconfig.compilerOptions },
      {
        target: "es2023",
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        allowImportingTsExtensions: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
      },
    );
    assert.match(readFileSync(path.join(dir, ".gitignore"), "utf8"), /^\.canon-data\/$/m);
    assert.ok(existsSync(path.join(dir, "definitions", "users.yaml")));
    const child = canon(["new", "orders", "--parent", "users"], dir);
    assert.equal(child.code, 0, child.stderr);
    const generated = canon(["generate"], dir);
    assert.equal(generated.code, 0, generated.stderr);
    const doc = json(path.join(dir, "generated", "v1", "openapi.json"));
    assert.ok(doc.paths["/v1/users/{id}/orders"], "orders are listed under users");
  });

  test("init in an existing npm project merges package.json, tsconfig.json and .gitignore, never overwriting", () => {
    const dir = workspace("project-existing");
    const original = {
      name: "shop",
      version: "2.1.0",
      description: "keep me",
      main: "index.js",
      type: "commonjs",
      engines: { node: ">=18" },
      scripts: { test: "node --test", dev: "vite" },
      dependencies: { lodash: "^4.17.21" },
    };
    writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(original, null, 4)}\n`);
    writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, module: "commonjs" }, include: ["src"] }));
    writeFileSync(path.join(dir, ".gitignore"), "dist\n/node_modules");
    const tsconfigBefore = readFileSync(path.join(dir, "tsconfig.json"), "utf8");

    const init = canon(["init"], dir);
    assert.equal(init.code, 0, init.stderr);
    const text = readFileSync(path.join(dir, "package.json"), "utf8");
    assert.match(text, /^\{\n {4}"name"/, "the file keeps its indentation");
    const pkg = JSON.parse(text);
    assert.equal(pkg.description, "keep me");
    assert.equal(pkg.main, "index.js");
    assert.deepEqual(pkg.dependencies, original.dependencies);
    assert.equal(pkg.type, "module");
    assert.equal(pkg.engines.node, ">=24");
    assert.equal(pkg.scripts.test, "node --test");
    assert.equal(pkg.scripts.dev, "vite", "an existing script is kept");
    assert.equal(pkg.scripts.generate, "canon generate");
    assert.match(init.stdout, /kept your script "dev"/);
    assert.match(init.stdout, /engines\.node ">=24" \(was ">=18"\)/);
    assert.equal(readFileSync(path.join(dir, "tsconfig.json"), "utf8"), tsconfigBefore, "a contradicting tsconfig is left as it is");
    assert.match(init.stdout, /tsconfig\.json +left as it is; generated code needs compilerOptions "module": "nodenext" \(yours: "commonjs"\)/);
    assert.equal(readFileSync(path.join(dir, ".gitignore"), "utf8"), "dist\n/node_modules\n.canon-data/\n");

    // A tsconfig that only lacks settings gets them added.
    const other = workspace("project-existing-tsconfig");
    writeFileSync(path.join(other, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, outDir: "build" }, include: ["src"] }, null, 2));
    assert.equal(canon(["init"], other).code, 0);
    const merged = json(path.join(other, "tsconfig.json"));
    assert.equal(merged.compilerOptions.outDir, "build");
    assert.equal(merged.compilerOptions.module, "nodenext");
    assert.deepEqual(merged.include, ["src"]);
  });
});
