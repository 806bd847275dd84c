/**
 * A safe rewrite of a backtracking `pattern`, for the fix of `pattern-backtracking`. Each
 * rewrite turns one ambiguous repetition into one that reads every character one way only,
 * matching the same strings; a rewrite is offered only when recheck finds it linear.
 *
 *   (X+Y?)*  →  (X+(YX+)*Y?)?      `^(\w+\s?)*$` → `^(\w+(\s\w+)*\s?)?$`
 *   (X+Y?)+  →  X+(YX+)*Y?         `^(\d+-?)+$`  → `^\d+(-\d+)*-?$`
 *   (X+)+, (X+)*, (X*)*, (X*)+  →  X+, X*, X*, X*
 *
 * X and Y are single atoms (a character, an escape such as `\w`, a class such as `[a-z]`) that
 * share no character, so the runs of X are split by Y in one way only.
 */
import { backtrackingOf } from "./backtracking.ts";

const ATOM = String.raw`(?:\\[^\s]|\[(?:\\.|[^\]\\])+\]|[^\\()[\]{}|*+?.^$])`;
const GROUP = String.raw`\((?:\?:)?`;

const rules: Array<[RegExp, (m: RegExpExecArray) => string | null]> = [
  [
    new RegExp(String.raw`${GROUP}(${ATOM})\+(${ATOM})\?\)([*+])`),
    ([, x, y, outer]) => (disjoint(x!, y!) ? (outer === "+" ? `${x}+(${y}${x}+)*${y}?` : `(${x}+(${y}${x}+)*${y}?)?`) : null),
  ],
  [new RegExp(String.raw`${GROUP}(${ATOM})([*+])\)([*+])`), ([, x, inner, outer]) => `${x}${inner === "+" && outer === "+" ? "+" : "*"}`],
];

/** A pattern matching the same strings in linear time, when one of the rewrites above gives one. */
export function saferPattern(pattern: string): string | null {
  for (const [shape, rewrite] of rules) {
    const m = shape.exec(pattern);
    if (!m) continue;
    const replacement = rewrite(m);
    if (replacement === null) continue;
    const candidate = pattern.slice(0, m.index) + replacement + pattern.slice(m.index + m[0].length);
    try {
      new RegExp(candidate);
    } catch {
      continue;
    }
    if (backtrackingOf(candidate) === null) return candidate;
  }
  return null;
}

/** Do two atoms match no UTF-16 code unit in common? (Without the u flag, an atom matches one code unit.) */
function disjoint(x: string, y: string): boolean {
  const a = new RegExp(`^${x}$`);
  const b = new RegExp(`^${y}$`);
  for (let code = 0; code <= 0xffff; code++) {
    const c = String.fromCharCode(code);
    if (a.test(c) && b.test(c)) return false;
  }
  return true;
}
