/** The runtime of a generated service: everything that is the same for every API. */
// Whole modules first, then the option types of modules that are otherwise internal.
export * from "./acting-service.ts";
export * from "./app.ts";
export * from "./auth.ts";
export * from "./crud-service.ts";
export * from "./cursor-keys.ts";
export * from "./cursor.ts";
export * from "./decimal.ts";
export * from "./docs.ts";
export * from "./errors.ts";
export * from "./events.ts";
export * from "./health.ts";
export * from "./hooks.ts";
export * from "./http.ts";
export * from "./idempotency.ts";
export * from "./lists.ts";
export * from "./map.ts";
export * from "./memory-store.ts";
export * from "./pagination.ts";
export * from "./references.ts";
export * from "./rules.ts";
export * from "./storable.ts";
export * from "./tenancy.ts";
export * from "./store.ts";
export * from "./uuid.ts";

export type { ConnectionOptions } from "./connections.ts";
export type { CorsOptions } from "./cors.ts";
export type { ExpensiveReadOptions } from "./expensive-reads.ts";
export type { Deprecation } from "./deprecation.ts";
export type { LogLevel } from "./logging.ts";
export type { RateLimitOptions } from "./rate-limit.ts";
