/**
 * The up-to-date stamp: after a successful generate (or a passing check), canon records a
 * fingerprint of everything the output depends on (canon's own sources, every definition
 * file, the options, today's date) and a hash of every output file. A later run whose
 * fingerprint matches, over an output folder whose files still hash the same, has nothing to
 * do: it is answered without loading the pipeline (no YAML, zod, handlebars or prettier).
 * Any difference (an edited, added or removed file anywhere) falls back to the full pipeline.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { compareText } from "../diagnostics/diagnostic.ts";
import { formatterIdentity } from "../format/prettier.ts";
import { packageRoot } from "../util/package-root.ts";
import { inParallel, listFiles, listFilesSync } from "./write.ts";

export interface Stamp {
  fingerprint: string;
  /** Output path → sha256 of its content. */
  files: Record<string, string>;
  /** Diagnostics text (warnings) the full run printed, printed again on a fast answer. */
  warnings: string;
}

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

async function filesUnder(dir: string): Promise<string[]> {
  return (await listFiles(dir)).sort(compareText);
}

/** The folders of canon's own code and templates, and its manifest: what `canonSources` hashes. */
const SOURCE_FOLDERS = ["generator", "dist/generator", "runtime", "templates"];

/**
 * Hashes of canon's own code and templates: a different canon is a different fingerprint. With
 * `cacheDir`, the hash is kept there (`sources.json`) with the size and modification time of each
 * file it was made from: a run whose files all still have them takes it without reading them
 * (some 200 files, 10 ms of every run, no-op runs too), the way canon's bundle is judged fresh
 * (bin/bundle.js). A file changed within the last seconds keeps the hash from being kept, so that
 * an edit in the same tick of the clock as the hash was made (same size, same time) cannot hide.
 */
export async function canonSources(cacheDir?: string, root: URL = packageRoot()): Promise<string> {
  // The installed prettier, not only the range package.json names: it decides the output.
  const formatter = formatterIdentity();
  const files = [
    ...SOURCE_FOLDERS.flatMap((folder) =>
      listFilesSync(new URL(`${folder}/`, root).pathname)
        .sort(compareText)
        .map((file) => `${folder}/${file}`),
    ),
    "package.json",
  ];
  const stats = files.map((file) => {
    const stat = statSync(new URL(file, root), { throwIfNoEntry: false });
    return stat ? [stat.size, stat.mtimeMs] : null;
  });
  const key = JSON.stringify([root.href, formatter, files.map((file, i) => [file, stats[i]])]);
  const kept = cacheDir ? path.join(cacheDir, "sources.json") : null;
  if (kept) {
    try {
      const known = JSON.parse(readFileSync(kept, "utf8")) as { key: string; hash: string };
      if (known.key === key) return known.hash;
    } catch {
      // None yet, or damaged: hashed below.
    }
  }
  // The files listed above, as `hashFolder` hashes a folder (name and content, in name order), then the manifest.
  const hash = createHash("sha256");
  for (const file of files.slice(0, -1))
    hash
      .update(`${file}\0`)
      .update(readFileSync(new URL(file, root)))
      .update("\0");
  hash.update(await readFile(new URL("package.json", root)));
  hash.update(formatter);
  const digest = hash.digest("hex");
  const settled = Date.now() - SETTLED_MS;
  if (kept && stats.every((stat) => stat !== null && stat[1]! < settled)) {
    const temporary = `${kept}.${process.pid}.tmp`;
    try {
      await mkdir(cacheDir!, { recursive: true });
      await writeFile(temporary, JSON.stringify({ key, hash: digest }));
      await rename(temporary, kept);
    } catch {
      // Only saves time.
      await rm(temporary, { force: true }).catch(() => {});
    }
  }
  return digest;
}

/** How long ago a source file must have changed for its size and time to stand for its content. */
const SETTLED_MS = 3000;

/**
 * Adds every file under `dir` (name and content, in name order) to `hash`. Read one after the
 * other without the thread pool: a few hundred small files take a few milliseconds this way, where
 * a read per task of the pool cost several times that in handing them over.
 */
async function hashFolder(hash: ReturnType<typeof createHash>, dir: string, prefix: string): Promise<void> {
  for (const file of await filesUnder(dir))
    hash
      .update(`${prefix}${file}\0`)
      .update(readFileSync(path.join(dir, file)))
      .update("\0");
}

export interface FingerprintInput {
  /** The hash of canon's sources (`canonSources`). */
  canon: string;
  definitions: string;
  out: string;
  /** Everything else that changes the result: flags, today's date. */
  options: Record<string, unknown>;
}

export async function fingerprint(input: FingerprintInput): Promise<string> {
  const hash = createHash("sha256").update(input.canon);
  await hashFolder(hash, input.definitions, "");
  hash.update(JSON.stringify([path.resolve(input.out), Object.entries(input.options).sort()]));
  return hash.digest("hex");
}

export function stampFile(cacheDir: string, out: string): string {
  return path.join(cacheDir, `stamp-${sha(path.resolve(out)).slice(0, 16)}.json`);
}

/** The stamp, when the output folder holds exactly the stamped files with the stamped contents. */
export async function currentStamp(file: string, out: string, print: string): Promise<Stamp | null> {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(await readFile(file, "utf8")) as Stamp;
  } catch {
    return null;
  }
  if (stamp.fingerprint !== print) return null;
  const present = await filesUnder(out);
  const expected = Object.keys(stamp.files).sort();
  if (present.length !== expected.length || present.some((f, i) => f !== expected[i])) return null;
  const hashes: string[] = new Array(present.length);
  await inParallel(
    [...present.keys()],
    async (i) => (hashes[i] = sha(await readFile(path.join(out, present[i]!)))),
  );
  return present.every((f, i) => hashes[i] === stamp.files[f]) ? stamp : null;
}

export async function writeStamp(
  file: string,
  print: string,
  files: Array<{ path: string; content: string }>,
  warnings: string,
  digests: ReadonlyMap<string, string> = new Map(),
): Promise<void> {
  // A file recalled from the output folder comes with the digest its record checked (`digests`,
  // base64url): not hashed again.
  const hashOf = (f: { path: string; content: string }) => {
    const known = digests.get(f.path);
    return known ? Buffer.from(known, "base64url").toString("hex") : sha(f.content);
  };
  const stamp: Stamp = {
    fingerprint: print,
    files: Object.fromEntries(files.map((f) => [f.path, hashOf(f)])),
    warnings,
  };
  // Written beside its place and renamed over it: a concurrent run reads the old stamp or the new one.
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(temporary, JSON.stringify(stamp));
    await rename(temporary, file);
  } catch {
    // The stamp only saves time.
    await rm(temporary, { force: true }).catch(() => {});
  }
}
