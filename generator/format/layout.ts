/**
 * canon's own layout of generated TypeScript: what prettier would print, for the few shapes
 * canon's templates produce, at a tiny fraction of prettier's cost (prettier was ~85 % of a
 * cold `canon generate`).
 *
 * It only applies to files whose emitter writes them in prettier's style already
 * (`EmittedFile.prettierStyle`): one statement per line, objects and blocks opened at the end of
 * a line, double-quoted strings, trailing commas. Such a file differs from prettier's output only
 * where a line is longer than the print width. `layout` breaks those lines the way prettier does
 * (import lists, function parameters, call arguments, an `if` with a short statement) and tidies
 * blank lines and empty braces; `isCertain` then tells whether the result is surely prettier's.
 * When it is not (a line still too long, a string prettier would quote differently, a wide
 * character), the format step hands the original text to prettier. The tests hold every
 * prettier-style file of the showcase, of synthetic and of fuzzed definitions to
 * `prettier.format(text) === text`.
 */
import { PRINT_WIDTH } from "./prettier.ts";

const INDENT = "  ";

/** The text laid out as prettier would, for the shapes canon writes (see above). */
export function layout(text: string): string {
  const lines = expandArrowCalls(tidy(text).split("\n"));
  const out: string[] = [];
  for (const line of lines) out.push(...fit(line));
  return out.join("\n");
}

/** A text laid out (`layout`), and whether the result is surely prettier's (`isCertain`). */
export interface LaidOut {
  text: string;
  certain: boolean;
}

/**
 * `layout` and `isCertain` of a whole file, piece by piece, each piece laid out by `piece`, which
 * remembers each piece's result by its text (`canon dev` and a cold `canon generate` after one
 * change lay out nearly the same large files again: a client of 340 KB, where one resource's
 * classes changed). A file is cut where `layout` cannot join what is on either
 * side: at a blank line after a line that opens no bracket and before a line at the margin that
 * closes none. So the result is exactly that of the whole file (test/layout.test.ts).
 */
export function layoutInPieces(text: string, piece: (text: string) => LaidOut): LaidOut {
  const pieces = text.split(PIECE_BREAK);
  if (pieces.length === 1) return piece(text);
  const laid = pieces.map((p) => piece(p));
  // Each piece ends in one newline; the blank line between two pieces is the one `layout` keeps.
  return { text: laid.map((p) => p.text).join("\n"), certain: laid.every((p) => p.certain) };
}

/** `layout` and `isCertain` of a text. */
export function laidOut(text: string): LaidOut {
  const laid = layout(text);
  return { text: laid, certain: isCertain(laid) };
}

/**
 * Where a file may be cut into pieces: the blank lines after a line that does not end in an
 * opening bracket, before a line that starts at the margin with neither a space nor a closing
 * bracket. Kept: the newline that ends the line before (so each piece ends in one).
 */
const PIECE_BREAK = /(?<=[^{([\s]\n)\n+(?=[^\s})\]])/;

/**
 * Whether `layout`'s result is surely what prettier prints: every line fits (counting a non-ASCII
 * character as two columns, as prettier counts wide ones); no string holds an escaped double
 * quote (prettier may switch such a string to single quotes); and no line holds a call chain that
 * prettier may print one call per line (three or more calls with an argument that is not simple
 * in prettier's sense, such as a regular expression longer than five characters or a nested call).
 */
export function isCertain(text: string): boolean {
  if (text.includes('\\"')) return false;
  // The indentation of the `/**` comment over several lines that the line is in, if any.
  let comment: string | null = null;
  for (const line of text.split("\n")) {
    if (comment !== null) {
      // prettier aligns each line of such a comment one column in from its `/**`: canon writes
      // them so, and any other comment is left to prettier.
      if (line === `${comment} */`) comment = null;
      else if (line !== `${comment} *` && !line.startsWith(`${comment} * `)) return false;
      continue;
    }
    // prettier prints a comment that is a whole line as it is, however long, and never breaks an
    // import of a single name (`a`, or `a as b`).
    if (line.length > PRINT_WIDTH && !/^\s*(\/\/|\/\*\*?[^]*\*\/$)/.test(line) && !/^import (type )?\{ [\w$]+(?: as [\w$]+)? \} from "[^"]*";$/.test(line)) {
      return false;
    }
    const opens = /^(\s*)\/\*\*$/.exec(line);
    if (opens) {
      comment = opens[1]!;
      continue;
    }
    // Any other `/**` comment over several lines prettier may re-indent, which canon does not do.
    if (/^\s*\/\*\*/.test(line) && !line.includes("*/")) return false;
    // prettier always breaks an array of two or more objects (or arrays) with more than one entry each.
    if (/\[\{[^\]]*\}, \{|\[\[[^\]]*\], \[/.test(line)) return false;
    if (line.length * 2 > PRINT_WIDTH && /[^\x00-\x7f]/.test(line) && width(line) > PRINT_WIDTH) return false;
    if (line.includes(").") && mayBreakChain(line)) return false;
  }
  return comment === null;
}

/**
 * A conservative test for a call chain prettier would expand: three or more calls (two `).`) with
 * an argument prettier does not count as simple: a regular expression longer than five
 * characters, or anything nested three brackets deep.
 */
function mayBreakChain(line: string): boolean {
  const code = line.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  if ((code.match(/\)\./g) ?? []).length < 2) return false;
  // Regular expressions are looked for in the line as written (a string that looks like one only
  // makes this more cautious), and measured in columns, as prettier measures them.
  for (const [, pattern] of line.matchAll(/\/((?:[^/\\\n]|\\.)+)\//g)) if (width(pattern!) > 5) return true;
  let depth = 0;
  for (const ch of code) {
    if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") depth--;
    if (depth >= 3) return true;
  }
  return false;
}

function width(line: string): number {
  let w = 0;
  for (const ch of line) w += ch.charCodeAt(0) < 0x80 ? 1 : 2;
  return w;
}

/**
 * Blank lines as prettier leaves them: at most one in a row, none right after an opening brace
 * or before a closing one, none at the end; an empty `{` … `}` pair closed up; one final newline.
 */
function tidy(text: string): string {
  // An empty pair is closed up in code only: inside a comment (`/** {` … `} */`) prettier keeps it.
  const lines = text
    .replace(/^([^\n]*)\{\n[ \t]*\}/gm, (pair, before: string) => (/\/\*|^\s*\*|\/\//.test(before) ? pair : `${before}{}`))
    .split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trimEnd();
    if (line === "") {
      const previous = out[out.length - 1];
      if (previous === undefined || previous === "" || /[{([]$/.test(previous)) continue;
      let j = i + 1;
      while (j < lines.length && lines[j]!.trim() === "") j++;
      if (j === lines.length || /^\s*[})\]]/.test(lines[j]!)) continue;
    }
    out.push(line);
  }
  return `${out.join("\n")}\n`;
}

/**
 * A call whose last argument is an arrow function with its body on the lines below, up to the
 * call's `);` at the call's indentation (a route: `app.patch("/v1/…", { config }, (request, reply) =>`
 * / `    unconditional(…, async () => {` / … / `    }),` / `  );`). When its first line is too long,
 * prettier puts each argument on a line of its own, the arrow's parameters last, and its body one
 * level deeper; the body's lines are then laid out at their new indentation like any other.
 */
function expandArrowCalls(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = line.length > PRINT_WIDTH ? /^(\s*)(.+) =>$/.exec(line) : null;
    const broken = m ? arrowCallArguments(m[2]!) : null;
    if (!m || !broken) {
      out.push(line);
      continue;
    }
    const indent = m[1]!;
    let end = i + 1;
    while (end < lines.length && (lines[end] === "" || lines[end]!.startsWith(`${indent}${INDENT}`))) end++;
    if (end === i + 1 || lines[end] !== `${indent});`) {
      out.push(line);
      continue;
    }
    const [head, args] = broken;
    const last = args.length - 1;
    out.push(`${indent}${head}(`, ...args.map((arg, k) => `${indent}${INDENT}${arg}${k === last ? " =>" : ","}`));
    for (let k = i + 1; k < end; k++) out.push(lines[k] === "" ? "" : `${INDENT}${lines[k]}`);
    out.push(lines[end]!);
    i = end;
  }
  return out;
}

/**
 * The callee and arguments of `callee(a, b, (x, y)` (a call left open by an arrow function's
 * parameters, its last argument): null for any other shape, or when an argument is one prettier
 * might hug or break on its own line (a function, or a template literal).
 */
function arrowCallArguments(text: string): [string, string[]] | null {
  const m = /^((?:await )?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\((.+)$/.exec(text);
  if (!m) return null;
  const args = splitTopLevel(m[2]!);
  if (!args || args.length < 2) return null;
  const params = args[args.length - 1]!;
  if (!/^(async )?\([\w$, ]*\)$/.test(params)) return null;
  if (args.slice(0, -1).some((a) => /^(async\b|function\b|\(|`)/.test(a) || a.includes("=>"))) return null;
  return [m[1]!, args];
}

/** A line as prettier prints it: broken when too long, or when prettier always breaks its shape. */
function fit(line: string): string[] {
  return line.length > PRINT_WIDTH ? breakLine(line) : (breakObjectArray(line) ?? [line]);
}

/** One line that is too long, broken as prettier breaks it; unchanged when its shape is unknown. */
function breakLine(line: string): string[] {
  return (
    breakImport(line) ??
    breakIf(line) ??
    breakSignature(line) ??
    breakUnion(line) ??
    breakTypeArguments(line) ??
    breakConditional(line) ??
    breakObject(line) ??
    breakArray(line) ??
    breakCall(line) ?? [line]
  );
}

/** `import { a, b } from "x";` → one name per line. */
function breakImport(line: string): string[] | null {
  const m = /^(\s*)((?:import|export)(?: type)? )\{ (.+) \}( from "[^"]*";)$/.exec(line);
  if (!m) return null;
  const [, indent, head, names, tail] = m as unknown as [string, string, string, string, string];
  const items = splitTopLevel(names);
  // prettier never breaks an import of a single name, however long (see `isCertain`).
  if (!items || items.length < 2) return null;
  return [`${indent}${head}{`, ...items.map((n) => `${indent}${INDENT}${n},`), `${indent}}${tail}`];
}

/** `if (condition) statement;` → the statement on its own line, indented. */
function breakIf(line: string): string[] | null {
  const m = /^(\s*)if \((.*)\) ((?:throw|return)\b.*;)$/.exec(line);
  if (!m) return null;
  const [, indent, condition, statement] = m as unknown as [string, string, string, string];
  if (!balanced(condition)) return null;
  const body = `${indent}${INDENT}${statement}`;
  return [`${indent}if (${condition})`, ...(body.length > PRINT_WIDTH ? breakLine(body) : [body])];
}

/** `type A = B | C;` → the union on the next line, or one member per line after a leading `|`. */
function breakUnion(line: string): string[] | null {
  const m = /^(\s*)((?:export )?type [A-Za-z_$][\w$]* =) (.+);$/.exec(line);
  if (!m) return null;
  const [, indent, head, union] = m as unknown as [string, string, string, string];
  const members = union.split(" | ");
  if (members.length < 2 || !members.every((t) => /^[A-Za-z_$][\w$]*(<[\w$, ]+>)?$/.test(t))) return null;
  const oneLine = `${indent}${INDENT}${union};`;
  if (oneLine.length <= PRINT_WIDTH) return [`${indent}${head}`, oneLine];
  return [`${indent}${head}`, ...members.map((t, i) => `${indent}${INDENT}| ${t}${i === members.length - 1 ? ";" : ""}`)];
}

/**
 * A property of an interface or type literal whose type is a generic with two or more type
 * arguments (`key?: Name<A, { b: B }, C>;`) → one type argument per line, without a trailing
 * comma (prettier writes none after type arguments), an object type among them broken in turn
 * into one member per line.
 */
function breakTypeArguments(line: string): string[] | null {
  const m = /^(\s*)((?:[A-Za-z_$][\w$]*|"[^"\\]*")\??: [A-Za-z_$][\w$.]*)<(.+)>;$/.exec(line);
  if (!m) return null;
  const [, indent, head, body] = m as unknown as [string, string, string, string];
  const args = splitTypeList(body, ",");
  // With one argument prettier may hug it (an object type): left to prettier.
  if (!args || args.length < 2) return null;
  const lines = args.flatMap((arg, i) => {
    const entry = `${indent}${INDENT}${arg}${i < args.length - 1 ? "," : ""}`;
    return entry.length > PRINT_WIDTH ? (breakTypeLiteral(entry) ?? [entry]) : [entry];
  });
  return [`${indent}${head}<`, ...lines, `${indent}>;`];
}

/** An object type that is a whole line (`{ a: A; b: B },`) → one member per line, each ended by `;`. */
function breakTypeLiteral(line: string): string[] | null {
  const m = /^(\s*)\{ (.+) \}(,?)$/.exec(line);
  if (!m) return null;
  const [, indent, body, comma] = m as unknown as [string, string, string, string];
  const members = splitTypeList(body, ";");
  if (!members || !members.every((p) => /^(?:[A-Za-z_$][\w$]*|"[^"\\]*")\??: \S/.test(p))) return null;
  return [`${indent}{`, ...members.map((p) => `${indent}${INDENT}${p};`), `${indent}}${comma}`];
}

/**
 * A type split at `separator` outside brackets (angle brackets too) and strings, each part
 * trimmed; null when unbalanced, or when it holds a function type (whose `=>` is no bracket).
 */
function splitTypeList(text: string, separator: "," | ";"): string[] | null {
  if (text.includes("=>")) return null;
  const cuts: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = closeQuote(text, i);
      if (end === null) return null;
      i = end;
    } else if (ch === "'" || ch === "`" || ch === "/") return null;
    else if ("([{<".includes(ch)) depth++;
    else if (")]}>".includes(ch)) depth--;
    else if (ch === separator && depth === 0) cuts.push(i);
    if (depth < 0) return null;
  }
  return depth === 0 ? cutAt(text, cuts) : null;
}

/**
 * A property whose value is a conditional with a plain test (`key: a.b ? x(…) : y(…),`) → the
 * test after the key, then `? x(…)` and `: y(…)` on lines of their own, indented once more; each
 * branch broken in turn as if it stood at its column (prettier aligns a branch's lines after
 * its `? ` or `: `).
 */
function breakConditional(line: string): string[] | null {
  const m = /^(\s*)((?:[A-Za-z_$][\w$]*|"[^"\\]*"): )(.+?)(,?)$/.exec(line);
  if (!m) return null;
  const [, indent, key, value, comma] = m as unknown as [string, string, string, string, string];
  const question = topLevel(value, " ? ");
  if (question.length !== 1) return null;
  const test = value.slice(0, question[0]);
  const rest = value.slice(question[0]! + 3);
  const colon = topLevel(rest, " : ");
  if (colon.length !== 1 || topLevel(rest, " ? ").length !== 0) return null;
  // A test that is a name or member chain (`hooks["a-b"]?.c`): prettier then keeps it after the key.
  if (!/^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\["[^"\\]*"\]|\?\.\["[^"\\]*"\])*$/.test(test)) return null;
  const branch = (mark: string, expression: string, end: string): string[] => {
    const at = `${indent}${INDENT}${INDENT}`;
    const whole = `${at}${expression}${end}`;
    let lines: string[];
    if (whole.length <= PRINT_WIDTH) lines = [whole];
    else {
      // Broken as a statement that ends in a comma; a branch without one loses it again.
      lines = breakLine(`${at}${expression},`);
      if (!end) lines[lines.length - 1] = lines[lines.length - 1]!.replace(/,$/, "");
    }
    lines[0] = `${indent}${INDENT}${mark}${lines[0]!.slice(at.length)}`;
    return lines;
  };
  return [`${indent}${key}${test}`, ...branch("? ", rest.slice(0, colon[0]), ""), ...branch(": ", rest.slice(colon[0]! + 3), comma)];
}

/** Where `token` occurs in `text` outside brackets and strings. */
function topLevel(text: string, token: string): number[] {
  const found: number[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === "`") {
      const end = closeQuote(text, i);
      if (end === null) return [-1, -1];
      i = end;
    } else if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (depth === 0 && text.startsWith(token, i)) found.push(i);
  }
  return found;
}

/**
 * An object literal that is a whole line, alone or as a property value or an array element
 * (`key: { a: 1, b: 2 },`) → one property per line, each line then broken in turn if still long.
 */
function breakObject(line: string): string[] | null {
  const m = /^(\s*)((?:[A-Za-z_$][\w$]*|"[^"\\]*"): )?\{ (.+) \}(,?)$/.exec(line);
  if (!m) return null;
  const [, indent, key, body, comma] = m as unknown as [string, string, string | undefined, string, string];
  const props = splitTopLevel(body);
  if (!props || props.length === 0 || props.some((p) => p.startsWith("..."))) return null;
  return [`${indent}${key ?? ""}{`, ...entryLines(indent, props), `${indent}}${comma}`];
}

/**
 * An array literal that is a property value (`key: [a, b],`), or a whole declaration's value
 * (`const names = ["a", "b"];`, of strings) → one element per line, each broken in turn.
 */
function breakArray(line: string): string[] | null {
  const m = /^(\s*)((?:[A-Za-z_$][\w$]*|"[^"\\]*"): )\[(.+)\](,?)$/.exec(line);
  if (!m) return breakDeclaredArray(line);
  const [, indent, key, body, comma] = m as unknown as [string, string, string, string, string];
  const items = splitTopLevel(body);
  if (!items || items.length === 0 || items.some((p) => !/^(\{ .* \}|"[^"\\]*")$/.test(p))) return null;
  return [`${indent}${key}[`, ...entryLines(indent, items), `${indent}]${comma}`];
}

/** `const names = ["a", "b"];` → one string per line (prettier fills a line with numbers only). */
function breakDeclaredArray(line: string): string[] | null {
  const m = /^(\s*)((?:export )?(?:const|let) [A-Za-z_$][\w$]* = )\[(.+)\];$/.exec(line);
  if (!m) return null;
  const [, indent, head, body] = m as unknown as [string, string, string, string];
  const items = splitTopLevel(body);
  if (!items || items.length === 0 || items.some((p) => !/^"[^"\\]*"$/.test(p))) return null;
  return [`${indent}${head}[`, ...entryLines(indent, items), `${indent}];`];
}

/**
 * A property whose value is an array of two or more object literals of more than one property
 * each (`references: [{ a: 1, b: 2 }, { a: 3, b: 4 }],`): prettier puts each on a line of its own
 * however short the line is.
 */
function breakObjectArray(line: string): string[] | null {
  if (!line.includes("[{ ")) return null;
  const m = /^\s*(?:[A-Za-z_$][\w$]*|"[^"\\]*"): \[(\{ .+ \})\],?$/.exec(line);
  const items = m ? splitTopLevel(m[1]!) : null;
  if (!items || items.length < 2) return null;
  const several = items.every((item) => {
    const object = /^\{ (.+) \}$/.exec(item);
    const props = object ? splitTopLevel(object[1]!) : null;
    return props !== null && props.length > 1;
  });
  return several ? breakArray(line) : null;
}

/** The entries of a broken object or array literal, one per line, each broken in turn if still long. */
function entryLines(indent: string, entries: string[]): string[] {
  return entries.flatMap((entry) => {
    return fit(`${indent}${INDENT}${entry},`);
  });
}

/**
 * `function name(a: A, b: B): R {`, a method `name(a: A, b: B): R {`, or a method's overload
 * `name(a: A, b: B): R;` → one parameter per line.
 */
function breakSignature(line: string): string[] | null {
  const m =
    /^(\s*)((?:export )?(?:async )?function [A-Za-z_$][\w$]*)\((.*)\)(: [^()]+)? \{$/.exec(line) ??
    /^(\s+)([A-Za-z_$][\w$]*)\((.*)\)(: [^()]+)( \{|;)$/.exec(line);
  if (!m) return null;
  const [, indent, head, params, returns, end = " {"] = m as unknown as [string, string, string, string, string | undefined, string?];
  const items = splitTopLevel(params);
  // prettier hugs a lone destructured parameter instead; canon does not write one.
  if (!items || items.length === 0 || (items.length === 1 && /^[{[]/.test(items[0]!))) return null;
  return [`${indent}${head}(`, ...items.map((p) => `${indent}${INDENT}${p},`), `${indent})${returns ?? ""}${end}`];
}

/**
 * `prefix callee(a, b, c);` → one argument per line, when prettier would not hug the first or last
 * argument (an object, array, function or template literal): such lines are left to prettier.
 */
function breakCall(line: string): string[] | null {
  const m = /^(\s*)(.*)([;,])$/.exec(line);
  if (!m) return null;
  const [, indent, statement, end] = m as unknown as [string, string, string, string];
  if (!statement.endsWith(")")) return null;
  const open = matchingOpen(statement, statement.length - 1);
  if (open === null || open === 0) return null;
  const head = statement.slice(0, open);
  // The callee is a plain name or member chain (private members too: `this.#http.list`), after a prefix such as `return `, `await ` or
  // `const x = `, which must hold no open bracket of its own.
  const callee = /(?:^|[\s(!=])((?:await )?[A-Za-z_$][\w$]*(?:\.#?[A-Za-z_$][\w$]*)*(?:<[\w$, ]+>)?)$/.exec(head);
  if (!callee) return null;
  const prefix = head.slice(0, head.length - callee[1]!.length);
  if (!balanced(prefix) || /[({[]/.test(prefix)) return null;
  const args = splitTopLevel(statement.slice(open + 1, -1));
  // With one argument prettier may break elsewhere (after `=`, say): left to prettier, but for a
  // lone object literal in a call with no prefix (an argument of a broken call), which it hugs.
  if (!args || args.length === 0 || (args.length === 1 && (prefix !== "" || !/^\{ .+ \}$/.test(args[0]!)))) return null;
  const huggable = (a: string) => /^(async\b|function\b|\(|\{|\[|`)/.test(a) || /=>/.test(a);
  const first = args.slice(0, -1);
  const last = args[args.length - 1]!;
  // prettier hugs a first argument only when it is a function; an object or array first (not last) is
  // broken onto its line with the others.
  if ((first.length > 0 && /^(async\b|function\b|\(|`)/.test(args[0]!)) || args.some((a) => /=>/.test(a))) return null;
  if (huggable(last)) {
    // prettier hugs a last argument that is an object literal when the line up to its `{` fits:
    // `f(a, b, {` / one property per line / `});`. Anything else with a huggable argument is left to it.
    const object = /^\{ (.+) \}$/.exec(last);
    const props = object ? splitTopLevel(object[1]!) : null;
    const opening = `${indent}${head}(${[...first, "{"].join(", ")}`;
    if (!props || props.length === 0 || props.some((p) => p.startsWith("...")) || first.some(huggable)) return null;
    if (opening.length <= PRINT_WIDTH) return [opening, ...entryLines(indent, props), `${indent}})${end}`];
    // When even the line up to `{` is too long, prettier puts every argument on a line of its own.
    if (first.length === 0) return null;
  }
  // One argument per line, each broken in turn when still too long (a call inside a call).
  return [`${indent}${head}(`, ...entryLines(indent, args), `${indent})${end}`];
}

/** The index of the bracket that `close` (a `)`) closes, skipping strings; null when unmatched. */
function matchingOpen(text: string, close: number): number | null {
  const spans = scan(text);
  if (!spans) return null;
  const stack: number[] = [];
  for (const [i, ch] of spans) {
    if (ch === "(" || ch === "[" || ch === "{") stack.push(i);
    else if (ch === ")" || ch === "]" || ch === "}") {
      const at = stack.pop();
      if (at === undefined) return null;
      if (i === close) return at;
    }
  }
  return null;
}

/** Whether every bracket in `text` (outside strings) is closed. */
function balanced(text: string): boolean {
  const spans = scan(text);
  if (!spans) return false;
  let depth = 0;
  for (const [, ch] of spans) {
    if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** `text` split at the commas outside brackets and strings, each part trimmed; null when unbalanced. */
function splitTopLevel(text: string): string[] | null {
  const spans = scan(text);
  if (!spans) return null;
  const cuts: number[] = [];
  let depth = 0;
  for (const [i, ch] of spans) {
    if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") depth--;
    else if (ch === "," && depth === 0) cuts.push(i);
    if (depth < 0) return null;
  }
  return depth === 0 ? cutAt(text, cuts) : null;
}

/**
 * `text` cut at the separators at `cuts`, each part trimmed, a last empty part (a trailing
 * separator) dropped; null when another part is empty.
 */
function cutAt(text: string, cuts: readonly number[]): string[] | null {
  const parts: string[] = [];
  let start = 0;
  for (const cut of cuts) {
    parts.push(text.slice(start, cut).trim());
    start = cut + 1;
  }
  const last = text.slice(start).trim();
  if (last) parts.push(last);
  return parts.every((p) => p.length > 0) ? parts : null;
}

/**
 * The brackets and commas of `text` outside string, template and regular-expression literals, with
 * their index; null when a literal is not closed or the text holds something canon does not write
 * on one line (a comment, a template literal with substitutions).
 */
function scan(text: string): Array<[number, string]> | null {
  const out: Array<[number, string]> = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === "`") {
      const end = closeQuote(text, i);
      if (end === null) return null;
      if (ch === "`" && text.slice(i, end).includes("${")) {
        // `${…}` inside a template: brackets within are code, but canon's templates only put plain
        // names and member chains there, which hold none.
        if (/\$\{[^}]*[()[\]{,]/.test(text.slice(i, end))) return null;
      }
      i = end;
    } else if (ch === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) return null;
    else if (ch === "/") return null; // a regular expression or a division: not a shape canon breaks
    else if ("()[]{},".includes(ch)) out.push([i, ch]);
  }
  return out;
}

function closeQuote(text: string, start: number): number | null {
  const quote = text[start];
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === quote) return i;
  }
  return null;
}
