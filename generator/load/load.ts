import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { isMap, isNode, isPair, isScalar, LineCounter, parseDocument, type Document } from "yaml";
import { diagnostic } from "../diagnostics/catalog.ts";
import { compareText, type Diagnostic, type SourceLocation } from "../diagnostics/diagnostic.ts";

/** One YAML file of the definitions folder, parsed, with the means to point into it. */
export interface SourceFile {
  /** Path as shown in diagnostics: relative to the working directory, forward slashes. */
  file: string;
  kind: "api" | "resource";
  doc: Document;
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
  const texts = await Promise.all(names.map((n) => readFile(path.join(dir, n), "utf8")));
  names.forEach((name, i) => {
    const display = path.relative(cwd, path.join(dir, name)).split(path.sep).join("/");
    const kind = /^api\.ya?ml$/.test(name) ? "api" : "resource";
    const text = texts[i]!;
    const known = parsed?.get(display);
    let source: SourceFile;
    if (known && known.text === text && known.kind === kind) {
      source = known.source;
      diagnostics.push(...known.diagnostics);
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
  return { file, kind, doc, value, locate };
}
