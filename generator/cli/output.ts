import { formatDiagnostic, toRecord, type Diagnostic, type DiagnosticRecord } from "../diagnostics/diagnostic.ts";

/** How `generate`, `check` and `lint` print diagnostics (`--format`). */
export const FORMATS = ["text", "json", "github"] as const;
export type Format = (typeof FORMATS)[number];

/**
 * Where a command's output goes for each format. `text`: diagnostics and a count on stderr,
 * progress on stdout. `json`: stdout holds exactly one JSON array of diagnostic records,
 * printed at the end; everything else goes to stderr. `github`: one GitHub Actions
 * annotation per diagnostic on stdout (where the runner reads them), then the text output.
 */
export class Reporter {
  private readonly records: DiagnosticRecord[] = [];
  readonly format: Format;

  constructor(format: Format = "text") {
    this.format = format;
  }

  /** A line of progress or summary. */
  info(line: string): void {
    (this.format === "json" ? process.stderr : process.stdout).write(`${line}\n`);
  }

  /** A line of explanation after a failure. */
  error(text: string): void {
    process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** Prints (or, for json, collects) diagnostics; returns whether any is an error. */
  diagnostics(list: Diagnostic[]): boolean {
    const errors = list.filter((d) => d.severity === "error").length;
    if (this.format === "json") {
      this.records.push(...list.map(toRecord));
      return errors > 0;
    }
    if (this.format === "github") for (const d of list) process.stdout.write(`${annotation(d)}\n`);
    for (const d of list) process.stderr.write(`${formatDiagnostic(d)}\n`);
    const warnings = list.length - errors;
    if (list.length > 0) {
      process.stderr.write(`${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}\n`);
    }
    return errors > 0;
  }

  /** Ends the command's output: the JSON array, for json. */
  finish(): void {
    if (this.format === "json") process.stdout.write(`${JSON.stringify(this.records, null, 2)}\n`);
  }
}

/**
 * A GitHub Actions workflow command: `::error file=…,line=…,col=…,title=<rule>::<message>`,
 * escaped as the runner expects (properties also escape `:` and `,`).
 */
export function annotation(d: Diagnostic): string {
  const data = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
  const property = (s: string) => data(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
  const { file, line, column } = d.location;
  return `::${d.severity} file=${property(file)},line=${line},col=${column},title=${property(d.rule)}::${data(`${d.message}\nfix: ${d.fix}`)}`;
}

export function ms(value: number): string {
  return `${Math.round(value)} ms`;
}
