/**
 * JSON request bodies: parsed by Fastify's parser (which refuses `__proto__` and `constructor`
 * keys), then refused when one object names a key twice. `JSON.parse` keeps the last of
 * duplicate keys, so `{"role":"customer","role":"admin"}` would pass a check of the first.
 */
import type { FastifyInstance } from "fastify";
import { ValidationError } from "./errors.ts";

/**
 * Whether `text` is JSON, which the parser refused all the same: then for a `__proto__` key, or
 * a `constructor` key holding `prototype` (its error does not say which).
 */
function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * JSON only. An empty body with a JSON Content-Type (a DELETE from a client that always sends
 * one) is no body; an operation that needs one answers "must be a JSON object".
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser(["application/json"]);
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text === "") return done(null, undefined);
    parseJson(request, text, (error, value) => {
      // No operation answers the path: 404, whatever the body holds (here and below).
      // Valid JSON the parser refused all the same: a key that would reach an object's prototype.
      if (error && !request.is404 && isJson(text)) {
        return done(
          new ValidationError(
            [
              {
                field: "body",
                issue: "must not name a key __proto__, nor constructor with prototype inside",
              },
            ],
            "The request body names a key no body may hold.",
          ),
        );
      }
      if (error) return done(error);
      const duplicate = !request.is404 && mayRepeatKeys(text, value) ? duplicateKey(text) : null;
      if (duplicate === null) return done(null, value);
      done(
        new ValidationError(
          [{ field: duplicate, issue: "is given more than once" }],
          "The request body names a key twice.",
        ),
      );
    });
  });
}

/**
 * Whether `text` may name a key twice in one object. Each key of the text ends with a quote
 * then a colon (whitespace between), so when the text holds no more such colons than `value`
 * has keys, every key is distinct and the text need not be read again. Only a string value
 * holding `\":` sends a text without duplicates to the full check; colons of times and URLs do not.
 */
export function mayRepeatKeys(text: string, value: unknown): boolean {
  const keys = countKeys(value);
  let afterQuote = 0;
  for (let at = text.indexOf(":"); at !== -1; at = text.indexOf(":", at + 1)) {
    let before = at - 1;
    let c = text.charCodeAt(before);
    while (c === 32 || c === 9 || c === 10 || c === 13) c = text.charCodeAt(--before);
    if (c === 34 && ++afterQuote > keys) return true;
  }
  return false;
}

/** The keys of every object in `value`, counted without recursion (bodies may nest thousands deep). */
function countKeys(value: unknown): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    const items = Array.isArray(next) ? next : Object.values(next);
    if (!Array.isArray(next)) count += items.length;
    for (const item of items) if (typeof item === "object" && item !== null) pending.push(item);
  }
  return count;
}

interface Level {
  /** The keys of an object seen so far; null in an array. */
  keys: Set<string> | null;
  /** The dotted path of this object or array, "" at the top. */
  path: string;
  /** The key (object) or index (array) whose value comes next. */
  at: string;
  expectKey: boolean;
}

/**
 * The dotted path (`address.city`, `tags.0.name`) of the first key an object of `text` names
 * twice; null when none does. `text` is valid JSON.
 */
export function duplicateKey(text: string): string | null {
  const stack: Level[] = [];
  let top: Level | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (escaped(text, end)) end = text.indexOf('"', end + 1);
      if (top?.keys && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) return join(top.path, key);
        top.keys.add(key);
        top.at = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      const path = top ? join(top.path, top.at) : "";
      top = { keys: c === 123 ? new Set() : null, path, at: "0", expectKey: c === 123 };
      stack.push(top);
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      stack.pop();
      top = stack[stack.length - 1];
    } else if (c === 44 /* , */ && top) {
      if (top.keys) top.expectKey = true;
      else top.at = String(Number(top.at) + 1);
    }
  }
  return null;
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === 92) backslashes++;
  return backslashes % 2 === 1;
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}
