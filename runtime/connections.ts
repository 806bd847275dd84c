/**
 * Limits on connections, so that slow or idle clients cannot hold the service: how long a
 * client may take to send a request's head and the whole request, how long an idle keep-alive
 * connection stays open, and how many connections may be open at once. And how a connection
 * closes after an answer that left the request's body unread: the body is read and thrown away
 * first (up to a bound), so that the client reads the answer instead of a reset.
 */
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

export interface ConnectionOptions {
  /** Time to receive a request's head (request line and headers) from its first byte, or from the connection's opening. Default 10 s. */
  headersTimeoutMs?: number;
  /** Time to receive a whole request, head and body. Default 30 s. */
  requestTimeoutMs?: number;
  /** How long a keep-alive connection stays open without a request after an answer. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /** Connections open at once; a connection beyond them is closed as soon as it opens. Default 10,000 (keep it under the process's file descriptor limit, `ulimit -n`). */
  maxConnections?: number;
  /**
   * After an answer that refused a request's body (too large, not JSON, no credentials…), the
   * bytes of the body still read and thrown away before the connection closes, so that the client
   * reads the answer rather than a reset. Default 16 MiB; the request timeout bounds the time.
   */
  discardLimitBytes?: number;
  /**
   * A client that closes its sending side (FIN) while its request's work runs has left, as for
   * nginx (its 499): from `halfCloseGraceMs` after the FIN, a query still waiting for a pool
   * connection gives up, a running PostgreSQL statement is cancelled and a transaction rolls back
   * (client-scope.ts). An aborted `fetch`, a killed curl and nginx passing on a client's abort
   * all close with FIN. The answer is still written while the connection takes it. Default true;
   * false: only a reset stops work, for clients that half-close after each request and wait for
   * slow answers.
   */
  halfCloseIsGone?: boolean;
  /** How long after the client's FIN its request's work may still finish and be answered. Default 250 ms. */
  halfCloseGraceMs?: number;
}

export const CONNECTION_DEFAULTS: Required<ConnectionOptions> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 10_000,
  discardLimitBytes: 16 * 1024 * 1024,
  halfCloseIsGone: true,
  halfCloseGraceMs: 250,
};

/** The settings with their defaults, checked: a timeout is a positive number of milliseconds. */
export function connectionLimits(options: ConnectionOptions = {}): Required<ConnectionOptions> {
  const limits = { ...CONNECTION_DEFAULTS };
  for (const key of Object.keys(CONNECTION_DEFAULTS) as Array<keyof ConnectionOptions>) {
    const value = options[key];
    if (value === undefined) continue;
    if (key === "halfCloseIsGone") {
      if (typeof value !== "boolean")
        throw new RangeError(`connections.${key} must be true or false, not ${String(value)}`);
      limits[key] = value;
    } else if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      throw new RangeError(`connections.${key} must be a positive integer, not ${String(value)}`);
    } else {
      limits[key] = value;
    }
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new RangeError("connections.headersTimeoutMs must not be longer than connections.requestTimeoutMs");
  }
  return limits;
}

/**
 * Node's server options for the limits. Node checks the head and request timeouts every
 * `connectionsCheckingInterval` (30 s by default, which would let a slow client stay 30 s past
 * its timeout): here every second, or more often for a shorter timeout.
 */
export function serverTimeouts(limits: Required<ConnectionOptions>): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/** The request a connection is answering, kept by `trackRequests` for `discardRefusedBodies`. */
const REQUEST = Symbol("canon.request");
type TrackedSocket = Socket & { [REQUEST]?: IncomingMessage };

/** The request handler for `createServer`: notes on its connection the request each call answers. */
export function trackRequests(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    (request.socket as TrackedSocket)[REQUEST] = request;
    handler(request, response);
  };
}

/**
 * When Node closes a connection after an answer (`Connection: close`, as Fastify sends when it
 * refuses a body) while the request's body is still coming, closing at once would throw away
 * what the client is sending: the kernel answers it with a reset, and a client still writing
 * loses the answer it had not read yet (ECONNRESET, EPIPE). Instead, the answer is followed by
 * the end of the service's side (FIN), and the connection reads and throws away the rest of the
 * body until it ends, the client closes, `limitBytes` more bytes came, or the request timeout
 * passes; then it closes.
 */
export function discardRefusedBodies(server: Server, limitBytes: number): void {
  server.on("connection", (socket: TrackedSocket) => {
    const destroySoon = socket.destroySoon;
    socket.destroySoon = function (this: TrackedSocket) {
      const request = this[REQUEST];
      if (request === undefined || request.complete || this.readableEnded || this.destroyed) {
        return destroySoon.call(this);
      }
      discardRest(this, request, limitBytes);
    };
  });
}

function discardRest(socket: Socket, request: IncomingMessage, limitBytes: number): void {
  if (socket.writable) socket.end();
  let read = 0;
  const close = () => closeWhenWritten(socket);
  socket.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > limitBytes) close();
  });
  socket.once("end", close);
  // Node's parser still reads the body into the request: thrown away once it flows unheard.
  request.removeAllListeners("data");
  request.once("end", close);
  request.resume();
}

/** Closes `socket` once what was written to it has gone out (at once when it has). */
export function closeWhenWritten(socket: Duplex): void {
  if (socket.writableFinished || !socket.writable) socket.destroy();
  else socket.once("finish", () => socket.destroy());
}

/**
 * `Expect: 100-continue`: the client waits for `100 Continue` before it sends the body. With a
 * `Content-Length` over `bodyLimit` the body is not asked for: the request goes straight to its
 * handler, which refuses it by its length (400), and the connection closes after the answer.
 * Within the limit, `100 Continue`, as Node answers by default.
 */
export function answerExpectContinue(
  server: Server,
  bodyLimit: number,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  server.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => {
    const length = Number(request.headers["content-length"]);
    if (length > bodyLimit) response.setHeader("connection", "close");
    else response.writeContinue();
    handler(request, response);
  });
}
