// Every instance out of the balancer at once (the database down for all of them: each
// `/v2/ready` answers 503, HAProxy takes them all out): HAProxy then answers every request
// itself. With the configuration docs/scaling.md gives (test/cluster/haproxy.ts), that answer is
// the service's error envelope with Retry-After, as `/v2/ready`'s own 503, not HAProxy's HTML
// page (measured before: a 503 `text/html` body, no Retry-After, for every route, for as long as
// the database was down).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { config, freePort, HAPROXY, NO_INSTANCE_BODY, waitUntil } from "./haproxy.ts";

test("with no instance ready, HAProxy answers 503 with the error envelope and Retry-After", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "canon-balancer-"));
  const port = await freePort();
  // Nothing listens on the instance's port: its checks fail, as a /v2/ready answering 503 does.
  const file = path.join(dir, "haproxy.cfg");
  writeFileSync(file, config(port, path.join(dir, "haproxy.sock"), [{ name: "a", port: await freePort() }]));
  const child = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  try {
    let reply: Response | undefined;
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${output}`);
        reply = await fetch(`http://127.0.0.1:${port}/v2/products`, { headers: { authorization: "Bearer dev-writer" } });
        return reply.status === 503;
      },
      30_000,
      () => `HAProxy never answered 503:\n${output}`,
    );
    for (const url of ["/v2/products", "/v2/users?per_page=5"]) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { method: url.includes("?") ? "GET" : "POST", headers: { "content-type": "application/json" }, body: url.includes("?") ? undefined : "{}" });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
      assert.equal(res.headers.get("retry-after"), "5");
      assert.deepEqual(await res.json(), JSON.parse(NO_INSTANCE_BODY));
    }
  } finally {
    child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
});
