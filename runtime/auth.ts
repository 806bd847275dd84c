/**
 * Authentication and authorization hooks. The generated app calls `authenticate` on every
 * request to an operation (no principal: 401) and `authorize` on every operation, with the
 * record for every access to a record by id (false: 403).
 */
import type { FastifyRequest } from "fastify";

export interface Principal {
  id: string;
  /** What the principal may do; the default `authorize` reads `read` and `write`. */
  scopes: string[];
  /**
   * The id of the principal's tenant, a record of the tenant collection (SPEC §12.4): it sees and
   * changes only that tenant's records. Absent: a principal of the platform, which sees every tenant.
   */
  tenant?: string;
}

/**
 * Who a principal is to what it alone sees: its idempotency keys (SPEC §12.7), its export jobs
 * and their events. A principal of the platform is its `id`; a principal with a tenant is its
 * `id` within that tenant (SPEC §12.4), so that one person who works in several tenants (the same
 * `id`, another `tenant`) never gets, in one tenant, the kept answer or the export of another.
 */
export function principalKey(principal: Principal): string {
  const tenant = principal.tenant;
  return tenant === undefined || tenant === null ? principal.id : JSON.stringify([principal.id, tenant]);
}

export type AccessAction = "list" | "read" | "create" | "update" | "replace" | "delete" | "action";

export interface AccessRequest {
  principal: Principal;
  action: AccessAction;
  /** The collection, `orders`; for an action, the action's path, `orders/cancellations`. */
  collection: string;
  /** The record accessed by id, when there is one. */
  record?: { id: string; values: object };
  /**
   * On create, update, replace and action, once the body is read: the values as stored after
   * the change (of the new record, the changed record, or the action's record), so a policy can
   * refuse a change (reassigning `user_id`). Writes are asked twice: first without `proposed`
   * (may the principal do this at all? before the body is read), then with it.
   */
  proposed?: object;
  /**
   * On a list under a record (a child list, or a `list_under` list: `/organizations/{id}/tickets`):
   * that record and its collection. Absent on the top-level list.
   */
  under?: { collection: string; record: { id: string; values: object } };
}

/** Returns the principal of a request, or null when credentials are missing or invalid. */
export type Authenticate = (request: FastifyRequest) => Principal | null | Promise<Principal | null>;

/** Returns whether the principal may do this. */
export type Authorize = (access: AccessRequest) => boolean | Promise<boolean>;

const devPrincipals = new Map<string, Principal>([
  ["dev-writer", { id: "dev-writer", scopes: ["read", "write"] }],
  ["dev-reader", { id: "dev-reader", scopes: ["read"] }],
]);

const DEV_TENANT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Development credentials of `canon serve`: `Bearer dev-writer` and `Bearer dev-reader`, principals
 * of the platform; `Bearer dev-writer.<uuid>` and `Bearer dev-reader.<uuid>` act inside the tenant
 * with that id (lowercase), as principals of their own (`dev-writer.<uuid>`).
 */
export const devAuthenticate: Authenticate = (request) => {
  const header = request.headers.authorization;
  if (typeof header !== "string" || !header.startsWith("Bearer ")) return null;
  // Exactly `Bearer <token>` with a known token: a lookup, then one anchored, linear pattern.
  const token = header.slice(7);
  const known = devPrincipals.get(token);
  if (known) return known;
  const dot = token.indexOf(".");
  const base = dot > 0 ? devPrincipals.get(token.slice(0, dot)) : undefined;
  const tenant = token.slice(dot + 1);
  return base && DEV_TENANT.test(tenant) ? { id: token, scopes: base.scopes, tenant } : null;
};

/** Reads need the `read` scope, everything else `write`. */
export const scopeAuthorize: Authorize = ({ principal, action }) =>
  principal.scopes.includes(action === "list" || action === "read" ? "read" : "write");
