// What every answer of the hardening suite must be, and the counts the suite prints.
import assert from "node:assert/strict";

/** The statuses of conventions §4.4 a client may see; 500 is never an answer to bad input. */
export const ALLOWED = new Set([200, 201, 204, 400, 401, 403, 404, 409, 422, 429]);

/** What an answer must never carry: stack frames, paths of this machine, internals of the framework or the store. */
const LEAKS: Array<[string, RegExp]> = [
  ["a stack frame", /\n\s+at |\bat [\w$.<>]+ \(|\bat (file|node):/],
  ["a file path", /\/work\/|\/home\/|\/usr\/|node_modules|file:\/\/|[\w-]+\.(ts|js|mjs|cjs):\d+/],
  ["a Fastify error code", /FST_ERR|ERR_[A-Z_]{4,}/],
  ["a JavaScript error name", /\b(TypeError|ReferenceError|SyntaxError|RangeError|ZodError|AssertionError)\b/],
  ["a system error", /\b(ECONNRESET|ECONNREFUSED|EPIPE|ENOENT|EACCES)\b/],
  ["an SQL error", /duplicate key value|violates (unique|foreign key|check|not-null) constraint|relation "|syntax error at|column "|\bpg_|SQLSTATE/i],
  ["an SQL statement", /\b(SELECT [\w*]|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b/],
  ["a store name", /\b(pglite|PGlite|postgres(ql)?:)/],
];

export function assertNoLeak(text: string, where: string): void {
  for (const [what, pattern] of LEAKS) {
    const match = pattern.exec(text);
    assert.ok(!match, `the answer carries ${what} (${JSON.stringify(match?.[0])}): ${where}\n${text.slice(0, 500)}`);
  }
}

/** Everything a prototype pollution would change. */
export function prototypeSnapshot(): string {
  const names = (o: object) => Object.getOwnPropertyNames(o).sort().join(",");
  return JSON.stringify([names(Object.prototype), names(Array.prototype), names(Function.prototype), names(String.prototype), names(Number.prototype)]);
}

export function assertNoPollution(before: string): void {
  assert.equal(prototypeSnapshot(), before, "a prototype gained or lost a property");
  const probe = {} as Record<string, unknown>;
  for (const key of ["polluted", "isAdmin", "a", "x"]) assert.equal(probe[key], undefined, `({}).${key} is defined: the prototype was polluted`);
  assert.equal(Object.getPrototypeOf(probe), Object.prototype);
}

/** Counts of what was sent and what came back. */
export class Tally {
  readonly title: string;
  requests = 0;
  readonly statuses = new Map<number, number>();
  readonly inputs = new Map<string, number>();
  readonly operations = new Map<string, Map<number, number>>();
  readonly started = performance.now();

  constructor(title: string) {
    this.title = title;
  }

  add(operation: string, labels: string[], status: number): void {
    this.requests += 1;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    for (const label of new Set(labels)) this.inputs.set(label, (this.inputs.get(label) ?? 0) + 1);
    const byStatus = this.operations.get(operation) ?? new Map<number, number>();
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    this.operations.set(operation, byStatus);
  }

  /** The summary; `detailed`: every operation's statuses and every kind of input, not just their groups. */
  report(extra: string[] = [], detailed = false): string {
    const seconds = (performance.now() - this.started) / 1000;
    const statuses = [...this.statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(", ");
    const lines = [
      `== ${this.title}`,
      `requests: ${this.requests} in ${seconds.toFixed(1)} s (${Math.round(this.requests / seconds)}/s); answers by status: ${statuses}`,
      ...extra,
    ];
    // Kinds of input grouped by what they touch (`id: truncated` is in `id`).
    const groups = new Map<string, { kinds: number; requests: number }>();
    for (const [label, n] of this.inputs) {
      const group = label.includes(":") ? label.slice(0, label.indexOf(":")) : label;
      const g = groups.get(group) ?? { kinds: 0, requests: 0 };
      groups.set(group, { kinds: g.kinds + 1, requests: g.requests + n });
    }
    lines.push(`kinds of input: ${this.inputs.size}, in ${groups.size} groups (kinds, requests carrying one):`);
    lines.push(
      ...[...groups]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([group, g]) => `  ${group.padEnd(28)} ${String(g.kinds).padStart(4)} ${String(g.requests).padStart(7)}`),
    );
    if (!detailed) return lines.join("\n");
    if (this.operations.size > 0) {
      lines.push(`operations: ${this.operations.size}`);
      for (const [operation, byStatus] of [...this.operations].sort(([a], [b]) => a.localeCompare(b))) {
        const total = [...byStatus.values()].reduce((a, b) => a + b, 0);
        lines.push(`  ${operation.padEnd(42)} ${String(total).padStart(6)}  ${[...byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(" ")}`);
      }
    }
    lines.push(`kinds of input (requests carrying each): ${this.inputs.size}`);
    for (const [label, n] of [...this.inputs].sort(([a, x], [b, y]) => y - x || a.localeCompare(b))) lines.push(`  ${String(n).padStart(6)}  ${label}`);
    return lines.join("\n");
  }
}
