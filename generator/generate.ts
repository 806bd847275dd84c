import path from "node:path";
import { todayOf, withSunsetPolicy } from "./diagnostics/sunset.ts";
import type { ApiModel } from "./model/types.ts";
import { CANON_OPERATIONS, ERROR_SCHEMA, publishedNamesOf } from "./emit/openapi/names.ts";
import type { JsonObject } from "./emit/openapi/json.ts";
import { compatibilityGate, type GateResult } from "./compat/gate.ts";
import type { Json } from "./compat/types.ts";
import type { Diagnostic } from "./diagnostics/diagnostic.ts";
import { hasErrors, sortDiagnostics } from "./diagnostics/diagnostic.ts";
import {
  createEmitContext,
  emitAll,
  emitAllBeside,
  HANDLEBARS_VERSION,
  readOutputFolder,
} from "./emit/index.ts";
import { EmitThread } from "./emit/thread.ts";
import { Engine, EngineRecords, textDigest } from "./engine.ts";
import { formatFiles, type FormatStats, type FormattedFile } from "./format/format.ts";
import { runFrontEnd } from "./pipeline.ts";
import type { GenerateSession } from "./session.ts";
import { phaseTimer } from "./util/timings.ts";
import { foreignFileDiagnostics } from "./write/foreign.ts";
import { canonSources } from "./write/stamp.ts";
import { applyDiff, diffOutput, finishInterrupted, type OutputDiff } from "./write/write.ts";

export interface GenerateOptions {
  definitions: string;
  out: string;
  /** Write the output (generate) or only compare it (check). */
  write: boolean;
  /** YYYY-MM-DD for the sunset logic; default: the current date (UTC). */
  today?: string;
  /** Where the format cache lives; null: no cache. */
  cacheFile?: string | null;
  /** Let breaking changes to published versions through, as warnings (a version that never shipped). */
  allowBreaking?: boolean;
  /** A sunset that is near or past (`sunset-near`) is an error instead of a warning. */
  failOnSunset?: boolean;
  /** The folder diagnostics name files relative to (default: the working directory). */
  cwd?: string;
  /** What a `dev` session keeps between its runs (session.ts); the output is the same without it. */
  session?: GenerateSession;
  /** The hash of canon's sources (`canonSources`), when the caller took it already (the command's stamp). */
  canon?: string;
}

export interface GenerateResult {
  diagnostics: Diagnostic[];
  /** Null when the definitions have errors: nothing was compared or written. */
  diff: OutputDiff | null;
  files: FormattedFile[];
  /** The sha256 (base64url) of the files recalled as written, by path (`formatFiles`): the stamp takes them. */
  digests?: ReadonlyMap<string, string>;
  format: FormatStats;
  /** The compatibility gate over the published versions; null when it did not run. */
  gate: GateResult | null;
  /** How many units of emission this run computed, and how many its engine recalled (engine.ts). */
  units?: { computed: number; recalled: number };
  /** The model the output was emitted from; null when the definitions have errors. */
  model: ApiModel | null;
  ms: number;
}

export function defaultCacheFile(cwd = process.cwd()): string {
  return path.join(cwd, "node_modules", ".cache", "canon", "format.json");
}

/**
 * The whole pipeline, in the order it runs: load → validate → normalize → lint → model (only
 * when no error was found: pipeline.ts) → emit → format → compare with the output folder → gate
 * → foreign files → write (generate) or nothing (check). `check` runs exactly this with
 * `write: false`, so it compares the same formatted files. The gate compares each published
 * version's new OpenAPI document with the one in the output folder; a breaking change (or a
 * version removed before its sunset) writes nothing, and so does a file in the output folder
 * that canon did not write (`foreign-file`).
 */
export async function generate(options: GenerateOptions): Promise<GenerateResult> {
  // One engine owns the run's incremental work (engine.ts): a session's, which lasts as long as
  // it does, or else a fresh one over the records the last run kept beside the format cache.
  const cacheFile = options.cacheFile === undefined ? defaultCacheFile() : options.cacheFile;
  // The records are another canon's (ignored) unless canon's sources, prettier and the
  // Handlebars that renders the templates are the same.
  // The output folder as it is before this run: what the SQL emitter builds on, where the
  // records' files are read (each file read once: the comparison takes it from here too).
  const output = readOutputFolder(options.out, options.session?.output);
  const engine =
    options.session?.engine ??
    new Engine(
      cacheFile
        ? new EngineRecords(
            recordsFile(cacheFile),
            `${options.canon ?? (await canonSources(path.dirname(cacheFile)))} handlebars ${HANDLEBARS_VERSION}`,
            output,
          )
        : null,
    );
  const computed = engine.computed;
  const recalled = engine.recalled;
  const result = await engine.within(() => run(options, cacheFile, output));
  const phase = phaseTimer();
  if (result.model) engine.save();
  phase("engine records saved");
  return { ...result, units: { computed: engine.computed - computed, recalled: engine.recalled - recalled } };
}

/** Where the engine's records live: beside the format cache. */
export function recordsFile(cacheFile: string): string {
  return path.join(path.dirname(cacheFile), "engine.json");
}

async function run(
  options: GenerateOptions,
  cacheFile: string | null,
  output: ReturnType<typeof readOutputFolder>,
): Promise<GenerateResult> {
  const started = performance.now();
  const phase = phaseTimer();
  const today = todayOf(options.today);
  const session = options.session;
  const front = await runFrontEnd(options.definitions, { today, cwd: options.cwd, session });
  phase("load, validate, model, lint");
  const diagnostics = withSunsetPolicy(front.diagnostics, options.failOnSunset);
  const empty = { formatted: 0, cached: 0, laidOut: 0, prettier: 0 };
  if (!front.model || !front.definitions || hasErrors(diagnostics)) {
    return {
      diagnostics,
      diff: null,
      files: [],
      format: empty,
      gate: null,
      model: null,
      ms: performance.now() - started,
    };
  }
  // The names the published documents gave canon's own schemas and operations stay theirs.
  const model = withPublishedNames(front.model, output);
  const cacheDir = cacheFile ? path.dirname(cacheFile) : undefined;
  // A write a crash interrupted is finished before the output folder is read.
  await finishInterrupted(options.out);
  // A `canon dev` save skips canon's checks of its own output (EmitContext.verify).
  const context = createEmitContext(undefined, output, cacheDir, session?.files, !session);
  // A session runs the whole-API documents on its second thread, beside the other emitters.
  if (session && (!session.thread || session.thread.stopped || session.thread.cacheDir !== cacheDir)) {
    void session.thread?.close();
    session.thread = new EmitThread(cacheDir);
  }
  const emitted = session?.thread
    ? await emitAllBeside(model, context, session.thread, session.parts)
    : emitAll(model, context);
  phase("emit");
  const { files, stats, digests } = await formatFiles(emitted, cacheFile, session?.formatted);
  phase(
    `format (${stats.laidOut} laid out by canon, ${stats.prettier} through prettier: ${stats.formatted} formatted, ${stats.cached} cached)`,
  );
  // What the session's last run left in the output folder: not read again (null: read it all).
  const known = session?.output ?? null;
  const diff = await diffOutput(options.out, files, known ?? output.texts, output.texts);
  // Until this run has written, the session cannot say what the output folder holds.
  if (session) session.output = null;
  phase("compare");
  const gate = await compatibilityGate({
    out: options.out,
    files,
    definitions: front.definitions,
    model,
    today,
    allowBreaking: options.allowBreaking ?? false,
    known,
    read: output.texts,
    // The documents of the OpenAPI texts, from the model: the gate need not parse the texts.
    documentOf: (name) => {
      const version = model.versions.find((v) => v.name === name);
      return version && (context.openapiDocument(model, version) as Json);
    },
  });
  phase("compatibility gate");
  // A file canon did not write is never overwritten or removed: nothing is written while one is there.
  const foreign = foreignFileDiagnostics(options.out, diff, new Set(files.map((f) => f.path)), options.cwd);
  const refused = [...gate.diagnostics, ...foreign];
  const all = refused.length ? sortDiagnostics([...diagnostics, ...refused]) : diagnostics;
  if (hasErrors(refused)) {
    return {
      diagnostics: all,
      diff: null,
      files,
      format: stats,
      gate,
      model,
      ms: performance.now() - started,
    };
  }
  if (options.write) {
    await applyDiff(options.out, files, diff);
    if (session) session.output = new Map(files.map((f) => [f.path, f.content]));
  }
  phase("write");
  // The digest of every file, for the stamp of a run without a session (commands/generate.ts):
  // those the gate took of the new documents are remembered (`textDigest`), the recalled ones known.
  if (!session) for (const f of files) if (!digests.has(f.path)) digests.set(f.path, textDigest(f.content));
  return {
    diagnostics: all,
    diff,
    files,
    digests,
    format: stats,
    gate,
    model,
    ms: performance.now() - started,
  };
}

/**
 * The model with, on each version whose OpenAPI document is published in the output folder, the
 * names that document gave canon's own schemas and operations (`VersionModel.publishedNames`,
 * emit/openapi/names.ts), where they can differ from what the version's names alone give: when a
 * user's name meets one of canon's (`Error`, `getHealth`), or the document gave one of canon's
 * another name (`ApiError`). Otherwise the document is not parsed, and the model is as it was.
 */
export function withPublishedNames(model: ApiModel, output: { read(path: string): string | undefined }): ApiModel {
  let changed = false;
  const versions = model.versions.map((version) => {
    const text = output.read(`${version.name}/openapi.json`);
    if (text === undefined || !(mayMeetCanonNames(version) || API_FORM.test(text))) return version;
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      return version; // Not a document: the gate says so.
    }
    if (document === null || typeof document !== "object" || Array.isArray(document)) return version;
    const publishedNames = publishedNamesOf(document as JsonObject, version.name);
    if (Object.keys(publishedNames).length === 0) return version;
    changed = true;
    return { ...version, publishedNames };
  });
  return changed ? { ...model, versions } : model;
}

/** One of canon's names given another form (names.ts): `"#/components/schemas/ApiError"`, `"operationId": "getApiHealth"`. */
const API_FORM = /"#\/components\/schemas\/Api[A-Z]|"operationId": ?"[a-z]+Api[A-Z]/;

/** The names canon gives its own schemas and operations in a document (names.ts), a fixed list. */
const CANON_DOCUMENT_NAMES: readonly string[] = [
  ERROR_SCHEMA,
  ...CANON_OPERATIONS.flatMap((o) => [o.operationId, o.response ?? "", o.body ?? ""]),
].filter((name) => name !== "");

/** Whether a name of the version's resources may be one of canon's own in its document (more than are: it only saves parsing). */
function mayMeetCanonNames(version: ApiModel["versions"][number]): boolean {
  return version.resources.some(
    (r) =>
      r.routes.some((route) => CANON_DOCUMENT_NAMES.includes(route.operationId)) ||
      [r.names.pascal, ...r.actions.map((a) => a.symbols.type)].some((name) =>
        CANON_DOCUMENT_NAMES.some((c) => c.startsWith(name)),
      ),
  );
}
