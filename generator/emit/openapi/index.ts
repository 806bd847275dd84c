import type { EmittedFile, Emitter } from "../emitter.ts";
import { versionDocument } from "./document.ts";

/** One OpenAPI 3.1 document per version: `vN/openapi.json`. */
export const openapiEmitter: Emitter = {
  name: "openapi",
  emit(model): EmittedFile[] {
    return model.versions.map((version) => ({
      path: `${version.name}/openapi.json`,
      content: `${JSON.stringify(versionDocument(model, version), null, 2)}\n`,
      parser: null,
    }));
  },
};
