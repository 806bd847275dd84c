import type { ApiModel } from "../../model/types.ts";
import { GENERATED_HEADER, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { IMPORTS, runtimeSource } from "../shared/imports.ts";
import { localSymbols, typeAliases, typesSource } from "../shared/local-names.ts";
import { renderedFile } from "../shared/rendered.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../../runtime/pages.ts";

/** Pagination types: `vN/pagination.ts`, the page type of every list of the version. */
export const paginationEmitter: Emitter = {
  name: "pagination",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    return model.versions.map((version) => {
      const aliases = typeAliases(version, context.canonTypeNames());
      const view = {
        header: GENERATED_HEADER,
        imports: IMPORTS,
        version: version.name,
        defaultSize: DEFAULT_PAGE_SIZE,
        maxSize: MAX_PAGE_SIZE,
        resources: version.resources.map((r) => ({
          collection: r.collection,
          symbols: localSymbols(aliases, r.symbols),
          offset: r.pagination === "offset",
        })),
      };
      const sources = [
        runtimeSource(context, "index.ts", 1),
        ...version.resources.map((r) => typesSource(`./${r.symbols.typesModule}`, [r.symbols.type], aliases)),
      ];
      return renderedFile(context, `${version.name}/pagination.ts`, "pagination", view, sources);
    });
  },
};
