/**
 * How values compare for sorted lists and range conditions (SPEC §12.1, §12.2), in the process:
 * the memory store's order, and the definition the SQL store's expressions (sql-sort.ts) follow.
 *  - text by code point (not by UTF-16 code unit, which puts astral characters before U+E000–U+FFFF);
 *  - instants by the instant they name, to the millisecond (`instantKey`, computed alike in SQL);
 *  - an enum by its rank; a value outside the ranks counts as null;
 *  - nulls (and absent values) after every value, in either direction.
 */
import { compareDecimals } from "./decimal.ts";
import type { Condition, Ordering, SortKey, SortPosition, StoredRecord } from "./store.ts";

/** Compares two strings by code point: UTF-8 byte order, PostgreSQL's `collate "C"`. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800–U+DFFF, halves of astral characters) sort after U+E000–U+FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

/**
 * The instant a date-time with a time zone names (`2026-01-02T10:00:05.123+02:00`, the form
 * the validators accept: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`), as a number that orders
 * as the instants do: milliseconds (the fraction cut after three digits) from a fixed origin
 * before year 0000. `instantSql` computes the same number in SQL.
 */
export function instantKey(text: string): number {
  const Y = Number(text.slice(0, 4));
  const M = Number(text.slice(5, 7));
  const D = Number(text.slice(8, 10));
  const h = Number(text.slice(11, 13));
  const mi = Number(text.slice(14, 16));
  const zulu = text.endsWith("Z");
  const seconds = text.slice(17, zulu ? -1 : -6);
  const ms = Number(seconds.slice(0, 2)) * 1000 + Number(`${seconds.slice(3)}000`.slice(0, 3));
  const offset = zulu
    ? 0
    : (text.charAt(text.length - 6) === "-" ? -1 : 1) *
      (Number(text.slice(-5, -3)) * 60 + Number(text.slice(-2)));
  const y = Y - (M <= 2 ? 1 : 0) + 400;
  const days =
    365 * y +
    Math.floor(y / 4) -
    Math.floor(y / 100) +
    Math.floor(y / 400) +
    Math.floor((153 * ((M + 9) % 12) + 2) / 5) +
    D -
    1;
  return ((days * 24 + h) * 60 + mi - offset) * 60000 + ms;
}

/** Compares two decimals exactly (compareDecimals of decimal.ts), at the finer of their two scales. */
function compareDecimalText(a: string, b: string): number {
  const fractionDigits = (text: string) => (text.includes(".") ? text.length - text.indexOf(".") - 1 : 0);
  return compareDecimals(a, b, Math.max(fractionDigits(a), fractionDigits(b)));
}

/** A record's value of a sort key or condition field: `created_at`/`updated_at` or a stored value; null when absent. */
export function valueOf(record: StoredRecord, field: string): unknown {
  const value =
    field === "created_at"
      ? record.created_at
      : field === "updated_at"
        ? record.updated_at
        : record.values[field];
  return value === undefined ? null : value;
}

/** Compares two values that are not null by an ordering. A rank value outside the ranks compares as null would (after). */
export function compareValues(a: unknown, b: unknown, ordering: Ordering, rank?: readonly string[]): number {
  switch (ordering) {
    case "text":
    case "date":
      return compareCodePoints(String(a), String(b));
    case "number":
      return Number(a) - Number(b);
    case "decimal":
      return compareDecimalText(String(a), String(b));
    case "boolean":
      return (a ? 1 : 0) - (b ? 1 : 0);
    case "instant":
      return instantKey(String(a)) - instantKey(String(b));
    case "rank": {
      const x = rankOf(a, rank);
      const y = rankOf(b, rank);
      return x === y ? 0 : x === -1 ? 1 : y === -1 ? -1 : x - y;
    }
  }
}

function rankOf(value: unknown, rank: readonly string[] | undefined): number {
  return rank ? rank.indexOf(value as string) : -1;
}

/** Whether a value counts as null for a key: null, absent, or an enum value outside the ranks. */
function isNull(value: unknown, key: SortKey): boolean {
  return value === null || value === undefined || (key.ordering === "rank" && rankOf(value, key.rank) === -1);
}

/**
 * Compares sort values `a` (with id `aId`) and `b` in the order of `sort`: each key in its
 * direction with nulls last either way, then the id in the direction of the last key.
 */
export function comparePositions(
  sort: readonly SortKey[],
  a: readonly unknown[],
  aId: string,
  b: readonly unknown[],
  bId: string,
): number {
  for (let i = 0; i < sort.length; i++) {
    const key = sort[i]!;
    const x = a[i];
    const y = b[i];
    const xNull = isNull(x, key);
    const yNull = isNull(y, key);
    if (xNull || yNull) {
      if (xNull && yNull) continue;
      return xNull ? 1 : -1;
    }
    const c = compareValues(x, y, key.ordering, key.rank);
    if (c !== 0) return key.descending ? -c : c;
  }
  const c = aId < bId ? -1 : aId > bId ? 1 : 0;
  return sort[sort.length - 1]?.descending ? -c : c;
}

/** A record's sort values, one per key (null for a missing value): what a cursor keeps of it. */
export function sortValues(record: StoredRecord, sort: readonly SortKey[]): unknown[] {
  return sort.map((key) => valueOf(record, key.field));
}

/** The record's position in a sorted list. */
export function positionOf(record: StoredRecord, sort: readonly SortKey[]): SortPosition {
  return { values: sortValues(record, sort), id: record.id };
}

/** Sorts records in place in the order of `sort`. */
export function sortRecords(records: StoredRecord[], sort: readonly SortKey[]): StoredRecord[] {
  const keyed = records.map((record) => ({ record, values: sortValues(record, sort) }));
  keyed.sort((a, b) => comparePositions(sort, a.values, a.record.id, b.values, b.record.id));
  for (let i = 0; i < keyed.length; i++) records[i] = keyed[i]!.record;
  return records;
}

/** Whether a record meets an operator condition (nulls never meet a range or `in`). */
export function meetsCondition(record: StoredRecord, condition: Condition): boolean {
  const value = valueOf(record, condition.field);
  if (condition.op === "null") return (value === null) === condition.value;
  if (value === null) return false;
  if (condition.op === "in") {
    if (condition.ordering === "instant")
      return condition.values.some((v) => compareValues(value, v, "instant") === 0);
    return condition.values.includes(value);
  }
  const c = compareValues(value, condition.value, condition.ordering);
  switch (condition.op) {
    case "gt":
      return c > 0;
    case "gte":
      return c >= 0;
    case "lt":
      return c < 0;
    case "lte":
      return c <= 0;
  }
}
