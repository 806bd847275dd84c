// The `canon serve` processes of the cluster test: each on a port of its own over one
// PostgreSQL schema and one Redis, with a temp folder of its own (as if on a machine of its
// own: nothing one instance writes to its disk is seen by another), and no setting beyond
// `--store` and `--redis` (no CANON_CURSOR_SECRET: SPEC §10). Every process started here is
// killed when the test process exits, whatever happened.
import { mkdirSync } from "node:fs";
import path from "node:path";
import { serve, stop, type Instance } from "../store/serve.ts";
import { waitUntil } from "./haproxy.ts";

export interface Named {
  name: string;
  instance: Instance;
  base: string;
  port: number;
}

const running = new Set<Instance>();
process.once("exit", () => {
  for (const instance of running) if (instance.process.exitCode === null) instance.process.kill("SIGKILL");
});

/** Starts one instance; resolves once it answers `/v2/openapi.json`. */
export async function startInstance(dir: string, name: string, store: string, redis: string, redisPrefix: string): Promise<Named> {
  const tmp = path.join(dir, "machines", name);
  mkdirSync(tmp, { recursive: true });
  const instance = await serve(dir, ["--host", "127.0.0.1", "--store", store, "--redis", redis], {
    TMPDIR: tmp,
    CANON_REDIS_PREFIX: redisPrefix,
  });
  running.add(instance);
  const base = instance.base;
  await waitUntil(async () => (await fetch(`${base}/v2/openapi.json`)).status === 200, 60_000, () => `${name} never answered /v2/openapi.json:\n${instance.output()}`);
  return { name, instance, base, port: Number(new URL(base).port) };
}

/** Starts several at once (they migrate the one schema at the same time); stops them all if one fails. */
export async function startInstances(dir: string, names: string[], store: string, redis: string, redisPrefix: string): Promise<Named[]> {
  const started = await Promise.allSettled(names.map((name) => startInstance(dir, name, store, redis, redisPrefix)));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all(started.flatMap((s) => (s.status === "fulfilled" ? [stopInstance(s.value)] : [])));
    throw (failed as PromiseRejectedResult).reason;
  }
  return started.map((s) => (s as PromiseFulfilledResult<Named>).value);
}

/** SIGTERM, and the exit code (0: it closed cleanly); an instance already gone gives its code (null: killed by a signal). */
export async function stopInstance(named: Named): Promise<number | null> {
  if (named.instance.process.signalCode !== null) return null;
  // One that has not closed after 60 s is killed (its code is then null, and the test says so).
  const timer = setTimeout(() => named.instance.process.kill("SIGKILL"), 60_000);
  const code = await stop(named.instance);
  clearTimeout(timer);
  running.delete(named.instance);
  return code;
}

/** SIGKILL: the process gets no chance to finish anything. */
export function killInstance(named: Named): Promise<void> {
  return new Promise((resolve) => {
    const child = named.instance.process;
    running.delete(named.instance);
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners("exit");
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
