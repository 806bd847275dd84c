// SPEC §6 and §11: exactly what a new user does, from the package (`npm pack` stands in for the
// registry) in a temporary folder outside this repository, with the system's npm and, first
// on the PATH, the system's Node (below 24 on the machines canon is tested on).
//
// 1. `npm init -y`, install canon: on the old Node every command stops with one line (exit 2)
//    naming `npm install --save-dev node@24`;
// 2. do that (with typescript and @types/node, the README's install line): `npx` now runs
//    canon on the project's own Node 24; `canon init`, `canon new`, `canon generate`,
//    `canon serve` answering a create and a list;
// 3. the user's own app on `buildApp` (their authenticate, authorize and one service)
//    type-checks with `tsc` and answers;
// 4. `canon check --format github` fails on a hand-edited generated file, and the
//    programmatic API (`import { check } from "canon-codegen"`) says the same as data.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { repoRoot } from "./support/cli.ts";

const systemPath = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(path.delimiter);
const npmFlags = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];

let root = "";
let tarball = "";

/** The environment of a new user's shell: none of this test run's npm settings or its Node. */
function userEnv(PATH: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|NODE_|INIT_CWD$)/i.test(key)));
  return { ...env, PATH, NO_COLOR: "1", npm_config_update_notifier: "false" };
}

/** A command as a new user types it, in `cwd`, with the system's PATH (no Node 24 on it). */
function sh(cwd: string, command: string, args: string[]) {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: userEnv(systemPath) });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, output: `${result.stdout}${result.stderr}` };
}

function ok<T extends { code: number; output: string }>(run: T, what: string): T {
  assert.equal(run.code, 0, `${what}:\n${run.output}`);
  return run;
}

/** The version of the system's Node (the first `node` on the system PATH). */
function systemNodeMajor(): number {
  return Number(/^v(\d+)/.exec(sh(tmpdir(), "node", ["--version"]).stdout)?.[1] ?? 0);
}

before(() => {
  root = mkdtempSync(path.join(tmpdir(), "canon-new-user-"));
  const packed = spawnSync("npm", ["pack", "--silent", "--pack-destination", root], { cwd: repoRoot, encoding: "utf8" });
  assert.equal(packed.status, 0, `npm pack: ${packed.stderr}`);
  tarball = path.join(root, readdirSync(root).find((f) => f.endsWith(".tgz"))!);
});

after(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Starts a long-running command of the project (its bin folder first on the PATH, as npx does). */
function startIn(project: string, file: string, args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawn(file, args, {
    cwd: project,
    env: userEnv(`${path.join(project, "node_modules", ".bin")}${path.delimiter}${systemPath}`),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${file} did not start:\n${output}`));
    }, 180_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (${code}):\n${output}`));
    });
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.removeAllListeners("exit");
    child.once("exit", (code) => resolve(code));
    child.kill("SIGTERM");
  });
}

const USER_APP = `import { buildApp } from "../generated/index.ts";
import { CrudService, MemoryStore, type Principal } from "../generated/runtime/index.ts";
import { resourceSpecs } from "../generated/services.ts";
import type { OrderValues } from "../generated/values.ts";

const tokens = new Map<string, Principal>([
  ["ann-token", { id: "ann", scopes: ["read", "write"] }],
  ["guest-token", { id: "guest", scopes: ["read"] }],
]);

/** Orders keep their name without surrounding spaces. */
class OrderService extends CrudService<OrderValues> {
  async create(values: OrderValues) {
    return super.create({ ...values, name: values.name.trim() });
  }
}

export async function start(port: number): Promise<string> {
  const store = new MemoryStore();
  const app = await buildApp({
    authenticate: (request) => {
      const header = request.headers.authorization ?? "";
      return tokens.get(header.replace(/^Bearer /, "")) ?? null;
    },
    authorize: ({ principal, action }) => action === "list" || action === "read" || principal.id === "ann",
    store,
    services: { orders: new OrderService(store, resourceSpecs.orders) },
  });
  return app.listen({ port, host: "127.0.0.1" });
}
`;

const USER_SERVER = `import { start } from "./app.ts";

const address = await start(Number(process.env.PORT ?? 0));
console.log(\`listening on \${address}\`);
`;

const USER_CI = `import { check, lint } from "canon-codegen";

const linted = await lint();
const checked = await check();
console.log(JSON.stringify({ lint: linted.ok, check: checked.ok, differs: checked.differs, diagnostics: checked.diagnostics }));
`;

describe("a new user, from the package", { concurrency: false }, () => {
  test("npm init -y, install, init, new, generate, serve, their own app through tsc, check in CI", { timeout: 900_000 }, async () => {
    const project = path.join(root, "shop");
    mkdirSync(project);
    ok(sh(project, "npm", ["init", "-y"]), "npm init -y");
    ok(sh(project, "npm", ["install", "--save-dev", ...npmFlags, tarball]), "npm install canon");
    assert.ok(existsSync(path.join(project, "node_modules", "canon-codegen", "dist", "generator", "cli", "main.js")), "the build ships");

    // 1. The system's Node is too old: one line, exit 2, for every command.
    if (systemNodeMajor() < 24) {
      for (const args of [["--version"], ["init"], ["generate"]]) {
        const refused = sh(project, "npx", ["canon", ...args]);
        assert.equal(refused.code, 2, refused.output);
        // npm's own warnings (this machine's npmrc) aside, canon says one line.
        const canonLines = refused.stderr.trimEnd().split("\n").filter((line) => !line.startsWith("npm warn"));
        assert.equal(canonLines.length, 1, `one line, no stack trace:\n${refused.stderr}`);
        assert.match(canonLines[0]!, /^canon: needs Node\.js 24 or newer, this is Node\.js \d+.*npm install --save-dev node@24/);
      }
      assert.equal(existsSync(path.join(project, "definitions")), false);
    }

    // 2. As the line says (and the README's install line): the project's own Node 24.
    ok(sh(project, "npm", ["install", "--save-dev", ...npmFlags, "node@24", "typescript", "@types/node@24"]), "npm install node@24 typescript @types/node@24");
    const version = ok(sh(project, "npx", ["canon", "--version"]), "canon --version");
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")).version);
    const help = ok(sh(project, "npx", ["canon", "--help"]), "canon --help");
    assert.match(help.stdout, /generate/);
    // npm init -y made a CommonJS package: canon says what to change before init fixes it.
    const cjs = sh(project, "npx", ["canon", "generate"]);
    assert.equal(cjs.code, 2, cjs.output);
    assert.match(cjs.stderr, /"type": "commonjs".*set "type": "module"/);

    const init = ok(sh(project, "npx", ["canon", "init"]), "canon init");
    assert.match(init.stdout, /"type": "module" \(was "commonjs"\)/);
    const pkg = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8"));
    assert.equal(pkg.type, "module");
    assert.equal(pkg.engines.node, ">=24");
    assert.equal(pkg.scripts.generate, "canon generate");
    assert.ok(pkg.devDependencies["canon-codegen"] && pkg.devDependencies.node);
    ok(sh(project, "npx", ["canon", "new", "orders", "--parent", "users"]), "canon new");
    ok(sh(project, "npx", ["canon", "generate"]), "canon generate");
    assert.ok(existsSync(path.join(project, "generated", "v1", "openapi.json")));
    ok(sh(project, "npx", ["canon", "check"]), "canon check");
    ok(sh(project, "npm", ["run", "check"]), "npm run check");

    // canon serve (the default store: PGlite under .canon-data) answers a create and a list.
    const bin = path.join(project, "node_modules", ".bin", "canon");
    const serve = await startIn(project, bin, ["serve", "--port", "0"], /listening on (http:\/\/[\d.]+:\d+)/);
    try {
      const base = serve.match[1]!;
      const headers = { authorization: "Bearer dev-writer", "content-type": "application/json" };
      const user = await fetch(`${base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "ann@example.com", name: "Ann" }) });
      assert.equal(user.status, 201);
      const { id } = (await user.json()) as { id: string };
      const order = await fetch(`${base}/v1/orders`, { method: "POST", headers, body: JSON.stringify({ user_id: id, name: "First" }) });
      assert.equal(order.status, 201, await order.clone().text());
      const list = await fetch(`${base}/v1/users/${id}/orders`, { headers });
      assert.equal(list.status, 200);
      assert.deepEqual(((await list.json()) as { data: Array<{ name: string }> }).data.map((o) => o.name), ["First"]);
    } finally {
      assert.equal(await stop(serve.child), 0, serve.output());
    }
    assert.match(readFileSync(path.join(project, ".gitignore"), "utf8"), /^\.canon-data\/$/m);

    // 3. Their own app on buildApp: it type-checks with tsc beside generated/, and answers.
    mkdirSync(path.join(project, "src"));
    writeFileSync(path.join(project, "src", "app.ts"), USER_APP);
    writeFileSync(path.join(project, "src", "server.ts"), USER_SERVER);
    writeFileSync(path.join(project, "src", "ci.ts"), USER_CI);
    ok(sh(project, "npx", ["tsc"]), "tsc over generated/ and src/");
    const node = path.join(project, "node_modules", ".bin", "node");
    const app = await startIn(project, node, ["src/server.ts"], /listening on (http:\/\/[\d.]+:\d+)/);
    try {
      const base = app.match[1]!;
      const as = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
      assert.equal((await fetch(`${base}/v1/users`, { headers: as("nobody") })).status, 401);
      const user = await fetch(`${base}/v1/users`, { method: "POST", headers: as("ann-token"), body: JSON.stringify({ email: "bo@example.com", name: "Bo" }) });
      assert.equal(user.status, 201);
      const { id } = (await user.json()) as { id: string };
      const forbidden = await fetch(`${base}/v1/orders`, { method: "POST", headers: as("guest-token"), body: JSON.stringify({ user_id: id, name: "x" }) });
      assert.equal(forbidden.status, 403);
      const order = await fetch(`${base}/v1/orders`, { method: "POST", headers: as("ann-token"), body: JSON.stringify({ user_id: id, name: "  Trimmed  " }) });
      assert.equal(order.status, 201);
      assert.equal(((await order.json()) as { name: string }).name, "Trimmed", "their service ran");
      const list = await fetch(`${base}/v1/orders`, { headers: as("guest-token") });
      assert.equal(((await list.json()) as { data: unknown[] }).data.length, 1);
    } finally {
      await stop(app.child);
    }

    // 4. In CI: a hand-edited generated file fails check, as annotations and through the API.
    const routes = path.join(project, "generated", "v1", "users", "routes.ts");
    const lines = readFileSync(routes, "utf8").split("\n");
    lines[4] = `${lines[4]} // my fix`;
    writeFileSync(routes, lines.join("\n"));
    const checked = sh(project, "npx", ["canon", "check", "--format", "github"]);
    assert.equal(checked.code, 1, checked.output);
    assert.match(checked.stdout, /^::error file=generated\/v1\/users\/routes\.ts,line=5,col=1,title=output-drift::/m);
    const api = ok(sh(project, node, ["src/ci.ts"]), "the programmatic API");
    const result = JSON.parse(api.stdout) as { lint: boolean; check: boolean; differs: string[]; diagnostics: Array<{ rule: string; file: string; line: number }> };
    assert.equal(result.lint, true);
    assert.equal(result.check, false);
    assert.deepEqual(result.differs, ["v1/users/routes.ts"]);
    assert.deepEqual(result.diagnostics.map((d) => [d.rule, d.file, d.line]), [["output-drift", "generated/v1/users/routes.ts", 5]]);
  });

  test("the README's steps in an empty folder: install, init, new, generate, check, tsc", { timeout: 600_000 }, () => {
    const project = path.join(root, "empty");
    mkdirSync(project);
    // The README's install line, with the packed file standing in for the registry's canon-codegen.
    ok(sh(project, "npm", ["install", "--save-dev", ...npmFlags, tarball, "node@24", "typescript", "@types/node@24"]), "npm install");
    ok(sh(project, "npx", ["canon", "init"]), "canon init");
    ok(sh(project, "npx", ["canon", "new", "orders", "--parent", "users"]), "canon new");
    ok(sh(project, "npx", ["canon", "generate"]), "canon generate");
    ok(sh(project, "npx", ["canon", "check"]), "canon check");
    ok(sh(project, "npx", ["tsc"]), "tsc");
  });
});
