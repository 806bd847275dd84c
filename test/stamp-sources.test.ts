// The hash of canon's sources (generator/write/stamp.ts `canonSources`), which the up-to-date
// stamp and the engine's records are keyed by: kept in the cache folder with the size and time of
// each file, taken from there while they hold, made again when one changes.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { canonSources } from "../generator/write/stamp.ts";

const dir = mkdtempSync(path.join(tmpdir(), "canon-sources-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A package root holding a few source files, all last changed a minute ago (settled). */
function fakeCanon(): { root: URL; file: string; settle: () => void } {
  const root = path.join(dir, "canon");
  for (const folder of ["generator/emit", "runtime", "templates"])
    mkdirSync(path.join(root, folder), { recursive: true });
  const files = {
    "generator/emit/a.ts": "export const a = 1;\n",
    "runtime/b.ts": "export const b = 2;\n",
    "templates/c.hbs": "{{c}}\n",
    "package.json": "{}\n",
  };
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(root, file), text);
  const settle = () => {
    const old = new Date(Date.now() - 60_000);
    for (const file of Object.keys(files)) utimesSync(path.join(root, file), old, old);
  };
  settle();
  return { root: pathToFileURL(`${root}/`), file: path.join(root, "runtime", "b.ts"), settle };
}

test("canon's own sources: hashed alike with and without the kept hash, which is used while every file keeps its size and time", async () => {
  const cache = path.join(dir, "cache");
  const { root, file, settle } = fakeCanon();
  const fresh = await canonSources(undefined, root);
  assert.equal(await canonSources(cache, root), fresh, "the same hash with a cache folder");
  const kept = JSON.parse(readFileSync(path.join(cache, "sources.json"), "utf8")) as { hash: string };
  assert.equal(kept.hash, fresh, "kept, the files being settled");
  // Another content of the same size, with the time it had: the kept hash stands (what bin/bundle.js assumes too).
  const { atime, mtime } = statSync(file);
  writeFileSync(file, "export const b = 3;\n");
  utimesSync(file, atime, mtime);
  assert.equal(await canonSources(cache, root), fresh, "taken from the cache: the files were not read");
  // A file changed now: hashed again, and not kept while it is this recent.
  writeFileSync(file, "export const b = 4;\n");
  const changed = await canonSources(cache, root);
  assert.notEqual(changed, fresh);
  assert.equal(changed, await canonSources(undefined, root));
  assert.equal(
    (JSON.parse(readFileSync(path.join(cache, "sources.json"), "utf8")) as { hash: string }).hash,
    fresh,
    "a file changed seconds ago keeps the hash from being kept",
  );
  settle();
  assert.equal(await canonSources(cache, root), changed);
  assert.equal(
    (JSON.parse(readFileSync(path.join(cache, "sources.json"), "utf8")) as { hash: string }).hash,
    changed,
    "kept once settled",
  );
  // A file added: another hash.
  writeFileSync(path.join(new URL(root).pathname, "templates", "d.hbs"), "{{d}}\n");
  settle();
  assert.notEqual(await canonSources(cache, root), changed);
  // A damaged kept file is ignored.
  writeFileSync(path.join(cache, "sources.json"), "{");
  assert.equal(await canonSources(cache, root), await canonSources(undefined, root));
});
