import type { EmittedFile, Emitter } from "../emitter.ts";

/**
 * One OpenAPI 3.1 document per version: `vN/openapi.json`. The document and its text are built
 * by `openapiDocument` (document.ts) once per run, through the context, because the CHANGES
 * emitter compares the same documents.
 */
export const openapiEmitter: Emitter = {
  name: "openapi",
  emit(model, context): EmittedFile[] {
    return model.versions.map((version) => ({
      path: `${version.name}/openapi.json`,
      content: context.openapiText(model, version),
      parser: null,
    }));
  },
};
