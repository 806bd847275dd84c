import { compareDocuments } from "../../compat/compare.ts";
import type { Json } from "../../compat/types.ts";
import type { EmittedFile, Emitter } from "../emitter.ts";
import { changesMarkdown } from "./markdown.ts";

/**
 * `vN/CHANGES.md` for every version after the first: what a client of vN-1 changes to use vN,
 * from comparing the two OpenAPI documents the OpenAPI emitter writes (the context hands them
 * over, built once), with the same comparison that guards published versions.
 */
export const changesEmitter: Emitter = {
  name: "changes",
  emit(model, context): EmittedFile[] {
    const documents = model.versions.map((v) => context.openapiDocument(model, v) as Json);
    return model.versions.slice(1).map((version, i) => {
      const previous = model.versions[i]!;
      return {
        path: `${version.name}/CHANGES.md`,
        content: changesMarkdown({
          title: model.title,
          from: previous.name,
          to: version.name,
          deprecation: previous.deprecation,
          // The changes of paths compared in an earlier run are remembered (canon dev).
          changes: compareDocuments(documents[i]!, documents[i + 1]!, true),
        }),
        // Written as is: the text is already in the form prettier gives it (a test checks), and prettier
        // takes seconds on the CHANGES.md of a large API.
        parser: null,
      };
    });
  },
};
