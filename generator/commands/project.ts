import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * What `canon init` makes of a project folder: the package.json, tsconfig.json and .gitignore
 * that generated code and the user's code beside it need. Each function takes the file's
 * current text (null: absent) and returns the new text (null: leave the file as it is) and
 * what it did, in words; nothing here touches the disk.
 */
export interface FileChange {
  text: string | null;
  notes: string[];
}

export const MINIMUM_NODE = 24;

/** The compiler options of SPEC §4: generated code type-checks under exactly these. */
export const TSCONFIG_OPTIONS: Readonly<Record<string, unknown>> = {
  target: "es2023",
  module: "nodenext",
  moduleResolution: "nodenext",
  strict: true,
  allowImportingTsExtensions: true,
  noEmit: true,
  skipLibCheck: true,
  types: ["node"],
};

/** The scripts init adds: what teams run in their build, in CI and while editing definitions. */
export const SCRIPTS: Readonly<Record<string, string>> = {
  generate: "canon generate",
  check: "canon check",
  dev: "canon dev",
};

export const GITIGNORE_LINES = ["node_modules/", ".canon-data/"];

/** The indentation of a JSON text, so that a merged file keeps its look. */
function indentOf(text: string): string | number {
  return /^\{\s*\n([ \t]+)"/.exec(text)?.[1] ?? 2;
}

/** package.json: `"type": "module"`, `engines.node`, the scripts; everything else kept. */
export function mergePackageJson(current: string | null, folderName: string): FileChange {
  const notes: string[] = [];
  let pkg: Record<string, unknown>;
  if (current === null) {
    pkg = { name: packageName(folderName), version: "0.1.0", private: true };
    notes.push("written");
  } else {
    const parsed: unknown = JSON.parse(current);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("package.json does not hold a JSON object");
    pkg = { ...(parsed as Record<string, unknown>) };
  }
  if (pkg.type !== "module") {
    if (current !== null) notes.push(`"type": "module"${pkg.type === undefined ? "" : ` (was ${JSON.stringify(pkg.type)})`}`);
    pkg.type = "module";
  }
  const engines = isRecord(pkg.engines) ? { ...pkg.engines } : {};
  if (!admitsOnlyNode(engines.node)) {
    if (current !== null) notes.push(`engines.node ">=${MINIMUM_NODE}"${engines.node === undefined ? "" : ` (was ${JSON.stringify(engines.node)})`}`);
    engines.node = `>=${MINIMUM_NODE}`;
  }
  pkg.engines = engines;
  const scripts = isRecord(pkg.scripts) ? { ...pkg.scripts } : {};
  const added: string[] = [];
  for (const [name, command] of Object.entries(SCRIPTS)) {
    if (scripts[name] === undefined) {
      scripts[name] = command;
      added.push(name);
    } else if (scripts[name] !== command) {
      notes.push(`kept your script "${name}" (${JSON.stringify(scripts[name])}); run canon's as npx ${command}`);
    }
  }
  if (added.length > 0 && current !== null) notes.push(`scripts ${added.join(", ")}`);
  pkg.scripts = scripts;
  const text = `${JSON.stringify(pkg, null, current === null ? 2 : indentOf(current))}\n`;
  return { text: text === current ? null : text, notes };
}

/** Whether an `engines.node` range already keeps out every Node before the minimum. */
function admitsOnlyNode(range: unknown): boolean {
  if (typeof range !== "string") return false;
  const match = /^\s*(?:>=|\^|~)?\s*v?(\d+)(?:\.\d+){0,2}\s*$/.exec(range);
  return match !== null && Number(match[1]) >= MINIMUM_NODE;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A valid npm package name made from a folder name. */
function packageName(folder: string): string {
  return (
    folder
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^[._-]+|-+$/g, "") || "api"
  );
}

/**
 * tsconfig.json: written when absent. An existing one keeps its settings: the options it
 * lacks are added, and one that contradicts SPEC §4 (or a file with comments, which canon does
 * not rewrite) is left as it is, with the settings to change in the notes.
 */
export function mergeTsconfig(current: string | null): FileChange {
  if (current === null) {
    const config = { compilerOptions: TSCONFIG_OPTIONS, exclude: ["node_modules"] };
    return { text: `${JSON.stringify(config, null, 2)}\n`, notes: ["written"] };
  }
  const wanted = Object.entries(TSCONFIG_OPTIONS)
    .map(([key, value]) => `"${key}": ${JSON.stringify(value)}`)
    .join(", ");
  let config: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(current);
    if (!isRecord(parsed)) throw new Error("not an object");
    config = parsed;
  } catch {
    return { text: null, notes: [`left as it is (canon does not rewrite a tsconfig with comments); generated code needs compilerOptions ${wanted}`] };
  }
  const options = isRecord(config.compilerOptions) ? { ...config.compilerOptions } : {};
  const added: string[] = [];
  const conflicts: string[] = [];
  for (const [key, value] of Object.entries(TSCONFIG_OPTIONS)) {
    const have = options[key];
    if (have === undefined) {
      options[key] = value;
      added.push(key);
    } else if (JSON.stringify(normalized(have)) !== JSON.stringify(normalized(value))) {
      conflicts.push(`"${key}": ${JSON.stringify(value)} (yours: ${JSON.stringify(have)})`);
    }
  }
  if (conflicts.length > 0) {
    return { text: null, notes: [`left as it is; generated code needs compilerOptions ${conflicts.join(", ")}`] };
  }
  if (added.length === 0) return { text: null, notes: [] };
  const text = `${JSON.stringify({ ...config, compilerOptions: options }, null, indentOf(current))}\n`;
  return { text, notes: [`added compilerOptions ${added.join(", ")}`] };
}

/** Option values compare case-insensitively where tsc reads them so ("NodeNext", "ES2023"). */
function normalized(value: unknown): unknown {
  return typeof value === "string" ? value.toLowerCase() : value;
}

/** .gitignore: the lines it lacks are appended. */
export function mergeGitignore(current: string | null): FileChange {
  const have = new Set((current ?? "").split(/\r?\n/).map((line) => line.trim().replace(/^\//, "")));
  const missing = GITIGNORE_LINES.filter((line) => !have.has(line) && !have.has(line.replace(/\/$/, "")));
  if (missing.length === 0) return { text: null, notes: [] };
  const base = current === null || current === "" ? "" : current.endsWith("\n") ? current : `${current}\n`;
  return { text: `${base}${missing.join("\n")}\n`, notes: [current === null ? "written" : `added ${missing.join(", ")}`] };
}

/** The text of a file in the project folder, or null when it is absent. */
export function readIfPresent(folder: string, name: string): string | null {
  const file = path.join(folder, name);
  return existsSync(file) ? readFileSync(file, "utf8") : null;
}
