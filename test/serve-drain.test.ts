// `canon serve` stopping (SIGTERM) while a client's connection is busy: the server takes no new
// connection, but a request that arrives on a connection still open (a keep-alive connection of a
// load balancer that was busy when the signal came) is answered by the service, as any other
// request, with `Connection: close` — not Fastify's bare 503, which has no error envelope, no
// X-Request-Id and is in no OpenAPI document. `/vN/ready` answers 503 from then on, so that the
// balancer sends nothing more.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { workspace } from "./support/cli.ts";
import { serve, stop } from "./store/serve.ts";

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads HTTP/1.1 responses with a Content-Length off one socket, one at a time. */
function responses(socket: Socket): () => Promise<RawResponse> {
  let buffer = Buffer.alloc(0);
  let wake: (() => void) | null = null;
  let ended = false;
  socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake?.();
  });
  socket.on("close", () => {
    ended = true;
    wake?.();
  });
  socket.on("error", () => {});
  return async () => {
    for (;;) {
      const end = buffer.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = buffer.subarray(0, end).toString("latin1").split("\r\n");
        const headers: Record<string, string> = {};
        for (const line of head.slice(1)) {
          const colon = line.indexOf(":");
          headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
        }
        const length = Number(headers["content-length"] ?? 0);
        if (buffer.length >= end + 4 + length) {
          const body = buffer.subarray(end + 4, end + 4 + length).toString("utf8");
          buffer = buffer.subarray(end + 4 + length);
          return { status: Number(head[0]!.split(" ")[1]), headers, body };
        }
      }
      if (ended) throw new Error(`the connection closed before a whole response: ${JSON.stringify(buffer.toString())}`);
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
  };
}

describe("canon serve: SIGTERM while a connection is busy", () => {
  test("a request arriving on an open connection during the drain gets the service's answer, then the connection closes", async () => {
    const dir = workspace("serve-drain", "definitions");
    const instance = await serve(dir, ["--store", "memory", "--log-level", "warn"]);
    const exited = new Promise<number | null>((resolve) => instance.process.once("exit", (code) => resolve(code)));
    const { port } = new URL(instance.base);
    const open = async () => {
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      return socket;
    };
    const socket = await open();
    const other = await open();
    const next = responses(socket);
    const nextOther = responses(other);
    const body = (sku: string) => JSON.stringify({ sku, name: "Drained", price_cents: 1 });
    const auth = "Authorization: Bearer dev-writer\r\n";
    const post = (text: string) =>
      `POST /v2/products HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n`;
    try {
      // A request on each connection is under way when the signal comes: its body is half sent.
      const [first, second] = [body("DRAIN-1"), body("DRAIN-2")];
      socket.write(post(first) + first.slice(0, 10));
      other.write(post(second) + second.slice(0, 10));
      await sleep(200);
      instance.process.kill("SIGTERM");
      await sleep(500);
      socket.write(first.slice(10));
      other.write(second.slice(10));
      const created = await next();
      assert.equal(created.status, 201, created.body);
      const product = JSON.parse(created.body) as { id: string };
      assert.equal((await nextOther()).status, 201);

      // The balancer's readiness check, on a connection open before the drain: not ready.
      other.write(`GET /v2/ready HTTP/1.1\r\nHost: x\r\n\r\n`);
      const ready = await nextOther();
      assert.equal(ready.status, 503, ready.body);
      assert.equal((JSON.parse(ready.body) as { error: { code: string } }).error.code, "SERVICE_UNAVAILABLE");
      assert.ok(ready.headers["retry-after"]);

      // The next request on the same connection, after the drain began.
      socket.write(`GET /v2/products/${product.id} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
      const read = await next();
      assert.equal(read.status, 200, `${read.status} ${read.body}`);
      assert.equal((JSON.parse(read.body) as { id: string }).id, product.id);
      assert.match(read.headers["x-request-id"] ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
      assert.equal(read.headers["connection"], "close", "the service asks the client to go elsewhere next");
    } finally {
      socket.destroy();
      other.destroy();
    }
    assert.equal(await exited, 0);
    assert.match(instance.output(), /canon serve: closed/);
    await stop(instance);
  });
});
