// Runs the whole test suite (after `tsc`) with Node's own runner. Extra arguments are passed on
// (for example a file list: `npm test -- test/lint.test.ts`).
import { spawnSync } from "node:child_process";

// Type-check canon itself (generator, runtime, tests) first: a type error fails the suite.
const typecheck = spawnSync("tsc", ["-p", "tsconfig.json"], { stdio: "inherit" });
if (typecheck.status !== 0) process.exit(typecheck.status ?? 1);

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith("-"));
const flags = args.filter((a) => a.startsWith("-"));
const result = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=2", "--test-reporter=spec", ...flags, ...(files.length ? files : ["test/**/*.test.ts"])],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
