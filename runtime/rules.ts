/**
 * The business rules of a resource that its definition declares (SPEC §12.5), as the default
 * services check them: the transitions of enum fields (a state machine), and what an action
 * requires of the record it acts on. Fields are named by their storage names.
 */
import { BusinessRuleError, type ErrorDetail } from "./errors.ts";
import type { Values } from "./store.ts";
import { keepTenant } from "./tenancy.ts";

/**
 * The state machines of a resource's enum fields: storage field → value → the values it may
 * change to. A value that is not a key is final.
 */
export type Transitions = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

/** What an action requires of its target: storage field → the values it must have. */
export type Requirements = Readonly<Record<string, readonly unknown[]>>;

/**
 * What every write that changes a record checks of the change, from `before` (the record as read)
 * to `after` (its new values), before the store runs it: the record stays in its tenant
 * (`keepTenant`, SPEC §12.4) and its fields move only as their transitions allow.
 */
export function checkChange(
  spec: { readonly tenant?: string | undefined; readonly transitions?: Transitions | undefined },
  before: Values,
  after: Values,
): void {
  keepTenant(spec, before, after);
  checkTransitions(spec.transitions, before, after);
}

/**
 * 422 naming each field whose change from `before` to `after` its transitions do not allow,
 * with the values it may change to. Keeping the same value is no transition; a field that had
 * no value may take any (as a create does).
 */
export function checkTransitions(transitions: Transitions | undefined, before: Values, after: Values): void {
  if (!transitions) return;
  const details: ErrorDetail[] = [];
  let first = "";
  for (const field of Object.keys(transitions)) {
    const from = before[field];
    const to = after[field];
    if (from === to || typeof from !== "string") continue;
    const machine = transitions[field]!;
    const next = Object.hasOwn(machine, from) ? machine[from]! : [];
    if (typeof to === "string" && next.includes(to)) continue;
    if (!first)
      first = `${field} may not change from ${from} to ${to === undefined ? "no value" : String(to)}.`;
    details.push({
      field,
      issue: next.length
        ? `may change from ${from} only to ${either(next)}`
        : `may not change from ${from}: it is final`,
    });
  }
  if (details.length)
    throw new BusinessRuleError(
      details.length === 1 ? first : `${details.length} fields may not change so.`,
      details,
    );
}

/**
 * 422 naming each field of `requires` whose value in `values` (the record an action acts on) is
 * not one of those listed; `action` (`cancellations`) names the action in the message.
 */
export function checkRequires(requires: Requirements | undefined, values: Values, action: string): void {
  if (!requires) return;
  const details: ErrorDetail[] = [];
  for (const field of Object.keys(requires)) {
    const allowed = requires[field]!;
    const value = values[field];
    if (allowed.includes(value)) continue;
    details.push({
      field,
      issue: `must be ${either(allowed.map(String))} (it is ${value === undefined ? "absent" : String(value)})`,
    });
  }
  if (details.length)
    throw new BusinessRuleError(
      details.length === 1
        ? `The action ${action} requires ${details[0]!.field} to be ${either(requires[details[0]!.field]!.map(String))}.`
        : `The action ${action} requires other values of ${details.length} fields.`,
      details,
    );
}

/** `a`, `a or b`, `a, b or c`. */
function either(values: readonly string[]): string {
  return values.length < 2
    ? (values[0] ?? "")
    : `${values.slice(0, -1).join(", ")} or ${values[values.length - 1]}`;
}
