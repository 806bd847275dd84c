import { access, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { checkCollectionName } from "../lint/naming.ts";
import { singularOf, snakeCase } from "../util/names.ts";

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** The text of a new resource definition; it generates cleanly as it is. */
export function resourceTemplate(collection: string, options: { parent?: string; pagination?: "cursor" | "offset" }): string {
  const lines = [
    "# yaml-language-server: $schema=../node_modules/canon/schema/resource.schema.json",
    `resource: ${collection}`,
    `description: ${collection.replace(/-/g, " ")}. Describe what a record is.`,
  ];
  if (options.parent) lines.push(`parent: ${options.parent}`);
  if (options.pagination === "offset") lines.push("pagination: offset  # an admin table; use cursor for feeds");
  lines.push("operations: [list, read, create, update, delete]", "fields:");
  if (options.parent) lines.push(`  ${snakeCase(singularOf(options.parent))}_id: { type: uuid, references: ${options.parent} }`);
  lines.push(
    "  name: { type: string, min_length: 1, max_length: 200 }",
    "  note: { type: string, max_length: 2000, optional: true }",
    "",
  );
  return lines.join("\n");
}

/** `canon new <collection>`: writes definitions/<collection>.yaml, refusing bad names and existing files. */
export async function newCommand(
  collection: string,
  options: { definitions: string; parent?: string; pagination?: string },
): Promise<number> {
  const problems = [
    ...checkCollectionName(collection),
    ...(options.parent ? checkCollectionName(options.parent) : []),
  ];
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`error ${p.rule} ${p.message}\n  fix: ${p.fix}\n`);
    return 1;
  }
  if (options.pagination !== undefined && options.pagination !== "cursor" && options.pagination !== "offset") {
    process.stderr.write(`error --pagination must be cursor or offset, not "${options.pagination}"\n`);
    return 2;
  }
  const file = path.join(options.definitions, `${collection}.yaml`);
  if (await exists(file)) {
    process.stderr.write(`error ${file} exists; canon new never overwrites a definition\n`);
    return 1;
  }
  if (options.parent && !(await exists(path.join(options.definitions, `${options.parent}.yaml`)))) {
    process.stderr.write(`error --parent ${options.parent}: no ${options.parent}.yaml in ${options.definitions}\n`);
    return 1;
  }
  await mkdir(options.definitions, { recursive: true });
  await writeFile(file, resourceTemplate(collection, { parent: options.parent, pagination: options.pagination as "cursor" | "offset" | undefined }), {
    flag: "wx",
  });
  process.stdout.write(`wrote ${file}\nnext: edit its fields, then run canon generate\n`);
  return 0;
}

/** `canon init [dir]`: a starter api.yaml and one resource in an empty definitions folder. */
export async function initCommand(dir: string, options: { definitions: string }): Promise<number> {
  const definitions = path.resolve(dir, options.definitions);
  const present = (await exists(definitions)) ? (await readdir(definitions)).filter((n) => /\.ya?ml$/.test(n)) : [];
  if (present.length > 0) {
    process.stderr.write(`error ${definitions} already holds definitions (${present.join(", ")}); canon init starts a new API only\n`);
    return 1;
  }
  await mkdir(definitions, { recursive: true });
  const api = [
    "# yaml-language-server: $schema=../node_modules/canon/schema/api.schema.json",
    "title: My API",
    "base_url: https://api.example.com",
    "versions:",
    "  v1: {}",
    "rate_limit:",
    "  requests: 100",
    "  per_seconds: 60",
    "",
  ].join("\n");
  await writeFile(path.join(definitions, "api.yaml"), api, { flag: "wx" });
  await writeFile(path.join(definitions, "notes.yaml"), resourceTemplate("notes", {}), { flag: "wx" });
  process.stdout.write(`wrote ${path.join(definitions, "api.yaml")} and ${path.join(definitions, "notes.yaml")}\nnext: canon generate, then canon serve\n`);
  return 0;
}
