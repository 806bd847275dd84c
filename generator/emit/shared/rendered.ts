/**
 * A TypeScript file rendered whole from one template: a unit of the engine (engine.ts) whose
 * slice is the template's name, its view and what the file may import. A file of the whole API
 * (`services.ts`, `hooks.ts`, a version's `index.ts`) is then rendered, planned and laid out only
 * when its view changed: a run that changed one resource's description recalls it as written.
 */
import { defineUnit } from "../../engine.ts";
import { styledTs, type EmitContext, type EmittedFile, type UnitContext } from "../emitter.ts";
import { withImports, type ImportSource, type SymbolKind } from "./imports.ts";

/** An import source as plain data (a unit's slice holds no Map). */
type PlainSource = { from: string; names: Array<[string, SymbolKind]>; aliases?: Array<[string, string]> };

const renderedTs = defineUnit(
  "rendered ts file",
  ({ path, template, view, sources }: { path: string; template: string; view: object; sources: PlainSource[] | null }, context: UnitContext) => {
    const rendered = context.render(template, view);
    return styledTs(path, sources ? withImports(rendered, sources.map((s) => ({ from: s.from, names: new Map(s.names), ...(s.aliases && { aliases: new Map(s.aliases) }) }))) : rendered);
  },
);

/** `path`, rendered from `template` with `view` (JSON data), its imports planned from `sources` (null: a template without imports). */
export function renderedFile(
  context: Pick<EmitContext, "unit">,
  path: string,
  template: string,
  view: object,
  sources: ImportSource[] | null,
): EmittedFile {
  return context.unit(renderedTs, { path, template, view, sources: sources && sources.map((s) => ({ from: s.from, names: [...s.names], ...(s.aliases && { aliases: [...s.aliases] }) })) });
}
