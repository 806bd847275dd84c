import type { FormattedBy, Unit } from "../engine.ts";
import type { ApiModel, VersionModel } from "../model/types.ts";
import { GENERATED_NOTICE } from "../util/generated.ts";

/** A file an emitter produced, in memory, before formatting. Paths are relative to the output folder. */
export interface EmittedFile {
  path: string;
  content: string;
  /** The prettier parser that formats it; null: written as is. */
  parser: "typescript" | "json" | "markdown" | null;
  /**
   * TypeScript that the emitter writes in prettier's style (see format/layout.ts): the format step
   * breaks its long lines itself and runs prettier only when it cannot be sure of the result.
   */
  prettierStyle?: boolean;
  /**
   * Set on a file that the engine's records recalled from the output folder (engine.ts,
   * `EngineRecords`): its content is already formatted, as it was written, and this says how.
   */
  formatted?: FormattedBy;
  /** With `formatted`: the sha256 of the content (base64url), as the record holds it (the stamp takes it). */
  digest?: string;
}

/** A TypeScript file written in prettier's style. */
export function styledTs(path: string, content: string): EmittedFile {
  return { path, content, parser: "typescript", prettierStyle: true };
}

/**
 * One artifact of the generated output. An emitter reads only the model and returns files in
 * memory; it never reads definitions, formats or writes.
 */
export interface Emitter {
  name: string;
  emit(model: ApiModel, context: EmitContext): EmittedFile[];
}

/** What emitters may use besides the model: templates and the runtime files, read once per run. */
export interface EmitContext {
  /** Renders `templates/<name>.hbs` with `data`; each template is compiled once per run. */
  render(name: string, data: object): string;
  /** The text of `templates/<name>` as it is: fixed code that an emitter places whole (`client/core.ts`). */
  templateText(name: string): string;
  /** The text of `runtime/<name>`, the tested runtime code copied into the output. */
  runtimeFile(name: string): string;
  /** Names of the runtime files. */
  runtimeFiles(): string[];
  /**
   * The OpenAPI document of a version, built once per context and model (by
   * emit/openapi/document.ts): the OpenAPI emitter writes it, the CHANGES emitter compares
   * consecutive ones. Handed over here so that no emitter imports another.
   */
  openapiDocument(model: ApiModel, version: VersionModel): Record<string, unknown>;
  /** The text of that document as `vN/openapi.json` holds it (written once per context and model). */
  openapiText(model: ApiModel, version: VersionModel): string;
  /**
   * The result of a unit of emission (engine.ts) over its slice of the model, its only input:
   * recalled by the run's engine when it has one for an equal slice, or else computed.
   */
  unit<S extends object, R>(unit: Unit<S, R, UnitContext>, slice: S): R;
  /** The names `runtime/<name>` exports (its own and those it re-exports), and whether each is a type. */
  runtimeExports(name: string): ReadonlyMap<string, "value" | "type">;
  /**
   * The type names canon's generated code uses for its own (shared/canon-names.ts), found once per
   * context (a `canon dev` session's canon files: once per session) and through the run's engine.
   */
  canonTypeNames(): ReadonlySet<string>;
  /**
   * Read access to the output folder as it was before this run, for the few artifacts that build
   * on what was written before (the SQL migrations). Absent: an empty output folder.
   */
  previous?: PreviousOutput;
  /**
   * Whether canon checks what it emitted against itself (the migrations it writes, replayed, must
   * create the schema snapshot): a check for bugs in canon, which changes no output. Every run
   * makes it but those of a `canon dev` session, where it would cost a fifth of the SQL emitter's
   * time on each save; the next `canon generate` or `canon check` makes it.
   */
  verify: boolean;
}

/** What a unit of emission may read besides its slice: canon's templates and runtime files. */
export type UnitContext = Pick<EmitContext, "render" | "templateText" | "runtimeFile" | "runtimeFiles" | "runtimeExports">;

/** The output folder before this run. Paths are relative to it, with `/`. */
export interface PreviousOutput {
  /** The text of a file; undefined when there is none. */
  read(path: string): string | undefined;
  /** Names of the files directly in a folder, sorted; empty when there is none. */
  list(dir: string): string[];
}

/** First line of every generated source file. */
export const GENERATED_HEADER = `// ${GENERATED_NOTICE}`;

/**
 * A file of canon's tested runtime, copied into `runtime/` of the output under the generated
 * header. Runtime files are kept prettier-formatted in canon's repository (with the options of
 * generated code, `.prettierrc.json`; a test checks the output), so they are copied unformatted.
 */
export function copyRuntimeFile(context: EmitContext, name: string): EmittedFile {
  return { path: `runtime/${name}`, content: `${GENERATED_HEADER}\n${context.runtimeFile(name)}`, parser: null };
}
