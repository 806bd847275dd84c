// `canon serve` as a child process: start it on a free port, wait for its banner, stop it with
// SIGTERM; and a product written to it as the dev writer.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { bin } from "../support/cli.ts";

export interface Instance {
  process: ChildProcess;
  base: string;
  output: () => string;
}

export function serve(dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Instance> {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], {
    cwd: dir,
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`serve did not start:\n${output}`));
    }, 180_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ process: child, base: match[1]!, output: () => output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}):\n${output}`));
    });
  });
}

export function stop(instance: Instance): Promise<number | null> {
  return new Promise((resolve) => {
    if (instance.process.exitCode !== null) return resolve(instance.process.exitCode);
    instance.process.removeAllListeners("exit");
    instance.process.once("exit", (code) => resolve(code));
    instance.process.kill("SIGTERM");
  });
}


/** The headers of a JSON request by the dev writer. */
export const writerHeaders = { authorization: "Bearer dev-writer", "content-type": "application/json" };

/** Creates a product on a served instance as the dev writer; asserts 201 and gives the product. */
export async function postProduct(instance: Instance, sku: string, name: string): Promise<{ id: string }> {
  const created = await fetch(`${instance.base}/v2/products`, {
    method: "POST",
    headers: writerHeaders,
    body: JSON.stringify({ sku, name, price_cents: 1 }),
  });
  assert.equal(created.status, 201);
  return (await created.json()) as { id: string };
}
