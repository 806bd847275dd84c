import type { ApiModel } from "../../model/types.ts";
import { copyRuntimeFile, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";

/** Files of `runtime/` owned by other emitters (errors.ts is the errors emitter's). */
const OWNED_ELSEWHERE = new Set(["errors.ts"]);

/**
 * The shared runtime: UUID v7, the cursor codec, the store interface and in-memory store,
 * the default CRUD service, the Fastify app. Real, tested code from canon's `runtime/`,
 * copied as is under `runtime/` with the generated-file header.
 */
export const runtimeEmitter: Emitter = {
  name: "runtime",
  emit(_model: ApiModel, context: EmitContext): EmittedFile[] {
    return context
      .runtimeFiles()
      .filter((name) => !OWNED_ELSEWHERE.has(name))
      .map((name) => copyRuntimeFile(context, name));
  },
};
