// A reporter for Node's test runner that prints nothing: it counts the tests of a run (passed,
// failed, skipped with the reason each skip gave, todo with the known bug it names) and writes them as JSON to the file in
// CANON_TEST_SUMMARY, so that scripts/test.ts can say at the end which suites ran and what was
// skipped and why, and which failed and why (the first lines of each error). It runs beside the spec reporter (`--test-reporter` twice).
import { writeFileSync } from "node:fs";

interface TestEvent {
  type: string;
  data: {
    name: string;
    file?: string;
    skip?: string | boolean;
    todo?: string | boolean;
    details?: { type?: string; error?: unknown };
  };
}

export interface RunSummary {
  passed: number;
  failed: number;
  /** Tests and suites skipped: where, and the reason given (`true` when none was). */
  skipped: Array<{ name: string; file: string; reason: string }>;
  /** Tests that failed: where, and the first lines of the error, so the summary at the end of a long log says why. */
  failures: Array<{ name: string; file: string; error: string }>;
  /**
   * Tests marked `todo` (a known bug a test already shows): where, and the reason given. The
   * runner counts them neither as passed nor as failed, and a todo that fails fails no run.
   */
  todo: Array<{ name: string; file: string; reason: string }>;
}

/** The error of a failed test, its cause first (the runner wraps it), cut to a few lines. */
function errorText(error: unknown): string {
  const inner = (error as { cause?: unknown } | undefined)?.cause ?? error;
  const text = inner instanceof Error ? (inner.stack ?? inner.message) : String(inner);
  return text.split("\n").slice(0, 12).join("\n");
}

export default async function* summaryReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const summary: RunSummary = { passed: 0, failed: 0, skipped: [], failures: [], todo: [] };
  for await (const event of source) {
    const { data } = event;
    // A suite is reported as a test whose details say "suite": count tests only, but report a
    // skipped suite (its tests never start).
    const suite = data.details?.type === "suite";
    if ((event.type === "test:pass" || event.type === "test:fail") && !suite && data.todo !== undefined && data.todo !== false) {
      summary.todo.push({ name: data.name, file: data.file ?? "", reason: typeof data.todo === "string" ? data.todo : "no reason given" });
    } else if (event.type === "test:pass") {
      if (data.skip !== undefined && data.skip !== false) {
        summary.skipped.push({
          name: data.name,
          file: data.file ?? "",
          reason: typeof data.skip === "string" ? data.skip : "no reason given",
        });
      } else if (!suite) summary.passed++;
    } else if (event.type === "test:fail" && !suite) {
      summary.failed++;
      summary.failures.push({
        name: data.name,
        file: data.file ?? "",
        error: errorText(data.details?.error),
      });
    }
  }
  const file = process.env.CANON_TEST_SUMMARY;
  if (file) writeFileSync(file, JSON.stringify(summary));
  yield "";
}
