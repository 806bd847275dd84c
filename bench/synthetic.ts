// Writes synthetic definitions of N resources: 8 fields of mixed types, a child collection on
// every fifth resource and an action on every seventh, and 2 versions with an added and a
// renamed field. Used by the generation benchmarks (and the TypeSpec comparison).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"];

/** A distinct plural-noun name per index, letters only: 0 → `alpha-alpha-alpha-items`. */
export function collectionName(i: number): string {
  const n = words.length;
  return `${words[Math.floor(i / (n * n)) % n]}-${words[Math.floor(i / n) % n]}-${words[i % n]}-items`;
}

export function writeSynthetic(dir: string, n: number): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "api.yaml"),
    ["title: Synthetic API", "base_url: https://api.example.com", "versions:", "  v1:", "    deprecated: 2026-09-01", "    sunset: 2027-06-30", "  v2: {}", ""].join("\n"),
  );
  for (let i = 0; i < n; i++) {
    const name = collectionName(i);
    const parent = i % 5 === 4 ? collectionName(i - 1) : null;
    const lines = [`resource: ${name}`, `description: Synthetic resource ${i}.`];
    if (parent) lines.push(`parent: ${parent}`);
    lines.push(`pagination: ${i % 3 === 0 ? "offset" : "cursor"}`, "search: [title]", "filters: [state]", "fields:");
    if (parent) lines.push(`  parent_id: { type: uuid, references: ${parent} }`);
    lines.push(
      "  title: { type: string, min_length: 1, max_length: 200 }",
      "  state: { type: enum, values: [draft, live, gone], default: draft }",
      "  amount: { type: integer, minimum: 0, maximum: 1000000 }",
      "  ratio: { type: number, minimum: 0, maximum: 1, optional: true }",
      "  active: { type: boolean, default: true }",
      "  starts_on: { type: date, optional: true }",
      "  tags: { type: array, items: { type: string, max_length: 20 }, max_items: 10, default: [] }",
      "  flagged: { type: boolean, default: false, added: v2 }",
      "  total: { type: integer, minimum: 0, renamed: { in: v2, from: sum } }",
    );
    if (i % 7 === 6) lines.push("actions:", "  approvals:", "    fields:", "      comment: { type: string, max_length: 200 }");
    writeFileSync(path.join(dir, `${name}.yaml`), lines.join("\n") + "\n");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, n] = process.argv.slice(2);
  writeSynthetic(dir ?? "bench/.defs", Number(n ?? 100));
}
