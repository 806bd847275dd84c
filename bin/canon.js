#!/usr/bin/env node
// Entry of the `canon` command. It runs canon's bundle when there is a fresh one (bundle.js);
// otherwise, inside this repository, the TypeScript sources directly (Node 24 strips types), and
// in an installed package the build in dist/, because Node does not strip types under node_modules.
import { existsSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";
import { bundledMain } from "./bundle.js";

//
// This file is plain JavaScript that parses and runs on Node 18 and later, so that an older
// Node gets one line saying what to change instead of a stack trace.

const MINIMUM_NODE = 24;
const major = Number(process.versions.node.split(".")[0]);
if (!(major >= MINIMUM_NODE)) {
  process.stderr.write(
    `canon: needs Node.js ${MINIMUM_NODE} or newer, this is Node.js ${process.versions.node}: ` +
      `run \`npm install --save-dev node@${MINIMUM_NODE}\` in your project (npx and npm run then use it) or install Node.js ${MINIMUM_NODE}\n`,
  );
  process.exit(2);
}

// V8's code cache for canon and its dependencies (Node's default cache folder in the OS temp
// folder): a warm start skips compiling them. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.();

const root = fileURLToPath(new URL("..", import.meta.url));
const installed = root.includes("/node_modules/");
const source = new URL("../generator/cli/main.ts", import.meta.url);
const built = new URL("../dist/generator/cli/main.js", import.meta.url);
// The bundle of the CLI when there is a fresh one (bundle.js), else the modules one by one.
const entry = bundledMain(new URL("..", import.meta.url), installed) ?? (!installed && existsSync(fileURLToPath(source)) ? source : built);
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
