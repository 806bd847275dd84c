import { access, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { checkCollectionName } from "../lint/naming.ts";
import { singularOf, snakeCase } from "../util/names.ts";
import { canonPackage } from "../util/package-root.ts";

export async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first line of a definition file: it points editors at the JSON Schema in canon's
 * installed package, relative to the definitions folder.
 */
export function schemaLine(definitions: string, project: string, kind: "api" | "resource"): string {
  const schema = path.join(path.resolve(project), "node_modules", canonPackage().name, "schema", `${kind}.schema.json`);
  return `# yaml-language-server: $schema=${path.relative(path.resolve(definitions), schema).split(path.sep).join("/")}`;
}

/** The text of a new resource definition; it generates cleanly as it is. */
export function resourceTemplate(
  collection: string,
  options: { parent?: string; pagination?: "cursor" | "offset"; schema: string },
): string {
  const lines = [
    options.schema,
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
  await writeFile(file, resourceTemplate(collection, {
      parent: options.parent,
      pagination: options.pagination as "cursor" | "offset" | undefined,
      schema: schemaLine(options.definitions, ".", "resource"),
    }), {
    flag: "wx",
  });
  process.stdout.write(`wrote ${file}\nnext: edit its fields, then run canon generate\n`);
  return 0;
}
