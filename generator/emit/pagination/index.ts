import type { ApiModel } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";

const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

/** Pagination types: `vN/pagination.ts`, the page type of every list of the version. */
export const paginationEmitter: Emitter = {
  name: "pagination",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    return model.versions.map((version) =>
      styledTs(
        `${version.name}/pagination.ts`,
        context.render("pagination", {
        header: GENERATED_HEADER,
        version: version.name,
        defaultSize: DEFAULT_PAGE_SIZE,
        maxSize: MAX_PAGE_SIZE,
        resources: version.resources.map((r) => ({
          collection: r.collection,
          pascal: r.names.pascal,
          pluralPascal: r.names.pluralPascal,
          offset: r.pagination === "offset",
        })),
      }),
      ),
    );
  },
};
