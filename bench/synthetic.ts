// Writes synthetic definitions of N resources: 8 fields of mixed types, a child collection on
// every fifth resource and an action on every seventh, and 2 versions with an added and a
// renamed field. Used by the generation benchmarks; bench/typespec.ts writes the equivalent
// TypeSpec from the same `syntheticResources`.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const words = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliet",
  "kilo",
  "lima",
];

/** A distinct plural-noun name per index, letters only: 0 → `alpha-alpha-alpha-items`. */
export function collectionName(i: number): string {
  const n = words.length;
  return `${words[Math.floor(i / (n * n)) % n]}-${words[Math.floor(i / n) % n]}-${words[i % n]}-items`;
}

/** One synthetic resource: what both the YAML and the TypeSpec writers need to know. */
export interface SyntheticResource {
  index: number;
  name: string;
  /** The parent collection (every fifth resource is a child of the one before it). */
  parent: string | null;
  pagination: "cursor" | "offset";
  /** An action `approvals` with one field (every seventh resource). */
  action: boolean;
}

export function syntheticResources(n: number): SyntheticResource[] {
  return Array.from({ length: n }, (_, i) => ({
    index: i,
    name: collectionName(i),
    parent: i % 5 === 4 ? collectionName(i - 1) : null,
    pagination: i % 3 === 0 ? "offset" : "cursor",
    action: i % 7 === 6,
  }));
}

export const API_YAML = [
  "title: Synthetic API",
  "base_url: https://api.example.com",
  "versions:",
  "  v1:",
  "    deprecated: 2026-09-01",
  "    sunset: 2027-06-30",
  "  v2: {}",
  "",
].join("\n");

/** The YAML definition of one synthetic resource; `revision` changes its description only. */
export function resourceYaml(r: SyntheticResource, revision = 0): string {
  const lines = [
    `resource: ${r.name}`,
    `description: Synthetic resource ${r.index}${revision ? ` (revision ${revision})` : ""}.`,
  ];
  if (r.parent) lines.push(`parent: ${r.parent}`);
  lines.push(`pagination: ${r.pagination}`, "search: [title]", "filters: [state]", "fields:");
  if (r.parent) lines.push(`  parent_id: { type: uuid, references: ${r.parent} }`);
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
  if (r.action)
    lines.push("actions:", "  approvals:", "    fields:", "      comment: { type: string, max_length: 200 }");
  return lines.join("\n") + "\n";
}

export function writeSynthetic(dir: string, n: number): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "api.yaml"), API_YAML);
  for (const r of syntheticResources(n)) writeFileSync(path.join(dir, `${r.name}.yaml`), resourceYaml(r));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, n] = process.argv.slice(2);
  writeSynthetic(dir ?? "bench/.defs", Number(n ?? 100));
}
