import { diagnostic } from "./diagnostics/catalog.ts";
import { hasErrors, sortDiagnostics, type Diagnostic } from "./diagnostics/diagnostic.ts";
import { Engine } from "./engine.ts";
import { lint } from "./lint/index.ts";
import { loadDefinitions } from "./load/load.ts";
import { normalize } from "./model/normalize.ts";
import { buildModel } from "./model/snapshot.ts";
import type { ApiModel, Definitions } from "./model/types.ts";
import type { GenerateSession } from "./session.ts";
import { validateSources } from "./validate/validate.ts";

export interface FrontEndResult {
  definitions: Definitions | null;
  model: ApiModel | null;
  diagnostics: Diagnostic[];
}

export interface FrontEndOptions {
  today?: string;
  cwd?: string;
  /** A `dev` session: definition files it has parsed are not parsed again. */
  session?: GenerateSession;
}

/**
 * load → validate → normalize → lint → model. Every stage runs as far as it can so that one run reports
 * every problem; the model for emitters is built only when no error was found. Runs in the current
 * engine (engine.ts), or in one of its own (`canon lint`, the programmatic `check`).
 */
export async function runFrontEnd(dir: string, options: FrontEndOptions = {}): Promise<FrontEndResult> {
  const engine = Engine.current();
  return engine ? frontEnd(dir, options) : new Engine().within(() => frontEnd(dir, options));
}

async function frontEnd(dir: string, options: FrontEndOptions): Promise<FrontEndResult> {
  const loaded = await loadDefinitions(dir, options.cwd, options.session?.sources);
  const validated = validateSources(loaded.api, loaded.resources);
  const diagnostics = [...loaded.diagnostics, ...validated.diagnostics];
  if (!validated.api) return { definitions: null, model: null, diagnostics: sortDiagnostics(diagnostics) };
  const definitions = normalize(validated.api, validated.resources);
  diagnostics.push(...lint(definitions, { today: options.today ?? new Date().toISOString().slice(0, 10) }));
  if (definitions.resources.length === 0 && loaded.resources.length === 0) {
    diagnostics.push(
      diagnostic("schema", definitions.at(), "the API defines no resource", "add a resource file, for example with `canon new <collection>`"),
    );
  }
  const sorted = sortDiagnostics(diagnostics);
  if (hasErrors(sorted)) return { definitions, model: null, diagnostics: sorted };
  const model = buildModel(definitions);
  return { definitions, model: options.session ? options.session.parts.intern(model) : model, diagnostics: sorted };
}
