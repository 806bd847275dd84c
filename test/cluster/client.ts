// The cluster test's client: JSON requests with the dev writer's credentials, each answer with
// the HAProxy server that gave it (`X-Served-By`, absent when an instance is called directly),
// and whole cursor walks of a list or of the events feed.
import assert from "node:assert/strict";

type Obj = Record<string, any>;

export interface Answer {
  status: number;
  headers: Headers;
  body: Obj | undefined;
  text: string;
  servedBy: string | null;
}

export async function call(base: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(base + url, {
    method,
    headers: {
      authorization: "Bearer dev-writer",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: Obj | undefined;
  try {
    parsed = text ? (JSON.parse(text) as Obj) : undefined;
  } catch {
    parsed = undefined; // HAProxy's own 502/503 pages are HTML
  }
  return { status: response.status, headers: response.headers, body: parsed, text, servedBy: response.headers.get("x-served-by") };
}

/** `call`, and the status must be `status`. */
export async function expect(status: number, base: string, method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
  const answer = await call(base, method, url, body, headers);
  assert.equal(answer.status, status, `${method} ${url} on ${answer.servedBy ?? base}: ${answer.status} ${answer.text.slice(0, 400)}`);
  return answer;
}

export interface Page {
  data: Obj[];
  next: string | null;
  servedBy: string | null;
}

/** Every page of a cursor list, from `url` (which has `limit`), following `next_cursor`. */
export async function walk(base: string, url: string, cursor?: string): Promise<Page[]> {
  const pages: Page[] = [];
  let next: string | null | undefined = cursor;
  do {
    const at: string = next === undefined ? url : `${url}&cursor=${encodeURIComponent(next)}`;
    const answer = await expect(200, base, "GET", at);
    next = answer.body!.pagination.next_cursor as string | null;
    assert.equal(answer.body!.pagination.has_more, next !== null);
    pages.push({ data: answer.body!.data as Obj[], next, servedBy: answer.servedBy });
    assert.ok(pages.length < 1000, `${url}: a walk of more than 1000 pages`);
  } while (next !== null);
  return pages;
}

/** The whole events feed of v2, in the order it is served. */
export async function feed(base: string): Promise<Obj[]> {
  return (await walk(base, "/v2/events?limit=100")).flatMap((page) => page.data);
}

/** Ids in strictly increasing order (every one once, in id order). */
export function assertIdOrder(ids: string[], what: string): void {
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${what}: ${ids[i - 1]} then ${ids[i]} is not id order`);
}
