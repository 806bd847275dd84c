/**
 * The type names generated code uses for something of its own: every name its templates
 * (routes, validators, types, pagination, hooks, services, the client's core) and the client's
 * page types use, the TypeScript globals the emitters write (`Record<string, …>` of a map), and
 * every name the runtime's index exports.
 *
 * A user's type may have one of these names (`stores` makes `Store`, the runtime's store
 * interface; `clients` makes `Client`, the client's interface; `records` makes `Record`). The
 * user's name wins: `types.ts` declares it as it is (and writes TypeScript's own as
 * `globalThis.Record<…>` there), and a file that imports it beside canon's code (`routes.ts`,
 * `pagination.ts`, `client.ts`) imports it under an alias (`Store as StoreRecord`,
 * shared/local-names.ts). Names canon derives from a user's (`StoreValues`, `StoresPage`,
 * `StoresClient`) are declared beside canon's code, so lint refuses those that meet one of these.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Engine } from "../../engine.ts";
import { packageRoot } from "../../util/package-root.ts";
import { runtimeFileExports, usedIdentifiers } from "./imports.ts";

/** TypeScript's globals the emitters write outside the templates (`Array<…>`, `Pick<…>`, `Record<string, …>` of a map). */
const EMITTED_GLOBALS = ["Array", "Pick", "Record"];

/**
 * The engine's record of the names: a function of canon's own sources alone, and the records
 * are kept for one canon (their header names its sources' hash), so one record serves every run.
 */
const RECORD = "reserved type names";

/**
 * The names (PascalCase ones only: the generated types') the generated code keeps for itself, as
 * canon's files under `root` say. Some 90 files are read when the run's engine has no record of
 * them: emitters ask their context (`EmitContext.canonTypeNames`, which keeps the answer), lint
 * asks once per run.
 */
export function canonTypeNames(root: URL = packageRoot()): ReadonlySet<string> {
  const engine = Engine.current();
  const recorded = engine?.recalledBy(RECORD, root.href);
  if (Array.isArray(recorded)) return new Set(recorded as string[]);
  const names = scannedNames(root);
  engine?.record(RECORD, root.href, [...names].sort());
  return names;
}

/** The names, read from the templates, the client's page types and the runtime's exports (some 90 files). */
function scannedNames(root: URL): Set<string> {
  const texts: string[] = [readFileSync(new URL("runtime/pages.ts", root), "utf8")];
  const walk = (dir: URL): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.isDirectory()) walk(new URL(`${entry.name}/`, dir));
      else texts.push(readFileSync(new URL(entry.name, dir), "utf8"));
    }
  };
  walk(new URL("templates/", root));
  const names = new Set(EMITTED_GLOBALS);
  for (const text of texts) {
    // Handlebars comments are prose, and a mustache is no code of the output (its quotes would
    // mislead the scanner).
    const code = text.replace(/\{\{!--[\s\S]*?--\}\}|\{\{[\s\S]*?\}\}/g, "");
    for (const word of usedIdentifiers(code)) if (/^[A-Z][a-z]/.test(word)) names.add(word);
  }
  const runtimeFile = (name: string) => readFileSync(new URL(`runtime/${name}`, root), "utf8");
  for (const name of runtimeFileExports({ runtimeFile }, "index.ts").keys()) if (/^[A-Z][a-z]/.test(name)) names.add(name);
  return names;
}
