import type { ApiModel } from "../../model/types.ts";
import { copyRuntimeFile, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";

/**
 * The error classes: one per status of conventions §4.4, all rendering the one envelope of
 * conventions §7. They are the same for every API, so they are canon's tested
 * `runtime/errors.ts`, copied into `runtime/errors.ts` of the output.
 */
export const errorsEmitter: Emitter = {
  name: "errors",
  emit(_model: ApiModel, context: EmitContext): EmittedFile[] {
    return [copyRuntimeFile(context, "errors.ts")];
  },
};
