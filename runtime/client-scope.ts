/**
 * The client of the request being handled, for work deep below its handler (the store's
 * driver): whether it is still there, and a call when it leaves. Each request runs in an
 * `AsyncLocalStorage` scope holding its connection, so no store method needs a parameter for it.
 * A client has left when its connection is gone (reset or failed) before its answer was sent, or,
 * as nginx decides it (its 499, "client closed request"), when it closed its sending side (FIN)
 * and its answer is still not sent `graceMs` later (`watchHalfCloses`): an aborted `fetch`, a
 * killed curl and nginx passing on a client's abort all close with FIN. The service still
 * writes an answer to a half-closed connection: a client that half-closes after its request and
 * waits reads the answer of quick work, and the error envelope of work that was stopped.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

export interface Client {
  readonly socket: Socket;
  readonly response: ServerResponse;
}

const scope = new AsyncLocalStorage<Client>();

/** The request handler for `createServer`: runs each request, and all it starts, in its client's scope. */
export function inClientScope(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => scope.run({ socket: request.socket, response }, handler, request, response);
}

/** The client of the request whose work is running; undefined outside a request. */
export function currentClient(): Client | undefined {
  return scope.getStore();
}

/** Runs `fn` outside any request's scope: work that outlives the request (a job it queued) is not stopped when its client leaves. */
export function outsideRequest<T>(fn: () => T): T {
  return scope.exit(fn);
}

/** A connection of a server that watches half-closes: whether its client's FIN came `graceMs` ago, and who waits for that. */
interface HalfClose {
  gone: boolean;
  readonly listeners: Set<() => void>;
}

/** Kept on the connection itself: read on every query of a request, faster than a WeakMap. */
const HALF_CLOSE = Symbol("canon.halfClose");
type Watched = Socket & { [HALF_CLOSE]?: HalfClose };

/**
 * From `graceMs` after a client of `server` closes its sending side (FIN), it counts as gone for
 * the work of the request its connection is waiting for (`isGone`, `onGone`). Without this
 * (`connections.halfCloseIsGone: false`), only a connection that is gone altogether counts.
 */
export function watchHalfCloses(server: Server, graceMs: number): void {
  server.on("connection", (socket: Watched) => {
    const state: HalfClose = { gone: false, listeners: new Set() };
    socket[HALF_CLOSE] = state;
    socket.once("end", () => {
      const timer = setTimeout(() => {
        state.gone = true;
        for (const listener of state.listeners) listener();
        state.listeners.clear();
      }, graceMs);
      timer.unref();
      socket.once("close", () => clearTimeout(timer));
    });
  });
}

/** Whether the client left before its answer was sent. */
export function isGone(client: Client): boolean {
  if (client.response.writableFinished) return false;
  return client.socket.destroyed || (client.socket as Watched)[HALF_CLOSE]?.gone === true;
}

/** Calls `listener` once when the client leaves before its answer; the function returned stops watching. */
export function onGone(client: Client, listener: () => void): () => void {
  if (isGone(client)) {
    listener();
    return () => {};
  }
  const halfClose = (client.socket as Watched)[HALF_CLOSE];
  const left = () => {
    stop();
    if (!client.response.writableFinished) listener();
  };
  const stop = () => {
    client.socket.off("close", left);
    halfClose?.listeners.delete(left);
  };
  client.socket.once("close", left);
  halfClose?.listeners.add(left);
  return stop;
}

/** The failure of work stopped because its client left: logged at `info`; its 500 reaches only a client that half-closed and still reads. */
export class ClientGoneError extends Error {
  constructor(cause?: unknown) {
    super("the client closed its connection: its work was stopped", { cause });
    this.name = "ClientGoneError";
  }
}
