// canon's CLI as one bundle (esbuild): its ~120 TypeScript modules and the packages they load
// (zod, yaml, commander: ~200 more modules) in about 30 files, split by command, so that a run
// resolves, reads and links a few files instead of ~320 (a one-change `canon generate` at N = 100
// spends ~170 ms less: docs/benchmarks.md).
//
// - In this repository (sources beside bin/), `canon` runs the bundle in
//   node_modules/.cache/canon/bundle when it is fresh: made by this esbuild from files that all
//   have the size and modification time recorded when it was made. A stale or missing bundle is
//   made again before the run (about a quarter of a second, once after each edit of canon); while
//   another process makes it, or without esbuild (a devDependency), the run loads the sources,
//   as it did before the bundle.
// - An installed package runs the bundle in dist/bundle that `npm pack` made (`npm run build`:
//   `node bin/bundle.js`), as it is.
// - CANON_BUNDLE=0 runs the sources (or dist/generator, installed) instead.
//
// Packages whose objects canon hands to generated services or takes from them (fastify, pg,
// PGlite, ioredis, pg-boss), and prettier and recheck, which are large and loaded only when
// needed, stay outside the bundle: they are loaded from node_modules. (zod is inside: canon's own
// schemas of the definitions use it; a served service loads its own copy.)
// Plain JavaScript, like bin/canon.js.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The layout and options of a bundle (bump on a change here); this file and esbuild are among the inputs checked. */
const FORMAT = "canon-bundle-2";

/** Bundles kept besides the newest, however old, for runs still loading chunks of one. */
const KEPT = 2;

/** Bundles kept besides the newest at most, however recent (a clock that puts files in the future makes one each run). */
const KEPT_AT_MOST = 5;

/** How long an older bundle is kept after it was replaced. */
const KEPT_MS = 86_400_000;

/** The entry points: the CLI, and the two worker threads' scripts (found beside the chunk that starts them). */
const ENTRIES = { main: "generator/cli/main.ts", "thread-worker": "generator/emit/thread-worker.ts", worker: "generator/format/worker.ts" };

/** Loaded from node_modules at run time, never bundled. */
const EXTERNAL = ["fastify", "@fastify/*", "pg", "pg-boss", "@electric-sql/pglite", "@electric-sql/pglite/*", "ioredis", "prettier", "prettier/*", "recheck"];

/** How long a bundle being made keeps others from making it too (a process that died leaves its lock). */
const LOCK_MS = 60_000;

/**
 * The URL of the bundle's CLI module to run, or null to run canon's modules one by one.
 * `root`: canon's package folder (a file: URL); `installed`: canon runs from node_modules.
 */
export function bundledMain(root, installed) {
  if (process.env.CANON_BUNDLE === "0") return null;
  const dir = fileURLToPath(root);
  if (installed) {
    const folder = path.join(dir, "dist", "bundle");
    const current = readCurrent(folder);
    return current ? mainOf(folder, current) : null;
  }
  const folder = path.join(dir, "node_modules", ".cache", "canon", "bundle");
  const current = readCurrent(folder);
  if (current && current.root === dir && fresh(dir, current)) return mainOf(folder, current);
  const made = make(dir, folder, current);
  return made ? mainOf(folder, made) : null;
}

function mainOf(folder, current) {
  return pathToFileURL(path.join(folder, current.dir, "main.js"));
}

/** `current.json`: the folder of the newest bundle, and the canon and the files it was made from. */
function readCurrent(folder) {
  try {
    const current = JSON.parse(readFileSync(path.join(folder, "current.json"), "utf8"));
    return current.format === FORMAT && existsSync(path.join(folder, current.dir, "main.js")) ? current : null;
  } catch {
    return null;
  }
}

/**
 * Whether every file the bundle was made from has the size and modification time it had then.
 * Paths are put together by hand (`root` ends with a separator; inputs are relative, with `/`):
 * `path.join` of the ~330 inputs, code not yet compiled, took some 5 ms of every run.
 */
function fresh(root, current) {
  const base = root.endsWith(path.sep) ? root : `${root}${path.sep}`;
  for (const [file, size, mtime] of current.inputs) {
    let stat;
    try {
      stat = statSync(base + file, { throwIfNoEntry: false });
    } catch {
      return false; // unreadable: made again
    }
    if (!stat || stat.size !== size || stat.mtimeMs !== mtime) return false;
  }
  return true;
}

/**
 * Makes the bundle into a folder of its own under `folder` and points current.json at it; null
 * when esbuild is missing, the folder cannot be written, another process is making it, or it
 * fails (the sources run then; `report` is told why). Each bundle gets a new folder, so that a
 * run still loading chunks of an older one finds them: the replaced one is marked with the time
 * it was replaced, and those replaced more than a day ago are removed, but for the newest `KEPT`.
 * `package`: the bundle `npm pack` ships (every other is removed; its current.json names no
 * files of this machine).
 */
function make(root, folder, replaced = null, { report = () => {}, package: forPackage = false } = {}) {
  let esbuild;
  try {
    esbuild = createRequire(path.join(root, "package.json"))("esbuild");
  } catch (error) {
    report(error);
    return null;
  }
  const lock = path.join(folder, "making.lock");
  let fd;
  try {
    mkdirSync(folder, { recursive: true });
    fd = openSync(lock, "wx");
  } catch (error) {
    try {
      if (error.code !== "EEXIST" || Date.now() - statSync(lock).mtimeMs < LOCK_MS) throw error;
      rmSync(lock, { force: true });
      fd = openSync(lock, "wx");
    } catch (error) {
      report(error);
      return null;
    }
  }
  try {
    const started = Date.now();
    const dir = `${Date.now().toString(36)}-${process.pid}`;
    const out = path.join(folder, dir);
    const result = esbuild.buildSync({
      absWorkingDir: root,
      entryPoints: ENTRIES,
      outdir: out,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node24",
      external: EXTERNAL,
      // CommonJS packages inside the bundle (commander, yaml) call require for Node's own modules.
      banner: { js: 'import { createRequire as canonBundleRequire } from "node:module"; const require = canonBundleRequire(import.meta.url);' },
      metafile: true,
      logLevel: "silent",
      write: true,
    });
    // This file and esbuild make the bundle too: their sizes and times are checked with the rest.
    result.metafile.inputs[path.relative(root, fileURLToPath(import.meta.url))] = {};
    result.metafile.inputs[path.relative(root, esbuildPackage(root))] = {};
    writeFileSync(path.join(out, "package.json"), '{ "type": "module" }\n');
    const inputs = Object.keys(result.metafile.inputs)
      .filter((file) => !file.startsWith("<"))
      .sort()
      .map((file) => {
        const stat = statSync(path.join(root, file));
        // A file changed while esbuild read it (or whose time the clock cannot place before the
        // build, which file systems keep coarsely) may be in the bundle as it was: not fresh, made again.
        return [file, stat.mtimeMs < started - 2000 ? stat.size : -1, stat.mtimeMs];
      });
    const current = forPackage ? { format: FORMAT, dir } : { format: FORMAT, root, dir, inputs };
    const temp = path.join(folder, `current.json.${process.pid}.tmp`);
    writeFileSync(temp, `${JSON.stringify(current)}\n`);
    renameSync(temp, path.join(folder, "current.json"));
    if (replaced) touch(path.join(folder, replaced.dir));
    prune(folder, dir, forPackage);
    return current;
  } catch (error) {
    report(error);
    return null;
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}

/** Where esbuild's package.json is, as canon resolves it. */
function esbuildPackage(root) {
  return createRequire(path.join(root, "package.json")).resolve("esbuild/package.json");
}

function touch(dir) {
  try {
    const now = new Date();
    utimesSync(dir, now, now);
  } catch {
    // Gone already.
  }
}

/**
 * Removes the bundles other than `keep`: all of them (`all`), or those replaced more than
 * `KEPT_MS` ago but for the newest `KEPT`, and any beyond the newest `KEPT_AT_MOST` (a folder's
 * time is when it was made or replaced).
 */
function prune(folder, keep, all) {
  const others = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === keep) continue;
    try {
      others.push({ dir: path.join(folder, entry.name), time: statSync(path.join(folder, entry.name)).mtimeMs });
    } catch {
      // Removed meanwhile by another process.
    }
  }
  others.sort((a, b) => b.time - a.time);
  for (const [i, other] of others.entries()) {
    if (all || i >= KEPT_AT_MOST || (i >= KEPT && Date.now() - other.time > KEPT_MS)) rmSync(other.dir, { recursive: true, force: true });
  }
}

// `node bin/bundle.js`: makes the bundle now, and removes every other (npm run build, for the package).
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = new URL("..", import.meta.url);
  let why = "another process is making it";
  const report = (error) => (why = error instanceof Error ? error.message : String(error));
  const made = make(fileURLToPath(root), path.join(fileURLToPath(root), "dist", "bundle"), null, { report, package: true });
  if (!made) {
    process.stderr.write(`canon: could not make the bundle: ${why}\n`);
    process.exitCode = 1;
  }
}
