/**
 * References between stored collections and what deleting a referenced record does to the
 * records that refer to it — one behaviour on every store. The generator computes the list
 * from the definitions (`storeReferences` in the generated `services.ts`); the memory store
 * enforces it itself, the SQL store through the foreign keys of the generated migrations
 * (`on delete restrict` / `on delete cascade`) and, for an id inside a field kept whole as JSON
 * (`StoreReference.path`), which no foreign key reaches, by looking for the records that name it
 * in the delete's transaction (sql-deletes.ts), with the same answers.
 */
import { BusinessRuleError } from "./errors.ts";

/**
 * `restrict` (the default): a referenced record cannot be deleted while a record refers to it
 * (422 naming the referring collection). `cascade`: deleting it deletes the records that refer
 * to it (the default for a child collection's parent field, and an action record's target).
 */
export type OnDelete = "restrict" | "cascade";

export interface StoreReference {
  /** The collection whose records hold the reference: `orders`, `orders/cancellations`. */
  collection: string;
  /** Its storage field holding the referenced record's id. */
  field: string;
  /** The referenced collection. */
  references: string;
  onDelete: OnDelete;
  /**
   * `field` is an array of ids (SPEC §12.3, many-to-many): `restrict` holds the referenced record
   * while an array names it; `cascade` removes its id from every array instead of deleting the
   * records, each of which is then updated (an `.updated` event, made with `updatedKey`).
   */
  many?: boolean;
  /**
   * On a tenant-scoped `collection` (SPEC §12.4), its tenant field: a delete by a principal of a
   * tenant takes along through the reference only that tenant's records (the memory store; the
   * SQL store reads it from its schema, `SqlCollection.tenant`).
   */
  tenant?: string;
  /**
   * `field` is optional and nullable (one id, not an array): a record that lacks it has it as
   * `null`, as the SQL store reads its NULL back, so that every store shows the same record.
   */
  nullable?: boolean;
  /**
   * The id is inside `field` (an object, an array of objects, an array of ids inside an object, or
   * an action's such field, kept whole as JSON): the keys from `field`'s value down to it, `*`
   * for an array's items (`lead.person_id` is `field: "lead", path: ["person_id"]`;
   * `members.*.person_id` is `path: ["*", "person_id"]`). Always `restrict` (`on_delete` is
   * refused there): a record that names the id anywhere on the path holds the referenced record.
   */
  path?: readonly string[];
}

/**
 * The ids found at a reference path in `values`, each with where it is (`tag_ids.*` gives
 * `["tag_ids.0", id], ["tag_ids.1", id]`, `address.country_id` gives `["address.country_id", id]`):
 * what a write checks, and (`StoreReference.path` under its field) what holds a delete.
 */
export function idsAt(values: Readonly<Record<string, unknown>>, path: string): Array<[string, string]> {
  const found: Array<[string, string]> = [];
  const walk = (value: unknown, parts: string[], at: string): void => {
    if (parts.length === 0) {
      if (typeof value === "string") found.push([at, value]);
      return;
    }
    const [part, ...rest] = parts as [string, ...string[]];
    if (part === "*") {
      if (Array.isArray(value)) value.forEach((item, i) => walk(item, rest, `${at}.${i}`));
    } else if (
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      Object.hasOwn(value, part)
    ) {
      walk((value as Record<string, unknown>)[part], rest, `${at}.${part}`);
    }
  };
  const [head, ...rest] = path.split(".") as [string, ...string[]];
  if (Object.hasOwn(values, head)) walk(values[head], rest, head);
  return found;
}

/** Whether `values` name `id` through `reference`, which has a `path`. */
export function namesAt(
  values: Readonly<Record<string, unknown>>,
  reference: StoreReference,
  id: string,
): boolean {
  return idsAt(values, [reference.field, ...(reference.path ?? [])].join(".")).some(
    ([, found]) => found === id,
  );
}

/**
 * The key under which a delete's `publish` makes the `.updated` event of a record of `collection`
 * whose array lost the deleted record's id (`eventsOf({ "updated:tickets": … })`).
 */
export function updatedKey(collection: string): string {
  return `updated:${collection}`;
}

/** The 422 of deleting a record that records of `collection` still refer to (restrict). */
export function referencedError(collection: string): BusinessRuleError {
  return new BusinessRuleError(`Records of ${collection} still refer to this record.`, [
    { field: "id", issue: `is referred to by records of ${collection}` },
  ]);
}

/**
 * 422 for a delete by a principal of a tenant that would take along or change records of another
 * tenant (SPEC §12.4: it only ever changes its tenant's records): a shared record that another
 * tenant's records refer to with `on_delete: cascade`. The platform may delete it.
 */
export function otherTenantsError(collection: string): BusinessRuleError {
  return new BusinessRuleError(
    `Records of ${collection} of another tenant refer to this record: a principal of a tenant changes only its tenant's records.`,
    [{ field: "id", issue: `is referred to by records of ${collection} of another tenant` }],
  );
}

/** `references` by the collection they refer to, in their order: what a delete there must look at. */
export function referencesTo(references: readonly StoreReference[]): Map<string, StoreReference[]> {
  const byReferenced = new Map<string, StoreReference[]>();
  for (const reference of references) {
    const list = byReferenced.get(reference.references) ?? [];
    list.push(reference);
    byReferenced.set(reference.references, list);
  }
  return byReferenced;
}

/** Most records one delete takes along through `cascade` references, by default (a store option). */
export const DEFAULT_CASCADE_LIMIT = 10_000;

/** 422 for a delete whose cascade would take more than `limit` records along: counted before anything is deleted. */
export function cascadeTooLargeError(limit: number): BusinessRuleError {
  return new BusinessRuleError(
    `Deleting this record would delete more than ${limit} records with it. Delete its children first (or in a background job).`,
    [{ field: "id", issue: `has more than ${limit} records that would be deleted with it` }],
  );
}
