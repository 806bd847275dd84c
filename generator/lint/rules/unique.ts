import type { FieldType } from "../../model/types.ts";
import { closest } from "../../util/suggest.ts";
import { q, type LintContext } from "../context.ts";

/** The types a composite unique constraint may hold: scalars that compare by value (or normalized text). */
export const UNIQUE_TOGETHER_TYPES: ReadonlySet<FieldType> = new Set(["string", "integer", "number", "boolean", "uuid", "date", "datetime", "enum", "decimal"]);

const SERVER_FIELDS = new Set(["id", "created_at", "updated_at"]);

/**
 * unique-together: each list of the resource-level `unique` (SPEC §12.3) names two or more
 * declared scalar fields of the resource, each once, none `removed` in some version; no list
 * repeats another (in any order) or holds all the fields of another, and none holds a field
 * that is `unique: true` on its own (that field alone already makes the list unique).
 */
export function uniqueRules(ctx: LintContext): void {
  for (const r of ctx.defs.resources) {
    const sets: Array<{ index: number; fields: Set<string> }> = [];
    r.uniqueTogether.forEach((list, i) => {
      const report = (at: ReturnType<typeof r.at>, message: string, fix: string) => ctx.report("unique-together", at, message, fix);
      const shown = `[${list.join(", ")}]`;
      let valid = true;
      const seen = new Set<string>();
      list.forEach((name, j) => {
        const at = r.at("unique", i, j);
        if (seen.has(name)) {
          valid = false;
          return report(at, `unique ${shown} lists ${q(name)} twice`, "list each field once");
        }
        seen.add(name);
        const field = r.fields.find((f) => f.name === name);
        if (!field) {
          valid = false;
          const renamed = r.fields.find((f) => f.renamed?.from === name);
          if (renamed) return report(at, `unique ${shown} names ${q(name)}, the old name of ${q(renamed.name)}`, `use the current name ${q(renamed.name)}`);
          if (SERVER_FIELDS.has(name)) {
            return report(at, `unique ${shown} names ${q(name)}, which canon sets on every record`, `remove ${q(name)}; name fields declared under fields`);
          }
          const guess = closest(name, r.fields.map((f) => f.name));
          return report(
            at,
            `unique ${shown} names ${q(name)}, which is not a field of ${r.collection}`,
            guess ? `did you mean ${q(guess)}?` : `name fields of ${r.collection}: ${r.fields.map((f) => f.name).join(", ") || "(no fields)"}`,
          );
        }
        if (!UNIQUE_TOGETHER_TYPES.has(field.type)) {
          valid = false;
          return report(at, `unique ${shown} names ${q(name)} of type ${field.type}, whose values are not compared as one value`, `name only ${[...UNIQUE_TOGETHER_TYPES].join(", ")} fields`);
        }
        if (field.writeOnly) {
          valid = false;
          return report(at, `unique ${shown} names the write_only field ${q(name)}: a 409 would tell a client that another record holds a value that is never returned`, `remove ${q(name)} from the list, or make the field readable`);
        }
        if (field.removed) {
          valid = false;
          return report(
            at,
            `unique ${shown} names ${q(name)}, which is removed in ${field.removed}: the versions from ${field.removed} on could not see why a write is refused`,
            `remove ${q(name)} from the list, or keep the field in every version`,
          );
        }
      });
      if (list.length < 2) {
        return report(
          r.at("unique", i),
          list.length ? `unique ${shown} names one field: a list is for fields unique together` : "unique has an empty list",
          list.length ? `write \`unique: true\` on ${q(list[0]!)} instead, or add the fields it is unique with` : "remove the empty list",
        );
      }
      if (!valid) return;
      const alone = list.find((name) => r.fields.find((f) => f.name === name)?.unique);
      if (alone) {
        return report(
          r.at("unique", i),
          `unique ${shown} holds ${q(alone)}, which is unique on its own: no two records can repeat the list anyway`,
          `remove the list, or remove \`unique: true\` from ${q(alone)}`,
        );
      }
      const fields = new Set(list);
      const same = sets.find((s) => s.fields.size === fields.size && [...s.fields].every((f) => fields.has(f)));
      if (same) return report(r.at("unique", i), `unique ${shown} repeats the list at position ${same.index + 1}`, "remove one of the two");
      const within = sets.find((s) => [...s.fields].every((f) => fields.has(f)));
      if (within) {
        return report(
          r.at("unique", i),
          `unique ${shown} holds every field of [${r.uniqueTogether[within.index]!.join(", ")}]: it is unique whenever that list is`,
          "remove the longer list",
        );
      }
      const wider = sets.find((s) => [...fields].every((f) => s.fields.has(f)));
      if (wider) {
        ctx.report(
          "unique-together",
          r.at("unique", wider.index),
          `unique [${r.uniqueTogether[wider.index]!.join(", ")}] holds every field of ${shown}: it is unique whenever that list is`,
          "remove the longer list",
        );
      }
      sets.push({ index: i, fields });
    });
  }
}
