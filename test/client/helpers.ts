// Helpers of the client tests: the showcase service on loopback, and a fetch that records what
// the client sends, so that tests can count requests and read their headers.
import type { FastifyInstance } from "fastify";
import { buildApp, devAuthenticate } from "../../generated/index.ts";

type AppOptions = Parameters<typeof buildApp>[0];

export interface Service {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

/** The generated showcase with the dev credentials, in memory, on a free loopback port. */
export async function startShowcase(options: Partial<AppOptions> = {}): Promise<Service> {
  const app = await buildApp({ authenticate: devAuthenticate, rateLimit: false, ...options });
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  return { app, base, close: () => app.close() };
}

export interface SentRequest {
  method: string;
  url: string;
  headers: Headers;
}

/** The platform's fetch, recording every request it sends. */
export function recordingFetch(): { fetch: (input: string, init: RequestInit) => Promise<Response>; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  return {
    sent,
    fetch: (input, init) => {
      sent.push({ method: init.method ?? "GET", url: input, headers: new Headers(init.headers) });
      return fetch(input, init);
    },
  };
}

let counter = Math.floor(Math.random() * 400_000);
export function unique(): number {
  counter += 1;
  return counter;
}

export const orderCode = (): string => `ORD-${String(unique() % 1_000_000).padStart(6, "0")}`;

export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const UNKNOWN_ID = "01890a5d-ac96-774b-bcce-b302099a8057";
