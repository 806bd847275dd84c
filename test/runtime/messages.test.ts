// runtime/messages.ts, table by table: every zod schema shape canon's validators emit
// (generator/emit/validators/zod.ts), with the error map, gives canon's words. The HTTP side is
// test/http/messages.test.ts; this covers the kinds the showcase does not have (number fields,
// a single enum value, a minimum of one item) and the map's own rules.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { detailIssue, ISSUES, validationMessage } from "../../runtime/messages.ts";
import { uuidSchema } from "../../runtime/uuid.ts";

const PARSE = { reportInput: true, error: validationMessage } as const;

function issueOf(schema: z.ZodType, value: unknown): string {
  const parsed = schema.safeParse(value, PARSE);
  assert.equal(parsed.success, false, `${JSON.stringify(value)} is refused`);
  assert.equal(parsed.error!.issues.length, 1);
  return detailIssue(parsed.error!.issues[0]!);
}

const rows: Array<[string, z.ZodType, unknown, string]> = [
  ["number minimum", z.number().min(0.5), 0.25, "must be at least 0.5"],
  ["number maximum", z.number().max(99.5), 100, "must be at most 99.5"],
  ["number type", z.number(), "1", "must be a number"],
  ["integer type", z.int(), 2.5, "must be an integer"],
  ["integer as text", z.int(), "2", "must be an integer"],
  ["unsafe integer", z.int(), 2 ** 60, "must be at most 9007199254740991"],
  ["string minimum of one", z.string().min(1), "", "must be at least 1 character"],
  ["string maximum", z.string().max(3), "abcd", "must be at most 3 characters"],
  ["array maximum of one", z.array(z.string()).max(1), ["a", "b"], "must have at most 1 item"],
  ["one enum value", z.enum(["only"]), "other", "must be only"],
  ["enum", z.enum(["pending", "paid"]), "lost", "must be one of: pending, paid"],
  ["pattern", z.string().regex(/^ORD-[0-9]{6}$/), "ORD-1", "must match ^ORD-[0-9]{6}$"],
  ["email", z.email(), "ann", "must be an email address"],
  ["date", z.iso.date(), "2026-02-30", "must be a date (YYYY-MM-DD)"],
  ["datetime", z.iso.datetime({ offset: true }), "2026-01-01 10:00", "must be a date-time with a time zone (YYYY-MM-DDTHH:MM:SSZ)"],
  ["boolean", z.boolean(), "true", "must be true or false"],
  ["object", z.strictObject({}), [], "must be an object"],
  ["null", z.string(), null, "must be a string, not null"],
  ["missing", z.string(), undefined, ISSUES.required],
  ["missing UUID (its own message for wrong values)", uuidSchema, undefined, ISSUES.required],
  ["wrong UUID", uuidSchema, "123", ISSUES.uuid],
];

for (const [kind, schema, value, expected] of rows) {
  test(`${kind}: ${expected}`, () => assert.equal(issueOf(schema, value), expected));
}

test("unknown keys are each 'is not allowed'", () => {
  const parsed = z.strictObject({ a: z.string() }).safeParse({ a: "x", b: 1 }, PARSE);
  assert.equal(parsed.error?.issues[0]?.message, ISSUES.notAllowed);
});
