/**
 * Structured logs through Fastify's logger (pino): the request id on every line of a request
 * (`request_id`, the `X-Request-Id` of the answer), one summary line per request at a settable
 * level, every unexpected failure with its stack (error-mapping.ts), and never a secret:
 * credentials and cookies are redacted wherever a line could carry them, and request bodies
 * (where `write_only` values such as passwords travel) are never logged.
 */
import { type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from "fastify";
// `request.principal` is declared by http.ts (Fastify declaration merging); a type-only import
// brings that declaration along wherever this file is compiled alone.
import type {} from "./http.ts";

/** pino's levels, and `silent` for none. */
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** Paths pino replaces with `[redacted]`: request headers that carry credentials, and error fields that may carry values. */
export const REDACTED = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['proxy-authorization']",
  "req.headers['x-api-key']",
  "res.headers['set-cookie']",
  "headers.authorization",
  "headers.cookie",
  "err.detail",
  "err.parameters",
  "err.values",
  "body",
  "req.body",
];

/**
 * Fastify's logger settings with canon's: the redactions above, added to whatever the caller
 * gave (`true`, a level and stream, or false for no logging).
 */
export function loggerOptions(logger: FastifyServerOptions["logger"]): FastifyServerOptions["logger"] {
  if (!logger) return false;
  const given = logger === true ? {} : (logger as Record<string, unknown>);
  return { ...given, redact: { paths: REDACTED, censor: "[redacted]" } } as FastifyServerOptions["logger"];
}

/**
 * Fastify's request logging (its `logController`): every line of a request carries the request
 * id as `request_id`, and instead of Fastify's two lines per request ("incoming request",
 * "request completed") there is one, once the request is answered, at `level` (none with
 * `silent`): method, URL, status, the principal's id and the time taken in milliseconds.
 */
export class RequestLog extends LogController {
  private readonly level: LogLevel;

  constructor(level: LogLevel) {
    super({ requestIdLogLabel: "request_id" });
    this.level = level;
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.level === "silent") return;
    request.log[this.level](
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        principal: request.principal?.id ?? null,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(error ? { err: error } : {}),
      },
      "request",
    );
  }
}
