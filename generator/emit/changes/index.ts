import { compareDocuments } from "../../compat/compare.ts";
import { documentDigest } from "../../compat/parts.ts";
import type { JsonObject } from "../../compat/types.ts";
import { defineUnit, Engine } from "../../engine.ts";
import type { VersionModel } from "../../model/types.ts";
import type { EmittedFile, Emitter } from "../emitter.ts";
import { changesMarkdown } from "./markdown.ts";

/** What one CHANGES.md is a function of: the two documents and the names it prints. */
interface ChangesSlice {
  title: string;
  from: string;
  to: string;
  deprecation: VersionModel["deprecation"];
  /** `from` is retired (no longer generated or served). */
  retired: boolean;
  /** The OpenAPI documents of `from` and `to`, as the OpenAPI emitter writes them. */
  fromDocument: JsonObject;
  toDocument: JsonObject;
}

/**
 * One CHANGES.md, a unit keyed by its two documents (each by a digest made from its parts'
 * digests, `documentDigest`): a cold `canon generate` whose documents did not change recalls it
 * from the engine's records instead of comparing them.
 */
const changesFile = defineUnit("changes/CHANGES.md", (slice: ChangesSlice) =>
  changesMarkdown({
    title: slice.title,
    from: slice.from,
    to: slice.to,
    deprecation: slice.deprecation,
    retired: slice.retired,
    // The changes of paths compared in an earlier run are remembered (canon dev), found by
    // object where the documents share parts with that run's (compat/parts.ts).
    changes: compareDocuments(slice.fromDocument, slice.toDocument, true),
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
    // A retired version keeps the CHANGES.md of its successor (docs/versioning.md): its late
    // clients still need it, and its successor's files are not its own to take along.
    const retired = model.retiredPredecessor ?? null;
    const versions = retired ? [retired, ...model.versions] : model.versions;
    if (versions.length < 2) return [];
    const engine = Engine.current();
    const documents = versions.map((version) => context.openapiDocument(model, version) as JsonObject);
    // Keyed by the digests of their parts, which the documents' units made with them: no
    // document's whole text is hashed.
    for (const document of documents) engine?.knowDigest(document, documentDigest(document));
    return versions.slice(1).map((version, i) => {
      const previous = versions[i]!;
      const slice: ChangesSlice = {
        title: model.title,
        from: previous.name,
        to: version.name,
        deprecation: previous.deprecation,
        retired: previous === retired,
        fromDocument: documents[i]!,
        toDocument: documents[i + 1]!,
      };
      return {
        path: `${version.name}/CHANGES.md`,
        content: engine ? engine.run(changesFile, slice, undefined) : changesFile.compute(slice, undefined),
        // Written as is: the text is already in the form prettier gives it (a test checks), and prettier
        // takes seconds on the CHANGES.md of a large API.
        parser: null,
      };
    });
  },
};
