// The import planner (generator/emit/shared/imports.ts): imports in generated files follow use.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createEmitContext } from "../generator/emit/index.ts";
import { IMPORTS, runtimeFileExports, source, usedIdentifiers, withImports } from "../generator/emit/shared/imports.ts";

test("identifiers in code count; comments, strings, regexes and property names do not", () => {
  const code = [
    "// found in a comment",
    "/* parseBody in a block comment */",
    'const a = "NotFoundError in a string" + \'matchOf\';',
    "const b = `text ${listByCursor(x)} more ${`nested ${sendRecord}`} found`;",
    "const c = z.string().regex(/^found[a-z]+\\/parseParams$/i);",
    "const d = record.values.definedOnly ?? other?.checkIfMatch;",
    "const e = { ...spread, key: value };",
    "export { DEFAULT_PAGE_SIZE } from \"../runtime/index.ts\";",
    "export type { CursorPage } from \"../runtime/index.ts\";",
    "if (x) return /authorizeOrThrow/.test(y) ? 1 / divisor : 2;",
  ].join("\n");
  const used = usedIdentifiers(code);
  for (const name of ["listByCursor", "sendRecord", "z", "record", "other", "spread", "key", "value", "x", "y", "divisor"]) {
    assert.ok(used.has(name), `${name} is used`);
  }
  for (const name of ["found", "parseBody", "NotFoundError", "matchOf", "parseParams", "definedOnly", "checkIfMatch", "DEFAULT_PAGE_SIZE", "CursorPage", "authorizeOrThrow"]) {
    assert.ok(!used.has(name), `${name} is not used`);
  }
});

test("imports are planned from what the code below the marker uses, in source order, values before types", () => {
  const rendered = [
    "// header",
    IMPORTS,
    "",
    "export function f(app: FastifyInstance, record: StoredRecord): Order {",
    "  return toOrder(found(record));",
    "}",
    "",
  ].join("\n");
  const out = withImports(rendered, [
    source("fastify", { FastifyInstance: "type", FastifyReply: "type" }),
    source("../../runtime/index.ts", { found: "value", StoredRecord: "type", authorizeOrThrow: "value" }),
    source("./types.ts", { Order: "type" }),
    source("./routes.ts", { toOrder: "value" }),
    source("./unused.ts", { nothing: "value" }),
  ]);
  assert.equal(
    out,
    [
      "// header",
      'import type { FastifyInstance } from "fastify";',
      'import { found, type StoredRecord } from "../../runtime/index.ts";',
      'import type { Order } from "./types.ts";',
      'import { toOrder } from "./routes.ts";',
      "",
      "export function f(app: FastifyInstance, record: StoredRecord): Order {",
      "  return toOrder(found(record));",
      "}",
      "",
    ].join("\n"),
  );
  assert.throws(() => withImports("no marker", []), /imports/);
});

test("the runtime's exports are read from canon's runtime files, with their kind", () => {
  const names = runtimeFileExports(createEmitContext(), "index.ts");
  assert.equal(names.get("authorizeOrThrow"), "value");
  assert.equal(names.get("NotFoundError"), "value");
  assert.equal(names.get("StoredRecord"), "type");
  assert.equal(names.get("CursorPage"), "type");
  assert.equal(names.get("newId"), "value");
});

test("ROUTE_CONTEXT names every member of the generated RouteContext", async () => {
  const { readFileSync } = await import("node:fs");
  const path = await import("node:path");
  const { ROUTE_CONTEXT } = await import("../generator/emit/shared/route-context.ts");
  const { repoRoot } = await import("./support/cli.ts");
  const services = readFileSync(path.join(repoRoot, "generated", "services.ts"), "utf8");
  const body = /export interface RouteContext \{([^}]*)\}/.exec(services)?.[1] ?? "";
  const members = [...body.matchAll(/^\s*(\w+)\??:/gm)].map((m) => m[1]!);
  assert.ok(members.length >= 4, `RouteContext found in generated/services.ts (${members.join(", ")})`);
  for (const member of members) assert.ok(ROUTE_CONTEXT.includes(member), `${member} is in ROUTE_CONTEXT`);
});

test("a name the file declares itself is not imported, even where a source offers it", () => {
  const rendered = [IMPORTS, "export interface AppOptions { store: Store }", "export function f(o: AppOptions): void {}", ""].join("\n");
  const out = withImports(rendered, [source("./runtime/index.ts", { AppOptions: "type", Store: "type" })]);
  assert.equal(out.split("\n")[0], 'import type { Store } from "./runtime/index.ts";');
});

test("canon's own modules import one another without circles (generator/, runtime/, bin/)", async () => {
  const { readFileSync, readdirSync, statSync } = await import("node:fs");
  const path = await import("node:path");
  const { repoRoot } = await import("./support/cli.ts");
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|js)$/.test(name)) files.push(path.relative(repoRoot, full).split(path.sep).join("/"));
    }
  };
  for (const dir of ["generator", "runtime", "bin"]) walk(path.join(repoRoot, dir));
  const known = new Set(files);
  // Every relative import, export-from and dynamic import, type-only ones included: a circle of
  // types is still two modules that cannot be understood apart.
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(path.join(repoRoot, file), "utf8");
    const targets = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g)]
      .map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1] ?? m[2]!)))
      .filter((target) => known.has(target));
    edges.set(file, targets);
  }
  // Tarjan's strongly connected components: each with more than one module is a circle.
  const circles: string[][] = [];
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  assert.ok(files.length > 100 && [...edges.values()].flat().length > 200, "the graph was read");
  assert.deepEqual(circles, [], `import circles:\n${circles.map((c) => c.join(" → ")).join("\n")}`);
});
