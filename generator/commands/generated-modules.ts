import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import module from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { packageRoot } from "../util/package-root.ts";

/**
 * How `canon serve` and `canon dev` load the generated code into canon's own process, with
 * one module hook (Node's `module.registerHooks`, in this thread) over the output folder:
 *
 * - Dependencies: generated code imports canon's runtime dependencies (fastify, zod, pg,
 *   PGlite …) by bare name, which Node resolves from the output folder upwards. Inside the
 *   project they are found in its node_modules; an output folder elsewhere (`--out /tmp/api`)
 *   has none above it. Then, and only then, the name is resolved again from canon's own
 *   package, whose package.json declares every one of them: the same versions the code was
 *   generated and tested for, wherever canon is installed (hoisted or not).
 * - Versions (`canon dev`): every generated file is loaded under a URL that carries a hash of
 *   its content and of everything it imports, so a regenerated file, and every file that
 *   imports it, is loaded anew while unchanged files are reused from Node's module cache.
 */
interface HookState {
  /** The output folder as a file URL ending in `/`. */
  out: string;
  /** Whether that folder's path is its real path (no symbolic link on the way to it). */
  real: boolean;
  /** Version of each generated module, by file URL without query; empty for `serve`. */
  versions: Map<string, string>;
  /** Each generated file as last versioned, by path (see `setModuleVersions`). */
  read: Map<string, VersionedFile>;
}

interface VersionedFile {
  /** The file's content, its hash and its relative imports. */
  content: string;
  hash: string;
  imports: string[];
  /** Its file URL without query. */
  url: string;
  /** What its version was last made of (its hash and its imports' versions), and that version. */
  made: { of: string; version: string } | null;
}

let state: HookState | null = null;

/** Installs the hook for `out` (once per process; `serve` and `dev` use one output folder). */
export function loadGeneratedFrom(out: string): void {
  const url = pathToFileURL(`${path.resolve(out)}${path.sep}`).href;
  const real = isRealPath(path.resolve(out));
  if (state) {
    // The files versioned so far name their URLs in the folder they were read from.
    if (state.out !== url) state.read.clear();
    state.out = url;
    state.real = real;
    return;
  }
  state = { out: url, real, versions: new Map(), read: new Map() };
  const canon = new URL("package.json", packageRoot()).href;
  const current = state;
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const fromOutput = context.parentURL?.startsWith(current.out) ?? false;
      // A generated file imported by another by its relative path (a version's index.ts imports
      // each resource's routes.ts): the file this session wrote, at its version, without asking
      // Node's resolver, which would look for it on disk and for its package scope again for
      // every importer loaded anew. Only where the folder's path is real, as Node's resolver
      // would make it, so that each module keeps one URL.
      if (fromOutput && current.real && (specifier.startsWith("./") || specifier.startsWith("../"))) {
        const bareUrl = new URL(specifier, context.parentURL).href;
        const version = current.versions.get(bareUrl);
        if (version) return { url: `${bareUrl}?v=${version}`, shortCircuit: true };
      }
      let resolved;
      try {
        resolved = nextResolve(specifier, context);
      } catch (error) {
        const bare = !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
        if (!fromOutput || !bare || (error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw error;
        return nextResolve(specifier, { ...context, parentURL: canon });
      }
      if (!resolved.url.startsWith(current.out)) return resolved;
      const bareUrl = resolved.url.split("?")[0]!;
      const version = current.versions.get(bareUrl);
      return version ? { ...resolved, url: `${bareUrl}?v=${version}` } : resolved;
    },
  });
}

/**
 * Sets the version of every generated module from the files just written: a hash of the
 * file's content and of the versions of the generated files it imports (relative imports).
 * A save changes a few files: the others' hashes, imports, URLs and versions are taken from the
 * last call, and a version is hashed again only when what it is made of changed.
 */
export function setModuleVersions(out: string, files: ReadonlyArray<{ path: string; content: string }>): void {
  if (!state) throw new Error("loadGeneratedFrom must run first");
  const base = `${path.resolve(out)}${path.sep}`;
  const byPath = new Map(files.filter((f) => f.path.endsWith(".ts")).map((f) => [f.path, f.content]));
  const versions = new Map<string, string>();
  const visiting = new Set<string>();
  const read = state.read;
  // Each file's own hash and imports, read again only when its content changed.
  const own = (file: string): VersionedFile => {
    const content = byPath.get(file) ?? "";
    let known = read.get(file);
    if (known?.content !== content) {
      const url = known?.url ?? pathToFileURL(base + file).href;
      read.set(file, (known = { content, hash: hash(content), imports: relativeImports(file, content), url, made: null }));
    }
    return known;
  };
  const versionOf = (file: string): string => {
    const known = versions.get(file);
    if (known) return known;
    const versioned = own(file);
    if (visiting.has(file)) return versioned.hash;
    visiting.add(file);
    const parts = [versioned.hash];
    for (const dependency of versioned.imports) {
      if (byPath.has(dependency)) parts.push(versionOf(dependency));
    }
    visiting.delete(file);
    const of = parts.join(" ");
    if (versioned.made?.of !== of) {
      const hasher = createHash("sha256");
      for (const part of parts) hasher.update(part);
      versioned.made = { of, version: hasher.digest("hex").slice(0, 16) };
    }
    versions.set(file, versioned.made.version);
    return versioned.made.version;
  };
  state.versions.clear();
  for (const file of byPath.keys()) state.versions.set(own(file).url, versionOf(file));
}

/** Imports a generated module (`index.ts`, `sql/index.ts`) at its current version. */
export async function importGenerated<T>(out: string, file: string): Promise<T> {
  const url = pathToFileURL(path.join(path.resolve(out), file)).href;
  const version = state?.versions.get(url);
  return (await import(version ? `${url}?v=${version}` : url)) as T;
}

/** Whether `folder` is its own real path; false when it cannot be told (it does not exist yet). */
function isRealPath(folder: string): boolean {
  try {
    return realpathSync(folder) === folder;
  } catch {
    return false;
  }
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/**
 * The output files a file loads by relative path: static and dynamic imports and re-exports,
 * but not `import type` / `export type` statements, which Node erases (a routes file's types
 * from services.ts must not make it a new version whenever services.ts changes).
 */
export function relativeImports(file: string, content: string): string[] {
  const found: string[] = [];
  for (const match of content.matchAll(/\b(?:(import|export)(\s+type\b)?[^"();]*?\bfrom|import)\s*\(?\s*"(\.\.?\/[^"]+)"/g)) {
    if (match[2]) continue;
    found.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), match[3]!)));
  }
  return found;
}
