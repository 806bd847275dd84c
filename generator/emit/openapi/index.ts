import type { EmittedFile, Emitter } from "../emitter.ts";

/**
 * One OpenAPI 3.1 document per version: `vN/openapi.json`. The document is built by
 * `openapiDocument` (document.ts) once per run, through the context, because the CHANGES
 * emitter compares the same documents.
 */
export const openapiEmitter: Emitter = {
  name: "openapi",
  emit(model, context): EmittedFile[] {
    return model.versions.map((version) => ({
      path: `${version.name}/openapi.json`,
      content: `${JSON.stringify(context.openapiDocument(model, version), null, 2)}\n`,
      parser: null,
    }));
  },
};
