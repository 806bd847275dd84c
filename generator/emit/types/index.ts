import type { ApiModel, VersionField, VersionResource } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter, type UnitContext } from "../emitter.ts";
import { routeOf } from "../../model/routes.ts";
import { commentText, fieldDoc, propertyKey, tsType } from "../shared/code.ts";
import { defineUnit } from "../../engine.ts";
import { renderedFile } from "../shared/rendered.ts";
import { declaredTypes } from "../shared/local-names.ts";

/** Each `vN/<collection>/types.ts`: a function of the version's name and the resource alone. */
const typesFile = defineUnit("types file", ({ version, resource }: { version: string; resource: VersionResource }, context: UnitContext) =>
  styledTs(`${version}/${resource.symbols.typesModule}`, context.render("types", resourceView(resource))),
);

/**
 * TypeScript types: per version and resource `vN/<collection>/types.ts` (the record as the
 * version shows it, and its request bodies), and `values.ts`, the stored values of every
 * resource under their storage names, which services work with.
 */
export const typesEmitter: Emitter = {
  name: "types",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    const files: EmittedFile[] = [];
    for (const version of model.versions) {
      for (const resource of version.resources) {
        files.push(context.unit(typesFile, { version: version.name, resource }));
      }
    }
    const values = {
      header: GENERATED_HEADER,
      resources: model.storage.map((r) => ({
        values: r.symbols.values,
        collection: r.collection,
        fields: r.fields.map((f) => member(f)),
        actions: r.actionRecords.map((a) => ({
          values: a.symbols.values,
          collection: a.collection,
          targetField: a.targetField,
          fields: a.fields.map((f) => member(f)),
        })),
      })),
    };
    files.push(renderedFile(context, "values.ts", "values", values, null));
    return files;
  },
};

function member(field: VersionField, optional = field.optional, shadowed?: ReadonlySet<string>) {
  return { key: propertyKey(field.name), type: tsType(field, shadowed), optional, doc: fieldDoc(field) };
}

function resourceView(r: VersionResource) {
  const inputs = r.fields.filter((f) => f.input);
  // The file declares the user's names as they are: TypeScript's `Record` of a map field is
  // written `globalThis.Record` in the types of a collection `records`.
  const shadowed = new Set(declaredTypes(r));
  return {
    header: GENERATED_HEADER,
    description: r.description && commentText(r.description),
    symbols: r.symbols,
    replace: r.operations.replace,
    record: r.fields.filter((f) => f.output).map((f) => member(f, f.optional, shadowed)),
    create: inputs.map((f) => member(f, !f.requiredInput, shadowed)),
    update: inputs.map((f) => member(f, f.optional, shadowed)),
    actions: r.actions.map((a) => ({
      symbols: a.symbols,
      description: `${a.names.one} of ${r.names.one}`,
      targetSingular: r.names.singular,
      targetField: a.targetField,
      path: routeOf(r, "action", a.name).path,
      record: a.fields.filter((f) => f.output).map((f) => member(f, f.optional, shadowed)),
      create: a.fields.filter((f) => f.input).map((f) => member(f, !f.requiredInput, shadowed)),
    })),
  };
}
