import type { ApiModel } from "../../model/types.ts";
import { GENERATED_HEADER, type EmitContext, type EmittedFile, type Emitter } from "../emitter.ts";
import { IMPORTS, runtimeSource, source, type ImportSource } from "../shared/imports.ts";
import { renderedFile } from "../shared/rendered.ts";

/** The entry module `index.ts`: `buildApp(options)` serves every version on one Fastify app. */
export const entryEmitter: Emitter = {
  name: "entry",
  emit(model: ApiModel, context: EmitContext): EmittedFile[] {
    const view = {
      header: GENERATED_HEADER,
      imports: IMPORTS,
      title: model.title,
      baseUrl: model.baseUrl,
      events: model.events,
      exports: model.exportJobs !== null,
      bodyLimit: model.bodyLimit,
      rateLimit: model.rateLimit && { ...model.rateLimit, windowMs: model.rateLimit.perSeconds * 1000 },
      versionList: model.versions.map((v) => v.name).join(", "),
      versions: model.versions.map((v) => ({ name: v.name })),
    };
    return [renderedFile(context, "index.ts", "entry", view, entrySources(context, model))];
  },
};

/** What `index.ts` may import: fastify's types, the runtime, the services and every version. */
function entrySources(context: EmitContext, model: ApiModel): ImportSource[] {
  return [
    source("fastify", { FastifyInstance: "type", FastifyServerOptions: "type" }),
    runtimeSource(context, "index.ts", 0),
    runtimeSource(context, "exports.ts", 0),
    source("./hooks.ts", { hookSupport: "value", Hooks: "type" }),
    source("./services.ts", { defaultServices: "value", storeReferences: "value", RouteContext: "type", Services: "type" }),
    ...model.versions.map((v) => source(`./${v.name}/index.ts`, { [v.name]: "value" })),
  ];
}
