import type { FieldDef } from "../../model/types.ts";
import { q, walkFields, type LintContext } from "../context.ts";
import { backtrackingOf, type Backtracking } from "../patterns/backtracking.ts";
import { saferPattern } from "../patterns/rewrite.ts";

/**
 * pattern-backtracking: a `pattern` runs in time linear in its input. One that can backtrack
 * catastrophically (exponential or polynomial time on a crafted input) would let a single
 * request, or a single filter value, hold the event loop: the whole service stops answering.
 */
export function patternRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    for (const { field, path } of walkFields(r)) {
      if (field.type !== "string" || field.pattern === undefined || !compiles(field.pattern)) continue;
      const found = backtrackingOf(field.pattern);
      if (found) report(ctx, field, path, field.pattern, found);
    }
  }
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false; // field-option reports it
  }
}

const growth: Record<Backtracking["complexity"], string> = {
  exponential: "exponential",
  polynomial: "polynomial",
  unknown: "unproven (the checker could not show it linear)",
};

/** A pattern as YAML writes it best: single-quoted, backslashes as they are. */
function yaml(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function report(ctx: LintContext, field: FieldDef, path: string, pattern: string, found: Backtracking): void {
  const safer = saferPattern(pattern);
  const shown = found.part === pattern ? "it" : `its part ${yaml(found.part)}`;
  const attack = found.attack ? `; an input such as ${found.attack} takes ${found.complexity} time` : "";
  ctx.report(
    "pattern-backtracking",
    field.at("pattern"),
    `pattern ${yaml(pattern)} of ${q(path)} can backtrack catastrophically: ${shown} can match the same text in many ways, so matching time is ${growth[found.complexity]} in the input${attack}, and one request would hold the service`,
    safer
      ? `use pattern: ${yaml(safer)}, which matches the same strings and reads each character one way only`
      : "rewrite it so that each character can be matched one way only: no repetition inside a repetition such as (a+)+, no alternatives that overlap inside a repetition such as (\\w|\\d)+; e.g. '^(\\w+\\s?)*$' becomes '^\\w+(\\s\\w+)*\\s?$'",
  );
}
