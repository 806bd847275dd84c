import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { repoRoot, workspace } from "./support/cli.ts";

// SPEC §6: the package works when installed into another project (npm pack, install, npx canon).
test("canon works when packed and installed into another project", { timeout: 300_000 }, () => {
  const dir = workspace("package");
  const npm = (args: string[], cwd: string) => {
    const result = spawnSync("npm", args, { cwd, encoding: "utf8" });
    assert.equal(result.status, 0, `npm ${args.join(" ")}: ${result.stderr}`);
    return result.stdout;
  };
  npm(["pack", "--silent", "--pack-destination", dir], repoRoot);
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  assert.ok(tarball, "npm pack made a tarball");
  const project = path.join(dir, "project");
  npm(["init", "-y"], dir);
  spawnSync("mkdir", ["-p", project]);
  writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  npm(["install", "--prefer-offline", "--no-audit", "--no-fund", path.join(dir, tarball)], project);
  assert.ok(existsSync(path.join(project, "node_modules", "canon-codegen", "dist", "generator", "cli", "main.js")), "the build ships");

  const bin = path.join(project, "node_modules", ".bin", "canon");
  const run = (args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: project, encoding: "utf8" });
  const help = run(["--help"]);
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /generate/);
  assert.equal(run(["init"]).status, 0);
  const generated = run(["generate"]);
  assert.equal(generated.status, 0, generated.stderr);
  assert.equal(run(["check"]).status, 0);
  assert.ok(existsSync(path.join(project, "generated", "v1", "openapi.json")));
});
