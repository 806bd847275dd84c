import type { Diagnostic } from "./diagnostics/diagnostic.ts";
import type { SourceFile } from "./load/load.ts";
import { CanonFiles } from "./emit/index.ts";
import type { EmitThread } from "./emit/thread.ts";
import { Engine, type FormattedBy } from "./engine.ts";
import { ModelParts } from "./model/intern.ts";

/**
 * What one process keeps from a generation to the next (`canon dev`), so that a save redoes only
 * what it changed. The session owns all of it (no module keeps a result): its engine
 * (engine.ts) remembers each unit of emission by the slice of the model it reads, and every
 * other entry is keyed by the exact input it was computed from, so a run with a session writes
 * exactly what a run without one writes (test/engine.test.ts, test/dev-session.test.ts);
 * `generate` and `check` run without one, over a fresh engine and its records on disk.
 */
export interface GenerateSession {
  /** The units of emission and the remembered pure results of this session (engine.ts). */
  engine: Engine;
  /** Each definition file as parsed, by its path: reused while its text is the same. */
  sources: Map<string, { kind: SourceFile["kind"]; text: string; source: SourceFile; diagnostics: Diagnostic[] }>;
  /** Each emitted file as formatted, by its path: reused while its emitted text is the same. */
  formatted: Map<string, RememberedFormat>;
  /**
   * The output folder as the last run of this session wrote or found it (path → content); null
   * until a run has compared it. A run compares with this instead of reading every file again.
   */
  output: Map<string, string> | null;
  /** The parts of the last model, kept as the same objects while they are equal (model/intern.ts). */
  parts: ModelParts;
  /** The second thread that runs the whole-API emitters (emit/thread.ts); made by the first run that emits. */
  thread: EmitThread | null;
  /** canon's own templates and runtime files, read once for the session (emit/index.ts). */
  files: CanonFiles;
}

export interface RememberedFormat {
  emitted: string;
  formatted: string;
  /** How it was formatted, counted again in the stats of a run that reuses it. */
  by: FormattedBy;
}

export function createSession(): GenerateSession {
  const engine = new Engine();
  return { engine, sources: new Map(), formatted: new Map(), output: null, parts: new ModelParts(engine), thread: null, files: new CanonFiles() };
}

/** Ends what a session holds open (its emit thread). */
export async function closeSession(session: GenerateSession): Promise<void> {
  await session.thread?.close();
  session.thread = null;
}
