import type { Diagnostic } from "../diagnostics/diagnostic.ts";
import type { Definitions } from "../model/types.ts";
import { createContext, type Rule } from "./context.ts";
import { businessRules } from "./rules/business.ts";
import { fieldRules } from "./rules/fields.ts";
import { filterRules } from "./rules/filters.ts";
import { listUnderRules } from "./rules/list-under.ts";
import { tenancyRules } from "./rules/tenancy.ts";
import { optionRules } from "./rules/options.ts";
import { parentRules } from "./rules/parents.ts";
import { patternRules } from "./rules/patterns.ts";
import { pathRules } from "./rules/paths.ts";
import { resourceRules } from "./rules/resources.ts";
import { uniqueRules } from "./rules/unique.ts";
import { tableRules } from "./rules/tables.ts";
import { versionRefRules } from "./rules/version-refs.ts";
import { versionRules } from "./rules/versions.ts";

export { checkCollectionName, type NameProblem } from "./naming.ts";

export interface LintOptions {
  /** Today's date, YYYY-MM-DD (injected so that tests are independent of the calendar). */
  today: string;
}

/** Every rule, one per concern. Each reports through the context and never throws on odd input. */
const rules: Rule[] = [versionRules, pathRules, resourceRules, parentRules, fieldRules, optionRules, patternRules, versionRefRules, filterRules, listUnderRules, uniqueRules, businessRules, tenancyRules, tableRules];

/** Runs every lint rule over the normalized definitions and returns every problem found. */
export function lint(defs: Definitions, options: LintOptions): Diagnostic[] {
  const out: Diagnostic[] = [];
  const ctx = createContext(defs, options.today, out);
  for (const rule of rules) rule(ctx);
  return out;
}
