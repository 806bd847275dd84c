/**
 * Tenancy (SPEC §12.4): a principal with a `tenant` sees and changes only the records of its
 * tenant. The generated handlers put the tenant into every statement the store runs: the list's
 * `Match.where` (so its cursors are bound to the tenant too), the `where` of `Store.get` for a
 * read, write or action by id (a record of another tenant is not found: 404), and the values of a
 * create (filled from the principal; another tenant's id answers 403). A tenant-scoped resource's
 * key is its tenant field (`organization_id`); the tenant collection's is `id`. The services and
 * the store handle of hooks (hooks.ts) do the same from the principal of the write: `writeScope`
 * in the `where` of each write and read by id, `principalTenantValues` on the values they write.
 */
import type { FastifyRequest } from "fastify";
import type { Principal } from "./auth.ts";
import { BusinessRuleError, ForbiddenError, ValidationError } from "./errors.ts";
import { principalOf } from "./http.ts";
import type { Values } from "./store.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The tenant of the request's principal, or undefined for a principal of the platform. */
export function tenantOf(request: FastifyRequest): string | undefined {
  return principalTenant(principalOf(request));
}

/** The `where` of a read by id in a collection whose tenant key is `key`: undefined for the platform. */
export function tenantScope(request: FastifyRequest, key: string): Values | undefined {
  return scopeOf(key, tenantOf(request));
}

/**
 * The `where` of a write or read by id in a collection of tenant key `spec.tenantKey` for the
 * principal of a write (a service's `WriteContext`, or a hook's): a tenant principal's tenant under
 * the key; undefined for the platform, or a collection that is not a tenant's.
 */
export function writeScope(
  spec: { readonly tenantKey?: string | undefined },
  context: { readonly principal: Principal } | undefined,
): Values | undefined {
  return scopeOf(spec.tenantKey, principalTenant(context?.principal));
}

/** The tenant of the principal of a write, or undefined for the platform (`DeleteArgs.tenant`). */
export function writerTenant(context: { readonly principal: Principal } | undefined): string | undefined {
  return principalTenant(context?.principal);
}

/** The tenant of a principal (of a request or of a write), or undefined for a principal of the platform. */
function principalTenant(principal: Principal | undefined): string | undefined {
  const tenant = principal?.tenant;
  if (tenant === undefined || tenant === null) return undefined;
  // Compared with uuid columns in SQL: `authenticate` must give a lowercase UUID.
  if (typeof tenant !== "string" || !UUID.test(tenant))
    throw new Error("authenticate gave a principal whose tenant is not a lowercase UUID");
  return tenant;
}

function scopeOf(key: string | undefined, tenant: string | undefined): Values | undefined {
  return key !== undefined && tenant !== undefined ? { [key]: tenant } : undefined;
}

/**
 * The tenant of a create, replace or update's values: a tenant principal's own tenant fills an
 * absent tenant field, and another tenant's id answers 403; a principal of the platform must
 * give it (400 naming the field), but for a child, whose parent's tenant fills it (`tenantFromParent`). In the tenant collection (`key` is `id`), a tenant principal
 * creates nothing (403). Changes `values` in place.
 */
export function tenantValues(request: FastifyRequest, key: string, values: Values, creating = true): void {
  checkTenant(tenantOf(request), key, values, creating);
}

/**
 * A create of a tenant-scoped child by a principal of the platform, without its tenant field:
 * the tenant of its parent (`parentKey`, the parent's tenant field), since a child is in its
 * parent's tenant (its references are checked within the record's tenant). A tenant principal's
 * own tenant fills the field in `tenantValues`; a parent that is not found leaves it absent (400
 * naming the field, as before).
 */
export async function tenantFromParent(
  request: FastifyRequest,
  values: Values,
  key: string,
  parent: { get(id: string): Promise<{ readonly values: Values } | null> },
  parentField: string,
  parentKey: string,
): Promise<void> {
  const parentId = values[parentField];
  if (tenantOf(request) !== undefined || values[key] !== undefined || typeof parentId !== "string") return;
  const tenant = (await parent.get(parentId))?.values[parentKey];
  if (typeof tenant === "string") values[key] = tenant;
}

/** `tenantValues` for the principal of a write (the values a hook writes through its store handle). */
export function principalTenantValues(
  principal: Principal,
  key: string,
  values: Values,
  creating = true,
): void {
  checkTenant(principalTenant(principal), key, values, creating);
}

function checkTenant(tenant: string | undefined, key: string, values: Values, creating: boolean): void {
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

/**
 * 422 naming the tenant field when a write would move a record of `spec` (its tenant field,
 * `spec.tenant`) to another tenant: a record stays in the tenant it was created in, whoever
 * writes it (a tenant principal that names another tenant is refused before this, 403). Moving a
 * record would leave what refers to it, and its children, in the tenant it left, naming a record
 * of another (docs/tenancy.md). Checked by every write that changes a record (PUT, PATCH, an
 * action's `sets`, a hook's store handle), before the store runs it, on every store alike.
 */
export function keepTenant(
  spec: { readonly tenant?: string | undefined },
  before: Values,
  after: Values,
): void {
  const field = spec.tenant;
  if (field === undefined || after[field] === before[field]) return;
  throw new BusinessRuleError(`${field} may not change: a record stays in the tenant it was created in.`, [
    { field, issue: "may not change: a record stays in the tenant it was created in" },
  ]);
}
