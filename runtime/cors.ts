/**
 * Calls from browser pages on other origins (CORS), through @fastify/cors. Off unless origins are
 * named: a page of a named origin may call every operation with the headers the generated
 * client sends, and read the headers it reads. A request without `Origin`, or from an origin
 * not named, gets no CORS header at all, so an `OPTIONS` that is no preflight of a named origin
 * answers 404 like any path without an operation.
 */
import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

export interface CorsOptions {
  /** The origins allowed, each exactly as a browser sends it: `https://app.example.com`, `http://localhost:5173`. */
  origins: string[];
  /** Let pages send cookies and HTTP authentication (`credentials: "include"`). Default: false. */
  credentials?: boolean;
  /** Request headers to allow besides the client's (`Authorization`, `Content-Type`, `Idempotency-Key`, `If-Match`, `X-Request-Id`). */
  allowedHeaders?: string[];
  /** Seconds a browser may reuse a preflight's answer. Default: 600. */
  maxAge?: number;
}

/** The request headers the generated client sends. */
export const CORS_ALLOWED_HEADERS = [
  "Authorization",
  "Content-Type",
  "Idempotency-Key",
  "If-Match",
  "X-Request-Id",
];

/** The response headers a page may read: the client's ETag, request id, retry and deprecation headers. */
export const CORS_EXPOSED_HEADERS = [
  "ETag",
  "Location",
  "X-Request-Id",
  "Retry-After",
  "Deprecation",
  "Sunset",
  "Link",
  "WWW-Authenticate",
  "Idempotent-Replayed",
];

const CORS_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/**
 * The origin `value` as a browser sends it (`https://app.example.com`, lowercase, no default port,
 * no path); an error that says what to write instead for anything else, `*` included: origins are
 * named one by one.
 */
export function corsOrigin(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // Explained below.
  }
  const plain =
    url && /^https?:$/.test(url.protocol) && url.origin === value.replace(/\/$/, "").toLowerCase();
  if (!url || !plain) {
    throw new Error(
      `CORS origin ${JSON.stringify(value)}: name each origin as a browser sends it, scheme, host and port only (https://app.example.com)`,
    );
  }
  return url.origin;
}

/** Registers CORS on the app for `options.origins`; call it after the hook that sets the headers of every answer. */
export async function registerCors(app: FastifyInstance, options: CorsOptions): Promise<void> {
  const allowed = new Set(options.origins.map(corsOrigin));
  await app.register(cors, {
    // The origin itself when named, else no CORS at all for this request.
    origin: (origin, callback) =>
      callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: CORS_METHODS,
    allowedHeaders: [...CORS_ALLOWED_HEADERS, ...(options.allowedHeaders ?? [])],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: options.credentials ?? false,
    maxAge: options.maxAge ?? 600,
    // A named origin's OPTIONS is answered as a preflight; anything else falls through to the 404.
    strictPreflight: false,
  });
}
