// A TCP proxy between a test's store and the shared PostgreSQL server, which the tests of a
// misbehaving database (db-outage, db-stall) turn bad on purpose: the shared server itself is
// never stopped.
import { connect, createServer, type Socket } from "node:net";
import { POSTGRES_URL } from "./stores.ts";

/**
 * `forward`: bytes pass both ways. `reset` and `refuse`: a new connection is reset at once, and
 * an open one the next time the store sends on it (a reset mid-request; an outage). `silent`: every byte is swallowed both ways (a network that stopped answering).
 */
export type ProxyMode = "forward" | "reset" | "refuse" | "silent";

export interface DbProxy {
  mode: ProxyMode;
  /** The connection string of the store through the proxy, in `schema`. */
  url(schema: string): string;
  /** Resets every open connection at once. */
  resetAll(): void;
  close(): Promise<void>;
}

export async function startDbProxy(): Promise<DbProxy> {
  const upstream = new URL(POSTGRES_URL);
  const pairs = new Set<[Socket, Socket]>();
  const proxy: DbProxy = {
    mode: "forward",
    url(schema) {
      const url = new URL(POSTGRES_URL);
      url.host = `127.0.0.1:${port}`;
      url.searchParams.set("schema", schema);
      return url.toString();
    },
    resetAll() {
      for (const [client, server] of pairs) {
        client.resetAndDestroy();
        server.destroy();
      }
    },
    async close() {
      proxy.mode = "forward";
      for (const pair of pairs) for (const s of pair) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((client) => {
    if (proxy.mode === "reset" || proxy.mode === "refuse") return client.resetAndDestroy();
    const upstreamSocket = connect(Number(upstream.port || 5432), upstream.hostname);
    const pair: [Socket, Socket] = [client, upstreamSocket];
    pairs.add(pair);
    client.on("data", (chunk) => {
      if (proxy.mode === "forward") upstreamSocket.write(chunk);
      else if (proxy.mode !== "silent") {
        client.resetAndDestroy();
        upstreamSocket.destroy();
      }
    });
    upstreamSocket.on("data", (chunk) => proxy.mode !== "silent" && client.write(chunk));
    for (const s of pair) {
      s.on("error", () => {});
      s.on("close", () => {
        pairs.delete(pair);
        client.destroy();
        upstreamSocket.destroy();
      });
    }
  });
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
  return proxy;
}
