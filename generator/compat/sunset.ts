import { obj } from "./resolve.ts";
import type { Json } from "./types.ts";

/**
 * The sunset date (YYYY-MM-DD) a published document announces: the example of its `Sunset`
 * header (an IMF-fixdate), else the `sunset on YYYY-MM-DD` of its description. Undefined when
 * the version was never deprecated.
 */
export function sunsetOf(doc: Json): string | undefined {
  const d = obj(doc);
  const example = obj(obj(obj(d.components).headers).Sunset).example;
  if (typeof example === "string") {
    const ms = Date.parse(example);
    if (!Number.isNaN(ms)) return new Date(ms).toISOString().slice(0, 10);
  }
  const description = obj(d.info).description;
  const m = typeof description === "string" ? /sunset on (\d{4}-\d{2}-\d{2})/i.exec(description) : null;
  return m?.[1];
}
