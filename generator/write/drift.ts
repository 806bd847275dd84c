import { readFile } from "node:fs/promises";
import path from "node:path";
import { diagnostic } from "../diagnostics/catalog.ts";
import type { Diagnostic } from "../diagnostics/diagnostic.ts";
import type { FormattedFile } from "../format/format.ts";
import type { OutputDiff } from "./write.ts";

/**
 * The difference between the output folder and what `generate` would write, as `output-drift`
 * diagnostics (for `check --format json|github` and the programmatic API). A changed file
 * points at its first differing line, where a hand edit usually is.
 */
export async function driftDiagnostics(out: string, diff: OutputDiff, files: FormattedFile[], cwd = process.cwd()): Promise<Diagnostic[]> {
  const display = (f: string) => path.relative(cwd, path.join(path.resolve(cwd, out), f)).split(path.sep).join("/");
  const fix = "run canon generate and commit the output; keep your own code outside the output folder";
  const wanted = new Map(files.map((f) => [f.path, f]));
  const changed = await Promise.all(
    diff.changed.map(async (f) => {
      const current = await readFile(path.join(path.resolve(cwd, out), f), "utf8");
      const line = firstDifferingLine(current, wanted.get(f)?.content ?? "");
      return diagnostic("output-drift", { file: display(f), line, column: 1 }, `differs from what canon generate writes (from line ${line})`, fix);
    }),
  );
  return [
    ...changed,
    ...diff.added.map((f) => diagnostic("output-drift", { file: display(f), line: 1, column: 1 }, "is missing: canon generate writes it", fix)),
    ...diff.stale.map((f) => diagnostic("output-drift", { file: display(f), line: 1, column: 1 }, "is stale: canon generate would remove it", fix)),
  ];
}

function firstDifferingLine(a: string, b: string): number {
  const left = a.split("\n");
  const right = b.split("\n");
  let i = 0;
  while (i < left.length && i < right.length && left[i] === right[i]) i++;
  return i + 1;
}
