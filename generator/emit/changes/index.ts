import { compareDocuments } from "../../compat/compare.ts";
import type { Json } from "../../compat/types.ts";
import { defineUnit, Engine } from "../../engine.ts";
import type { VersionModel } from "../../model/types.ts";
import type { EmittedFile, Emitter } from "../emitter.ts";
import { changesMarkdown } from "./markdown.ts";

/** What one CHANGES.md is a function of: the two documents (their JSON texts) and the names it prints. */
interface ChangesSlice {
  title: string;
  from: string;
  to: string;
  deprecation: VersionModel["deprecation"];
  /** The OpenAPI documents of `from` and `to`, as the OpenAPI emitter writes them. */
  fromDocument: string;
  toDocument: string;
}

/**
 * The same two documents as objects (the ones the context built, whose JSON texts the slice
 * holds): the comparison walks them, and finds by object what an earlier comparison of the same
 * versions already did (compat/parts.ts).
 */
interface ChangesContext {
  documents: readonly [Json, Json];
}

/**
 * One CHANGES.md, a unit keyed by the two documents' texts: a cold `canon generate` whose
 * documents did not change recalls it from the engine's records instead of comparing them.
 */
const changesFile = defineUnit<ChangesSlice, string, ChangesContext>("changes/CHANGES.md", (slice, { documents }) =>
  changesMarkdown({
    title: slice.title,
    from: slice.from,
    to: slice.to,
    deprecation: slice.deprecation,
    // The changes of paths compared in an earlier run are remembered (canon dev).
    changes: compareDocuments(documents[0], documents[1], true),
  }),
);

/**
 * `vN/CHANGES.md` for every version after the first: what a client of vN-1 changes to use vN,
 * from comparing the two OpenAPI documents the OpenAPI emitter writes (the context hands them
 * over, built once), with the same comparison that guards published versions.
 */
export const changesEmitter: Emitter = {
  name: "changes",
  emit(model, context): EmittedFile[] {
    const engine = Engine.current();
    return model.versions.slice(1).map((version, i) => {
      const previous = model.versions[i]!;
      const slice: ChangesSlice = {
        title: model.title,
        from: previous.name,
        to: version.name,
        deprecation: previous.deprecation,
        fromDocument: context.openapiText(model, previous),
        toDocument: context.openapiText(model, version),
      };
      const documents = [context.openapiDocument(model, previous) as Json, context.openapiDocument(model, version) as Json] as const;
      return {
        path: `${version.name}/CHANGES.md`,
        content: engine ? engine.run(changesFile, slice, { documents }) : changesFile.compute(slice, { documents }),
        // Written as is: the text is already in the form prettier gives it (a test checks), and prettier
        // takes seconds on the CHANGES.md of a large API.
        parser: null,
      };
    });
  },
};
