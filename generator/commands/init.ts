import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { exists, schemaLine } from "./scaffold.ts";
import { moduleSwitchNotice, commonjsFiles } from "./commonjs.ts";
import { mergeGitignore, mergePackageJson, mergeTsconfig, readIfPresent, SCRIPTS, type FileChange } from "./project.ts";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The starter api.yaml. */
function apiTemplate(schema: string): string {
  return [schema, "title: My API", "base_url: https://api.example.com", "versions:", "  v1: { draft: true } # not published yet: change anything; remove draft to publish v1", "rate_limit:", "  requests: 100", "  per_seconds: 60", ""].join(
    "\n",
  );
}

/** The starter resource: `users`, which the README's next step (`canon new orders --parent users`) builds on. */
function usersTemplate(schema: string): string {
  return [
    schema,
    "resource: users",
    "description: People who use the API.",
    "operations: [list, read, create, update, delete]",
    "fields:",
    "  email: { type: string, format: email, max_length: 320, unique: true }",
    "  name: { type: string, min_length: 1, max_length: 200 }",
    "",
  ].join("\n");
}

/**
 * `canon init [dir]`: makes `dir` a project canon runs in, then writes a starter api.yaml and
 * `users.yaml`. package.json gets `"type": "module"`, `engines.node` and the scripts
 * `generate`, `check` and `dev`, keeping everything it had; tsconfig.json gets the settings
 * of SPEC §4 (an existing one is merged, or left with a message saying what to set);
 * .gitignore gets `.canon-data/`. A folder that already holds definitions is refused before
 * anything is written.
 */
export async function initCommand(dir: string, options: { definitions: string }): Promise<number> {
  const project = path.resolve(dir);
  const definitions = path.resolve(project, options.definitions);
  const present = (await exists(definitions)) ? (await readdir(definitions)).filter((n) => /\.ya?ml$/.test(n)) : [];
  if (present.length > 0) {
    process.stderr.write(`error ${definitions} already holds definitions (${present.join(", ")}); canon init starts a new API only\n`);
    return 1;
  }
  // Said before anything is written: what making the package an ES module means for its code.
  const before = readIfPresent(project, "package.json");
  let existing: Record<string, unknown> | null = null;
  try {
    existing = before === null ? null : (JSON.parse(before) as Record<string, unknown>);
  } catch {
    // Refused below, with the file named.
  }
  const notice = existing && typeof existing === "object" && existing.type !== "module" ? moduleSwitchNotice(existing, commonjsFiles(project)) : [];
  if (notice.length > 0) process.stdout.write(`${notice.join("\n")}\n`);
  const ownDev = existing !== null && typeof existing === "object" && isRecord(existing.scripts) && existing.scripts.dev !== undefined && existing.scripts.dev !== SCRIPTS.dev;
  let changes: Array<[string, FileChange]>;
  try {
    changes = [
      ["package.json", mergePackageJson(readIfPresent(project, "package.json"), path.basename(project))],
      ["tsconfig.json", mergeTsconfig(readIfPresent(project, "tsconfig.json"))],
      [".gitignore", mergeGitignore(readIfPresent(project, ".gitignore"))],
    ];
  } catch (error) {
    process.stderr.write(`error ${path.join(project, "package.json")}: ${(error as Error).message}; fix it, then run canon init again\n`);
    return 1;
  }
  await mkdir(definitions, { recursive: true });
  for (const [name, change] of changes) {
    if (change.text !== null) await writeFile(path.join(project, name), change.text);
  }
  const api = path.join(definitions, "api.yaml");
  const users = path.join(definitions, "users.yaml");
  await writeFile(api, apiTemplate(schemaLine(definitions, project, "api")), { flag: "wx" });
  await writeFile(users, usersTemplate(schemaLine(definitions, project, "resource")), { flag: "wx" });

  const lines = ["canon init:"];
  for (const [name, change] of changes) {
    if (change.notes.length > 0) lines.push(`  ${name.padEnd(14)} ${change.notes.join("; ")}`);
  }
  lines.push(`  ${path.relative(project, api) || api}, ${path.relative(project, users)}  written`);
  const pkg = JSON.parse(readIfPresent(project, "package.json") ?? "{}") as { devDependencies?: Record<string, string> };
  if (!pkg.devDependencies?.node) {
    lines.push(`note: npm install --save-dev node@24 gives the project its own Node 24 (npx and npm run use it on any machine)`);
  }
  // An existing `dev` script stays the user's: canon's loop is then `npx canon dev`.
  lines.push(`next: canon new orders --parent users, then canon generate and canon serve (or ${ownDev ? "npx canon dev: npm run dev runs your own dev script" : "npm run dev"})`, "");
  process.stdout.write(lines.join("\n"));
  return 0;
}
