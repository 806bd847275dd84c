import { compareDecimals, decimalProblem } from "../../../runtime/decimal.ts";
import { withArticle } from "../../model/names.ts";
import type { ActionDef, FieldDef, ResourceDef } from "../../model/types.ts";
import { q, walkFields, type LintContext } from "../context.ts";

/**
 * The business rules a definition declares (SPEC §12.5):
 *  - transitions: on a resource's own enum field, not write_only (a 422 names the value the record
 *    holds); every key and target one of its values, no
 *    target twice; a target that is the value itself is a warning (transition-itself: keeping a
 *    value is never a transition, and always allowed);
 *  - action-requires: `requires` names enum, boolean or string fields of the resource, none
 *    write_only (a 422 names the value the record holds), each with
 *    values the field can hold, each once;
 *  - action-sets: `sets` names fields of the resource (read-only ones too), each with a value the
 *    field can hold, or `{ from }` an action field of a compatible type.
 */
export function businessRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    for (const { field, place, path } of walkFields(r)) {
      if (field.transitions !== undefined) transitionRules(ctx, field, place === "resource", path);
    }
    for (const action of r.actions) {
      requiresRules(ctx, r, action);
      setsRules(ctx, r, action);
    }
  }
}

function transitionRules(ctx: LintContext, field: FieldDef, own: boolean, path: string): void {
  const report = (at: PropertyKey[], message: string, fix: string) =>
    ctx.report("transitions", field.at("transitions", ...at), message, fix);
  if (!own || field.type !== "enum") {
    report(
      [],
      `transitions on ${q(path)}: only an enum field of the resource itself has a state machine`,
      own
        ? `make ${q(field.name)} type enum with values, or remove transitions`
        : "remove transitions, or move the state to an enum field of the resource",
    );
    return;
  }
  if (field.writeOnly) {
    report(
      [],
      `transitions on the write_only field ${q(field.name)}: a refused change answers 422 naming the value the record holds, which is never returned`,
      `remove transitions, or remove write_only from ${q(field.name)}`,
    );
  }
  const values = field.values ?? [];
  for (const [from, targets] of Object.entries(field.transitions ?? {})) {
    if (!values.includes(from)) {
      report(
        [from],
        `transitions of ${q(field.name)} start from ${q(from)}, which is not one of its values`,
        `use one of ${values.join(", ")}, or add ${q(from)} to values`,
      );
    }
    const seen = new Set<string>();
    targets.forEach((to, i) => {
      if (!values.includes(to)) {
        report(
          [from, i],
          `transitions of ${q(field.name)}: ${q(from)} leads to ${q(to)}, which is not one of its values`,
          `use one of ${values.join(", ")}, or add ${q(to)} to values`,
        );
      } else if (to === from) {
        // Harmless (keeping a value is always allowed), so a warning: the definition still generates.
        ctx.report(
          "transition-itself",
          field.at("transitions", from, i),
          `transitions of ${q(field.name)}: ${q(from)} lists itself; keeping a value is never a transition, so it is always allowed`,
          `remove ${q(to)} from the list of ${q(from)}`,
        );
      } else if (seen.has(to)) {
        report(
          [from, i],
          `transitions of ${q(field.name)}: ${q(from)} lists ${q(to)} twice`,
          `list ${q(to)} once`,
        );
      }
      seen.add(to);
    });
  }
}

/** The kinds of value `requires` and `sets` may give a field, with whether `value` is one. */
function fits(field: FieldDef, value: unknown): boolean {
  if (value === null) return field.nullable;
  switch (field.type) {
    case "enum":
      return typeof value === "string" && (field.values ?? []).includes(value);
    case "boolean":
      return typeof value === "boolean";
    case "string":
      return (
        typeof value === "string" &&
        (field.minLength === undefined || [...value].length >= field.minLength) &&
        (field.maxLength === undefined || [...value].length <= field.maxLength) &&
        (field.pattern === undefined || safeTest(field.pattern, value)) &&
        field.format === undefined
      );
    case "decimal": {
      const [precision, scale] = [field.precision ?? 0, field.scale ?? 0];
      return (
        typeof value === "string" &&
        decimalProblem(value, precision, scale) === undefined &&
        (field.decimalMinimum === undefined || compareDecimals(value, field.decimalMinimum, scale) >= 0) &&
        (field.decimalMaximum === undefined || compareDecimals(value, field.decimalMaximum, scale) <= 0)
      );
    }
    case "integer":
    case "number":
      return (
        typeof value === "number" &&
        (field.type === "number" || Number.isSafeInteger(value)) &&
        (field.minimum === undefined || value >= field.minimum) &&
        (field.maximum === undefined || value <= field.maximum)
      );
    default:
      return false;
  }
}

function safeTest(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, "u").test(value);
  } catch {
    return false;
  }
}

function requiresRules(ctx: LintContext, r: ResourceDef, action: ActionDef): void {
  for (const { field: name, values } of action.requires) {
    const report = (at: PropertyKey[], message: string, fix: string) =>
      ctx.report("action-requires", action.at("requires", name, ...at), message, fix);
    const field = r.fields.find((f) => f.name === name);
    if (!field || !["enum", "boolean", "string"].includes(field.type)) {
      const candidates = r.fields
        .filter((f) => ["enum", "boolean", "string"].includes(f.type))
        .map((f) => f.name);
      report(
        [],
        field
          ? `${action.name} requires ${q(name)}, ${field.type === "integer" || field.type === "object" || field.type === "array" ? "an" : "a"} ${field.type} field: only enum, boolean and string fields can be required`
          : `${action.name} requires ${q(name)}, which is not a field of ${r.collection}`,
        candidates.length ? `require one of ${candidates.join(", ")}` : "remove it from requires",
      );
      continue;
    }
    if (field.writeOnly) {
      report(
        [],
        `${action.name} requires the write_only field ${q(name)}: a refused action answers 422 naming the value the record holds, which is never returned`,
        `remove ${q(name)} from requires, or remove write_only from it`,
      );
      continue;
    }
    const seen: unknown[] = [];
    values.forEach((value, i) => {
      if (!fits(field, value)) {
        report(
          [i],
          `${action.name} requires ${q(name)} to be ${q(value)}, which it cannot hold`,
          field.type === "enum"
            ? `use one of ${(field.values ?? []).join(", ")}`
            : `use a ${field.type} value of ${q(name)}`,
        );
      } else if (seen.includes(value)) {
        report([i], `${action.name} requires ${q(name)} to be ${q(value)} twice`, `list ${q(value)} once`);
      }
      seen.push(value);
    });
  }
}

function setsRules(ctx: LintContext, r: ResourceDef, action: ActionDef): void {
  for (const set of action.sets) {
    const report = (at: PropertyKey[], message: string, fix: string) =>
      ctx.report("action-sets", action.at("sets", set.field, ...at), message, fix);
    const field = r.fields.find((f) => f.name === set.field);
    if (!field) {
      report(
        [],
        `${action.name} sets ${q(set.field)}, which is not a field of ${r.collection}`,
        `set one of ${r.fields.map((f) => f.name).join(", ")}, or add ${q(set.field)} to fields`,
      );
      continue;
    }
    if (set.from === undefined) {
      if (!fits(field, set.value)) {
        report(
          [],
          `${action.name} sets ${q(set.field)} to ${q(set.value)}, which it cannot hold`,
          field.type === "enum"
            ? `use one of ${(field.values ?? []).join(", ")}`
            : ["boolean", "string", "integer", "number"].includes(field.type)
              ? `use a ${field.type} value that meets the field's constraints`
              : field.type === "decimal"
                ? `use a decimal string of at most ${field.precision ?? 0} digits, ${field.scale ?? 0} after the point, within the field's bounds ("1.50", never a YAML number)`
              : `set it with { from: <action field> }: a ${field.type} field takes no constant here`,
        );
        continue;
      }
      const stuck = neverReached(field, action, set.value);
      if (stuck) {
        report(
          [],
          `${action.name} requires ${q(set.field)} to be ${stuck.map(q).join(" or ")} and sets it to ${q(set.value)}, which its transitions never allow from ${stuck.length === 1 ? "that value" : "any of them"}: the action could never succeed`,
          `list ${q(set.value)} under ${stuck.map(q).join(" or ")} in the transitions of ${q(set.field)}, or require a value that may move to ${q(set.value)}`,
        );
      }
      continue;
    }
    const source = action.fields.find((f) => f.name === set.from);
    if (!source) {
      report(
        ["from"],
        `${action.name} sets ${q(set.field)} from ${q(set.from)}, which is not a field of the action`,
        `add ${q(set.from)} to the action's fields, or name one of them`,
      );
      continue;
    }
    const problem = incompatibility(source, field);
    if (problem)
      report(
        ["from"],
        `${action.name} sets ${q(set.field)} from ${q(set.from)}: ${problem}`,
        `give ${q(set.from)} the type and constraints of ${q(set.field)}`,
      );
  }
}

/**
 * The values an action requires of a field with transitions when none of them may move to the
 * value the action sets (keeping the value is no transition; a value that is no key is final),
 * so that the action is refused on every record; null when one may, or nothing is required.
 */
function neverReached(field: FieldDef, action: ActionDef, value: unknown): string[] | null {
  const machine = field.transitions;
  const required = action.requires.find((r) => r.field === field.name)?.values;
  if (!machine || !required?.length) return null;
  const allows = (from: unknown) => from === value || (typeof from === "string" && (machine[from] ?? []).includes(value as string));
  return required.some(allows) ? null : required.map(String);
}

/** Why the values of action field `from` may not all be values of `to`, or null when they may. */
function incompatibility(from: FieldDef, to: FieldDef): string | null {
  const numeric = (t: string) => t === "integer" || t === "number";
  if (from.type !== to.type && !(from.type === "integer" && to.type === "number"))
    return `${withArticle(from.type)} cannot fill ${withArticle(to.type)}`;
  if (from.nullable && !to.nullable) return `it may be null and ${q(to.name)} may not`;
  if (from.type === "enum" && (from.values ?? []).some((v) => !(to.values ?? []).includes(v)))
    return `it has values ${q(to.name)} lacks`;
  if (from.type === "uuid" && to.references && from.references !== to.references)
    return `it names ${from.references ?? "no collection"}, ${q(to.name)} names ${to.references}`;
  if (from.type === "string") {
    if (to.maxLength !== undefined && (from.maxLength === undefined || from.maxLength > to.maxLength))
      return `it may be longer than ${to.maxLength} characters`;
    if (to.minLength !== undefined && (from.minLength ?? 0) < to.minLength)
      return `it may be shorter than ${to.minLength} characters`;
    if (
      (to.pattern !== undefined && from.pattern !== to.pattern) ||
      (to.format !== undefined && from.format !== to.format)
    )
      return `its pattern or format is not that of ${q(to.name)}`;
  }
  if (numeric(from.type)) {
    if (to.minimum !== undefined && (from.minimum === undefined || from.minimum < to.minimum))
      return `it may be below ${to.minimum}`;
    if (to.maximum !== undefined && (from.maximum === undefined || from.maximum > to.maximum))
      return `it may be above ${to.maximum}`;
  }
  if (from.type === "decimal") return decimalIncompatibility(from, to);
  // Nullability was compared above: `to` may be nullable where `from` is not.
  if (
    ["array", "object", "map"].includes(from.type) &&
    JSON.stringify(shape(from, false)) !== JSON.stringify(shape(to, false))
  )
    return `its ${from.type} is not shaped as ${q(to.name)}'s (its items, fields, limits or references differ)`;
  return null;
}

/**
 * Why a decimal action field's values may not all be values of decimal field `to`: another scale
 * (a value would be written with other fraction digits), more digits before the point, or a range
 * wider than `to`'s bounds (each side's bound as declared, else the largest value its precision holds).
 */
function decimalIncompatibility(from: FieldDef, to: FieldDef): string | null {
  const [fp, fs, tp, ts] = [from.precision ?? 0, from.scale ?? 0, to.precision ?? 0, to.scale ?? 0];
  if (fs !== ts) return `its scale is ${fs}, ${q(to.name)}'s is ${ts}`;
  if (fp - fs > tp - ts) return `it may have ${fp - fs} digits before the point, ${q(to.name)} ${tp - ts}`;
  const largest = `${"9".repeat(fp - fs) || "0"}${fs > 0 ? `.${"9".repeat(fs)}` : ""}`;
  const lowest = from.decimalMinimum ?? `-${largest}`;
  const highest = from.decimalMaximum ?? largest;
  if (to.decimalMinimum !== undefined && compareDecimals(lowest, to.decimalMinimum, ts) < 0)
    return `it may be below ${to.decimalMinimum}`;
  if (to.decimalMaximum !== undefined && compareDecimals(highest, to.decimalMaximum, ts) > 0)
    return `it may be above ${to.decimalMaximum}`;
  return null;
}

/** What a field's values are, without its name, flags of its record and location. */
function shape(f: FieldDef, nullable = true): unknown {
  return {
    type: f.type,
    values: f.values,
    min: [
      f.minimum,
      f.maximum,
      f.minLength,
      f.maxLength,
      f.pattern,
      f.format,
      f.precision,
      f.scale,
      f.decimalMinimum,
      f.decimalMaximum,
      f.maxItems,
      f.references,
    ],
    ...(nullable ? { nullable: f.nullable } : {}),
    items: f.items && shape(f.items),
    fields: f.fields?.map((s) => [s.name, s.optional, shape(s)]),
  };
}
