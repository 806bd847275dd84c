// The format step is reproducible: prettier is pinned exactly, its identity (installed version,
// options, parsers) keys the cache, and the cache file is replaced whole, never left half written.
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { formatFiles } from "../generator/format/format.ts";
import { formatterIdentity, PRETTIER_OPTIONS } from "../generator/format/prettier.ts";
import { repoRoot } from "./support/cli.ts";

const manifest = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, string>>;

test("prettier is pinned to an exact version, and the installed one is what the identity names", () => {
  const wanted = manifest(path.join(repoRoot, "package.json")).dependencies!.prettier!;
  assert.match(wanted, /^\d+\.\d+\.\d+$/, `package.json pins prettier exactly (found ${wanted})`);
  const installed = manifest(path.join(repoRoot, "node_modules", "prettier", "package.json")).version as unknown as string;
  assert.equal(installed, wanted, "the installed prettier is the pinned one (run npm ci)");
  const identity = formatterIdentity();
  assert.ok(identity.includes(`prettier@${installed}`), identity);
  assert.ok(identity.includes(JSON.stringify(PRETTIER_OPTIONS)), "the options are part of the identity");
});

test("the format cache is keyed by the formatter's identity and written whole", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "canon-format-cache-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cacheFile = path.join(dir, "format.json");
  const file = { path: "x.json", content: '{"b":[1,2],"a":{"c":true}}', parser: "json" as const };
  const first = await formatFiles([file], cacheFile);
  assert.deepEqual([first.stats.formatted, first.stats.cached, first.stats.prettier], [1, 0, 1]);
  assert.deepEqual(readdirSync(dir), ["format.json"], "no temporary file is left beside the cache");
  const second = await formatFiles([file], cacheFile);
  assert.deepEqual([second.stats.formatted, second.stats.cached], [0, 1]);
  assert.equal(second.files[0]!.content, first.files[0]!.content);
  // An entry keyed by the text alone (as before the identity was part of the key) is not used:
  // a cache written by another prettier or other options never answers.
  const [key] = readFileSync(cacheFile, "utf8").split("\t");
  writeFileSync(cacheFile, `${key}\t${JSON.stringify("stale")}\n`);
  const { createHash } = await import("node:crypto");
  const textOnly = createHash("sha256").update(file.parser).update("\0").update(file.content).digest("base64url");
  writeFileSync(cacheFile, `${textOnly}\t${JSON.stringify("from another prettier")}\n`, { flag: "a" });
  const third = await formatFiles([file], cacheFile);
  assert.equal(third.files[0]!.content, "stale", "the entry under the identity-keyed hash is the one used");
  assert.notEqual(key, textOnly);
  // A damaged cache costs a format, never a failure.
  writeFileSync(cacheFile, "garbage\t{not json\n");
  const fourth = await formatFiles([file], cacheFile);
  assert.equal(fourth.files[0]!.content, first.files[0]!.content);
});
