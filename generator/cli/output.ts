import { formatDiagnostic, type Diagnostic } from "../diagnostics/diagnostic.ts";

/** Prints diagnostics to stderr with a count line; returns whether any is an error. */
export function printDiagnostics(list: Diagnostic[]): boolean {
  for (const d of list) process.stderr.write(`${formatDiagnostic(d)}\n`);
  const errors = list.filter((d) => d.severity === "error").length;
  const warnings = list.length - errors;
  if (list.length > 0) {
    process.stderr.write(`${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}\n`);
  }
  return errors > 0;
}

export function ms(value: number): string {
  return `${Math.round(value)} ms`;
}
