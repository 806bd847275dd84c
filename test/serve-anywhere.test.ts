// `canon serve` wherever the output lives, on a busy port, and the docs page's servers.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { canon, repoRoot, workspace } from "./support/cli.ts";
import { serve, stop } from "./store/serve.ts";

const headers = { authorization: "Bearer dev-writer", "content-type": "application/json" };

describe("canon serve", () => {
  test("--out outside the project: the generated code finds canon's runtime dependencies", async () => {
    const dir = workspace("serve-out", "definitions");
    // No package.json and no node_modules above this folder: bare imports of fastify, zod … fail
    // unless canon resolves them from its own package.
    const out = mkdtempSync(path.join(tmpdir(), "canon-out-"));
    try {
      const instance = await serve(dir, ["--store", "memory", "--out", out]);
      try {
        const created = await fetch(`${instance.base}/v2/products`, {
          method: "POST",
          headers,
          body: JSON.stringify({ sku: "OUT-1", name: "Elsewhere", price_cents: 5 }),
        });
        assert.equal(created.status, 201, await created.clone().text());
        const list = await fetch(`${instance.base}/v2/products`, { headers });
        assert.equal(((await list.json()) as { data: unknown[] }).data.length, 1);
      } finally {
        assert.equal(await stop(instance), 0);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test("--auth importing the generated runtime, in a project with no node_modules: it finds canon's runtime dependencies too", async () => {
    // The auth module imports the runtime the output holds, which imports zod: loaded before the
    // output's modules resolve canon's packages, it failed with "Cannot find package 'zod'".
    const project = mkdtempSync(path.join(tmpdir(), "canon-auth-"));
    try {
      cpSync(path.join(repoRoot, "definitions"), path.join(project, "definitions"), { recursive: true });
      writeFileSync(
        path.join(project, "auth.ts"),
        [
          'import { BusinessRuleError } from "./generated/runtime/index.ts";',
          "export const refusal = BusinessRuleError.name;",
          "export function authenticate(request: { headers: Record<string, string | undefined> }) {",
          '  return request.headers.authorization === "Bearer own-token" ? { id: "own", scopes: ["read", "write"] } : null;',
          "}",
          "",
        ].join("\n"),
      );
      const instance = await serve(project, ["--store", "memory", "--auth", "./auth.ts"]);
      try {
        const list = await fetch(`${instance.base}/v2/products`, { headers: { authorization: "Bearer own-token" } });
        assert.equal(list.status, 200, await list.clone().text());
      } finally {
        assert.equal(await stop(instance), 0);
      }
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  test("a busy port is one line naming the port and --port, exit 1", async () => {
    const dir = workspace("serve-busy", "definitions");
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = canon(["serve", "--store", "memory", "--port", String(port)], dir);
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
      assert.match(run.stderr, new RegExp(`^canon serve: port ${port} on 127\\.0\\.0\\.1 is in use: .*--port`));
      assert.doesNotMatch(run.stderr, /unexpected failure|EADDRINUSE|    at /);
    } finally {
      blocker.close();
    }
  });

  test("the docs page lists the serving origin first among its servers; openapi.json stays as committed", async () => {
    const dir = workspace("serve-docs", "definitions");
    const instance = await serve(dir, ["--store", "memory"]);
    try {
      const page = (await (await fetch(`${instance.base}/v2/docs/json`)).json()) as { servers: Array<{ url: string }> };
      assert.equal(page.servers[0]!.url, instance.base);
      assert.ok(page.servers.some((s) => s.url === "https://api.example.com"), "base_url stays listed");
      const document = (await (await fetch(`${instance.base}/v2/openapi.json`, { headers })).json()) as { servers: Array<{ url: string }> };
      assert.ok(!document.servers.some((s) => s.url === instance.base));
    } finally {
      assert.equal(await stop(instance), 0);
    }
  });
});
