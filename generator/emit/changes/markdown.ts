import type { Change } from "../../compat/types.ts";
import { partLabel } from "../../compat/messages.ts";
import { compareText } from "../../diagnostics/diagnostic.ts";
import { GENERATED_NOTICE } from "../../util/generated.ts";

/** What CHANGES.md says about one step from a version to the next. */
export interface Step {
  title: string;
  from: string;
  to: string;
  /** The deprecation of `from`, when it is deprecated. */
  deprecation: { deprecated: string; sunset: string } | null;
  /** `from` is retired: no longer served (its paths answer 404). */
  retired?: boolean;
  changes: Change[];
}

export const CHANGES_HEADER = `<!-- ${GENERATED_NOTICE} -->`;

/** `field "x"` → field `x`: names as code. */
function code(text: string): string {
  return text.replace(/"([^"]*)"/g, "`$1`");
}

function sentence(text: string): string {
  const t = code(text);
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}${t.endsWith(".") ? "" : "."}`;
}

function line(c: Change): string {
  const part = partLabel(c);
  // A parameter's change already names it: `Query parameter \`q\` was removed.`, said once.
  if (part && c.text.startsWith(part)) return `- ${sentence(c.text)}`;
  const text = code(c.text);
  return part ? `- ${sentence(part).slice(0, -1)}: ${text}${text.endsWith(".") ? "" : "."}` : `- ${sentence(c.text)}`;
}

interface OperationChanges {
  heading: string;
  sort: string;
  changes: Change[];
}

/** Changes grouped by operation, in path order; document-wide changes first. */
function byOperation(changes: Change[]): OperationChanges[] {
  const groups = new Map<string, OperationChanges>();
  for (const c of changes) {
    const op = c.operation;
    const key = op ? `${op.path} ${op.method}` : "";
    let g = groups.get(key);
    if (!g) {
      g = { heading: op ? `\`${op.method.toUpperCase()} ${op.path}\` (${op.operationId})` : "The whole API", sort: key, changes: [] };
      groups.set(key, g);
    }
    g.changes.push(c);
  }
  return [...groups.values()].sort((a, b) => compareText(a.sort, b.sort));
}

function section(groups: OperationChanges[]): string[] {
  // A change met in two members of one union (a list's offset and `?q=` cursor pages) is said once.
  return groups.flatMap((g) => [`### ${g.heading}`, "", ...new Set(g.changes.map(line)), ""]);
}

/** The CHANGES.md of `to`: what a client of `from` must change, operation by operation. */
export function changesMarkdown(step: Step): string {
  const { from, to } = step;
  const breaking = step.changes.filter((c) => c.breaking);
  const added = step.changes.filter((c) => !c.breaking && c.kind === "operation-added");
  const other = step.changes.filter((c) => !c.breaking && c.kind !== "operation-added");
  const out = [
    CHANGES_HEADER,
    "",
    `# ${step.title}: from ${from} to ${to}`,
    "",
    `What a client of ${from} changes to use ${to}, operation by operation. Every path starts with \`/${to}/\` instead of \`/${from}/\`; everything not listed here works in ${to} as it does in ${from}.`,
    "",
  ];
  if (step.retired) {
    out.push(
      `${from} is retired: it was deprecated ${step.deprecation ? `on ${step.deprecation.deprecated} ` : ""}and its sunset${step.deprecation ? `, ${step.deprecation.sunset},` : ""} has passed, so \`/${from}/\` paths answer 404. A client still on ${from} moves now, as below.`,
      "",
    );
  } else if (step.deprecation) {
    out.push(`${from} is deprecated since ${step.deprecation.deprecated} and goes away on ${step.deprecation.sunset} (its sunset): move before then.`, "");
  }
  const breakingGroups = byOperation(breaking);
  out.push(`## What a ${from} client must change`, "");
  if (breakingGroups.length === 0) out.push(`Nothing: no change breaks a ${from} client.`, "");
  else {
    const n = breakingGroups.length;
    out.push(`${n} operation${n === 1 ? "" : "s"} changed in ways that break a ${from} client.`, "", ...section(breakingGroups));
  }
  out.push(`## What else changed (nothing to do for a ${from} client)`, "");
  if (added.length === 0 && other.length === 0) out.push("Nothing else changed.", "");
  if (added.length > 0) {
    out.push("New operations:", "", ...added.map((c) => `- \`${c.operation!.method.toUpperCase()} ${c.operation!.path}\` (${c.operation!.operationId})`), "");
  }
  if (other.length > 0) out.push(...section(byOperation(other)));
  return `${out.join("\n").trimEnd()}\n`;
}
