import type { ApiModel, VersionField, VersionResource } from "../../model/types.ts";
import { camelCase } from "../../util/names.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { propertyKey } from "../shared/code.ts";
import { zodField, zodQuery, type ZodMode } from "./zod.ts";

/** zod validators: per version and resource `vN/<collection>/validators.ts`. */
export const validatorsEmitter: Emitter = {
  name: "validators",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    return model.versions.flatMap((version) =>
      version.resources.map((resource) => styledTs(`${version.name}/${resource.collection}/validators.ts`, context.render("validators", view(version.name, resource)))),
    );
  },
};

function entries(fields: VersionField[], mode: ZodMode) {
  return fields.filter((f) => f.input).map((f) => ({ key: propertyKey(f.name), schema: zodField(f, mode) }));
}

function view(version: string, r: VersionResource) {
  const offset = r.pagination === "offset";
  const filterKinds = new Set(r.filters.map((f) => zodQuery(f)));
  const runtime = ["cursorParam", "pageSizeParam", "searchParam", "uuidSchema"];
  if (offset) runtime.push("pageParam");
  for (const name of ["queryBoolean", "queryInteger", "queryNumber"]) if (filterKinds.has(name)) runtime.push(name);
  return {
    header: GENERATED_HEADER,
    runtimeImports: runtime.sort().join(", "),
    singular: r.names.singular,
    camel: r.names.camel,
    offset,
    listPath: `/${version}/${r.collection}`,
    filters: r.filters.map((f) => ({ key: propertyKey(f.name), schema: zodQuery(f) })),
    readOnly: r.fields
      .filter((f) => f.readOnly)
      .map((f) => JSON.stringify(f.name))
      .join(", "),
    create: entries(r.fields, "create"),
    replace: r.operations.replace,
    update: entries(r.fields, "update"),
    actions: r.actions.map((a) => ({ camel: camelCase(`${r.names.singular}-${a.singular}`), create: entries(a.fields, "create") })),
  };
}
