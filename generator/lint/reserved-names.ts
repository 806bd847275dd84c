/**
 * The type names generated code already uses for something of its own: every name its templates
 * (routes, validators, types, pagination, hooks, services, the client's core) and the client's
 * page types use, and the TypeScript globals the emitters write (`Record<string, …>` of a map).
 * Every name the runtime's index exports is one too: a generated file imports what it uses from
 * there first (`hooks` made `Hook`, which routes.ts then imported from the runtime).
 * A resource or an action whose types took one of them would shadow it (`stores` makes `Store`,
 * the runtime's store interface; `records` makes `Record`) or lose its own import to it
 * (`clients` made `Client`, the client's interface): the code would not compile, or the client
 * would type its records as something else.
 */
import { readdirSync, readFileSync } from "node:fs";
import { runtimeFileExports, usedIdentifiers } from "../emit/shared/imports.ts";
import { Engine } from "../engine.ts";
import { packageRoot } from "../util/package-root.ts";

/** TypeScript's globals the emitters write outside the templates (`Array<…>`, `Pick<…>`, `Record<string, …>` of a map). */
const EMITTED_GLOBALS = ["Array", "Pick", "Record"];

/**
 * The engine's record of the names: a function of canon's own sources alone, and the records
 * are kept for one canon (their header names its sources' hash), so one record serves every run.
 */
const RECORD = "reserved type names";

/** The names (PascalCase ones only: the generated types') the generated code keeps for itself. */
export function reservedTypeNames(): ReadonlySet<string> {
  const engine = Engine.current();
  const recorded = engine?.recalledBy(RECORD, "");
  if (Array.isArray(recorded)) return new Set(recorded as string[]);
  const names = scannedNames();
  engine?.record(RECORD, "", [...names].sort());
  return names;
}

/** The names, read from the templates, the client's page types and the runtime's exports (some 90 files). */
function scannedNames(): Set<string> {
  const root = packageRoot();
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
