/** A problem found in the definitions, with where it is and how to fix it. */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

export type Severity = "error" | "warning";

export interface Diagnostic {
  rule: string;
  severity: Severity;
  message: string;
  fix: string;
  location: SourceLocation;
}

/**
 * A diagnostic as plain data for tools: `--format json` prints an array of these, and the
 * programmatic API returns them.
 */
export interface DiagnosticRecord {
  file: string;
  line: number;
  column: number;
  severity: Severity;
  rule: string;
  message: string;
  fix: string;
}

export function toRecord(d: Diagnostic): DiagnosticRecord {
  const { file, line, column } = d.location;
  return { file, line, column, severity: d.severity, rule: d.rule, message: d.message, fix: d.fix };
}

export function formatDiagnostic(d: Diagnostic): string {
  const { file, line, column } = d.location;
  return `${file}:${line}:${column} ${d.severity} ${d.rule} ${d.message}\n  fix: ${d.fix}`;
}

/** Sorted by file, line, column, rule: the same problems always print in the same order. */
export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort(
    (a, b) =>
      compareText(a.location.file, b.location.file) ||
      a.location.line - b.location.line ||
      a.location.column - b.location.column ||
      compareText(a.rule, b.rule) ||
      compareText(a.message, b.message),
  );
}

/** Locale-independent comparison: code-unit order, the same on every machine. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function hasErrors(list: Diagnostic[]): boolean {
  return list.some((d) => d.severity === "error");
}
