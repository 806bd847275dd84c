import type { FieldType } from "../../model/types.ts";
import { closest } from "../../util/suggest.ts";
import { q, type LintContext } from "../context.ts";

/**
 * filter-field: every `filters` and `search` entry names a declared field of a kind it can
 * match, and never a uuid field (identifiers go in paths; relationships use parent).
 */
const filterTypes: ReadonlySet<FieldType> = new Set(["string", "integer", "number", "boolean", "enum", "date"]);
const provided = new Set(["id", "created_at", "updated_at"]);

export function filterRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    for (const key of ["search", "filters"] as const) {
      const seen = new Set<string>();
      r[key].forEach((name, i) => {
        const at = r.at(key, i);
        const report = (message: string, fix: string) => ctx.report("filter-field", at, message, fix);
        if (seen.has(name)) return report(`${key} lists ${q(name)} twice`, "list each field once");
        seen.add(name);
        const field = r.fields.find((f) => f.name === name);
        if (!field) {
          const renamed = r.fields.find((f) => f.renamed?.from === name);
          if (renamed) return report(`${key} names ${q(name)}, the old name of ${q(renamed.name)}`, `use the current name ${q(renamed.name)}`);
          if (name === "id") return report(`${key} names "id": identifiers are only in paths`, `remove it; read one record with GET /vN/${r.collection}/{id}`);
          if (provided.has(name)) return report(`${key} names ${q(name)}, which canon does not offer as a ${key === "search" ? "search" : "filter"} field`, `remove ${q(name)}`);
          const guess = closest(name, r.fields.map((f) => f.name));
          return report(
            `${key} names ${q(name)}, which is not a field of ${r.collection}`,
            guess ? `did you mean ${q(guess)}?` : `name one of: ${r.fields.map((f) => f.name).join(", ") || "(no fields)"}`,
          );
        }
        if (field.type === "uuid") {
          return report(
            `${key} names the uuid field ${q(name)}: identifiers are only in paths, never in the query string`,
            field.references
              ? `remove it; to list ${r.collection} of one ${field.references} record use parent: ${field.references} (GET /vN/${field.references}/{id}/${r.collection})`
              : "remove it; use parent for relationships",
          );
        }
        if (field.writeOnly) {
          return report(`${key} names the write_only field ${q(name)}: matching on it would reveal a value that is never returned`, `remove ${q(name)} from ${key}`);
        }
        if (key === "search" && field.type !== "string") {
          return report(`search matches text, but ${q(name)} is type ${field.type}`, filterTypes.has(field.type) ? `move ${q(name)} to filters` : `search only string fields`);
        }
        if (key === "filters" && !filterTypes.has(field.type)) {
          return report(`filters match one exact value, but ${q(name)} is type ${field.type}`, `filter only on ${[...filterTypes].join(", ")} fields`);
        }
      });
    }
  }
}
