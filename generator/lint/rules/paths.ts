import type { SourceLocation } from "../../diagnostics/diagnostic.ts";
import { q, walkFields, type LintContext } from "../context.ts";
import { collectionNameProblems } from "../naming.ts";
import { singularOf } from "../../util/names.ts";

const wellFormed = /^[a-z]+(-[a-z]+)*$/;

/**
 * path-lowercase, path-plural, path-no-verb, path-nesting: every name that becomes a path
 * segment (collections, parents, references, actions) follows SPEC §2.3; no generated path
 * nests more than 2 collection levels.
 */
export function pathRules(ctx: LintContext): void {
  const check = (name: string, at: SourceLocation, kind: "collection" | "action" = "collection") => {
    for (const p of collectionNameProblems(name, kind)) ctx.report(p.rule, at, p.message, p.fix);
  };
  for (const r of ctx.defs.resources) {
    check(r.collection, r.at("resource"));
    // An explicit singular names types and event types; it follows the same spelling.
    if (!wellFormed.test(r.singular) && wellFormed.test(r.collection)) {
      ctx.report(
        "path-lowercase",
        r.at("singular"),
        `singular ${q(r.singular)} must be lowercase letters, words joined by single hyphens (it names types and event types)`,
        `write it like the collection, for example ${q(singularOf(r.collection))}`,
      );
    }
    // A parent or a reference that names a defined collection is checked where it is defined;
    // one that names none is also reported by reference-unknown.
    if (r.parent !== undefined && !ctx.collections.has(r.parent)) check(r.parent, r.at("parent"));
    for (const { field } of walkFields(r)) {
      if (field.references !== undefined && !ctx.collections.has(field.references)) check(field.references, field.at("references"));
    }
    for (const a of r.actions) check(a.name, a.at(), "action");
  }
  nesting(ctx);
}

/** The collection levels of every path canon generates for a resource; reports one deeper than 2. */
function nesting(ctx: LintContext): void {
  const levels = (name: string) => name.split("/").length;
  for (const r of ctx.defs.resources) {
    const names = [r.collection, ...(r.parent ? [r.parent] : []), ...r.actions.map((a) => a.name)];
    // A name with a slash is reported by collectionNameProblems already.
    if (names.some((n) => n.includes("/"))) continue;
    const paths: Array<{ segments: string[]; where: SourceLocation }> = [{ segments: [r.collection], where: r.at("resource") }];
    if (r.parent) paths.push({ segments: [r.parent, r.collection], where: r.at("parent") });
    for (const a of r.actions) paths.push({ segments: [r.collection, a.name], where: a.at() });
    for (const p of paths) {
      const depth = p.segments.reduce((n, s) => n + levels(s), 0);
      if (depth > 2) {
        ctx.report(
          "path-nesting",
          p.where,
          `the path /vN/${p.segments.join("/{id}/")} nests ${depth} collection levels; at most 2 are allowed`,
          "nest a collection only directly under its parent, and keep actions on the top-level collection",
        );
      }
    }
  }
}
