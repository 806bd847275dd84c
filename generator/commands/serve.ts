import path from "node:path";
import { pathToFileURL } from "node:url";
import type { FastifyInstance } from "fastify";
import { generateCommand } from "./generate.ts";

export interface ServeOptions {
  definitions: string;
  out: string;
  port: string;
  host: string;
  store: string;
}

interface GeneratedEntry {
  buildApp(options: { authenticate: unknown; store?: unknown; logger?: boolean }): Promise<FastifyInstance>;
  devAuthenticate: unknown;
  MemoryStore: new () => unknown;
}

/** `canon serve`: generates, then serves every version on one port with the dev credentials. */
export async function serveCommand(options: ServeOptions): Promise<number> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`error --port must be a port number, not "${options.port}"\n`);
    return 2;
  }
  if (options.store !== "memory") {
    process.stderr.write(`error --store ${options.store}: this build serves --store memory only (the SQL store is not built yet)\n`);
    return 2;
  }
  const generated = await generateCommand(options);
  if (generated !== 0) return generated;
  const entry = (await import(pathToFileURL(path.resolve(options.out, "index.ts")).href)) as GeneratedEntry;
  const app = await entry.buildApp({ authenticate: entry.devAuthenticate, store: new entry.MemoryStore() });
  const address = await app.listen({ port, host: options.host });
  process.stdout.write(
    [
      `canon serve: listening on ${address} (store: memory)`,
      `  try: curl -H 'Authorization: Bearer dev-writer' ${address}/v2/products`,
      `  docs: ${address}/v2/docs`,
      "",
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      void app.close().then(resolve);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  process.stdout.write("canon serve: closed\n");
  return 0;
}
