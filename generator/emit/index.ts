import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import type Handlebars from "handlebars";
import HandlebarsRuntime from "handlebars/runtime.js";
import type { ModelParts } from "../model/intern.ts";
import type { ApiModel, VersionModel } from "../model/types.ts";
import { Engine, type FileStat, type OutputTexts } from "../engine.ts";
import { packageRoot } from "../util/package-root.ts";
import { compareText } from "../diagnostics/diagnostic.ts";
import { phaseTimer } from "../util/timings.ts";
import { changesEmitter } from "./changes/index.ts";
import { clientEmitter } from "./client/index.ts";
import type { EmitContext, EmittedFile, Emitter, PreviousOutput } from "./emitter.ts";
import type { EmitThread } from "./thread.ts";
import { openapiDocument } from "./openapi/document.ts";
import { canonTypeNames } from "./shared/canon-names.ts";
import { runtimeFileExports } from "./shared/imports.ts";
import { entryEmitter } from "./entry/index.ts";
import { errorsEmitter } from "./errors/index.ts";
import { handlersEmitter } from "./handlers/index.ts";
import { openapiEmitter } from "./openapi/index.ts";
import { paginationEmitter } from "./pagination/index.ts";
import { runtimeEmitter } from "./runtime/index.ts";
import { sqlEmitter } from "./sql/index.ts";
import { typesEmitter } from "./types/index.ts";
import { validatorsEmitter } from "./validators/index.ts";

const require = createRequire(import.meta.url);

/**
 * Handlebars' runtime alone, which runs precompiled templates: a run whose templates are all in
 * the cache loads no compiler (nor the source maps the compiler loads). Imported, not required,
 * so that the CLI's bundle holds it (bin/bundle.js): Node's loader took some 10 ms to find and
 * load its dozen files in a one-change run.
 */
const handlebarsRuntime = HandlebarsRuntime as unknown as typeof Handlebars;

/** The version of Handlebars, which renders the templates (part of what the engine's records are valid for). */
export const HANDLEBARS_VERSION: string = handlebarsRuntime.VERSION;

/** Handlebars with its compiler, loaded when a template is compiled. */
function compiler(): typeof Handlebars {
  return require("handlebars") as typeof Handlebars;
}

/** Every artifact canon writes, one emitter each. */
export const emitters: Emitter[] = [
  openapiEmitter,
  changesEmitter,
  typesEmitter,
  validatorsEmitter,
  paginationEmitter,
  errorsEmitter,
  handlersEmitter,
  runtimeEmitter,
  entryEmitter,
  sqlEmitter,
  clientEmitter,
];


/**
 * Templates and runtime files, each read and compiled at most once per context. With a cache
 * folder, each template's compiled form (Handlebars' precompiled JavaScript, keyed by a hash of
 * the template and of Handlebars' version) is kept there, so that a later run skips the compiler.
 */
export function createEmitContext(root: URL = packageRoot(), previous?: PreviousOutput, cacheDir?: string, files?: CanonFiles, verify = true): EmitContext {
  const read = files?.of(root, cacheDir) ?? emptyCanonFiles();
  const { compiled, runtime, texts, exportsOf, handlebars } = read;
  // Keyed by the model object: one context may serve several models (tests do), and nothing
  // outlives the context.
  const documents = new WeakMap<ApiModel, Map<VersionModel, Record<string, unknown>>>();
  const documentTexts = new WeakMap<ApiModel, Map<VersionModel, string>>();
  return {
    render(name, data) {
      let template = compiled.get(name);
      if (!template) {
        const source = readFileSync(new URL(`templates/${name}.hbs`, root), "utf8");
        template = cacheDir
          ? cachedTemplate(handlebars, source, cacheDir)
          : { render: load(handlebars, precompiled(source)), id: `source ${sha256(source)}` };
        compiled.set(name, template);
      }
      const { render, id } = template;
      // A view is plain JSON data (test/emit-cache.test.ts checks): its JSON text and the
      // template's code are everything the rendered text depends on. The run's engine remembers it.
      const engine = Engine.current();
      return engine ? engine.memo<string>("rendered templates", 8192).get(`${id}\0${JSON.stringify(data)}`, () => render(data)) : render(data);
    },
    templateText(name) {
      let text = texts.get(name);
      if (text === undefined) {
        text = readFileSync(new URL(`templates/${name}`, root), "utf8");
        texts.set(name, text);
      }
      return text;
    },
    runtimeFile(name) {
      let text = runtime.get(name);
      if (text === undefined) {
        text = readFileSync(new URL(`runtime/${name}`, root), "utf8");
        runtime.set(name, text);
      }
      return text;
    },
    runtimeExports(name) {
      // Read once per context: every generated file that imports the runtime asks.
      let names = exportsOf.get(name);
      if (!names) exportsOf.set(name, (names = runtimeFileExports(this, name)));
      return names;
    },
    canonTypeNames() {
      // Asked by each emitter of each version that imports a user's type beside canon's code.
      return (read.canonNames ??= canonTypeNames(root));
    },
    runtimeFiles() {
      return readdirSync(new URL("runtime/", root))
        .filter((n) => n.endsWith(".ts") && !n.endsWith(".test.ts"))
        .sort(compareText);
    },
    openapiDocument(model, version) {
      let built = documents.get(model);
      if (!built) documents.set(model, (built = new Map()));
      let document = built.get(version);
      if (!document) built.set(version, (document = openapiDocument(model, version, this) as Record<string, unknown>));
      return document;
    },
    openapiText(model, version) {
      let written = documentTexts.get(model);
      if (!written) documentTexts.set(model, (written = new Map()));
      let text = written.get(version);
      if (text === undefined) written.set(version, (text = `${JSON.stringify(this.openapiDocument(model, version), null, 2)}\n`));
      return text;
    },
    unit(unit, slice) {
      const engine = Engine.current();
      return engine ? engine.run(unit, slice, this) : unit.compute(slice, this);
    },
    ...(previous ? { previous } : {}),
    verify,
  };
}

/** canon's own templates (compiled) and runtime files, as read by emit contexts (see `CanonFiles`). */
interface ReadFiles {
  compiled: Map<string, Compiled>;
  runtime: Map<string, string>;
  texts: Map<string, string>;
  exportsOf: Map<string, ReadonlyMap<string, "value" | "type">>;
  handlebars: typeof Handlebars;
  /** `EmitContext.canonTypeNames`, once found. */
  canonNames?: ReadonlySet<string>;
}

function emptyCanonFiles(): ReadFiles {
  return { compiled: new Map(), runtime: new Map(), texts: new Map(), exportsOf: new Map(), handlebars: handlebarsRuntime.create() };
}

/**
 * canon's own templates, compiled, and its runtime files with the names each exports, as the
 * emit contexts made with it read them: a `canon dev` session keeps one for its life (its
 * thread another), so that a save neither reads nor compiles them again. They are canon's
 * sources, which a session's engine takes as fixed too. By package root and cache folder.
 */
export class CanonFiles {
  private readonly read = new Map<string, ReadFiles>();

  of(root: URL, cacheDir: string | undefined): ReadFiles {
    const key = `${root.href}\0${cacheDir ?? ""}`;
    let files = this.read.get(key);
    if (!files) this.read.set(key, (files = emptyCanonFiles()));
    return files;
  }
}

const TEMPLATE_OPTIONS = { noEscape: true, strict: true, preventIndent: true } as const;

/** A compiled template, and a hash of the code it runs (its precompiled form, or its source). */
interface Compiled {
  render: Handlebars.TemplateDelegate;
  id: string;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * A template from its precompiled form in `cacheDir`, precompiled and kept there first when
 * missing. A cached form that does not load (a damaged file) is compiled and kept again.
 */
function cachedTemplate(handlebars: typeof Handlebars, source: string, cacheDir: string): Compiled {
  const key = createHash("sha256").update(HANDLEBARS_VERSION).update("\0").update(JSON.stringify(TEMPLATE_OPTIONS)).update("\0").update(source).digest("hex");
  const file = path.join(cacheDir, `template-${key.slice(0, 32)}.js`);
  try {
    const cached = readFileSync(file, "utf8");
    return { render: load(handlebars, cached), id: `spec ${sha256(cached)}` };
  } catch {
    // Missing or damaged: compiled below.
  }
  const spec = precompiled(source);
  try {
    mkdirSync(cacheDir, { recursive: true });
    // Written aside and renamed into place: a reader never sees half a file.
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, spec);
    renameSync(temp, file);
  } catch {
    // The cache only saves time.
  }
  return { render: load(handlebars, spec), id: `spec ${sha256(spec)}` };
}

/** A template's precompiled form: a JavaScript object literal of functions. */
function precompiled(source: string): string {
  // Handlebars adds its own keys to the options it is given: a copy keeps the cache key stable.
  return compiler().precompile(source, { ...TEMPLATE_OPTIONS }) as string;
}

/** A precompiled template: a JavaScript object literal of functions, as Handlebars.precompile wrote it. */
function load(handlebars: typeof Handlebars, spec: string): Handlebars.TemplateDelegate {
  return handlebars.template(new Function(`return ${spec};`)() as Parameters<typeof Handlebars.template>[0]);
}

/**
 * The output folder `dir` as it is now, read lazily; a missing folder reads as empty. A file in
 * `known` (what a `dev` session's last run wrote there) is taken from it instead of the disk.
 * `texts` holds every file read from the disk (the run's comparison adds those it reads), so
 * that no file is read twice.
 */
export function readOutputFolder(dir: string, known?: ReadonlyMap<string, string> | null): PreviousOutput & OutputTexts & { texts: Map<string, string> } {
  const texts = new Map<string, string>();
  // The size and time of each file read from the disk, taken right before it was read.
  const stats = new Map<string, FileStat>();
  const statOf = (file: string): FileStat | undefined => {
    const stat = statSync(path.join(dir, file), { throwIfNoEntry: false });
    return stat?.isFile() ? [stat.size, stat.mtimeMs] : undefined;
  };
  return {
    texts,
    read(file) {
      const text = known?.get(file) ?? texts.get(file);
      if (text !== undefined) return text;
      try {
        const stat = statOf(file);
        const read = readFileSync(path.join(dir, file), "utf8");
        texts.set(file, read);
        if (stat) stats.set(file, stat);
        return read;
      } catch {
        return undefined;
      }
    },
    stat: statOf,
    readStat: (file) => stats.get(file),
    list(folder) {
      try {
        return readdirSync(path.join(dir, folder), { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name)
          .sort(compareText);
      } catch {
        return [];
      }
    },
  };
}

/**
 * The whole output in memory, unformatted, sorted by path. The same model and the same output
 * folder give the same files. Not pure: the SQL emitter reads the migrations and the schema
 * snapshot already in the output folder (`context.previous`). Within an engine (`Engine.within`),
 * each unit an emitter runs through `context.unit` is recalled when its slice is unchanged.
 */
export function emitAll(model: ApiModel, context: EmitContext = createEmitContext()): EmittedFile[] {
  const phase = phaseTimer("canon: emit");
  return checked(
    emitters.flatMap((e) => {
      const files = e.emit(model, context);
      phase(e.name);
      return files;
    }),
  );
}

/**
 * `emitAll`, with the emitters that `thread` runs (a `canon dev` session's second thread, see
 * thread.ts) run there while this thread runs the others; `parts` interned the model. The same
 * files as `emitAll`.
 */
export async function emitAllBeside(model: ApiModel, context: EmitContext, thread: EmitThread, parts: ModelParts): Promise<EmittedFile[]> {
  const there = thread.emit(model, parts);
  // Should an emitter here throw, the thread's answer is not awaited: its failure is then no
  // unhandled rejection (awaited below, it still throws).
  there.catch(() => {});
  const here = emitters.filter((e) => !thread.runs(e.name)).flatMap((e) => e.emit(model, context));
  return checked([...here, ...(await there)]);
}

/** The files sorted by path; no two emitters may write one path. */
function checked(files: EmittedFile[]): EmittedFile[] {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new Error(`two emitters wrote ${f.path}`);
    seen.add(f.path);
  }
  return files.sort((a, b) => compareText(a.path, b.path));
}
