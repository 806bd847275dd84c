// The definitions the README and docs/ show as whole files lint as written: a user who copies
// one (the README's `orders.yaml`, docs/tenancy.md's four resources) gets no error. Each page's
// resource files form one definitions folder with that page's `api.yaml` block (else a plain one);
// a collection they reference but do not show is stubbed with one field.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { canon, repoRoot, workspace } from "./support/cli.ts";

const pages = ["README.md", ...readdirSync(path.join(repoRoot, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** The fenced yaml blocks of a page that are whole files: a resource (`resource:`) or an api.yaml (`versions:`). */
function wholeFiles(page: string): { resources: Map<string, string>; api: string | null } {
  const text = readFileSync(path.join(repoRoot, page), "utf8");
  const resources = new Map<string, string>();
  let api: string | null = null;
  for (const [, block] of text.matchAll(/```yaml\n([\s\S]*?)```/g)) {
    const name = /^resource: ([a-z-]+)/m.exec(block!)?.[1];
    if (name) resources.set(name, block!);
    else if (/^title: /m.test(block!) && /^versions:/m.test(block!)) api ??= block!;
  }
  return { resources, api };
}

for (const page of pages) {
  const { resources, api } = wholeFiles(page);
  if (resources.size === 0) continue;
  test(`${page}: its definition files lint as written`, () => {
    const dir = workspace(`docs-yaml-${page.replace(/[^a-z]/gi, "-")}`);
    try {
      const definitions = path.join(dir, "definitions");
      rmSync(definitions, { recursive: true, force: true });
      canon(["init", dir]);
      for (const file of readdirSync(definitions)) rmSync(path.join(definitions, file));
      writeFileSync(path.join(definitions, "api.yaml"), api ?? "title: Docs\nbase_url: https://api.example.com\nversions:\n  v1: {}\n  v2: {}\n  v3: {}\n");
      const referenced = new Set<string>();
      for (const [name, text] of resources) {
        writeFileSync(path.join(definitions, `${name}.yaml`), text);
        for (const [, other] of text.matchAll(/(?:references|parent): ([a-z-]+)/g)) referenced.add(other!);
      }
      for (const name of referenced) {
        if (!resources.has(name)) writeFileSync(path.join(definitions, `${name}.yaml`), `resource: ${name}\nfields:\n  name: { type: string, max_length: 100 }\n`);
      }
      const run = canon(["lint", "--today", "2026-01-01"], dir);
      assert.equal(run.code, 0, `${page}'s definitions do not lint:\n${run.stdout}${run.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
