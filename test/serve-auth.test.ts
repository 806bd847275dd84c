// Production is not dev (issue 30): `canon serve` accepts the dev credentials on a loopback host
// or with --dev-credentials, and says so in one line; on any other host without either it
// refuses to start (one line, exit 2). `--auth <module>` brings the user's `authenticate`;
// `CANON_STORE` names the store; a failing store's password is never printed.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { canon, workspace } from "./support/cli.ts";
import { type Instance, serve, stop } from "./store/serve.ts";

let dir: string;
const started: Instance[] = [];

before(() => {
  dir = workspace("serve-auth", "definitions");
  writeFileSync(
    path.join(dir, "auth.ts"),
    [
      "const tokens = new Map([[\"secret-token\", { id: \"alice\", scopes: [\"read\", \"write\"] }]]);",
      "export function authenticate(request: { headers: Record<string, string | undefined> }) {",
      "  const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? \"\")?.[1];",
      "  return (token && tokens.get(token)) ?? null;",
      "}",
      "",
    ].join("\n"),
  );
});

after(async () => {
  await Promise.all(started.map(stop));
});

async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Instance> {
  const instance = await serve(dir, ["--store", "memory", ...args], env);
  started.push(instance);
  return instance;
}

const status = async (instance: Instance, token: string) =>
  (await fetch(`${instance.base}/v2/users`, { headers: { authorization: `Bearer ${token}` } })).status;

test("on a host that is not loopback, without --auth or --dev-credentials, serve refuses to start in one line", () => {
  const run = canon(["serve", "--port", "0", "--host", "0.0.0.0", "--store", "memory"], dir);
  assert.equal(run.code, 2);
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, /--host 0\.0\.0\.0 is not loopback.*--dev-credentials.*--auth/);
});

test("with --dev-credentials the dev writer is accepted there, and the banner says why", async () => {
  const instance = await start(["--host", "0.0.0.0", "--dev-credentials"]);
  assert.equal(await status(instance, "dev-writer"), 200);
  assert.match(instance.output(), /dev credentials \(Bearer dev-writer, dev-reader\) are accepted: --dev-credentials/);
});

test("on loopback the dev credentials are accepted, and the banner says so", async () => {
  const instance = await start([]);
  assert.equal(await status(instance, "dev-reader"), 200);
  assert.match(instance.output(), /are accepted: the host is loopback/);
});

test("--auth: the module's authenticate decides; the dev credentials are refused", async () => {
  const instance = await start(["--host", "0.0.0.0", "--auth", "./auth.ts"]);
  assert.equal(await status(instance, "secret-token"), 200);
  assert.equal(await status(instance, "dev-writer"), 401);
  assert.equal(await status(instance, "wrong"), 401);
  assert.match(instance.output(), /authentication: \.\/auth\.ts; the dev credentials are not accepted/);
});

test("--auth naming a module without authenticate is refused in one line", () => {
  writeFileSync(path.join(dir, "empty.ts"), "export const nothing = 1;\n");
  const run = canon(["serve", "--port", "0", "--store", "memory", "--auth", "./empty.ts"], dir);
  assert.equal(run.code, 2);
  assert.equal(run.stderr.trim(), "error --auth ./empty.ts: exports no function authenticate");
});

test("CANON_STORE names the store when --store is absent", async () => {
  const instance = await serve(dir, [], { CANON_STORE: "memory" });
  started.push(instance);
  assert.match(instance.output(), /\(store: memory/);
});

test("a store that cannot be reached: the error names it without its password, from --store or CANON_STORE", () => {
  const secret = "s3cr3t-Pa55";
  const url = `postgres://app:${secret}@127.0.0.1:1/shop`;
  for (const run of [
    canon(["serve", "--port", "0", "--store", url], dir),
    canon(["serve", "--port", "0"], dir, { CANON_STORE: url }),
  ]) {
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /error --store postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/shop/);
    assert.ok(!(run.stdout + run.stderr).includes(secret), run.stdout + run.stderr);
  }
});
