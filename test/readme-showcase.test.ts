// The README's first steps run as written: the showcase started as `npm start` starts it (its
// package.json script, on a fresh data folder) fills the empty store with the sample records of
// samples/showcase.yaml, the curl examples of "Calling the showcase" answer as they say (the
// search finds the sample lamps), and the TypeScript snippet of the typed client runs and
// type-checks after them. Both blocks are taken from README.md, so README and test cannot drift.
// A second start on the same data folder leaves the store as it is.
import assert from "node:assert/strict";
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { bin, repoRoot, workspace } from "./support/cli.ts";

type Obj = Record<string, any>;
const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");

/** The first fenced block of a language after a heading of README.md. */
function blockAfter(heading: string, language: string): string {
  const at = readme.indexOf(heading);
  assert.ok(at >= 0, `README has "${heading}"`);
  const block = new RegExp("```" + language + "\\n([\\s\\S]*?)```").exec(readme.slice(at));
  assert.ok(block, `README has a ${language} block after "${heading}"`);
  return block[1]!;
}

/** `npm start`'s command line, from package.json, with --port 0 (as `npm start -- --port 0`). */
function startArgs(): string[] {
  const script = (JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start;
  const words = script.split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["node", "bin/canon.js"], script);
  return [...words.slice(2), "--port", "0"];
}

function start(dir: string): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  delete env.CANON_STORE; // npm start's default store: pglite:.canon-data under the folder
  const child = spawn(process.execPath, [bin, ...startArgs()], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen:\n${output}`)), 180_000);
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
      reject(new Error(`npm start exited (${code}):\n${output}`));
    });
  });
}

async function stop(instance: { child: ChildProcess; output: () => string }): Promise<void> {
  instance.child.removeAllListeners("exit");
  const exited = new Promise<number | null>((resolve) => instance.child.once("exit", resolve));
  instance.child.kill("SIGTERM");
  assert.equal(await exited, 0, instance.output());
}

/** The shell block's commands: its first line (the variables), then each curl command, continuation lines joined. */
function curlCommands(block: string): { prelude: string; commands: string[] } {
  const joined = block.replace(/\\\n\s*/g, "").split("\n");
  const prelude = joined[0]!;
  assert.match(prelude, /^W=.*J=/);
  return { prelude, commands: joined.slice(1).filter((line) => line.startsWith("curl ")) };
}

test("npm start fills an empty store with sample data; the README's curl examples and TypeScript snippet run as written", { timeout: 600_000, skip: spawnSync("sh", ["-c", "command -v curl"]).status !== 0 && "curl missing" }, async () => {
  const dir = workspace("readme-showcase", "definitions");
  cpSync(path.join(repoRoot, "samples"), path.join(dir, "samples"), { recursive: true });
  const first = await start(dir);
  try {
    assert.match(first.output(), /sample data written from samples\/showcase\.yaml: 3 users, 4 products, 3 orders, 2 invoices/);
    const { prelude, commands } = curlCommands(blockAfter("## Calling the showcase", "sh"));
    assert.equal(commands.length, 7, commands.join("\n"));
    const ids: Record<string, string> = {};
    const answers: Array<{ status: number; text: string }> = [];
    for (const command of commands) {
      const concrete = command
        .replaceAll("http://127.0.0.1:3000", first.base)
        .replaceAll("<user id>", ids.user ?? "<user id>")
        .replaceAll("<order id>", ids.order ?? "<order id>")
        .replace(/^curl /, "curl -w '\\n%{http_code}' ");
      const run = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", `${prelude}\n${concrete}`], { encoding: "utf8" });
      const lines = run.stdout.trimEnd().split("\n");
      const answer = { status: Number(lines.pop()), text: lines.join("\n") };
      answers.push(answer);
      if (/-d '\{"email"/.test(command)) ids.user = (JSON.parse(answer.text) as Obj).id;
      if (/-d '\{"user_id"/.test(command)) ids.order = (JSON.parse(answer.text) as Obj).id;
    }
    const body = (i: number): Obj => JSON.parse(answers[i]!.text) as Obj;
    const [user, order, userOrders, search, cancellation, v1, events] = answers;
    assert.equal(user!.status, 201, user!.text);
    assert.equal(body(0).email, "ann@example.com");
    assert.equal(order!.status, 201, order!.text);
    assert.equal(userOrders!.status, 200);
    assert.deepEqual(body(2).data.map((o: Obj) => o.code), ["ORD-000001"]);
    // The search finds the sample lamps.
    assert.equal(search!.status, 200);
    assert.deepEqual(body(3).data.map((p: Obj) => p.name).sort(), ["Floor lamp", "Reading lamp"]);
    assert.equal(cancellation!.status, 201, cancellation!.text);
    assert.equal(v1!.status, 200);
    assert.match(v1!.text, /^deprecation: /im);
    const v1Orders = JSON.parse(v1!.text.slice(v1!.text.indexOf("\r\n\r\n") + 4)) as Obj;
    assert.equal(v1Orders.data.length, 4, "the 3 sample orders and the README's");
    assert.equal(events!.status, 200);
    assert.ok(body(6).data.length > 0);

    // The TypeScript snippet, as written but for the port, beside the generated client.
    const snippet = blockAfter("## Calling it from TypeScript", "ts").replaceAll("http://127.0.0.1:3000", first.base);
    writeFileSync(path.join(dir, "readme-client.ts"), snippet);
    const ran = spawnSync(process.execPath, ["readme-client.ts"], { cwd: dir, encoding: "utf8", timeout: 60_000 });
    assert.equal(ran.status, 0, `${ran.stdout}${ran.stderr}`);
    assert.match(ran.stdout, /^ORD-000010$/m);
    assert.match(ran.stdout, /pending orders; Reading lamp now costs 15\.00/);
    const tsc = spawnSync(
      path.join(repoRoot, "node_modules", ".bin", "tsc"),
      ["--ignoreConfig", "--noEmit", "--strict", "--target", "es2023", "--module", "nodenext", "--moduleResolution", "nodenext", "--allowImportingTsExtensions", "--skipLibCheck", "--types", "node", "readme-client.ts"],
      { cwd: dir, encoding: "utf8" },
    );
    assert.equal(tsc.status, 0, `${tsc.stdout}${tsc.stderr}`);
    const lamp = (await (await fetch(`${first.base}/v2/products?q=reading`, { headers: { authorization: "Bearer dev-reader" } })).json()) as Obj;
    assert.equal(lamp.data[0].price_cents, 1500);
  } finally {
    await stop(first);
  }

  // The same data folder again: it holds records, so nothing is written.
  const second = await start(dir);
  try {
    assert.match(second.output(), /sample data not written: the store holds users already/);
    const users = (await (await fetch(`${second.base}/v2/users`, { headers: { authorization: "Bearer dev-reader" } })).json()) as Obj;
    assert.deepEqual(users.data.map((u: Obj) => u.email).sort(), ["ann@example.com", "cy@example.com", "dee@example.com", "eli@example.com", "fay@example.com"]);
  } finally {
    await stop(second);
  }
});
