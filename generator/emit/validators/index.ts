import type { ApiModel, VersionField, VersionResource } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { propertyKey } from "../shared/code.ts";
import { IMPORTS, runtimeSource, source, withImports } from "../shared/imports.ts";
import { conditionSchema, sortSchema, zodField, zodQuery, type ZodMode } from "../shared/zod.ts";
import { PartMemo } from "../../util/memo.ts";

/** Each `vN/<collection>/validators.ts`, by its resource (kept the same object by a `canon dev` session) and version. */
const resourceFiles = new PartMemo<EmittedFile>();

/** zod validators: per version and resource `vN/<collection>/validators.ts`. */
export const validatorsEmitter: Emitter = {
  name: "validators",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    return model.versions.flatMap((version) =>
      // A function of the version's name and search minimum and the resource alone.
      version.resources.map((resource) =>
        resourceFiles.get(resource, `${version.name} ${version.searchMinLength}`, () => {
          const rendered = context.render("validators", view(version.searchMinLength, resource));
          const sources = [source("zod", { z: "value" }), runtimeSource(context, "index.ts", 2)];
          return styledTs(`${version.name}/${resource.collection}/validators.ts`, withImports(rendered, sources));
        }),
      ),
    );
  },
};

function entries(fields: VersionField[], mode: ZodMode) {
  return fields.filter((f) => f.input).map((f) => ({ key: propertyKey(f.name), schema: zodField(f, mode) }));
}

function view(searchMinLength: number, r: VersionResource) {
  const offset = r.pagination === "offset";
  return {
    searchMinLength,
    header: GENERATED_HEADER,
    imports: IMPORTS,
    symbols: r.symbols,
    singular: r.names.singular,
    offset,
    listPath: r.paths.collection,
    filters: [
      ...r.filters.map((f) => ({ key: propertyKey(f.name), schema: zodQuery(f) })),
      ...r.conditions.map((c) => ({ key: propertyKey(c.param), schema: conditionSchema(c) })),
    ],
    sort: r.sort.length ? sortSchema(r.sort) : null,
    readOnly: r.fields
      .filter((f) => f.readOnly)
      .map((f) => JSON.stringify(f.name))
      .join(", "),
    create: entries(r.fields, "create"),
    replace: r.operations.replace,
    update: entries(r.fields, "update"),
    actions: r.actions.map((a) => ({ symbols: a.symbols, create: entries(a.fields, "create") })),
  };
}
