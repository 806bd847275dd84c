// `canon dev` takes every option of `serve` (one table, generator/commands/serve-options.ts),
// logs each request in one line, applies a change to a draft version at once, and answers a
// breaking change of a published version with the exact command line that lets it through.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { bin, canon, workspace } from "./support/cli.ts";

const headers = { authorization: "Bearer dev-writer", "content-type": "application/json" };

function startDev(dir: string, args: string[]): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const child = spawn(process.execPath, [bin, "dev", "--port", "0", ...args], { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, base: match[1]!, output: () => output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dev exited (${code}):\n${output}`));
    });
  });
}

async function eventually(what: string, check: () => Promise<boolean> | boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function stopDev(dev: { child: ChildProcess; output: () => string }): Promise<void> {
  dev.child.removeAllListeners("exit");
  const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
  dev.child.kill("SIGTERM");
  assert.equal(await exited, 0, dev.output());
}

function requestLines(output: string): Array<Record<string, unknown>> {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === "request");
}

test("canon dev takes serve's options: --cors, --trust-proxy, --log-level (a line per request), and a draft changes freely", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-options");
  assert.equal(canon(["init"], dir).code, 0);
  const users = path.join(dir, "definitions", "users.yaml");
  writeFileSync(path.join(dir, "samples.yaml"), "version: v1\nrecords:\n  users:\n    - { email: sam@example.com, name: Sam }\n");
  const dev = await startDev(dir, ["--store", "memory", "--cors", "https://app.example.com", "--trust-proxy", "none", "--log-level", "info", "--sample-data", "samples.yaml"]);
  try {
    assert.match(dev.output(), /CORS for https:\/\/app\.example\.com/);
    // --sample-data, as serve takes it: the empty store gets the file's records.
    assert.match(dev.output(), /canon dev: sample data written from samples\.yaml: 1 users/);
    const created = await fetch(`${dev.base}/v1/users`, {
      method: "POST",
      headers: { ...headers, origin: "https://app.example.com" },
      body: JSON.stringify({ email: "ann@example.com", name: "Ann" }),
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get("access-control-allow-origin"), "https://app.example.com");
    const requestId = created.headers.get("x-request-id");
    await eventually("the request's log line", () => requestLines(dev.output()).some((l) => l.request_id === requestId), dev.output);
    const mine = requestLines(dev.output()).filter((l) => l.request_id === requestId);
    assert.equal(mine.length, 1, "one line per request");
    const line = mine[0];
    assert.equal(line?.status, 201);
    assert.equal(line?.method, "POST");
    assert.doesNotMatch(dev.output(), /Bearer dev-writer"/);

    // v1 of the starter is a draft: removing a field is no break, the new code serves at once.
    writeFileSync(users, readFileSync(users, "utf8").replace(/  name: .*\n/, ""));
    await eventually(
      "the draft's change",
      async () => {
        const response = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "bo@example.com" }) });
        await response.arrayBuffer();
        return response.status === 201;
      },
      dev.output,
    );
    assert.doesNotMatch(dev.output(), /refused/);
    // Each app of the session logs its requests, the new one too.
    await eventually("the new app's log lines", () => requestLines(dev.output()).some((l) => l.status === 201 && l !== line && l.url === "/v1/users"), dev.output);
  } finally {
    await stopDev(dev);
  }
});

test("canon dev answers a break of a published version with the exact command that lets it through", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-breaking");
  assert.equal(canon(["init"], dir).code, 0);
  const api = path.join(dir, "definitions", "api.yaml");
  const users = path.join(dir, "definitions", "users.yaml");
  // v1 published: generated once without draft.
  writeFileSync(api, readFileSync(api, "utf8").replace(/  v1: \{ draft: true \}.*\n/, "  v1: {}\n"));
  assert.equal(canon(["generate"], dir).code, 0);
  const dev = await startDev(dir, ["--store", "memory", "--log-level", "warn"]);
  try {
    assert.equal((await fetch(`${dev.base}/v1/users`, { headers })).status, 200);
    writeFileSync(users, readFileSync(users, "utf8").replace(/  name: .*\n/, ""));
    await eventually("the refusal", () => /still serving the last good version/.test(dev.output()), dev.output);
    assert.match(dev.output(), /canon dev: refused: published versions never break \(v1\)/);
    assert.match(dev.output(), /stop this session \(Ctrl-C\) and run\n    npx canon dev --port 0 --store memory --log-level warn --allow-breaking\n/);
    // The last good code still requires the name.
    const response = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "bo@example.com" }) });
    assert.equal(response.status, 400);
    // --log-level warn: no request lines.
    assert.deepEqual(requestLines(dev.output()), []);
  } finally {
    await stopDev(dev);
  }
  // The command it printed runs, and lets the change through (with the warning).
  const allowed = await startDev(dir, ["--store", "memory", "--log-level", "warn", "--allow-breaking"]);
  try {
    assert.match(allowed.output(), /WARNING: --allow-breaking/);
    const response = await fetch(`${allowed.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "bo@example.com" }) });
    assert.equal(response.status, 201);
  } finally {
    await stopDev(allowed);
  }
});

test("canon dev refuses what serve refuses: an unknown log level, a bad --cors, a bad --redis, a missing --sample-data file", () => {
  const dir = workspace("dev-usage");
  assert.equal(canon(["init"], dir).code, 0);
  const level = canon(["dev", "--store", "memory", "--log-level", "loud"], dir);
  assert.equal(level.code, 2);
  assert.match(level.stderr, /--log-level loud: use one of fatal, error, warn, info, debug, trace, silent/);
  const cors = canon(["dev", "--store", "memory", "--cors", "not a url"], dir);
  assert.equal(cors.code, 2);
  assert.match(cors.stderr, /^error --cors: /m);
  const redis = canon(["dev", "--store", "memory", "--redis", "http://x"], dir);
  assert.equal(redis.code, 2);
  assert.match(redis.stderr, /--redis http:\/\/x: use redis:\/\/host:port/);
  const samples = canon(["dev", "--port", "0", "--store", "memory", "--sample-data", "missing.yaml"], dir);
  assert.equal(samples.code, 1);
  assert.match(samples.stderr, /^error --sample-data missing\.yaml: no such file$/m);
  const host = canon(["dev", "--store", "memory", "--host", "0.0.0.0"], dir);
  assert.equal(host.code, 2);
  assert.match(host.stderr, /not loopback: the dev credentials are accepted there only with --dev-credentials/);
});
