// Structured logs (issue 14, point 6): the request id on every line of a request, one summary
// line per request at a settable level, every 500 with its stack, and no secret in any line.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import { MemoryStore } from "../../generated/index.ts";
import type { ResourceService } from "../../generated/runtime/index.ts";
import { defaultServices } from "../../generated/services.ts";
import type { UserValues } from "../../generated/values.ts";
import { type Api, startApp, userBody } from "./helpers.ts";

type Line = Record<string, any>;

function capture(): { lines: Line[]; stream: Writable } {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split("\n")) if (text.trim() !== "") lines.push(JSON.parse(text));
      done();
    },
  });
  return { lines, stream };
}

async function send(api: Api, method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${api.base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  return { status: res.status, requestId: res.headers.get("x-request-id")!, text: await res.text() };
}

describe("logs", () => {
  test("one summary line per request with its request id; a 500 with its stack; no secret anywhere", async () => {
    const { lines, stream } = capture();
    const store = new MemoryStore();
    const base = defaultServices(store);
    // The default service with a read that fails: a 500.
    const users: ResourceService<UserValues> = Object.assign(Object.create(base.users) as ResourceService<UserValues>, {
      get: async () => {
        throw new Error("the store fell over");
      },
    });
    const api = await startApp({ store, services: { users }, logger: { level: "info", stream }, cursorSecret: "cursor-secret-do-not-log-0123456789abcdef" });
    try {
      const password = "correct horse battery staple";
      const token = "Bearer dev-writer";
      const created = await send(api, "POST", "/v2/users", { authorization: token, "content-type": "application/json", cookie: "session=s3cr3t-cookie" }, JSON.stringify(userBody({ password })));
      assert.equal(created.status, 201, JSON.stringify(lines.filter((l) => l.level >= 50)).slice(0, 600));
      const id = JSON.parse(created.text).id as string;
      const failed = await send(api, "GET", `/v2/users/${id}`, { authorization: token, "x-request-id": "01890a5d-ac96-7e4b-bcce-b302099a8057" });
      assert.equal(failed.status, 500);
      const refused = await send(api, "POST", "/v2/users", { authorization: "Bearer wrong-token-123", "content-type": "application/json" }, JSON.stringify(userBody({ password })));
      assert.equal(refused.status, 401);
      const listed = await send(api, "GET", "/v2/users?per_page=1", { authorization: token });
      assert.equal(listed.status, 200);
      await new Promise((wait) => setTimeout(wait, 50));

      const all = JSON.stringify(lines);
      for (const secret of [password, "Bearer", "wrong-token-123", "s3cr3t-cookie", "cursor-secret-do-not-log-0123456789abcdef"]) {
        assert.ok(!all.includes(secret), `no line holds ${secret}`);
      }
      // A line that does carry headers (a plugin's, the user's) has its credentials redacted.
      api.app.log.info({ headers: { authorization: "Bearer leaked-token", cookie: "session=leaked", accept: "*/*" } }, "headers");
      const headers = lines.at(-1)!;
      assert.deepEqual(headers.headers, { authorization: "[redacted]", cookie: "[redacted]", accept: "*/*" });

      const summaries = lines.filter((l) => l.msg === "request");
      assert.deepEqual(
        summaries.map((l) => [l.method, l.status, l.request_id]),
        [
          ["POST", 201, created.requestId],
          ["GET", 500, failed.requestId],
          ["POST", 401, refused.requestId],
          ["GET", 200, listed.requestId],
        ],
      );
      assert.equal(failed.requestId, "01890a5d-ac96-7e4b-bcce-b302099a8057", "the caller's id is the log's too");
      for (const summary of summaries) {
        assert.equal(summary.level, 30, "at info");
        assert.equal(typeof summary.ms, "number");
      }
      assert.equal(summaries[0]!.principal, "dev-writer");
      const failure = lines.find((l) => l.level === 50);
      assert.ok(failure, "the 500 is logged at error");
      assert.equal(failure.request_id, failed.requestId);
      assert.match(failure.err.stack, /the store fell over\n\s+at /);
      for (const line of lines.filter((l) => l.req || l.res || l.msg === "request")) {
        assert.ok(line.request_id, `every line of a request carries its id: ${JSON.stringify(line)}`);
      }
    } finally {
      await api.close();
    }
  });

  test("the summary's level is settable; silent leaves only failures", async () => {
    const { lines, stream } = capture();
    const api = await startApp({ store: new MemoryStore(), logger: { level: "info", stream }, requestLogLevel: "debug" });
    try {
      await send(api, "GET", "/v2/users", { authorization: "Bearer dev-reader" });
      assert.deepEqual(lines.filter((l) => l.msg === "request"), [], "debug lines are below info");
    } finally {
      await api.close();
    }
    const debug = capture();
    const verbose = await startApp({ store: new MemoryStore(), logger: { level: "debug", stream: debug.stream }, requestLogLevel: "debug" });
    try {
      await send(verbose, "GET", "/v2/users", { authorization: "Bearer dev-reader" });
      assert.equal(debug.lines.filter((l) => l.msg === "request" && l.level === 20).length, 1);
    } finally {
      await verbose.close();
    }
  });
});
