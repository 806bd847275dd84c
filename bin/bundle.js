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
// Packages that generated services import themselves (fastify, pg, PGlite, ioredis, pg-boss),
// prettier and recheck stay outside the bundle: one copy of each is loaded, from node_modules.
// Plain JavaScript, like bin/canon.js.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** What makes one bundle another: its layout and options (bump on a change here), and Node's major version. */
const FORMAT = `canon-bundle-1 node${process.versions.node.split(".")[0]}`;

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
  const made = make(dir, folder);
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

/** Whether every file the bundle was made from has the size and modification time it had then. */
function fresh(root, current) {
  for (const [file, size, mtime] of current.inputs) {
    try {
      const stat = statSync(path.join(root, file));
      if (stat.size !== size || stat.mtimeMs !== mtime) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * Makes the bundle into a folder of its own under `folder` and points current.json at it; null
 * when esbuild is missing, another process is making it, or it fails (the sources run then).
 * Each bundle gets a new folder, so that a run still loading chunks of the last one finds them;
 * folders older than a day are removed.
 */
function make(root, folder, keepOthers = true) {
  let esbuild;
  try {
    esbuild = createRequire(path.join(root, "package.json"))("esbuild");
  } catch {
    return null;
  }
  mkdirSync(folder, { recursive: true });
  const lock = path.join(folder, "making.lock");
  let fd;
  try {
    fd = openSync(lock, "wx");
  } catch {
    try {
      if (Date.now() - statSync(lock).mtimeMs < LOCK_MS) return null;
      rmSync(lock, { force: true });
      fd = openSync(lock, "wx");
    } catch {
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
    writeFileSync(path.join(out, "package.json"), '{ "type": "module" }\n');
    const inputs = Object.keys(result.metafile.inputs)
      .filter((file) => !file.startsWith("<"))
      .sort()
      .map((file) => {
        const stat = statSync(path.join(root, file));
        // A file changed while esbuild read it may be in the bundle as it was before: never fresh.
        return [file, stat.mtimeMs < started ? stat.size : -1, stat.mtimeMs];
      });
    const current = { format: FORMAT, root, dir, inputs };
    const temp = path.join(folder, `current.json.${process.pid}.tmp`);
    writeFileSync(temp, `${JSON.stringify(current)}\n`);
    renameSync(temp, path.join(folder, "current.json"));
    prune(folder, dir, keepOthers ? 86_400_000 : 0);
    return current;
  } catch {
    return null;
  } finally {
    closeSync(fd);
    rmSync(lock, { force: true });
  }
}

/** Removes the bundles other than `keep` that are older than `age` milliseconds. */
function prune(folder, keep, age) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === keep) continue;
    const old = path.join(folder, entry.name);
    if (Date.now() - statSync(old).mtimeMs >= age) rmSync(old, { recursive: true, force: true });
  }
}

// `node bin/bundle.js`: makes the bundle now, and removes every other (npm run build, for the package).
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = new URL("..", import.meta.url);
  const made = make(fileURLToPath(root), path.join(fileURLToPath(root), "dist", "bundle"), false);
  if (!made) {
    process.stderr.write("canon: could not make the bundle (is esbuild installed, or is another process making it?)\n");
    process.exitCode = 1;
  }
}
