/**
 * Every statement the SQL store runs is known before a request comes: its text depends only on
 * the collection and the query's shape (which filters, whether there is a `q`, a cursor, which
 * columns an insert sets), never on the values, which are always parameters. Each text is named
 * by a hash of itself, so the drivers prepare it once per connection and from then on only bind
 * and execute it. The number of shapes is bounded by the definitions; past `MAX_STATEMENTS`
 * distinct texts (a safety net for hand-made queries), the rest run unprepared.
 */
import { createHash } from "node:crypto";
import type { Statement } from "./sql-driver.ts";

/** Most named statements one store prepares (per connection). */
export const MAX_STATEMENTS = 512;

/** The statement of a text: `canon_<hash of the text>`. */
export function namedStatement(text: string): Statement {
  return { name: `canon_${createHash("sha256").update(text).digest("base64url").slice(0, 22)}`, text };
}

/** The named statements of one store, by text. */
export class StatementCache {
  private readonly byText = new Map<string, Statement>();

  /** The named statement of `text`, or the text itself once the cache is full. */
  get(text: string): Statement | string {
    let statement = this.byText.get(text);
    if (!statement) {
      if (this.byText.size >= MAX_STATEMENTS) return text;
      statement = namedStatement(text);
      this.byText.set(text, statement);
    }
    return statement;
  }

  get size(): number {
    return this.byText.size;
  }
}
