/**
 * canon's own layout of generated TypeScript: what prettier would print, for the few shapes
 * canon's templates produce, at a tiny fraction of prettier's cost (prettier was ~85 % of a
 * cold `canon generate`).
 *
 * It only applies to files whose emitter writes them in prettier's style already
 * (`EmittedFile.prettierStyle`): one statement per line, objects and blocks opened at the end of
 * a line, double-quoted strings, trailing commas. Such a file differs from prettier's output only
 * where a line is longer than the print width, or holds a call chain prettier prints one call per
 * line. `layout` breaks those lines the way prettier does (import lists, function parameters, call
 * arguments, an `if` with a short statement, zod chains of validators) and tidies
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
 * in prettier's sense, such as a regular expression longer than five characters or a nested call),
 * unless the line's expression is one read here and prettier surely prints it flat (`flatChains`).
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
    if (line.includes(").")) {
      // A line read here is as sure as that reading; any other, as the older rough test says.
      const flat = flatChains(line);
      if (flat === false || (flat === null && mayBreakChain(line))) return false;
    }
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
  return line.length > PRINT_WIDTH ? breakLine(line) : (breakObjectArray(line) ?? breakValue(line) ?? [line]);
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
    breakValue(line) ??
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
  // A property's key may hold brackets in its quotes (`"price_cents[in]": `).
  if (!balanced(prefix) || /[({[]/.test(prefix.replace(/"[^"\\]*"/g, '""'))) return null;
  const args = splitTopLevel(statement.slice(open + 1, -1));
  // With one argument prettier may break elsewhere (after `=`, say): left to prettier, but for a
  // lone object literal, which it hugs, in a call with no prefix (an argument of a broken call),
  // after `return ` or as a property's value (prettier keeps a value whose call ends in an object
  // argument after its key). The callee is a name or a path of names here, which prettier prints
  // as it is, in one piece.
  const hugged = prefix === "" || prefix === "return " || (KEY.test(prefix) && KEY.exec(prefix)![0] === prefix);
  if (!args || args.length === 0 || (args.length === 1 && (!hugged || callee[1]!.startsWith("await ") || !/^\{ .+ \}$/.test(args[0]!)))) return null;
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

/*
 * Call chains, as prettier prints them (its `printMemberChain`). canon's validators write zod
 * chains (`z.string().regex(/^[A-Z]{3}$/).optional()`), which prettier prints one call per line
 * when it must. What follows reads the expressions of one line that such chains are made of
 * (names, members, calls, strings, numbers, regular expressions, object and array literals,
 * unary operators; anything else is not read, and left to prettier) and decides as prettier does.
 */

/** An expression of the few kinds canon's chains hold; `start`/`end` index the line's text. */
type Expr = { start: number; end: number } & (
  | { kind: "name"; name: string }
  | { kind: "literal" }
  | { kind: "regex"; pattern: string }
  | { kind: "unary"; argument: Expr }
  | { kind: "member"; object: Expr; name: string; dot: number }
  | { kind: "call"; callee: Expr; args: Expr[]; open: number }
  | { kind: "object"; props: Array<{ key: string; value: Expr | null; start: number; end: number }> }
  | { kind: "array"; items: Expr[] }
);

/** The expression that is all of `text` (from `start`), or null when it holds anything else. */
function parseExpr(text: string, start = 0): Expr | null {
  let i = start;
  const spaces = () => {
    while (text[i] === " ") i++;
  };
  const list = (close: string, item: () => boolean): boolean => {
    spaces();
    if (text[i] === close) return (i++, true);
    for (;;) {
      if (!item()) return false;
      spaces();
      if (text[i] === ",") {
        i++;
        spaces();
        if (text[i] === close) return (i++, true);
      } else if (text[i] === close) return (i++, true);
      else return false;
    }
  };
  const primary = (): Expr | null => {
    const at = i;
    const ch = text[i];
    if (ch === undefined) return null;
    if (ch === '"') {
      const end = closeQuote(text, i);
      if (end === null) return null;
      i = end + 1;
      return { kind: "literal", start: at, end: i };
    }
    if (ch === "/") {
      let inClass = false;
      for (i++; i < text.length; i++) {
        const c = text[i];
        if (c === "\\") i++;
        else if (c === "[") inClass = true;
        else if (c === "]") inClass = false;
        else if (c === "/" && !inClass) break;
      }
      if (i >= text.length) return null;
      const pattern = text.slice(at + 1, i);
      i++;
      while (/[a-z]/.test(text[i] ?? "")) i++;
      return { kind: "regex", pattern, start: at, end: i };
    }
    if (/[0-9]/.test(ch)) {
      const m = /^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e-?[0-9]+)?/.exec(text.slice(i));
      if (!m) return null;
      i += m[0].length;
      return /[\w$.]/.test(text[i] ?? "") ? null : { kind: "literal", start: at, end: i };
    }
    if (ch === "-" || ch === "!") {
      i++;
      const argument = postfix();
      return argument && { kind: "unary", argument, start: at, end: argument.end };
    }
    if (ch === "{") {
      i++;
      const props: Array<{ key: string; value: Expr | null; start: number; end: number }> = [];
      const ok = list("}", () => {
        const m = /^(?:[A-Za-z_$][\w$]*|"[^"\\]*")/.exec(text.slice(i));
        if (!m) return false;
        const start = i;
        i += m[0].length;
        if (text[i] !== ":") {
          props.push({ key: m[0], value: null, start, end: i });
          return m[0][0] !== '"';
        }
        i++;
        spaces();
        const value = postfix();
        props.push({ key: m[0], value, start, end: i });
        return value !== null;
      });
      return ok ? { kind: "object", props, start: at, end: i } : null;
    }
    if (ch === "[") {
      i++;
      const items: Expr[] = [];
      const ok = list("]", () => {
        const item = postfix();
        if (item) items.push(item);
        return item !== null;
      });
      return ok ? { kind: "array", items, start: at, end: i } : null;
    }
    const m = /^[A-Za-z_$][\w$]*/.exec(text.slice(i));
    // Keywords start expressions of other kinds (`new X()`, `typeof x`, `async () =>`): not read.
    if (!m || /^(new|typeof|void|delete|await|async|function|class|this|super|import|yield|in|of|instanceof)$/.test(m[0])) return null;
    i += m[0].length;
    return { kind: "name", name: m[0], start: at, end: i };
  };
  const postfix = (): Expr | null => {
    let expr = primary();
    while (expr) {
      if (text[i] === "." && /[A-Za-z_$]/.test(text[i + 1] ?? "")) {
        const dot = i;
        const m = /^[A-Za-z_$][\w$]*/.exec(text.slice(i + 1))!;
        i += 1 + m[0].length;
        expr = { kind: "member", object: expr, name: m[0], dot, start: expr.start, end: i };
      } else if (text[i] === "(") {
        const open = i++;
        const args: Expr[] = [];
        const callee: Expr = expr;
        const ok = list(")", () => {
          const arg = postfix();
          if (arg) args.push(arg);
          return arg !== null;
        });
        expr = ok ? { kind: "call", callee, args, open, start: callee.start, end: i } : null;
      } else break;
    }
    return expr;
  };
  const expr = postfix();
  return expr && i === text.length ? expr : null;
}

/**
 * How prettier prints an expression that fits on its line: "flat" (as written), "expanded" (a
 * call chain it prints one call per line however short), "broken" (a call whose one argument
 * prettier must break: an object it hugs, `f({` … `})`, or a call it puts on lines of its own,
 * `f(` … `)`), or "unknown" (something else might break: left to prettier).
 */
type Printed = "flat" | "expanded" | "broken" | "unknown";

function printedAs(expr: Expr): Printed {
  switch (expr.kind) {
    case "name":
    case "literal":
      return "flat";
    case "regex":
      // Measured in columns by prettier: only ASCII is measured here.
      return /^[\x20-\x7e]*$/.test(expr.pattern) ? "flat" : "unknown";
    case "unary":
      return printedAs(expr.argument) === "flat" ? "flat" : "unknown";
    case "member":
      return printedAs(expr.object) === "flat" ? "flat" : "unknown";
    case "object": {
      // A property whose value breaks breaks the object.
      const values = expr.props.map((p) => (p.value === null ? "flat" : printedAs(p.value)));
      if (values.includes("unknown")) return "unknown";
      return values.every((v) => v === "flat") ? "flat" : "broken";
    }
    case "array": {
      // prettier always breaks two or more objects (or arrays) of more than one entry each.
      const several = (e: Expr) => (e.kind === "object" && e.props.length > 1) || (e.kind === "array" && e.items.length > 1);
      if (expr.items.length > 1 && expr.items.every(several)) return "unknown";
      return expr.items.every((e) => printedAs(e) === "flat") ? "flat" : "unknown";
    }
    case "call": {
      if (expr.callee.kind === "member") return memberChain(expr)?.printed ?? "unknown";
      if (printedAs(expr.callee) !== "flat") return "unknown";
      return argumentsPrinted(expr);
    }
  }
}

/** How a call's arguments are printed: flat, or "broken" when its one argument breaks. */
function argumentsPrinted(call: Expr & { kind: "call" }): Printed {
  const args = call.args.map(printedAs);
  if (args.every((a) => a === "flat")) return "flat";
  return args.length === 1 && args[0] !== "unknown" ? "broken" : "unknown";
}

/** One of prettier's printed nodes of a chain: the head, a `.name` or a call's `(…)`. */
interface ChainNode {
  expr: Expr;
  start: number;
  end: number;
}

interface Chain {
  /** The printed nodes in groups, as prettier groups them (`z` / `.string()` / `.regex(…)`). */
  groups: ChainNode[][];
  /** How many groups go on the first line (2 when prettier merges the first call into it). */
  head: number;
  /** Whether prettier prints one group per line (after the head) when the chain is too long. */
  breakable: boolean;
  printed: Printed;
  /** The call whose argument breaks, when the chain is printed "broken". */
  broken?: Expr & { kind: "call" };
}

/**
 * A call on a member (`a.b(…)…`) as prettier's `printMemberChain` sees it; null when it holds
 * something not read here, or an argument that breaks where this does not follow prettier.
 */
function memberChain(top: Expr & { kind: "call" }): Chain | null {
  const nodes: ChainNode[] = [];
  for (let e: Expr = top; ; ) {
    if (e.kind === "call" && (e.callee.kind === "member" || e.callee.kind === "call")) {
      nodes.unshift({ expr: e, start: e.open, end: e.end });
      e = e.callee;
    } else if (e.kind === "member") {
      nodes.unshift({ expr: e, start: e.dot, end: e.end });
      e = e.object;
    } else {
      nodes.unshift({ expr: e, start: e.start, end: e.end });
      break;
    }
  }
  const head = nodes[0]!.expr;
  if (head.kind !== "name" && (head.kind !== "call" || printedAs(head.callee) !== "flat")) return null;
  const calls = nodes.map((n) => n.expr).filter((e): e is Expr & { kind: "call" } => e.kind === "call");
  // The first group: the head, the calls right after it, and then (a head that is no call)
  // every member but the last before a call.
  const isCall = (n: ChainNode) => n.expr.kind === "call";
  let i = 1;
  while (i < nodes.length && isCall(nodes[i]!)) i++;
  if (!isCall(nodes[0]!)) while (i + 1 < nodes.length && !isCall(nodes[i]!) && !isCall(nodes[i + 1]!)) i++;
  const groups: ChainNode[][] = [nodes.slice(0, i)];
  // Then each group is members followed by calls.
  let current: ChainNode[] = [];
  let seenCall = false;
  for (; i < nodes.length; i++) {
    if (seenCall && !isCall(nodes[i]!)) {
      groups.push(current);
      current = [];
      seenCall = false;
    }
    if (isCall(nodes[i]!)) seenCall = true;
    current.push(nodes[i]!);
  }
  if (current.length) groups.push(current);
  // prettier keeps the first call on the head's line after a factory (`Object.keys(x)`): a name
  // that starts with a capital or is all `$` and `_` (canon writes no chain as a statement).
  const factory = (name: string) => /^[A-Z]|^[$_]+$/.test(name);
  const first = groups[0]!;
  const last = first[first.length - 1]!.expr;
  const merge = groups.length >= 2 && (first.length === 1 ? last.kind === "name" && factory(last.name) : last.kind === "member" && factory(last.name));
  const lead = merge ? 2 : 1;
  const breakable = groups.length > lead + 1;
  // Which groups break: one whose last call's one argument breaks (read below), and no other.
  const breaks: boolean[] = [];
  for (const [g, group] of groups.entries()) {
    const printed = group.map((n) => (n.expr.kind === "call" ? argumentsPrinted(n.expr) : "flat"));
    if (printed.includes("unknown")) return null;
    const broken = printed.some((p) => p !== "flat");
    // A break in a call before the group's last, or in the head's line of a chain prettier may
    // print one call per line: not followed here.
    if (broken && (printed.slice(0, -1).some((p) => p !== "flat") || (g < lead && (breakable || merge)))) return null;
    breaks.push(broken);
  }
  // More than two calls, one with an argument prettier does not count as simple, or a group
  // before the last that breaks: one call per line.
  const forced = breakable && ((calls.length > 2 && calls.some((c) => c.args.some((a) => !simpleArgument(a, 2)))) || breaks.slice(0, -1).some(Boolean));
  if (forced) return { groups, head: lead, breakable, printed: "expanded" };
  // One group breaking: on the line but for its call's argument when prettier does not print a
  // member chain (two groups: `inParam(` … `).optional()`); otherwise it may go either way.
  const broken = groups.filter((_, g) => breaks[g]);
  if (broken.length === 0) return { groups, head: lead, breakable, printed: "flat" };
  if (breakable || broken.length > 1) return null;
  return { groups, head: lead, breakable, printed: "broken", broken: broken[0]!.at(-1)!.expr as Expr & { kind: "call" } };
}

/** prettier's `isSimpleCallArgument`, for the expressions read here. */
function simpleArgument(e: Expr, depth: number): boolean {
  if (depth <= 0) return false;
  switch (e.kind) {
    case "regex":
      return e.pattern.length <= 5;
    case "name":
    case "literal":
      return true;
    case "object":
      return e.props.every((p) => p.value === null || simpleArgument(p.value, depth - 1));
    case "array":
      return e.items.every((item) => simpleArgument(item, depth - 1));
    case "call":
      return simpleArgument(e.callee, depth) && e.args.length <= depth && e.args.every((a) => simpleArgument(a, depth - 1));
    case "member":
      return simpleArgument(e.object, depth);
    case "unary":
      return simpleArgument(e.argument, depth);
  }
}

/** A property's key and the `: ` after it. */
const KEY = /^(?:[A-Za-z_$][\w$]*|"[^"\\]*"): /;

/**
 * The value a line holds, as laid out here: a property's (`key: …,`), an element's or argument's
 * (`…,`), or a returned one (`return …;`, a lone object argument only), with what comes before it.
 */
function lineValue(line: string): { before: string; value: Expr; end: string } | null {
  if (/[^\x20-\x7e]/.test(line)) return null;
  const indent = /^\s*/.exec(line)![0];
  const end = line[line.length - 1]!;
  const key = KEY.exec(line.slice(indent.length));
  const at = indent.length + (key ? key[0].length : line.startsWith("return ", indent.length) ? 7 : 0);
  if (end !== (line.startsWith("return ", indent.length) ? ";" : ",")) return null;
  const value = parseExpr(line.slice(0, -1), at);
  return value && { before: line.slice(0, at), value, end };
}

/**
 * A line whose value prettier breaks: a call chain it prints one call per line (because it must:
 * more than two calls, an argument that is not simple; or because the line is too long and the
 * chain has more than two groups), the head on the line, each further group on a line of its
 * own one level in; or a call whose one argument breaks (or is an object, the line too long),
 * the object hugged (`f({` / one property per line / `})`) or the argument on lines of its own.
 * Null for any other line, or a value prettier may print otherwise.
 */
function breakValue(line: string): string[] | null {
  const long = line.length > PRINT_WIDTH;
  // A line that fits breaks only around a chain prettier must break: three calls, two `).`.
  if (!line.includes("(") || (!long && (line.match(/\)\./g) ?? []).length < 2)) return null;
  const read = lineValue(line);
  if (!read || read.value.kind !== "call") return null;
  const { before, value, end } = read;
  const indent = /^\s*/.exec(line)![0];
  const text = (from: number, to: number) => line.slice(from, to);
  if (value.callee.kind === "member") {
    const chain = memberChain(value);
    if (!chain) return null;
    if (chain.printed === "expanded" || (long && chain.breakable && chain.printed === "flat")) {
      if (before.startsWith(`${indent}return `)) return null;
      const groups = chain.groups;
      const first = `${before}${text(groups[0]![0]!.start, groups[chain.head - 1]!.at(-1)!.end)}`;
      if (first.length > PRINT_WIDTH) return null;
      const lines = [first];
      for (let g = chain.head; g < groups.length; g++) {
        const group = groups[g]!;
        const close = g === groups.length - 1 ? end : "";
        const broken = callLines(line, `${indent}${INDENT}`, group[0]!.start, group.at(-1)!.expr as Expr & { kind: "call" }, close, false);
        if (!broken) return null;
        lines.push(...broken);
      }
      return lines;
    }
    if (chain.printed === "flat" && (!long || chain.breakable)) return null;
    if (chain.broken) {
      // The text after the call whose argument breaks (`.optional()`) follows its closing bracket.
      const after = `${line.slice(chain.broken.end, value.end)}${end}`;
      if (before.startsWith(`${indent}return `) && chain.broken.args[0]!.kind !== "object") return null;
      return callLines(line, indent, indent.length, chain.broken, after, true);
    }
  } else if (printedAs(value.callee) !== "flat") return null;
  // A call printed on its line but for its arguments.
  if (before.startsWith(`${indent}return `) && !(value.args.length === 1 && value.args[0]!.kind === "object")) return null;
  return callLines(line, indent, indent.length, value, end, true);
}

/**
 * A call (its text from `from`, `.name(…)` or `name(…)`, after `before` on the line) as prettier
 * prints it at `indent`: on one line when it fits and nothing in it breaks; else its one argument
 * an object hugged, or broken out on lines of its own; null when prettier may do otherwise.
 * `lead`: the line's own beginning comes first (a whole line), else `indent` does (a group).
 */
function callLines(line: string, indent: string, from: number, call: Expr, end: string, lead: boolean): string[] | null {
  const start = lead ? line.slice(0, from) : indent;
  const whole = `${start}${line.slice(from, call.end)}${end}`;
  if (call.kind !== "call") return whole.length <= PRINT_WIDTH ? [whole] : null;
  const printed = argumentsPrinted(call);
  if (printed === "unknown") return null;
  if (printed === "flat" && whole.length <= PRINT_WIDTH) return [whole];
  // Too long, or its one argument breaks: one argument that is an object is hugged. A whole line
  // too long otherwise is left to the other shapes (`breakCall`).
  const tooLong = lead ? null : [whole];
  if (call.args.length !== 1) return printed === "flat" ? tooLong : null;
  const arg = call.args[0]!;
  const opening = `${start}${line.slice(from, arg.start + (arg.kind === "object" ? 1 : 0))}`;
  if (opening.length > PRINT_WIDTH) return null;
  if (arg.kind === "object") {
    if (arg.props.length === 0) return null;
    const props = arg.props.map((p) => line.slice(p.start, p.end));
    return [opening, ...entryLines(indent, props), `${indent}})${end}`];
  }
  // Any other argument that breaks goes on lines of its own; one that is too long is left to prettier.
  if (printed === "flat") return tooLong;
  return [opening, ...fit(`${indent}${INDENT}${line.slice(arg.start, arg.end)},`), `${indent})${end}`];
}

/**
 * Whether every call chain of a line is surely printed flat by prettier, the line fitting: a
 * property (`key: …,`), an element or argument (`…,`), `return …;` or a declaration's value,
 * whose expression is read here (see `parseExpr`) and holds nothing prettier would break. True
 * or false when read, null when not.
 */
function flatChains(line: string): boolean | null {
  if (/[^\x20-\x7e]/.test(line)) return null;
  // A group of a chain broken one call per line (`    .strictObject({ a: z.int().min(0) })`):
  // its arguments are what prettier prints flat or not.
  const group = /^(\s*)(\.[A-Za-z_$].*?),?$/.exec(line);
  if (group) {
    let expr = parseExpr(`_${group[2]}`);
    if (!expr || expr.kind !== "call") return null;
    for (; expr.kind === "call" || expr.kind === "member"; expr = expr.kind === "call" ? expr.callee : expr.object) {
      if (expr.kind === "call" && !expr.args.every((a) => printedAs(a) === "flat")) return false;
    }
    return expr.kind === "name" && expr.name === "_" ? true : null;
  }
  const m = /^(\s*(?:(?:[A-Za-z_$][\w$]*|"[^"\\]*"): |return |(?:export )?const [A-Za-z_$][\w$]* = )?)(.+)([,;])$/.exec(line);
  if (!m) return null;
  const [, head, , end] = m as unknown as [string, string, string, string];
  // A statement (`;`) is a return or a declaration; an entry (`,`) is no statement.
  if ((end === ";") !== /(return |const [\w$]+ = )$/.test(head)) return null;
  const expr = parseExpr(line.slice(0, -1), head.length);
  return expr === null ? null : printedAs(expr) === "flat";
}
