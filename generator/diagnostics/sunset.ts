import type { Diagnostic } from "./diagnostic.ts";

/** Days a deprecated version stays at least, from its deprecation to its sunset (conventions §8, §9.9). */
export const MINIMUM_NOTICE_DAYS = 90;

/** The date sunsets are measured against: `today`, or the current date (UTC). */
export function todayOf(today: string | undefined): string {
  return today ?? new Date().toISOString().slice(0, 10);
}

/** With `--fail-on-sunset`, a sunset that is near or past is an error instead of a warning. */
export function withSunsetPolicy(diagnostics: Diagnostic[], failOnSunset: boolean | undefined): Diagnostic[] {
  return failOnSunset ? diagnostics.map((d) => (d.rule === "sunset-near" ? { ...d, severity: "error" } : d)) : diagnostics;
}
