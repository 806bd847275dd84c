// HEAD on every kind of GET the service answers (RFC 9110 §9.3.2): the GET's status and headers,
// Content-Length the length of the body a GET gets, and no body. Each GET route answers HEAD as
// the same route (runtime/app.ts `answerHead`), not as a second route of Fastify's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { expectStatus, withApp } from "./helpers.ts";

type Obj = Record<string, any>;

/** Headers that differ between any two answers. */
const PER_ANSWER = new Set(["date", "x-request-id", "content-length", "transfer-encoding", "connection", "keep-alive"]);

test("HEAD answers what GET answers, without the body: lists, records, child lists, errors, documents, health", async () => {
  await withApp({}, async (api) => {
    const user = (await expectStatus(api, "POST", "/v2/users", 201, { body: { email: "head@example.com", name: "Head", password: "correct horse battery" } })).body as Obj;
    const targets = [
      "/v2/users?limit=5",
      `/v2/users/${user.id}`,
      `/v2/users/${user.id}/orders`,
      "/v2/users/01a21735-a6bc-76ac-8b27-0c8327ceb029",
      "/v2/users?limit=nope",
      "/v2/openapi.json",
      "/v2/health",
      "/v2/events?limit=3",
    ];
    for (const target of targets) {
      const headers = { authorization: "Bearer dev-writer" };
      const get = await fetch(`${api.base}${target}`, { headers });
      const body = Buffer.from(await get.arrayBuffer());
      const head = await fetch(`${api.base}${target}`, { method: "HEAD", headers });
      assert.equal(head.status, get.status, target);
      assert.equal((await head.arrayBuffer()).byteLength, 0, `${target}: no body`);
      assert.equal(head.headers.get("content-length"), String(body.length), `${target}: the GET's length`);
      const kept = (response: Response) => [...response.headers].filter(([name]) => !PER_ANSWER.has(name));
      assert.deepEqual(kept(head), kept(get), target);
    }
    // A method no route has, and a path no operation answers: as before.
    assert.equal((await fetch(`${api.base}/v2/nothing-here`, { method: "HEAD" })).status, 404);
  });
});
