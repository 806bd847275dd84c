/**
 * Tenancy (SPEC §12.4): a principal with a `tenant` sees and changes only the records of its
 * tenant. The generated handlers put the tenant into every statement the store runs: the list's
 * `Match.where` (so its cursors are bound to the tenant too), the `where` of `Store.get` for a
 * read, write or action by id (a record of another tenant is not found: 404), and the values of a
 * create (filled from the principal; another tenant's id answers 403). A tenant-scoped resource's
 * key is its tenant field (`organization_id`); the tenant collection's is `id`.
 */
import type { FastifyRequest } from "fastify";
import { ForbiddenError, ValidationError } from "./errors.ts";
import { principalOf } from "./http.ts";
import type { Values } from "./store.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The tenant of the request's principal, or undefined for a principal of the platform. */
export function tenantOf(request: FastifyRequest): string | undefined {
  const tenant = principalOf(request).tenant;
  if (tenant === undefined || tenant === null) return undefined;
  // Compared with uuid columns in SQL: `authenticate` must give a lowercase UUID.
  if (typeof tenant !== "string" || !UUID.test(tenant))
    throw new Error("authenticate gave a principal whose tenant is not a lowercase UUID");
  return tenant;
}

/** The `where` of a read by id in a collection whose tenant key is `key`: undefined for the platform. */
export function tenantScope(request: FastifyRequest, key: string): Values | undefined {
  const tenant = tenantOf(request);
  return tenant === undefined ? undefined : { [key]: tenant };
}

/**
 * The tenant of a create, replace or update's values: a tenant principal's own tenant fills an
 * absent tenant field, and another tenant's id answers 403; a principal of the platform must
 * give it (400 naming the field). In the tenant collection (`key` is `id`), a tenant principal
 * creates nothing (403). Changes `values` in place.
 */
export function tenantValues(request: FastifyRequest, key: string, values: Values, creating = true): void {
  const tenant = tenantOf(request);
  if (key === "id") {
    if (tenant !== undefined && creating)
      throw new ForbiddenError("A principal of a tenant cannot create a tenant.");
    return;
  }
  const given = values[key];
  if (given === undefined) {
    if (tenant === undefined) throw new ValidationError([{ field: key, issue: "is required" }]);
    values[key] = tenant;
  } else if (tenant !== undefined && given !== tenant) {
    throw new ForbiddenError(
      `${key} names another tenant: a principal of a tenant writes only its own tenant's records.`,
    );
  }
}
