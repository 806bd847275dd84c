// runtime/pagination.ts's `?sort=` and `?x[in]=` readers as the generated validators use them.
// Both are written so that what a request keeps for its whole life is not allocated at an object
// or array literal (V8 learns to put such a literal's objects straight into old space, and the
// server then does a mark-compact every few seconds under load; docs/benchmarks.md, issue 24.6):
// `sortParam` reads each valid text once and hands out the same frozen keys after, and `inParam`
// puts the values into the array `split` made. These tests hold what that must not change.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { detailIssue, validationMessage } from "../../runtime/messages.ts";
import { inParam, pageParam, pageSizeParam, queryInteger, queryNumber, sortParam } from "../../runtime/pagination.ts";

const PARSE = { reportInput: true, error: validationMessage } as const;

const sort = sortParam({
  priority: { field: "priority", ordering: "rank", rank: ["low", "normal", "high"] },
  due_at: { field: "due_at", ordering: "text" },
  created_at: { field: "created_at", ordering: "text" },
  title: { field: "title", ordering: "text" },
});

function refused(schema: z.ZodType, text: string): string {
  const parsed = schema.safeParse(text, PARSE);
  assert.equal(parsed.success, false, `${text} is refused`);
  return detailIssue(parsed.error!.issues[0]!);
}

test("sortParam: a text read again gives the same keys, frozen, so no request can change another's", () => {
  const first = sort.parse("-priority,due_at");
  assert.deepEqual(first, [
    { field: "priority", descending: true, ordering: "rank", rank: ["low", "normal", "high"] },
    { field: "due_at", descending: false, ordering: "text" },
  ]);
  assert.equal(sort.parse("-priority,due_at"), first);
  assert.ok(Object.isFrozen(first) && first.every((key) => Object.isFrozen(key)));
  assert.throws(() => (first as unknown as unknown[]).push({}), TypeError);
  // Another text, another list's reader: their own keys.
  assert.notEqual(sort.parse("priority,due_at"), first);
  const other = sortParam({ priority: { field: "level", ordering: "number" } });
  assert.deepEqual(other.parse("-priority"), [{ field: "level", descending: true, ordering: "number" }]);
  assert.deepEqual(sort.parse("-priority"), [
    { field: "priority", descending: true, ordering: "rank", rank: ["low", "normal", "high"] },
  ]);
});

test("sortParam: a bad text is refused every time it comes, and is never kept", () => {
  for (let round = 0; round < 3; round++) {
    assert.match(
      refused(sort, "-nope"),
      /^must be comma-separated keys among priority, due_at, created_at, title/,
    );
    assert.equal(refused(sort, "title,-title"), "names title twice");
    assert.equal(refused(sort, "title,due_at,created_at,priority"), "must name at most 3 keys");
  }
  // Past the number of texts it keeps, it still reads each one right.
  const names = [
    "priority",
    "-priority",
    "due_at",
    "-due_at",
    "created_at",
    "-created_at",
    "title",
    "-title",
  ];
  const texts: string[] = [];
  for (const a of names) for (const b of names) for (const c of names) texts.push(`${a},${b},${c}`);
  for (const text of texts) {
    const keys = text.split(",").map((k) => k.replace(/^-/, ""));
    if (new Set(keys).size < 3) assert.match(refused(sort, text), /twice$/);
    else assert.equal(sort.parse(text).length, 3);
  }
  assert.equal(sort.parse("-title,priority,due_at")[0]!.descending, true);
});

test("inParam: each value read by the field's own form, in the order sent; a bad one names the parameter's rule", () => {
  const status = inParam(z.enum(["open", "pending", "closed"]));
  assert.deepEqual(status.parse("open,pending"), ["open", "pending"]);
  const numbers = inParam(queryInteger);
  const read = numbers.parse("3,-1,20");
  assert.deepEqual(read, [3, -1, 20]);
  assert.equal(typeof read[0], "number");
  assert.equal(refused(status, "open,shut"), "each value must be one of: open, pending, closed");
  assert.equal(refused(numbers, "1,x"), "each value must be an integer");
  assert.equal(
    refused(status, Array(101).fill("open").join(",")),
    "must list at most 100 comma-separated values",
  );
});

test("queryNumber and queryInteger read every value a body may hold as String() writes it, and nothing else", () => {
  for (const n of [0.1 + 0.2, 1e-7, 1e21, -1.5e-10, 123456789012345.67, 5, -0.5, 0, Number.MAX_VALUE, Number.MIN_VALUE])
    assert.equal(queryNumber.parse(String(n)), n, String(n));
  assert.equal(queryNumber.parse("2.5E3"), 2500);
  assert.equal(queryNumber.parse("0.000e-5"), 0);
  assert.equal(queryNumber.parse(`1.${"0".repeat(38)}`), 1, "40 characters");
  for (const bad of ["", "x", "1e", ".5", "1.", "--1", "1e999", "1e-400", "NaN", "Infinity", "0x10", " 1", "007", "1".repeat(41)])
    assert.equal(refused(queryNumber, bad), "must be a number", JSON.stringify(bad));
  for (const n of [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0, 42])
    assert.equal(queryInteger.parse(String(n)), n, String(n));
  for (const bad of ["9007199254740992", "1.5", "1e3", "12345678901234567", "x", "", "+2", " 2", "0x10"])
    assert.equal(refused(queryInteger, bad), "must be an integer", JSON.stringify(bad));
  for (const bad of ["02", "-02", "00", "0009007199254740991"])
    assert.equal(refused(queryInteger, bad), "must be an integer, written without a leading zero", JSON.stringify(bad));
});

test("limit, per_page and page follow the integer rule of every query integer: no leading zero, no +", () => {
  assert.equal(pageSizeParam.parse("5"), 5);
  assert.equal(pageSizeParam.parse(undefined), 20);
  assert.equal(pageParam.parse("9007199254740991"), Number.MAX_SAFE_INTEGER);
  for (const bad of ["05", "010", "-05"])
    assert.equal(refused(pageSizeParam, bad), "must be an integer from 1 to 100, written without a leading zero", bad);
  for (const bad of ["+5", "5.0", "1e1", "0", "101", "-0"])
    assert.equal(refused(pageSizeParam, bad), "must be an integer from 1 to 100", bad);
  assert.equal(refused(pageParam, "01"), "must be an integer of 1 or more, written without a leading zero");
  for (const bad of ["+1", "0", "9007199254740992"]) assert.equal(refused(pageParam, bad), "must be an integer of 1 or more", bad);
});
