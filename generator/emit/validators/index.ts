import type { ApiModel, VersionField, VersionResource } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter, type UnitContext } from "../emitter.ts";
import { propertyKey } from "../shared/code.ts";
import { IMPORTS, runtimeSource, source, withImports } from "../shared/imports.ts";
import { conditionSchema, sortSchema, zodField, zodQuery, type ZodMode } from "../shared/zod.ts";
import { defineUnit } from "../../engine.ts";

/** Each `vN/<collection>/validators.ts`: a function of the version's name and search minimum and the resource alone. */
const validatorsFile = defineUnit(
  "validators file",
  ({ version, searchMinLength, resource }: { version: string; searchMinLength: number; resource: VersionResource }, context: UnitContext) => {
    const rendered = context.render("validators", view(searchMinLength, resource));
    const sources = [source("zod", { z: "value" }), runtimeSource(context, "index.ts", 2)];
    return styledTs(`${version}/${resource.collection}/validators.ts`, withImports(rendered, sources));
  },
);

/** zod validators: per version and resource `vN/<collection>/validators.ts`. */
export const validatorsEmitter: Emitter = {
  name: "validators",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    return model.versions.flatMap((version) =>
      version.resources.map((resource) => context.unit(validatorsFile, { version: version.name, searchMinLength: version.searchMinLength, resource })),
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
