import { readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { isMap, isNode, isPair, isScalar, LineCounter, parseDocument, type Document } from "yaml";
import { diagnostic } from "../diagnostics/catalog.ts";
import { compareText, type Diagnostic, type SourceLocation } from "../diagnostics/diagnostic.ts";
import { defineUnit, Engine } from "../engine.ts";

/** One YAML file of the definitions folder, parsed, with the means to point into it. */
export interface SourceFile {
  /** Path as shown in diagnostics: relative to the working directory, forward slashes. */
  file: string;
  kind: "api" | "resource";
  /** The file's text. */
  text: string;
  /** The YAML document (parsed when first read, for a file whose value came from the engine's records). */
  doc: Document;
  /** The file is not valid YAML: `value` is null and its later checks are skipped. */
  syntaxErrors: boolean;
  value: unknown;
  locate(at: ReadonlyArray<PropertyKey>, target?: "key" | "value"): SourceLocation;
}

/**
 * Definition files as parsed before, by their path as shown (a `dev` session keeps them:
 * session.ts). load.ts owns the type so that it imports nothing of the session.
 */
export type ParsedSources = Map<string, { kind: SourceFile["kind"]; text: string; source: SourceFile; diagnostics: Diagnostic[] }>;

export interface Loaded {
  api: SourceFile | null;
  resources: SourceFile[];
  diagnostics: Diagnostic[];
}

/**
 * Reads and parses every definition file of `dir`. With `parsed` (a `dev` session's), a file
 * whose text is what it was last time is not parsed again.
 */
export async function loadDefinitions(dir: string, cwd = process.cwd(), parsed?: ParsedSources): Promise<Loaded> {
  const names = (await listFolder(dir)).filter((n) => /\.ya?ml$/.test(n)).sort(compareText);
  const diagnostics: Diagnostic[] = [];
  let api: SourceFile | null = null;
  const resources: SourceFile[] = [];
  // Read one after the other, without the thread pool: handing a hundred small reads to it cost
  // several times the reads.
  const texts = names.map((n) => readFileSync(path.join(dir, n), "utf8"));
  names.forEach((name, i) => {
    const display = path.relative(cwd, path.join(dir, name)).split(path.sep).join("/");
    const kind = /^api\.ya?ml$/.test(name) ? "api" : "resource";
    const text = texts[i]!;
    const known = parsed?.get(display);
    let source: SourceFile;
    if (known && known.text === text && known.kind === kind) {
      source = known.source;
      diagnostics.push(...known.diagnostics);
    } else if (!parsed && Engine.current()) {
      // A run without a session: the value of a file whose text an earlier run parsed cleanly
      // comes from the engine's records (its YAML document is parsed only if a diagnostic
      // points into it).
      source = recordedSource(Engine.current()!, display, kind, text, diagnostics);
    } else {
      const found: Diagnostic[] = [];
      source = parseSource(display, kind, text, found);
      diagnostics.push(...found);
      parsed?.set(display, { kind, text, source, diagnostics: found });
    }
    if (kind === "api") api = source;
    else resources.push(source);
  });
  if (!api) {
    const file = path.relative(cwd, path.join(dir, "api.yaml")).split(path.sep).join("/");
    diagnostics.push(
      diagnostic("missing-api", { file, line: 1, column: 1 }, "no api.yaml in the definitions folder", "run `canon init` or add api.yaml with title, base_url and versions"),
    );
  }
  return { api, resources, diagnostics };
}

/** The names in a folder; none when it does not exist (then `missing-api` says what to do). */
async function listFolder(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

/**
 * A definition file's value, a unit of its name and text: recorded only when the file parsed
 * without a diagnostic and its value is JSON data that reads back the same (no `.inf`, `.nan`
 * or `-0`), so a recalled value is the one parsing gives. The file parsed by this run is kept
 * aside (`ParseContext.source`), so that a changed file is parsed once.
 */
const parsedFile = defineUnit<{ file: string; kind: SourceFile["kind"]; text: string }, { value: unknown } | null, ParseContext>(
  "load/parsed file",
  ({ file, kind, text }, context) => {
    const found: Diagnostic[] = [];
    const source = parseSource(file, kind, text, found);
    context.source = source;
    context.diagnostics = found;
    // A copy: what the run does with the file's value never reaches the record.
    return found.length === 0 && isJsonData(source.value) ? { value: structuredClone(source.value) } : null;
  },
);

interface ParseContext {
  source?: SourceFile;
  diagnostics?: Diagnostic[];
}

function recordedSource(engine: Engine, file: string, kind: SourceFile["kind"], text: string, diagnostics: Diagnostic[]): SourceFile {
  const context: ParseContext = {};
  const recorded = engine.run(parsedFile, { file, kind, text }, context);
  if (context.source) {
    diagnostics.push(...context.diagnostics!);
    return context.source;
  }
  if (recorded === null) {
    const found: Diagnostic[] = [];
    const source = parseSource(file, kind, text, found);
    diagnostics.push(...found);
    return source;
  }
  // The value is read back from the record's line, a fresh object for this run; the document
  // and the locations into it wait until something asks.
  let parsedSource: SourceFile | undefined;
  const full = () => (parsedSource ??= parseSource(file, kind, text, []));
  return {
    file,
    kind,
    text,
    get doc() {
      return full().doc;
    },
    syntaxErrors: false,
    value: recorded.value,
    // A location is found when it is read: lint asks for many, and reports few.
    locate: (at, target) => lazyLocation(file, () => full().locate(at, target)),
  };
}

/** A location in `file` whose line and column are found when first read. */
function lazyLocation(file: string, find: () => SourceLocation): SourceLocation {
  let found: SourceLocation | undefined;
  const where = () => (found ??= find());
  return {
    file,
    get line() {
      return where().line;
    },
    get column() {
      return where().column;
    },
  };
}

/** Whether JSON reads `value` back as it is: plain objects and arrays, strings, booleans, null and finite numbers other than -0. */
export function isJsonData(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(isJsonData);
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.entries(value).every(([key, v]) => key !== "__proto__" && isJsonData(v));
  }
  return false;
}

export function parseSource(file: string, kind: SourceFile["kind"], text: string, diagnostics: Diagnostic[]): SourceFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number): SourceLocation => {
    const { line, col } = lineCounter.linePos(offset);
    return { file, line, column: col };
  };
  for (const error of [...doc.errors, ...doc.warnings]) {
    diagnostics.push(
      diagnostic("yaml-syntax", at(error.pos[0]), error.message.split("\n")[0]!, "fix the YAML syntax at this position"),
    );
  }
  let value: unknown = null;
  if (doc.errors.length === 0) {
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      diagnostics.push(diagnostic("yaml-syntax", at(0), (error as Error).message, "remove aliases that expand too far"));
    }
  }
  const locate = (where: ReadonlyArray<PropertyKey>, target: "key" | "value" = "value"): SourceLocation => {
    // Walk as deep as the path exists; point at the deepest node found.
    let node: unknown = doc.contents;
    let best = 0;
    for (const step of where) {
      if (!isNode(node) && !isPair(node)) break;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
        if (!pair) break;
        const keyNode = pair.key;
        const valueNode = pair.value;
        if (target === "key" && step === where[where.length - 1] && isNode(keyNode)) {
          return at(keyNode.range?.[0] ?? best);
        }
        if (isNode(valueNode) && valueNode.range) best = valueNode.range[0];
        else if (isNode(keyNode) && keyNode.range) best = keyNode.range[0];
        node = valueNode;
        continue;
      }
      if (isNode(node) && "items" in node && Array.isArray((node as { items: unknown[] }).items)) {
        const item = (node as { items: unknown[] }).items[Number(step)];
        if (!isNode(item)) break;
        if (item.range) best = item.range[0];
        node = item;
        continue;
      }
      break;
    }
    if (where.length === 0 && isNode(doc.contents) && doc.contents.range) best = doc.contents.range[0];
    return at(best);
  };
  return { file, kind, text, doc, syntaxErrors: doc.errors.length > 0, value, locate };
}
