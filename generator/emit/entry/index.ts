import type { ApiModel } from "../../model/types.ts";
import { GENERATED_HEADER, styledTs, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";

/** The entry module `index.ts`: `buildApp(options)` serves every version on one Fastify app. */
export const entryEmitter: Emitter = {
  name: "entry",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    return [
      styledTs(
        "index.ts",
        context.render("entry", {
          header: GENERATED_HEADER,
          title: model.title,
          baseUrl: model.baseUrl,
          events: model.events,
          exports: model.exportJobs !== null,
          bodyLimit: model.bodyLimit,
          rateLimit: model.rateLimit && { ...model.rateLimit, windowMs: model.rateLimit.perSeconds * 1000 },
          versionList: model.versions.map((v) => v.name).join(", "),
          versions: model.versions.map((v) => ({ name: v.name })),
        }),
      ),
    ];
  },
};
