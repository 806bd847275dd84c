import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { FastifyInstance } from "fastify";
import { buildApp, devAuthenticate } from "../generated/index.ts";

const run = promisify(execFile);
const chromium = ["chromium", "chromium-browser", "google-chrome"].find((name) => spawnSync("which", [name]).status === 0);

// CI installs Debian's chromium (.ci/run); there the test must run. Elsewhere it is skipped when absent.
const skip = !chromium && !process.env.CI ? "chromium is not installed (apt-get install chromium)" : false;

describe("API reference page in headless Chromium", { skip }, () => {
  let app: FastifyInstance;
  let base: string;

  before(async () => {
    app = await buildApp({ authenticate: devAuthenticate, rateLimit: false });
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => app.close());

  for (const version of ["v1", "v2"]) {
    test(`/${version}/docs renders the operations of /${version}/openapi.json, with no asset from elsewhere`, async () => {
      assert.ok(chromium, "chromium must be installed in CI");
      const { stdout } = await run(
        chromium,
        ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", "--dump-dom", `${base}/${version}/docs/`],
        { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
      );
      const paths = new Set([...stdout.matchAll(/class="opblock-summary-path(?:__deprecated)?" data-path="([^"]+)"/g)].map((m) => m[1]));
      for (const p of [`/${version}/orders`, `/${version}/orders/{id}`, `/${version}/users/{id}/orders`, `/${version}/orders/{id}/cancellations`]) {
        assert.ok(paths.has(p), `the page lists ${p}; it listed ${[...paths].join(", ") || "nothing"}`);
      }
      const assets = [...stdout.matchAll(/(?:src|href)="(https?:\/\/[^"]+)"/g)].map((m) => m[1]!);
      assert.deepEqual(
        assets.filter((a) => !a.startsWith(base) && !a.startsWith("https://api.example.com")),
        [],
        "no asset comes from a CDN",
      );
    });
  }
});
