/**
 * The members of `RouteContext` (services.ts, rendered by templates/services.hbs): what every
 * route handler is given. The handlers emitter destructures the ones a routes file uses; a test
 * holds this list to the generated interface.
 */
export const ROUTE_CONTEXT: readonly string[] = ["authorize", "cursors", "events", "exports", "services"];
