// The benchmark suite's own checks: its inputs are what they claim to be (the TypeSpec
// project compiles to the two OpenAPI documents, with the v2 changes), both run-time servers
// answer the same JSON, and wrk's output is read right. These take seconds and measure nothing.
//
// The quick benchmark itself (`npm run bench:quick`, about two minutes, fails when a figure falls
// clearly short of its target) runs here too when CANON_BENCH_QUICK=1: on a machine where
// other tests run beside it, timings would only be noise.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { repoRoot, timeNode, workRoot } from "../bench/lib.ts";
import {
  BENCH_PATHS,
  parseWrk,
  runtimeAvailable,
  startServer,
  stopServer,
  verify,
} from "../bench/runtime.ts";
import { POSTGRES_PATHS, startPostgresServers } from "../bench/postgres.ts";
import { syntheticResources } from "../bench/synthetic.ts";
import { writeTypeSpec } from "../bench/typespec.ts";

describe("benchmarks", () => {
  test("the TypeSpec equivalent compiles to the two OpenAPI documents, with v2's added and renamed field", async (t) => {
    const dir = path.join(workRoot, `test-tsp-${process.pid}`);
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const n = 7; // index 4 is a child collection, index 6 has an action
    writeTypeSpec(dir, n);
    const tsp = path.join(repoRoot, "node_modules", "@typespec", "compiler", "cmd", "tsp.js");
    const run = await timeNode([tsp, "compile", ".", "--output-dir", "out"], { cwd: dir });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const doc = (v: string) =>
      JSON.parse(readFileSync(path.join(dir, "out", `openapi.${v}.json`), "utf8")) as {
        paths: Record<string, unknown>;
        components: { schemas: Record<string, { properties: Record<string, unknown> }> };
      };
    const [v1, v2] = [doc("v1"), doc("v2")];
    const resources = syntheticResources(n);
    const item = "AlphaAlphaEchoItem";
    assert.ok(v1.components.schemas[item]!.properties.sum && !v1.components.schemas[item]!.properties.total);
    assert.ok(
      v2.components.schemas[item]!.properties.total && v2.components.schemas[item]!.properties.flagged,
    );
    assert.ok(
      v2.paths[`/${resources[3]!.name}/{id}/${resources[4]!.name}`],
      "the child collection is listed under its parent",
    );
    assert.ok(v2.paths[`/${resources[6]!.name}/{id}/approvals`], "the action is there");
    assert.equal(Object.keys(v2.paths).length, 2 * n + 2);
  });

  test(
    "the generated and hand-written servers answer the same JSON",
    { skip: !existsSync(path.join(repoRoot, "generated", "index.ts")) },
    async () => {
      const generated = await startServer("generated");
      const handwritten = await startServer("handwritten").catch(async (error: unknown) => {
        await stopServer(generated);
        throw error;
      });
      try {
        await verify(generated, handwritten, BENCH_PATHS);
      } finally {
        await Promise.all([stopServer(generated), stopServer(handwritten)]);
      }
    },
  );

  test(
    "the generated and hand-written PostgreSQL servers answer the same JSON over the same tables",
    { skip: !existsSync(path.join(repoRoot, "generated", "index.ts")) },
    async () => {
      const { generated, handwritten, stop } = await startPostgresServers();
      try {
        await verify(generated, handwritten, POSTGRES_PATHS);
      } finally {
        await stop();
      }
    },
  );

  test("wrk's report is read: requests per second, percentiles in any unit, failures", () => {
    const text = `Running 2s test @ http://127.0.0.1:1/
  1 threads and 32 connections
  Latency Distribution
     50%  812.00us
     75%    1.02ms
     90%    1.50ms
     99%    1.20s
  25000 requests in 2.00s, 10.00MB read
  Non-2xx or 3xx responses: 3
Requests/sec:  12500.50
`;
    const r = parseWrk(text);
    assert.equal(r.rps, 12500.5);
    assert.equal(r.requests, 25000);
    assert.equal(r.p50, 0.812);
    assert.equal(r.p99, 1200);
    assert.equal(r.errors, 3);
  });

  test(
    "quick mode: no figure falls clearly short of its target",
    {
      skip:
        process.env.CANON_BENCH_QUICK === "1"
          ? (runtimeAvailable() ?? false)
          : "set CANON_BENCH_QUICK=1 (or run npm run bench:quick)",
      timeout: 300_000,
    },
    () => {
      const run = spawnSync(process.execPath, [path.join(repoRoot, "bench", "run.ts"), "--quick"], {
        cwd: repoRoot,
        encoding: "utf8",
      });
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    },
  );
});
