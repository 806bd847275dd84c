/**
 * The import planner: imports in generated files follow use. A template marks where the imports
 * go with `{{{imports}}}` (the `IMPORTS` marker); once the file is rendered, the planner reads the
 * code below the marker, finds which of the names the file may import it really uses, and writes
 * the import lines there. Nothing keeps a list of imports beside a template, and an unused import
 * cannot appear: a name is imported only when the code names it.
 *
 * What a file may import is a list of sources, each a module and the names it offers, with their
 * kind (a value, or a type that is imported with `type`). The runtime's names are read from
 * canon's own runtime files (`runtimeSources`), so a runtime export is known to the generator the
 * moment it is written.
 */
import path from "node:path";
import { memoByText } from "../../engine.ts";
import type { EmitContext, UnitContext } from "../emitter.ts";

export type SymbolKind = "value" | "type";

export interface ImportSource {
  /** The module specifier, as the generated file writes it. */
  from: string;
  /** The names the module offers this file, and whether each is imported as a type. */
  names: ReadonlyMap<string, SymbolKind>;
  /**
   * Names the file writes under an alias, by the alias (`StoreRecord` → `Store`: the user's type
   * where canon's code has a `Store` of its own, shared/local-names.ts); `names` holds the alias.
   */
  aliases?: ReadonlyMap<string, string>;
}

/** The marker a template writes where the imports go (render it with `{{{imports}}}`). */
export const IMPORTS = "/*<canon:imports>*/";

/** How `file` imports `module`, both paths from one folder: `./types.ts`, `../orders/routes.ts`. */
export function specifierIn(file: string, module: string): string {
  const relative = path.posix.relative(path.posix.dirname(file), module);
  return relative.startsWith("../") ? relative : `./${relative}`;
}

/** A source from a plain object of names, for the few fixed modules (`fastify`, `zod`). */
export function source(from: string, names: Record<string, SymbolKind>): ImportSource {
  return { from, names: new Map(Object.entries(names)) };
}

/**
 * What a piece of code that a file places whole (whole declarations) uses and declares: what
 * `withImports` needs of it, found once (a unit can keep it with the piece, so that a cold run
 * does not scan an unchanged piece again).
 */
export interface PlacedCode {
  used: readonly string[];
  declared: readonly string[];
}

/** The identifiers a piece of code uses and the names it declares (see `PlacedCode`). */
export function placedCode(code: string): PlacedCode {
  return { used: [...usedIdentifiers(code)], declared: localDeclarations(code) };
}

/**
 * The rendered file with the imports it uses in place of the marker line. Sources are written in
 * the order given; within one, values first and then types, each in code-unit order of the exported name; a source
 * whose used names are all types is imported with `import type`. `parts` is what code the caller
 * places in the file afterwards uses and declares (`placedCode`): what it uses is imported too,
 * and what it declares is not.
 */
export function withImports(rendered: string, sources: ImportSource[], parts: readonly PlacedCode[] = []): string {
  const at = rendered.indexOf(IMPORTS);
  if (at < 0) throw new Error("the template has no {{{imports}}} marker");
  const code = rendered.slice(at + IMPORTS.length);
  const used = parts.length ? new Set([...usedIdentifiers(code), ...parts.flatMap((p) => p.used)]) : usedIdentifiers(code);
  const lines: string[] = [];
  // A name the file declares itself is never imported (the entry's own `AppOptions`).
  const taken = new Set([...localDeclarations(code), ...parts.flatMap((p) => p.declared)]);
  for (const { from, names, aliases } of sources) {
    const values: string[] = [];
    const types: string[] = [];
    // Whichever of the two is smaller is walked: the order is settled by the sorting below.
    const offered: Iterable<string> = used.size < names.size ? used : names.keys();
    for (const name of offered) {
      const kind = names.get(name);
      if (kind === undefined || !used.has(name) || taken.has(name)) continue;
      taken.add(name);
      (kind === "value" ? values : types).push(name);
    }
    if (values.length + types.length === 0) continue;
    if (aliases) {
      const spelled = (name: string) => {
        const exported = aliases.get(name);
        return exported === undefined ? name : `${exported} as ${name}`;
      };
      values.splice(0, values.length, ...values.map(spelled));
      types.splice(0, types.length, ...types.map(spelled));
    }
    // Sorted as spelled: by the exported name (`Client as ClientRecord` before `ClientCreate`).
    values.sort(byCodeUnit);
    types.sort(byCodeUnit);
    lines.push(
      values.length === 0
        ? `import type { ${types.join(", ")} } from "${from}";`
        : `import { ${[...values, ...types.map((t) => `type ${t}`)].join(", ")} } from "${from}";`,
    );
  }
  const end = rendered.indexOf("\n", at);
  const before = rendered.slice(0, at);
  const after = end < 0 ? "" : rendered.slice(end + 1);
  return `${before}${lines.map((l) => `${l}\n`).join("")}${after}`;
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const LOCAL_DECLARATION = /^(?:export\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|enum|interface|type)\s+([A-Za-z_$][\w$]*)/gm;

/** The names a code text declares at the start of a line, remembered by the text. */
const localDeclarations = memoByText("local declarations", (code): readonly string[] => [...code.matchAll(LOCAL_DECLARATION)].map((m) => m[1]!));
const REEXPORT = /^\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?)\s+from\s+"[^"]*";?/;
/** `[A-Za-z_$]`, by character code: the scanner reads every character of every file. */
function isIdentifierStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36;
}

/** `[A-Za-z0-9_$]`. */
function isIdentifierPart(c: number): boolean {
  return isIdentifierStart(c) || (c >= 48 && c <= 57);
}

/** `\s`: the ASCII white space by code, anything else by the regular expression. */
function isSpace(c: number, char: string): boolean {
  return c === 32 || (c >= 9 && c <= 13) || (c > 127 && /\s/.test(char));
}
/** After these, a `/` starts a regular expression literal rather than a division. */
const BEFORE_REGEX = new Set(["(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";", "return", ""]);

/**
 * The identifiers TypeScript code refers to: every identifier outside comments, string literals
 * and regular expressions (template literals count only inside `${…}`), except property names
 * after a `.`. Generated code is well-formed, which keeps this scanner small. Remembered by the
 * code (in the run's engine, engine.ts): `canon dev` emits the same files again and again.
 */
export const usedIdentifiers: (code: string) => ReadonlySet<string> = memoByText("used identifiers", (code) => {
  const found = new Set<string>();
  scan(code, 0, found, false);
  return found;
});

/** Scans from `i`; inside a template substitution it stops at the closing `}` and returns past it. */
function scan(code: string, start: number, found: Set<string>, inSubstitution: boolean): number {
  let i = start;
  let depth = 0;
  let previous = "";
  while (i < code.length) {
    const c = code[i]!;
    const next = code[i + 1];
    if (c === "/" && next === "/") {
      i = lineEnd(code, i);
    } else if (c === "/" && next === "*") {
      const close = code.indexOf("*/", i + 2);
      i = close < 0 ? code.length : close + 2;
    } else if (c === '"' || c === "'") {
      i = quotedEnd(code, i, c);
      previous = "string";
    } else if (c === "`") {
      i = templateEnd(code, i + 1, found);
      previous = "string";
    } else if (c === "/" && BEFORE_REGEX.has(previous)) {
      i = regexEnd(code, i + 1);
      previous = "regex";
    } else if (isIdentifierStart(code.charCodeAt(i))) {
      let j = i + 1;
      while (j < code.length && isIdentifierPart(code.charCodeAt(j))) j++;
      const word = code.slice(i, j);
      if (word === "export") {
        // A re-export (`export { a, type B } from "…"`) names another module's symbols, not this file's.
        const reexport = REEXPORT.exec(code.slice(j));
        if (reexport) {
          i = j + reexport[0].length;
          previous = ";";
          continue;
        }
      }
      const afterDot = code[i - 1] === "." && code[i - 2] !== ".";
      if (!afterDot) found.add(word);
      previous = word === "return" ? "return" : "word";
      i = j;
    } else if (isSpace(code.charCodeAt(i), c)) {
      i++;
    } else {
      if (inSubstitution && c === "{") depth++;
      if (inSubstitution && c === "}") {
        if (depth === 0) return i + 1;
        depth--;
      }
      previous = c;
      i++;
    }
  }
  return i;
}

function lineEnd(code: string, i: number): number {
  const end = code.indexOf("\n", i);
  return end < 0 ? code.length : end;
}

function quotedEnd(code: string, i: number, quote: string): number {
  let j = i + 1;
  while (j < code.length && code[j] !== quote) j += code[j] === "\\" ? 2 : 1;
  return j + 1;
}

/** Past the closing backquote; the code of every `${…}` is scanned for identifiers. */
function templateEnd(code: string, i: number, found: Set<string>): number {
  let j = i;
  while (j < code.length && code[j] !== "`") {
    if (code[j] === "\\") j += 2;
    else if (code[j] === "$" && code[j + 1] === "{") j = scan(code, j + 2, found, true);
    else j++;
  }
  return j + 1;
}

/** Past a regular expression literal and its flags. */
function regexEnd(code: string, i: number): number {
  let j = i;
  let inClass = false;
  while (j < code.length) {
    const c = code[j]!;
    if (c === "\\") j += 2;
    else {
      if (c === "[") inClass = true;
      else if (c === "]") inClass = false;
      else if (c === "/" && !inClass) break;
      j++;
    }
  }
  j++;
  while (j < code.length && /[a-z]/.test(code[j]!)) j++;
  return j;
}

const EXPORT_DECLARATION =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(async\s+function\*?|function\*?|class|const|let|enum|interface|type)\s+([A-Za-z_$][\w$]*)/gm;
const EXPORT_LIST = /^export\s+(type\s+)?\{([^}]*)\}/gm;
const EXPORT_ALL = /^export\s+\*\s+from\s+"\.\/([^"]+)"/gm;

/** The names one runtime file exports, with their kind (re-exports of other files included). */
export function runtimeFileExports(context: Pick<EmitContext, "runtimeFile">, file: string, seen = new Set<string>()): Map<string, SymbolKind> {
  const names = new Map<string, SymbolKind>();
  if (seen.has(file)) return names;
  seen.add(file);
  const text = context.runtimeFile(file);
  for (const m of text.matchAll(EXPORT_DECLARATION)) {
    names.set(m[2]!, m[1] === "interface" || m[1] === "type" ? "type" : "value");
  }
  for (const m of text.matchAll(EXPORT_LIST)) {
    for (const part of m[2]!.split(",")) {
      const item = part.trim();
      if (!item) continue;
      const isType = Boolean(m[1]) || item.startsWith("type ");
      const name = item.replace(/^type\s+/, "").split(/\s+as\s+/).pop()!.trim();
      names.set(name, isType ? "type" : "value");
    }
  }
  for (const m of text.matchAll(EXPORT_ALL)) {
    for (const [name, kind] of runtimeFileExports(context, m[1]!, seen)) names.set(name, kind);
  }
  return names;
}

/**
 * A source for a runtime module as a generated file at `depth` folders below the output root
 * imports it: `runtime/index.ts` (everything the runtime's index re-exports) or one file of it.
 */
export function runtimeSource(context: UnitContext, file: string, depth: number): ImportSource {
  return { from: `${depth === 0 ? "./" : "../".repeat(depth)}runtime/${file}`, names: context.runtimeExports(file) };
}

