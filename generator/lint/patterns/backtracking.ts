/**
 * Which `pattern`s can backtrack catastrophically. JavaScript runs a regular expression with a
 * backtracking engine: `^(\w+\s?)*$` tries every way of splitting a run of word characters
 * between its two loops, so 31 characters and a `!` hold the event loop for most of a minute.
 * canon asks recheck (a maintained ReDoS checker: https://makenowjust-labs.github.io/recheck/)
 * for the matching time's growth: its automaton analysis is exact and deterministic for
 * patterns without back-references or look-arounds; those fall back to its fuzzing checker,
 * with a fixed seed. Both run in this process (recheck's pure JavaScript build), never in a
 * child process or a worker.
 *
 * Loading recheck and checking a pattern take about a second together; the verdicts are kept in
 * `node_modules/.cache/canon/` (keyed by recheck's version and the pattern), so a later run
 * over the same patterns does not load it at all. The cache only saves time: a missing or
 * damaged file is rebuilt.
 */
import { engineState } from "../../engine.ts";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Diagnostics, Parameters } from "recheck";

export interface Backtracking {
  complexity: "exponential" | "polynomial" | "unknown";
  /** The part of the pattern that backtracks (the whole pattern when recheck names none). */
  part: string;
  /** An input that shows it, as recheck builds it: `'a' + 'a'.repeat(31) + '!'`. */
  attack: string | null;
}

type CheckSync = (source: string, flags: string, params?: Parameters) => Diagnostics;

let checkSync: CheckSync | undefined;

/** recheck is 6 MB of JavaScript: loaded on the first pattern, not on every run of canon. */
function checker(): CheckSync {
  checkSync ??= (require("recheck") as { checkSync: CheckSync }).checkSync;
  const run = checkSync;
  // recheck reads its backend from the environment on each call: the pure one, in this thread;
  // the caller's environment is left as it was.
  return (source, flags, params) => {
    const before = process.env.RECHECK_SYNC_BACKEND;
    process.env.RECHECK_SYNC_BACKEND = "pure";
    try {
      return run(source, flags, params);
    } finally {
      if (before === undefined) delete process.env.RECHECK_SYNC_BACKEND;
      else process.env.RECHECK_SYNC_BACKEND = before;
    }
  };
}

const require = createRequire(import.meta.url);
const RECHECK_VERSION = (JSON.parse(readFileSync(require.resolve("recheck/package.json"), "utf8")) as { version: string }).version;


/** Bumped when `analyse` changes what it answers. */
const ANALYSIS = 1;

function cacheFile(): string {
  return path.join(process.cwd(), "node_modules", ".cache", "canon", `patterns-${ANALYSIS}-recheck-${RECHECK_VERSION}.json`);
}

/** The verdicts known so far: from the cache file, then from this run (kept by the run's engine, engine.ts). */
function known(): Map<string, Backtracking | null> {
  return engineState("pattern verdicts", () => {
    try {
      return new Map(Object.entries(JSON.parse(readFileSync(cacheFile(), "utf8")) as Record<string, Backtracking | null>));
    } catch {
      return new Map<string, Backtracking | null>();
    }
  });
}

function keep(all: Map<string, Backtracking | null>): void {
  try {
    const file = cacheFile();
    mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    const settled = [...all].filter(([, v]) => v?.complexity !== "unknown");
    writeFileSync(temp, JSON.stringify(Object.fromEntries(settled)));
    renameSync(temp, file);
  } catch {
    // The cache only saves time.
  }
}

/** How `pattern` (a valid JavaScript regular expression) can backtrack; null when it runs in linear time. */
export function backtrackingOf(pattern: string): Backtracking | null {
  const all = known();
  let verdict = all.get(pattern);
  if (verdict === undefined) {
    verdict = analyse(pattern);
    all.set(pattern, verdict);
    // An unsettled verdict (the checker ran out of time) may settle on a faster run: not kept.
    if (verdict?.complexity !== "unknown") keep(all);
  }
  return verdict;
}

function analyse(pattern: string): Backtracking | null {
  const check = checker();
  let result = check(pattern, "", { checker: "automaton", timeout: 10_000 });
  if (result.status === "unknown") result = check(pattern, "", { checker: "auto", timeout: 10_000, randomSeed: 0 });
  if (result.status === "safe") return null;
  if (result.status === "unknown") return { complexity: "unknown", part: pattern, attack: null };
  const heat = result.hotspot.filter((h) => h.temperature === "heat");
  const spots = heat.length ? heat : result.hotspot;
  const part = spots.length ? pattern.slice(Math.min(...spots.map((h) => h.start)), Math.max(...spots.map((h) => h.end))) : pattern;
  return { complexity: result.complexity.type, part: enclosing(pattern, part), attack: result.attack.pattern };
}

/** The smallest group of `pattern` around `part`, so that the message shows the repetition whole. */
function enclosing(pattern: string, part: string): string {
  const at = pattern.indexOf(part);
  if (at < 0) return part;
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const c = pattern[i];
    if (escaped(pattern, i)) continue;
    if (c === ")") depth++;
    else if (c === "(" && depth-- === 0) {
      const close = closing(pattern, i);
      if (close < 0) return part;
      const quantifier = /^(?:[*+?]|\{\d+(?:,\d*)?\})\??/.exec(pattern.slice(close + 1))?.[0] ?? "";
      return pattern.slice(i, close + 1 + quantifier.length);
    }
  }
  return part;
}

function escaped(text: string, i: number): boolean {
  let slashes = 0;
  for (let j = i - 1; j >= 0 && text[j] === "\\"; j--) slashes++;
  return slashes % 2 === 1;
}

/** The index of the `)` that closes the `(` at `open`, or -1. Character classes are skipped. */
function closing(text: string, open: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (escaped(text, i)) continue;
    if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return -1;
}
