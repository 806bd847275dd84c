// Every instance out of the balancer at once (the database down for all of them: each
// `/v2/ready` answers 503, HAProxy takes them all out): HAProxy then answers every request
// itself. With the configuration docs/scaling.md gives (test/cluster/haproxy.ts), that answer is
// the service's error envelope with Retry-After, as `/v2/ready`'s own 503, not HAProxy's HTML
// page (measured before: a 503 `text/html` body, no Retry-After, for every route, for as long as
// the database was down).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import * as v2 from "../../generated/v2/client.ts";
import { config, freePort, HAPROXY, NO_ANSWER_BODY, NO_INSTANCE_BODY, waitUntil } from "./haproxy.ts";

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

// An instance that passes its checks but fails a request HAProxy already sent it: killed
// mid-request (the connection closed without an answer: 502), or silent past `timeout server`
// (504). Measured before: HAProxy's HTML page for both. The typed client sends a GET again
// after a 502, as after a lost connection, and gets the next instance's answer.
test("an instance that fails mid-request: 502 and 504 with the error envelope; the client retries the 502", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "canon-balancer-"));
  const port = await freePort();
  let listed = 0;
  const instance = createServer((req, res) => {
    if (req.url === "/v2/ready") return void res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ready"}');
    if (req.url === "/v2/silent") return; // never answers
    if (req.method === "GET" && req.url?.startsWith("/v2/products") && ++listed > 1) {
      return void res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end('{"data":[],"next_cursor":null}');
    }
    req.socket.destroy(); // dies before answering
  });
  await new Promise<void>((resolve) => instance.listen(0, "127.0.0.1", resolve));
  const instancePort = (instance.address() as AddressInfo).port;
  const file = path.join(dir, "haproxy.cfg");
  writeFileSync(file, config(port, path.join(dir, "haproxy.sock"), [{ name: "a", port: instancePort }], "1s"));
  const child = spawn(HAPROXY, ["-db", "-f", file], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${output}`);
        return (await fetch(`http://127.0.0.1:${port}/v2/ready`).catch(() => null))?.status === 200;
      },
      30_000,
      () => `HAProxy never passed /v2/ready through:\n${output}`,
    );
    for (const [url, status] of [["/v2/orders", 502], ["/v2/silent", 504]] as const) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: "Bearer dev-reader" } });
      assert.equal(res.status, status, url);
      assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8", url);
      assert.deepEqual(await res.json(), JSON.parse(NO_ANSWER_BODY), url);
    }
    const api = v2.createClient({ baseUrl: `http://127.0.0.1:${port}`, token: "dev-reader" });
    const page = await api.products.list().withResponse();
    assert.deepEqual([page.status, listed], [200, 2], "the 502 was retried once");
    // A PATCH may have reached the instance: never sent again; the 502 is thrown as the envelope says.
    const error = await api.products.update("0190a0b0-c0d0-7000-8000-000000000001", { name: "x" }).then(() => null, (e: unknown) => e);
    assert.ok(error instanceof v2.ApiError, String(error));
    assert.deepEqual([error.status, error.code], [502, "INTERNAL_ERROR"]);
  } finally {
    child.kill("SIGTERM");
    await new Promise<void>((resolve) => instance.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
});
