/**
 * Health and readiness, for a load balancer's checks (docs/scaling.md): in every version,
 * `GET /vN/health` answers 200 `{ "status": "ok" }` as soon as the process serves, touching
 * neither Redis nor the store; `GET /vN/ready` answers 200 `{ "status": "ready" }` when the
 * store answers a trivial query within `timeoutMs`, else 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After`, and so does it once the app is closing (SIGTERM: the balancer sends no more while
 * the requests in hand finish). Neither needs credentials nor counts against the rate limit; their summary
 * lines are logged at `warn` only (a balancer asks several times a second).
 */
import type { FastifyInstance } from "fastify";
import { ServiceUnavailableError } from "./errors.ts";

/** How long `/vN/ready` waits for the store's answer (the probe's own bound too). */
export const READY_TIMEOUT_MS = 2000;

/** Resolves when the store can answer; rejects (or never settles) when it cannot. */
export type ReadyProbe = () => Promise<unknown>;

/**
 * A store's probe: `select 1` through an SQL store's driver, on a connection of its own where the
 * driver has one (PostgreSQL: a pool busy with one slow table is not a database that does not
 * answer); a store without a driver (memory) is always ready.
 */
export function storeReady(store: object, timeoutMs = READY_TIMEOUT_MS): ReadyProbe {
  const driver = (
    store as {
      driver?: { query(statement: string): Promise<unknown>; ping?(timeoutMs: number): Promise<void> };
    }
  ).driver;
  if (!driver) return () => Promise.resolve();
  return driver.ping ? () => driver.ping!(timeoutMs) : () => driver.query("select 1");
}

/** Seconds a balancer is asked to wait before trying an instance that is not ready. */
export const NOT_READY_RETRY_SECONDS = 5;

export function registerHealth(
  app: FastifyInstance,
  versions: readonly string[],
  probe: ReadyProbe | undefined,
  timeoutMs = READY_TIMEOUT_MS,
): void {
  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  for (const version of versions) {
    app.get(`/${version}/health`, { logLevel: "warn" }, async () => ({ status: "ok" }));
    app.get(`/${version}/ready`, { logLevel: "warn" }, async (request) => {
      if (closing) throw new ServiceUnavailableError(NOT_READY_RETRY_SECONDS);
      if (probe) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            probe(),
            new Promise((_resolve, reject) => {
              timer = setTimeout(
                () => reject(new Error(`the store did not answer within ${timeoutMs} ms`)),
                timeoutMs,
              );
            }),
          ]);
        } catch (error) {
          request.log.warn({ err: error }, "not ready: the store does not answer");
          throw new ServiceUnavailableError(NOT_READY_RETRY_SECONDS);
        } finally {
          clearTimeout(timer);
        }
      }
      return { status: "ready" };
    });
  }
}
