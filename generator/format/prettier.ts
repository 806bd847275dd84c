/**
 * How canon runs prettier, in one place: the options of every generated file, the parser of each
 * language, and the identity of the formatter (its exact version and these settings), which keys
 * the format cache and the up-to-date stamp. Kept apart from format.ts so that the stamp can read
 * the identity without loading the formatting pipeline.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The line width of every generated TypeScript file (format/layout.ts lays out to it too). */
export const PRINT_WIDTH = 110;

/** Prettier options of every generated file: fixed, so output is the same on every machine. */
export const PRETTIER_OPTIONS = { printWidth: PRINT_WIDTH, trailingComma: "all", endOfLine: "lf" } as const;

/**
 * The prettier parser for each language. TypeScript goes through `babel-ts`: it prints the same
 * code as the `typescript` parser (the tests check the output with the `typescript` parser too),
 * and loads and parses faster, which is most of the cost of regenerating a few files.
 */
export const PRETTIER_PARSERS = { typescript: "babel-ts", json: "json", markdown: "markdown" } as const;

let identity: string | undefined;

/**
 * What decides prettier's output beside a file's text: prettier's exact installed version
 * (package.json pins it, but the installed copy is what runs), the options and the parsers. Read
 * from prettier's package.json, without loading prettier.
 */
export function formatterIdentity(): string {
  if (identity === undefined) {
    const require = createRequire(import.meta.url);
    const manifest = JSON.parse(readFileSync(require.resolve("prettier/package.json"), "utf8")) as { version: string };
    identity = JSON.stringify([`prettier@${manifest.version}`, PRETTIER_OPTIONS, PRETTIER_PARSERS]);
  }
  return identity;
}
