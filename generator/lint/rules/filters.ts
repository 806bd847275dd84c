import { FILTER_TYPES, orderingOf, TIMESTAMPS } from "../../model/lists.ts";
import { closest } from "../../util/suggest.ts";
import type { ResourceDef } from "../../model/types.ts";
import { presentAt, q, resourceVersions, type LintContext } from "../context.ts";

/**
 * filter-field: every `filters` and `search` entry names a declared field of a kind it can
 * match; a uuid field only as a filter of `[null]` (identifiers go in paths; relationships use
 * parent). list-keys (warning): in every version with a text field, `search` names one that
 * version has. sort-field: every `sort` entry names a field whose values have an order.
 */
/** The query parameters every list takes besides its filters: a filter of the same name would be read as both. */
const LIST_PARAMETERS = new Set(["limit", "cursor", "q", "sort", "page", "per_page"]);

export function filterRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    for (const key of ["search", "filters", "sort"] as const) {
      const rule = key === "sort" ? "sort-field" : "filter-field";
      const seen = new Set<string>();
      r[key].forEach((name, i) => {
        const at = r.at(key, i);
        const report = (message: string, fix: string) => ctx.report(rule, at, message, fix);
        if (seen.has(name)) return report(`${key} lists ${q(name)} twice`, "list each field once");
        seen.add(name);
        // The name in every version: a renamed field is filtered under its old name before `renamed.in`.
        const listParameter = [name, r.fields.find((f) => f.name === name)?.renamed?.from].find((n) => n !== undefined && LIST_PARAMETERS.has(n));
        if (key === "filters" && listParameter !== undefined) {
          return report(
            `filters names ${q(name)}${listParameter === name ? "" : ` (called ${q(listParameter)} in earlier versions)`}, but ?${listParameter}= is a parameter of every list: the query could not tell the filter from it`,
            `remove ${q(name)} from filters, or filter on a field with another name (such as ${q(`${listParameter}_number`)})`,
          );
        }
        const field = r.fields.find((f) => f.name === name);
        if (!field) {
          const renamed = r.fields.find((f) => f.renamed?.from === name);
          if (renamed) return report(`${key} names ${q(name)}, the old name of ${q(renamed.name)}`, `use the current name ${q(renamed.name)}`);
          if (name === "id") {
            return key === "sort"
              ? report(`sort names "id": every sorted list already ends with id, which breaks ties`, `remove it; without sort a list is in ascending id order`)
              : report(`${key} names "id": identifiers are only in paths`, `remove it; read one record with GET /vN/${r.collection}/{id}`);
          }
          // created_at and updated_at: filtered by range and sorted by, never searched.
          if (TIMESTAMPS.has(name) && key !== "search") return;
          if (TIMESTAMPS.has(name)) return report(`search names ${q(name)}: search matches text, and ${q(name)} is a date-time`, `move ${q(name)} to filters (?${name}[gte]=…)`);
          const guess = closest(name, [...r.fields.map((f) => f.name), ...(key === "search" ? [] : TIMESTAMPS)]);
          return report(
            `${key} names ${q(name)}, which is not a field of ${r.collection}`,
            guess ? `did you mean ${q(guess)}?` : `name one of: ${r.fields.map((f) => f.name).join(", ") || "(no fields)"}`,
          );
        }
        if (field.writeOnly) {
          return report(`${key} names the write_only field ${q(name)}: ${key === "sort" ? "ordering" : "matching"} on it would reveal a value that is never returned`, `remove ${q(name)} from ${key}`);
        }
        if (key === "sort") {
          if (field.type === "uuid") return report(`sort names the uuid field ${q(name)}: ids have no meaningful order`, `sort by a field with an order, or by created_at`);
          if (!orderingOf(field.type)) return report(`sort names ${q(name)} of type ${field.type}, whose values have no order`, `sort only on string, enum, integer, number, boolean, date or datetime fields, or created_at/updated_at`);
          return;
        }
        if (field.type === "uuid") {
          if (key === "filters" && (field.optional || field.nullable)) return; // [null] only: "unassigned"
          return report(
            key === "filters"
              ? `filters names the uuid field ${q(name)}, which is never null: a uuid filter only asks ${q(`${name}[null]`)}, and identifiers stay out of query strings`
              : `search names the uuid field ${q(name)}: identifiers are only in paths, never in the query string`,
            field.references
              ? `remove it; to list ${r.collection} of one ${field.references} record use parent: ${field.references} (GET /vN/${field.references}/{id}/${r.collection})`
              : "remove it; use parent for relationships",
          );
        }
        if (key === "search" && field.type !== "string") {
          return report(`search matches text, but ${q(name)} is type ${field.type}`, FILTER_TYPES.has(field.type) ? `move ${q(name)} to filters` : `search only string fields`);
        }
        const withComma = key === "filters" && field.type === "enum" ? field.values?.find((v) => typeof v === "string" && v.includes(",")) : undefined;
        if (withComma !== undefined) {
          return report(
            `filters names the enum ${q(name)}, whose value ${q(withComma)} holds a comma: ?${name}[in]= separates its values with commas, so it could not ask for that one`,
            `give the value no comma (such as ${q(withComma.replace(/,\s*/g, "-"))})`,
          );
        }
        if (key === "filters" && !FILTER_TYPES.has(field.type)) {
          return report(
            `filters match a value of a scalar field, but ${q(name)} is type ${field.type}`,
            `filter only on ${[...FILTER_TYPES].filter((t) => t !== "uuid").join(", ")} fields, optional uuid fields (for [null]), created_at or updated_at`,
          );
        }
      });
    }
    searchInEveryVersion(ctx, r);
    unlistedKeys(ctx, r);
  }
}

/**
 * list-keys (a warning: a definition that generated before still does): a version that has none of the fields `search` names (each removed before it, or
 * added after it) searches nothing: its `?q=` would answer every list with no record, while its
 * lists still take `q`. Said where that version has a string field `search` could name (without
 * one, `?q=` matches nothing whatever `search` says, as on any resource without text). Only when
 * every entry is a searchable field: the entries' own problems are reported above.
 */
function searchInEveryVersion(ctx: LintContext, r: ResourceDef): void {
  const searchable = (f: ResourceDef["fields"][number]) => f.type === "string" && !f.writeOnly;
  const named = r.search.map((name) => r.fields.find((f) => f.name === name));
  if (named.length === 0 || !named.every((f) => f !== undefined && searchable(f))) return;
  const fields = named as ResourceDef["fields"];
  const lists = r.operations.includes("list") || r.parent !== undefined || r.fields.some((f) => f.listUnder) || r.exportable;
  if (!lists) return; // list-keys says that search does nothing at all
  const texts = (i: number) => r.fields.filter((f) => searchable(f) && presentAt(ctx, i, f.added, f.removed));
  const bare = resourceVersions(ctx, r).filter((i) => !fields.some((f) => presentAt(ctx, i, f.added, f.removed)) && texts(i).length > 0);
  if (bare.length === 0) return;
  const names = bare.map((i) => ctx.defs.versions[i]!.name);
  const listed = names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : names[0]!;
  const why = fields.map((f) => {
    const later = f.added !== undefined && bare.some((i) => i < (ctx.versionIndex(f.added) ?? 0));
    const gone = f.removed !== undefined && bare.some((i) => i >= (ctx.versionIndex(f.removed) ?? Infinity));
    return `${q(f.name)} is ${[later ? `added in ${f.added}` : null, gone ? `removed in ${f.removed}` : null].filter(Boolean).join(" and ")}`;
  });
  const candidates = texts(bare[0]!).filter((f) => bare.every((i) => presentAt(ctx, i, f.added, f.removed)));
  ctx.report(
    "list-keys",
    r.at("search"),
    `search names no field ${listed} ${names.length > 1 ? "have" : "has"} (${why.join(", ")}): in ${listed}, ?q= on ${r.collection} would match no record`,
    candidates.length > 0
      ? `add to search a string field ${listed} ${names.length > 1 ? "have" : "has"}, such as ${q(candidates[0]!.name)} (every version that has it then matches it)`
      : `add to search, for each of ${listed}, a string field it has (${names.map((n, j) => `${n}: ${q(texts(bare[j]!)[0]!.name)}`).join(", ")})`,
  );
}

/**
 * list-keys: `sort`, `filters`, `search` and `pagination: offset` shape a resource's lists (its
 * own, a child list under its parent, a `list_under` list) and, but for pagination, its exports.
 * On a resource with none of them they would be accepted and do nothing: said, with the fix.
 */
function unlistedKeys(ctx: LintContext, r: ResourceDef): void {
  // `search: []` reads as "no search", but `?q=` is on every list: it then matches every returned string field.
  if (r.searchEmpty) {
    ctx.report(
      "list-keys",
      r.at("search"),
      `search lists no field, so it does nothing: ?q= (which every list takes) matches every returned string field of ${r.collection}, as without search`,
      "remove search, or name the string fields ?q= should match",
    );
  }
  const lists = r.operations.includes("list") || r.parent !== undefined || r.fields.some((f) => f.listUnder);
  if (lists) return;
  const keys = [
    ...(["sort", "filters", "search"] as const).filter((key) => r[key].length > 0 && !r.exportable),
    ...(r.pagination === "offset" ? (["pagination"] as const) : []),
  ];
  for (const key of keys) {
    ctx.report(
      "list-keys",
      r.at(key),
      `${key} on ${r.collection} is read by its lists${key === "pagination" ? "" : " and exports"} only, and ${r.collection} has none (no list operation, no parent, no list_under field${key === "pagination" ? "" : ", no export"})`,
      `add list to operations (or the list that was meant), or remove ${key}`,
    );
  }
}
