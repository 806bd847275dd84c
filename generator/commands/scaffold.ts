import { access, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
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

/**
 * The tenant field a new child of `parent` needs (SPEC §12.4): the parent's own tenant field when
 * the parent is tenant-scoped (a child of a tenant-scoped resource is tenant-scoped too), or, when
 * the parent is the tenant collection (another definition's `tenant: true` field references it),
 * the parent field itself (`parentIsTenant`). Undefined when tenancy does not reach the parent, or
 * when a file cannot be read as YAML (lint then says what is wrong).
 */
export async function tenantOfChild(
  definitions: string,
  parent: string,
): Promise<{ name: string; references: string; parentIsTenant: boolean } | undefined> {
  const tenantFields = (doc: unknown): Array<{ name: string; references: string }> => {
    const fields = (doc as { fields?: unknown } | null)?.fields;
    if (!fields || typeof fields !== "object") return [];
    return Object.entries(fields as Record<string, { tenant?: unknown; references?: unknown } | null>)
      .filter(([, f]) => f?.tenant === true && typeof f.references === "string")
      .map(([name, f]) => ({ name, references: f!.references as string }));
  };
  const read = async (file: string): Promise<unknown> => {
    try {
      return parse(await readFile(path.join(definitions, file), "utf8"));
    } catch {
      return undefined;
    }
  };
  const own = tenantFields(await read(`${parent}.yaml`))[0];
  if (own) return { ...own, parentIsTenant: false };
  for (const file of (await readdir(definitions)).filter((f) => f.endsWith(".yaml") && f !== "api.yaml").sort()) {
    if (tenantFields(await read(file)).some((f) => f.references === parent)) {
      return { name: `${snakeCase(singularOf(parent))}_id`, references: parent, parentIsTenant: true };
    }
  }
  return undefined;
}

/** The text of a new resource definition; it generates cleanly as it is. */
export function resourceTemplate(
  collection: string,
  options: {
    parent?: string;
    pagination?: "cursor" | "offset";
    schema: string;
    tenant?: { name: string; references: string; parentIsTenant: boolean } | undefined;
  },
): string {
  const lines = [
    options.schema,
    `resource: ${collection}`,
    `description: ${collection.replace(/-/g, " ")}. Describe what a record is.`,
  ];
  if (options.parent) lines.push(`parent: ${options.parent}`);
  if (options.pagination === "offset") lines.push("pagination: offset  # an admin table; use cursor for feeds");
  lines.push("operations: [list, read, create, update, delete]", "fields:");
  const tenant = options.tenant;
  if (options.parent) {
    const link = `${snakeCase(singularOf(options.parent))}_id`;
    lines.push(`  ${link}: { type: uuid, references: ${options.parent}${tenant?.parentIsTenant ? ", tenant: true" : ""} }`);
    // A child of a tenant-scoped resource is tenant-scoped too (lint: tenant-scope).
    if (tenant && !tenant.parentIsTenant && tenant.name !== link) {
      lines.push(`  ${tenant.name}: { type: uuid, references: ${tenant.references}, tenant: true }`);
    }
  }
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
      tenant: options.parent ? await tenantOfChild(options.definitions, options.parent) : undefined,
    }), {
    flag: "wx",
  });
  process.stdout.write(`wrote ${file}\nnext: edit its fields, then run canon generate\n`);
  return 0;
}
