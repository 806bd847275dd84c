import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * What `canon init` says before it makes a CommonJS package an ES module package. canon's
 * generated code is ES modules (import/export in .ts files, which Node runs as the package's
 * "type" says), so init sets `"type": "module"` rather than generating a second, CommonJS
 * flavour. That switch changes how Node loads every `.js` file of the package: a file that uses
 * `require()` or `module.exports` stops working. init asks nothing; it names those files and
 * the two ways to keep them working, before it writes anything.
 */

/** Folders never looked into: dependencies, output, VCS. */
const SKIPPED = new Set(["node_modules", ".git", "dist", "build", "coverage", ".canon-data", "generated"]);

/** Enough to show the pattern without walking a monorepo. */
const MOST_FILES = 2000;

const COMMONJS = /(^|[^.\w$])require\s*\(|\bmodule\.exports\b|(^|[^.\w$])exports\.[\w$]+\s*=/m;

/** The `.js` files of a project that use require() or module.exports, relative, sorted. */
export function commonjsFiles(project: string): string[] {
  const found: string[] = [];
  let seen = 0;
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (seen >= MOST_FILES) return;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name) && !entry.name.startsWith(".")) walk(full);
      } else if (entry.isFile() && entry.name.endsWith(".js")) {
        seen++;
        if (COMMONJS.test(readFileSync(full, "utf8"))) found.push(path.relative(project, full).split(path.sep).join("/"));
      }
    }
  };
  walk(project);
  return found;
}

/** The notice, in lines; empty when the package is a module package already or is new. */
export function moduleSwitchNotice(pkg: Record<string, unknown> | null, files: string[]): string[] {
  if (pkg === null || pkg.type === "module") return [];
  const was = pkg.type === undefined ? 'has no "type", so Node loads its .js files as CommonJS' : `has "type": ${JSON.stringify(pkg.type)}`;
  const lines = [`canon init: package.json ${was}; canon's generated code is ES modules, so init sets "type": "module".`];
  if (files.length === 0) {
    lines.push("  No .js file here uses require() or module.exports, so nothing of yours changes meaning.");
    return lines;
  }
  const shown = files.slice(0, 10).join(", ") + (files.length > 10 ? `, and ${files.length - 10} more` : "");
  lines.push(
    `  With it, Node loads every .js file as an ES module, where require() and module.exports do not exist: ${shown} will fail with "require is not defined in ES module scope".`,
    '  To keep such a file as it is, rename it to .cjs (Node loads .cjs as CommonJS whatever "type" says; update "main" and the scripts that name it), or change its require() to import.',
    "  CommonJS code loads the generated service with await import(\"./generated/index.ts\") (Node 24 also require()s an ES module that has no top-level await).",
  );
  return lines;
}
