/**
 * The client of the request being handled, for work deep below its handler (the store's
 * driver): whether it is still there, and a call when it leaves. Each request runs in an
 * `AsyncLocalStorage` scope holding its connection, so no store method needs a parameter for it.
 * A client has left when its connection is gone (reset or failed) before its answer was sent; a
 * client that only half-closes (FIN) after its request is still answered, by design (app.ts),
 * and its work runs.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
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

/** Whether the client left before its answer was sent. */
export function isGone(client: Client): boolean {
  return client.socket.destroyed && !client.response.writableFinished;
}

/** Calls `listener` once when the client leaves before its answer; the function returned stops watching. */
export function onGone(client: Client, listener: () => void): () => void {
  if (isGone(client)) {
    listener();
    return () => {};
  }
  const closed = () => {
    if (!client.response.writableFinished) listener();
  };
  client.socket.once("close", closed);
  return () => client.socket.off("close", closed);
}

/** The failure of work stopped because its client left: logged at `info`, never answered. */
export class ClientGoneError extends Error {
  constructor(cause?: unknown) {
    super("the client closed its connection: its work was stopped", { cause });
    this.name = "ClientGoneError";
  }
}
