/**
 * Limits on connections, so that slow or idle clients cannot hold the service: how long a
 * client may take to send a request's head and the whole request, how long an idle keep-alive
 * connection stays open, and how many connections may be open at once.
 */
import type { ServerOptions } from "node:http";

export interface ConnectionOptions {
  /** Time to receive a request's head (request line and headers) from its first byte, or from the connection's opening. Default 10 s. */
  headersTimeoutMs?: number;
  /** Time to receive a whole request, head and body. Default 30 s. */
  requestTimeoutMs?: number;
  /** How long a keep-alive connection stays open without a request after an answer. Default 5 s. */
  keepAliveTimeoutMs?: number;
  /** Connections open at once; a connection beyond them is closed as soon as it opens. Default 10,000 (keep it under the process's file descriptor limit, `ulimit -n`). */
  maxConnections?: number;
}

export const CONNECTION_DEFAULTS: Required<ConnectionOptions> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 10_000,
};

/** The settings with their defaults, checked: a timeout is a positive number of milliseconds. */
export function connectionLimits(options: ConnectionOptions = {}): Required<ConnectionOptions> {
  const limits = { ...CONNECTION_DEFAULTS };
  for (const key of Object.keys(CONNECTION_DEFAULTS) as Array<keyof ConnectionOptions>) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`connections.${key} must be a positive integer, not ${String(value)}`);
    }
    limits[key] = value;
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
