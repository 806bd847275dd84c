// No lost error answers (issue 30, point 6): a refused request body (over the limit, of the
// wrong type, without credentials, after a malformed head) is read and thrown away, up to a bound, before the
// connection closes, so the client reads its answer rather than a reset; an over-limit
// `Content-Length` with `Expect: 100-continue` is answered without asking for the body.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { startBalancer, stopBalancer, type Balancer } from "../cluster/haproxy.ts";
import { suiteFixture } from "../support/fixture.ts";
import { assertErrorEnvelope, startApp, withApp } from "./helpers.ts";

const api = suiteFixture(() => startApp());

const MB2 = 2 * 1024 * 1024;

interface Outcome {
  /** The status of the final answer; null when the connection ended without one. */
  status: number | null;
  /** Every status line the client read, interim ones (100) included. */
  statuses: number[];
  body: unknown;
  /** The socket error the client met (ECONNRESET, EPIPE), if any. */
  error: string | null;
  /** Body bytes the client managed to write. */
  written: number;
}

interface Post {
  path?: string;
  headers?: Record<string, string>;
  /** Body bytes to send; chunked when `chunked`. */
  size: number;
  chunked?: boolean;
  /** Waits for an interim or final answer before sending the body (Expect: 100-continue). */
  expectContinue?: boolean;
  /** The client closes its sending side after the body (the answer still comes). */
  halfClose?: boolean;
  /** Milliseconds between two 16 KiB pieces of the body (default 1). */
  pauseMs?: number;
  /** Called once the answer has been read. */
  onAnswer?: () => void;
}

/**
 * One POST on a fresh connection, its body written in 16 KiB pieces a millisecond apart (a
 * client on a network, not one whose whole body fits in loopback's buffers at once); resolves
 * once the service closed the connection, or the answer came and the body was sent.
 */
function post(base: string, request: Post, timeoutMs = 60_000): Promise<Outcome> {
  const { hostname, port } = new URL(base);
  const headers: Record<string, string> = {
    host: "x",
    "content-type": "application/json",
    authorization: "Bearer dev-writer",
    ...(request.chunked ? { "transfer-encoding": "chunked" } : { "content-length": String(request.size) }),
    ...(request.expectContinue ? { expect: "100-continue" } : {}),
    ...request.headers,
  };
  for (const [name, value] of Object.entries(headers)) if (value === "") delete headers[name];
  const head = `POST ${request.path ?? "/v2/users"} HTTP/1.1\r\n${Object.entries(headers).map(([n, v]) => `${n}: ${v}`).join("\r\n")}\r\n\r\n`;
  const piece = Buffer.alloc(16_384, 0x20);
  return new Promise((resolve, reject) => {
    const outcome: Outcome = { status: null, statuses: [], body: undefined, error: null, written: 0 };
    const chunks: Buffer[] = [];
    let sending = false;
    let sent = false;
    const socket = connect(Number(port), hostname, () => {
      socket.write(head);
      if (!request.expectContinue) void send();
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer nor close within ${timeoutMs} ms (${outcome.written} bytes written)`));
    }, timeoutMs);
    async function send(): Promise<void> {
      if (sending) return;
      sending = true;
      let left = request.size;
      // As most clients do, the whole body is sent whatever comes back meanwhile.
      while (left > 0 && !socket.destroyed) {
        const n = Math.min(left, piece.length);
        const bytes = request.chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), piece.subarray(0, n), Buffer.from("\r\n")]) : piece.subarray(0, n);
        const more = socket.write(bytes);
        outcome.written += n;
        left -= n;
        if (!more) await new Promise<void>((ready) => { socket.once("drain", ready); socket.once("close", ready); });
        await new Promise((pause) => setTimeout(pause, request.pauseMs ?? 1));
      }
      if (left === 0 && request.chunked && !socket.destroyed) socket.write("0\r\n\r\n");
      if (request.halfClose && !socket.destroyed) socket.end();
      sent = true;
      finish();
    }
    // Done once the answer is read and the body sent (a balancer keeps the connection open).
    function finish(): void {
      if (outcome.status !== null && sent) socket.destroy();
    }
    function read(): void {
      let raw = Buffer.concat(chunks);
      for (;;) {
        const split = raw.indexOf("\r\n\r\n");
        if (split === -1) return;
        const headText = raw.subarray(0, split).toString("latin1");
        const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(headText)?.[1] ?? NaN);
        if (outcome.statuses.length === 0 || outcome.statuses.at(-1)! < 200) outcome.statuses.push(status);
        if (status === 100) {
          raw = raw.subarray(split + 4);
          chunks.length = 0;
          chunks.push(raw);
          void send();
          continue;
        }
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headText)?.[1] ?? NaN);
        const rest = raw.subarray(split + 4);
        if (!(rest.length >= length)) return;
        outcome.status = status;
        outcome.body = JSON.parse(rest.subarray(0, length).toString("utf8"));
        if (request.expectContinue && !sending) sent = true;
        request.onAnswer?.();
        return finish();
      }
    }
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (outcome.status === null) read();
    });
    socket.on("error", (error: NodeJS.ErrnoException) => (outcome.error ??= error.code ?? error.message));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(outcome);
    });
  });
}

function tally(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = o.status === null ? `lost (${o.error ?? "closed"})` : String(o.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k}: ${n}`).join(", ");
}

async function manyLargePosts(base: string): Promise<void> {
  const outcomes = await Promise.all(Array.from({ length: 200 }, () => post(base, { size: MB2 })));
  const answered = outcomes.filter((o) => o.status === 400);
  assert.equal(answered.length, 200, `every 2 MB POST gets its 400: ${tally(outcomes)}`);
  for (const o of answered) {
    assertErrorEnvelope(o.body, "VALIDATION_ERROR");
    assert.deepEqual((o.body as { error: { details: unknown } }).error.details, [{ field: "body", issue: "is larger than the body size limit" }]);
  }
}

describe("refused bodies: the answer reaches the client", () => {
  test("200 concurrent 2 MB POSTs (over the 64 KiB limit) each read their 400", async () => {
    await manyLargePosts(api.base);
  });

  test("chunked, of the wrong type, without credentials, with Connection: close: each answered, none reset", async () => {
    const cases: Array<[string, Post, number]> = [
      ["chunked over the limit", { size: MB2, chunked: true }, 400],
      ["text/plain", { size: MB2, headers: { "content-type": "text/plain" } }, 400],
      ["no credentials", { size: MB2, headers: { authorization: "" } }, 401],
      ["wrong credentials, Connection: close", { size: MB2, headers: { authorization: "Bearer nobody", connection: "close" } }, 401],
      ["no operation", { size: MB2, path: "/v2/nothing" }, 404],
      ["over the limit, then half-closed", { size: MB2, halfClose: true }, 400],
      // Refused by Node's HTTP parser, answered straight on the connection (raw-socket-errors.ts).
      ["a malformed header", { size: MB2, headers: { "bad header": "x" } }, 400],
      ["headers over 64 KiB", { size: MB2, headers: { "x-big": "a".repeat(70_000) } }, 400],
    ];
    for (const [name, request, status] of cases) {
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => post(api.base, request)));
      assert.ok(outcomes.every((o) => o.status === status), `${name}: ${tally(outcomes)}`);
    }
  });

  test("Expect: 100-continue with a Content-Length over the limit: the 400 at once, no 100 Continue, no body read", async () => {
    const outcome = await post(api.base, { size: MB2, expectContinue: true });
    assert.deepEqual(outcome.statuses, [400]);
    assert.equal(outcome.written, 0);
    assertErrorEnvelope(outcome.body, "VALIDATION_ERROR");
  });

  test("Expect: 100-continue within the limit: 100 Continue, then the answer", async () => {
    const body = JSON.stringify({ email: `c${Date.now()}@example.com`, name: "C", password: "correct horse", role: "customer" });
    const outcome = await new Promise<string>((resolve, reject) => {
      const { port } = new URL(api.base);
      let text = "";
      const socket = connect(Number(port), "127.0.0.1", () =>
        socket.write(`POST /v2/users HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer dev-writer\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`),
      );
      socket.on("data", (d: Buffer) => {
        text += d.toString("latin1");
        if (text.startsWith("HTTP/1.1 100 Continue\r\n\r\n") && text.length === 25) socket.write(body);
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(text));
    });
    assert.match(outcome, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
  });

  test("a body past the bound is not read for ever: the connection closes", async () => {
    await withApp({ connections: { discardLimitBytes: 1_048_576 } }, async (small) => {
      const outcome = await post(small.base, { size: 64 * MB2 }, 30_000);
      assert.equal(outcome.status, 400, tally([outcome]));
      assert.ok(outcome.written < 64 * MB2, `the service stopped reading (${outcome.written} bytes written)`);
    });
  });

  // Node's server counts such a connection as idle: closing the app closes it at once.
  test("a service that stops does not wait for a refused body still coming in", async () => {
    const slow = await startApp();
    let closing: Promise<number> | undefined;
    // 16 KiB every 20 ms: the 16 MiB bound would take 20 s.
    const outcome = await post(slow.base, {
      size: 64 * MB2,
      pauseMs: 20,
      onAnswer: () => {
        const began = performance.now();
        closing = slow.close().then(() => performance.now() - began);
      },
    });
    assert.equal(outcome.status, 400);
    const took = await closing!;
    assert.ok(took < 2000, `closed in ${Math.round(took)} ms`);
  });
});

describe("behind HAProxy", () => {
  let dir = "";
  let balancer: Balancer | null = null;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "canon-lost-answers-"));
    balancer = await startBalancer(dir, [{ name: "a", port: Number(new URL(api.base).port) }]);
  });
  after(async () => {
    if (balancer) await stopBalancer(balancer);
    rmSync(dir, { recursive: true, force: true });
  });

  test("200 concurrent 2 MB POSTs each read their 400", async () => {
    await manyLargePosts(balancer!.base);
  });
});
