// `canon serve --log-level` (issue 14, point 6): a JSON line per request on stdout with its
// request id at the default `info`, none at `warn`, and a usage error for an unknown level.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { canon, workspace } from "./support/cli.ts";
import { serve, stop } from "./store/serve.ts";

function requestLines(output: string): Array<Record<string, any>> {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((line) => line.msg === "request");
}

describe("canon serve --log-level", () => {
  test("info (the default): one line per request with its request id; warn: none", async () => {
    const dir = workspace("serve-logs", "definitions");
    const instance = await serve(dir, ["--store", "memory"]);
    try {
      const res = await fetch(`${instance.base}/v2/users`, { headers: { authorization: "Bearer dev-reader" } });
      assert.equal(res.status, 200);
      await new Promise((wait) => setTimeout(wait, 200));
      const [line] = requestLines(instance.output());
      assert.equal(line?.request_id, res.headers.get("x-request-id"));
      assert.equal(line?.status, 200);
      const logged = instance.output().split("\n").filter((l) => l.startsWith("{")).join("\n");
      assert.doesNotMatch(logged, /Bearer/);
    } finally {
      await stop(instance);
    }
    const quiet = await serve(dir, ["--store", "memory", "--log-level", "warn"]);
    try {
      await (await fetch(`${quiet.base}/v2/users`, { headers: { authorization: "Bearer dev-reader" } })).arrayBuffer();
      await new Promise((wait) => setTimeout(wait, 200));
      assert.deepEqual(requestLines(quiet.output()), []);
    } finally {
      await stop(quiet);
    }
  });

  test("an unknown level is a usage error", () => {
    const dir = workspace("serve-logs-bad", "definitions");
    const run = canon(["serve", "--store", "memory", "--log-level", "loud"], dir);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--log-level loud: use one of fatal, error, warn, info, debug, trace, silent/);
  });
});
