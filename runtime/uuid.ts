/**
 * Identifiers: UUID v7 (RFC 9562) for every record, event and request, from the `uuid`
 * package, whose v7 is monotonic: ids made in the same millisecond still sort in creation order.
 */
import { v7 } from "uuid";
import { z } from "zod";

/** A new UUID v7, lowercase. */
export function newId(): string {
  return v7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** A well-formed RFC 9562 UUID that is not version 1 (which encodes hardware) and not nil. */
export function isAcceptedUuid(value: string): boolean {
  const match = UUID.exec(value);
  return match !== null && match[1] !== "0" && match[1] !== "1";
}

/** A UUID v7 exactly, as request ids must be. */
export function isUuidV7(value: string): boolean {
  const match = UUID.exec(value);
  return match !== null && match[1] === "7";
}

export const UUID_ISSUE = "must be a valid UUID";

/** zod schema of an id in a path, body or query: validated for format, then lowercased. */
export const uuidSchema = z
  .string({ error: UUID_ISSUE })
  .refine(isAcceptedUuid, { error: UUID_ISSUE })
  .transform((value) => value.toLowerCase());
