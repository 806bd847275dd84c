// The generated clients through the TypeScript compiler: the type tests of type-cases.ts under the
// settings of SPEC §4, each client alone under a browser's settings (DOM, no Node types, only
// erasable syntax), and the client of other definitions (hyphenated names, an offset child list,
// an action answering 204, PUT).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { canon, repoRoot, workspace } from "../support/cli.ts";
import { SPEC_COMPILER_OPTIONS, tsc } from "../support/tsc.ts";

const SPEC_OPTIONS = SPEC_COMPILER_OPTIONS;

/** Runs tsc over `files` with `options`; the config is written in `dir`. */
function tscOver(dir: string, name: string, options: object, files: string[]): { code: number; output: string } {
  return tsc(path.join(dir, `tsconfig.${name}.json`), options, files);
}

describe("the generated clients through tsc", () => {
  const tmp = path.join(repoRoot, "test", ".tmp", `client-types-${process.pid}`);

  test("type tests: bodies and results use the version's own types (every @ts-expect-error holds)", () => {
    const result = tscOver(tmp, "cases", SPEC_OPTIONS, [path.join(repoRoot, "test", "client", "type-cases.ts")]);
    assert.equal(result.code, 0, result.output);
  });

  test("a body with a field the version removed fails to compile, naming the field", () => {
    mkdirSync(tmp, { recursive: true });
    const file = path.join(tmp, "wrong.ts");
    writeFileSync(
      file,
      `import { createClient } from "../../../generated/v2/client.ts";\n` +
        `const api = createClient({ baseUrl: "" });\n` +
        `await api.orders.create({ user_id: "x", code: "ORD-000001", total_cents: 1, currency: "EUR", amount_due_cents: 1, legacy_ref: "x" });\n`,
    );
    const result = tscOver(tmp, "wrong", SPEC_OPTIONS, [file]);
    assert.notEqual(result.code, 0);
    assert.match(result.output, /legacy_ref/);
  });

  for (const version of ["v1", "v2"]) {
    test(`${version}/client.ts type-checks in a browser's settings: DOM, no Node types, erasable syntax only`, () => {
      const options = { ...SPEC_OPTIONS, types: [], lib: ["es2023", "dom", "dom.iterable"], erasableSyntaxOnly: true, verbatimModuleSyntax: true };
      const result = tscOver(tmp, `browser-${version}`, options, [path.join(repoRoot, "generated", version, "client.ts")]);
      assert.equal(result.code, 0, result.output);
    });
  }

  test("the client of other definitions: hyphenated collections, an offset child list, a 204 action, PUT", () => {
    const dir = workspace("client-library", "test/fixtures/openapi");
    const run = canon(["generate"], dir);
    assert.equal(run.code, 0, run.stderr);
    const cases = path.join(dir, "cases.ts");
    writeFileSync(
      cases,
      [
        `import { createClient, type CursorPage, type OffsetPage } from "./generated/v2/client.ts";`,
        `import type { BookCopy } from "./generated/v2/book-copies/types.ts";`,
        `const api = createClient({ baseUrl: "http://127.0.0.1:1" });`,
        `export async function cases(id: string): Promise<void> {`,
        `  const copies: OffsetPage<BookCopy> = await api.bookCopies.list({ shelf: "A1", per_page: 5 });`,
        `  const found: CursorPage<BookCopy> = await api.authors.bookCopies.list(id, { q: "x" });`,
        `  const nothing: void = await api.authors.reviews.create(id, { note: "good" });`,
        `  await api.authors.replace(id, { name: "Ann" });`,
        `  await api.bookCopies.get(id);`,
        `  // @ts-expect-error book copies have no replace`,
        `  api.bookCopies.replace(id, { shelf: "A1" });`,
        `  // @ts-expect-error authors cannot be deleted`,
        `  api.authors.delete(id);`,
        `  // @ts-expect-error barcode is read-only`,
        `  await api.bookCopies.create({ author_id: id, shelf: "A1", barcode: "x" });`,
        `  void [copies, found, nothing];`,
        `}`,
        ``,
      ].join("\n"),
    );
    const result = tscOver(dir, "cases", SPEC_OPTIONS, [cases]);
    assert.equal(result.code, 0, result.output);
  });
});
