/**
 * Answers written straight to a connection, for requests Fastify never sees: what Node's HTTP
 * parser refuses (malformed HTTP, headers over the limit, a body that never arrives) and CONNECT.
 * Each carries the envelope, a request id and, when the request line names a deprecated version,
 * that version's headers; to know the request line, each connection keeps the bytes of a request
 * head until the head is complete.
 */
import { createRequire } from "node:module";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { closeWhenWritten } from "./connections.ts";
import { deprecationHeaders, type DeprecationSettings } from "./deprecation.ts";
import { type ApiError, ValidationError } from "./errors.ts";
import { noOperation } from "./error-mapping.ts";
import { IDEMPOTENCY_KEY_ISSUE } from "./idempotency.ts";
import { newId } from "./uuid.ts";

/** Answers every CONNECT on `server` with 404: Node hands its socket over and would close it unanswered. */
export function answerConnect(server: Server, settings: DeprecationSettings): void {
  server.on("connect", (request: IncomingMessage, socket: Duplex) => {
    writeRawError(socket, 404, "Not Found", noOperation(), request.url ?? "", settings);
    socket.destroy();
  });
}

/**
 * Fastify's `clientErrorHandler`: a 400 with the envelope. It follows the answer to an earlier
 * request on the same connection still under way; within an answer already started (a failure
 * in the body of the request being answered), the connection just closes.
 */
export function answerClientError(
  error: Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown },
  socket: Duplex,
  settings: DeprecationSettings,
  discardLimitBytes = 16 * 1024 * 1024,
): void {
  // Answered already: the parser refuses each further chunk of the bytes being thrown away.
  if (error.code === "ECONNRESET" || socket.destroyed || (socket as WatchedSocket)[DISCARDING]) return;
  const reading = (socket as WatchedSocket)[HEAD]?.reading;
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  let issue = { field: "request", issue: "must be a valid HTTP request" };
  const header =
    error.code === "HPE_INVALID_HEADER_TOKEN" || error.code === "HPE_LF_EXPECTED"
      ? headerWithControl(messageHead(socket, error))
      : null;
  if (header !== null) {
    issue = { field: header, issue: headerIssue(header) };
  } else if (error.code === "HPE_HEADER_OVERFLOW") {
    issue = { field: "url", issue: "must fit, with the other headers, in 65536 bytes" };
  } else if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    // Past the head or request timeout (see connections.ts): a head still coming in, or the body
    // of the request being answered. A connection that began no request is just closed.
    if (!reading && !inFlight) return void socket.destroy();
    issue = reading
      ? { field: "request", issue: "was not received in time" }
      : { field: "body", issue: "was not received in time" };
  }
  const url = requestTarget(socket, error);
  const answer = () => {
    const message = header === null ? "The request could not be read." : `The ${header} header is not valid.`;
    const error400 = new ValidationError([issue], message);
    writeRawError(socket, 400, "Bad Request", error400, url, settings);
    // A request that was too slow is cut at once; a malformed one may still be sending.
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") socket.destroy(error);
    else discardThenClose(socket, discardLimitBytes);
  };
  if (!inFlight) return answer();
  // A later request pipelined behind one being answered: its answer comes after that one. It is
  // written as that answer finishes, before Node's own 'finish' handler may end the socket (it
  // does when the client has half-closed after pipelining): ahead of it, not after it.
  if (reading && !inFlight.writableFinished) {
    let done = false;
    inFlight.prependOnceListener("finish", () => {
      done = true;
      answer();
    });
    inFlight.once("close", () => {
      if (!done) socket.destroy(error);
    });
    return;
  }
  if (!inFlight.headersSent) return answer();
  socket.destroy(error);
}

/** How long the bytes after a malformed request are read and thrown away, at most. */
const DISCARD_MS = 10_000;
const DISCARDING = Symbol("canon.discarding");

/**
 * After the answer to a malformed request: the service ends its side and reads and throws away
 * what the client still sends (the rest of its head or body) until it closes, `limitBytes` came
 * or 10 s passed, then closes. Closing at once would answer those bytes with a reset, which
 * loses the answer for a client still writing (as for refused bodies, connections.ts).
 */
function discardThenClose(socket: Duplex, limitBytes: number): void {
  (socket as WatchedSocket)[DISCARDING] = true;
  if (socket.writable) socket.end();
  let read = 0;
  const close = () => {
    clearTimeout(timer);
    closeWhenWritten(socket);
  };
  const timer = setTimeout(close, DISCARD_MS);
  timer.unref();
  socket.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > limitBytes) close();
  });
  socket.once("end", close);
  socket.once("close", () => clearTimeout(timer));
  socket.resume();
}

/** An error answer written straight to a socket that Fastify never saw as a request. */
function writeRawError(
  socket: Duplex,
  status: number,
  reason: string,
  error: ApiError,
  url: string,
  settings: DeprecationSettings,
): void {
  if (!socket.writable) return;
  const body = JSON.stringify(error.toEnvelope());
  const headers = [
    "Content-Type: application/json; charset=utf-8",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${newId()}`,
    "X-Content-Type-Options: nosniff",
    ...deprecationHeaders(settings, url).map(([name, value]) => `${name}: ${value}`),
    "Connection: close",
  ];
  // A header value carries no byte outside visible ASCII, whatever the request line held.
  const head = headers.join("\r\n").replace(/[^\t\r\n\x20-\x7e]/g, (c) => encodeURIComponent(c));
  socket.write(`HTTP/1.1 ${status} ${reason}\r\n${head}\r\n\r\n${body}`);
}

/**
 * The bytes of the request head a connection is reading, kept from the first byte of a message
 * until its head is complete. Node's parser reports a refused request with only the chunk it was
 * reading (`rawPacket`), which lacks the request line whenever the head came in several chunks
 * or after the end of an earlier request in the same chunk.
 */
interface HeadBytes {
  reading: boolean;
  chunks: Buffer[];
  length: number;
  /** The target of the last request whose head was complete: a failure in its body is that request's. */
  url: string;
}

/** No more of a head is kept than a request line the service reads (URLs are refused well before). */
const MAX_KEPT = 16_384;
const HEAD = Symbol("canon.requestHead");
type WatchedSocket = Duplex & { [HEAD]?: HeadBytes; [DISCARDING]?: boolean };

/**
 * Node's HTTP parser calls back into JavaScript at the start of every message (slot
 * `kOnMessageBegin`, unused by Node's server) and after every chunk it parsed straight from the
 * socket (`kOnExecute`); `_http_common` names the slots. Without it, answers fall back to the
 * chunk the parser reports.
 */
const slots = (() => {
  try {
    const { HTTPParser } = createRequire(import.meta.url)("_http_common") as {
      HTTPParser: { kOnMessageBegin: number; kOnExecute: number };
    };
    return { begin: HTTPParser.kOnMessageBegin, execute: HTTPParser.kOnExecute };
  } catch {
    return null;
  }
})();

interface ParserSlots {
  [slot: number]: unknown;
  getCurrentBuffer(): Buffer;
}

/** Keeps, on each connection of `server`, the bytes of the request head it is reading. */
export function keepRequestHeads(server: Server): void {
  if (!slots) return;
  const { begin, execute } = slots;
  server.on("connection", (socket: WatchedSocket & { parser?: ParserSlots | null }) => {
    const parser = socket.parser;
    const onExecute = parser?.[execute];
    if (!parser || typeof onExecute !== "function") return;
    const head: HeadBytes = { reading: false, chunks: [], length: 0, url: "" };
    socket[HEAD] = head;
    parser[begin] = () => {
      head.reading = true;
      head.chunks = [];
      head.length = 0;
    };
    parser[execute] = (result: unknown) => {
      // A chunk parsed without error that leaves a head unfinished: keep it for the rest.
      if (head.reading && typeof result === "number" && head.length < MAX_KEPT) {
        const chunk = parser.getCurrentBuffer();
        head.chunks.push(chunk);
        head.length += chunk.length;
      }
      return (onExecute as (result: unknown) => unknown)(result);
    };
  });
}

/** The request handler for `createServer`: marks the head of each request complete, then hands it on. */
export function completingHeads(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const head = (request.socket as WatchedSocket)[HEAD];
    if (head !== undefined) {
      head.reading = false;
      head.chunks = [];
      head.url = request.url ?? "";
    }
    handler(request, response);
  };
}

const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (\S+) HTTP\//;

/**
 * The request target of the message that `error` refused; without a request line of its own,
 * the target of the connection's last request; "" when there is none.
 */
function requestTarget(socket: Duplex, error: { rawPacket?: unknown; bytesParsed?: unknown }): string {
  const head = (socket as WatchedSocket)[HEAD];
  if (head !== undefined && !head.reading) return head.url;
  const rest = messageHead(socket, error);
  if (rest === null) return "";
  // Bytes with no request line of their own after a request (a body longer than its
  // Content-Length) belong to the connection's last request.
  return REQUEST_LINE.exec(rest)?.[1] ?? head?.url ?? "";
}

/**
 * The text (latin1) of the message `error` refused, from its first line, as far as received;
 * null when no bytes of it are known.
 */
function messageHead(socket: Duplex, error: { rawPacket?: unknown; bytesParsed?: unknown }): string | null {
  const head = (socket as WatchedSocket)[HEAD];
  if (head !== undefined && !head.reading) return null;
  const parts = head ? [...head.chunks] : [];
  // The message began in the first chunk kept, or in the refused one when none was kept; the
  // point of refusal comes after its start.
  let before = parts[0]?.length ?? 0;
  if (Buffer.isBuffer(error.rawPacket)) {
    if (parts.length === 0) {
      before = typeof error.bytesParsed === "number" ? error.bytesParsed : error.rawPacket.length;
    }
    parts.push(error.rawPacket);
  }
  if (parts.length === 0) return null;
  const text = Buffer.concat(parts).toString("latin1");
  // The message starts after the last blank line (the end of an earlier head) before that
  // point, past any line breaks.
  const blank = before < 4 ? -1 : text.lastIndexOf("\r\n\r\n", before - 4);
  return text.slice(blank === -1 ? 0 : blank + 4).replace(/^[\r\n]+/, "");
}

const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):(.*)$/s;
/** A control character in a header value: what the parser refuses there (a tab is allowed). */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/**
 * The name of the first header of a refused head whose value holds a control character (the
 * parser's "Invalid header value char"), as `Idempotency-Key` writes it; null when none does.
 */
function headerWithControl(text: string | null): string | null {
  if (text === null) return null;
  const end = text.indexOf("\r\n\r\n");
  const lines = (end === -1 ? text : text.slice(0, end)).split("\r\n").slice(1);
  for (const line of lines) {
    const m = HEADER_LINE.exec(line);
    if (m && CONTROL.test(m[2]!))
      return m[1]!
        .split("-")
        .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
        .join("-");
  }
  return null;
}

/** The issue of a header refused for a control character in its value. */
function headerIssue(name: string): string {
  return name === "Idempotency-Key" ? IDEMPOTENCY_KEY_ISSUE : "must hold no control character";
}
