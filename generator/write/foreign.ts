import path from "node:path";
import { diagnostic } from "../diagnostics/catalog.ts";
import type { Diagnostic } from "../diagnostics/diagnostic.ts";
import { GENERATED_MARK } from "../util/generated.ts";
import type { OutputDiff } from "./write.ts";

/** One error per file in the output folder that canon did not write (`foreign-file`). */
export function foreignFileDiagnostics(outDir: string, diff: OutputDiff, wanted: ReadonlySet<string>, cwd = process.cwd()): Diagnostic[] {
  return diff.foreign.map((file) => {
    const shown = path.relative(cwd, path.join(path.resolve(cwd, outDir), file)).split(path.sep).join("/");
    const where = wanted.has(file) ? "where canon would write its own file" : "beside canon's files";
    return diagnostic(
      "foreign-file",
      { file: shown, line: 1, column: 1 },
      `${shown} is foreign: canon did not write it (it does not begin with "${GENERATED_MARK}"), and it sits ${where}; canon never overwrites or removes a file it did not write`,
      `move it out of ${outDir} (dot-files and dot-folders such as .git are left alone), or delete it if it is an old canon file whose first line was edited`,
    );
  });
}
