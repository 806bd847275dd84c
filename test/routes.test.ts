// The route record (generator/model/routes.ts) and the error status table (runtime/errors.ts):
// one fact of an operation, written once, read the same by every emitter.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as runtimeErrors from "../runtime/errors.ts";
import { ERROR_STATUSES } from "../runtime/errors.ts";
import { withArticle } from "../generator/model/names.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { repoRoot } from "./support/cli.ts";

const generated = (file: string) => readFileSync(path.join(repoRoot, "generated", file), "utf8");

test("every route of the showcase is served, documented and called as its record says", async () => {
  const { model } = await runFrontEnd(path.join(repoRoot, "definitions"), { cwd: repoRoot });
  assert.ok(model);
  let routes = 0;
  for (const version of model.versions) {
    const doc = JSON.parse(generated(`${version.name}/openapi.json`)) as { paths: Record<string, Record<string, { operationId: string; summary: string; responses: Record<string, unknown> }>> };
    const client = generated(`${version.name}/client.ts`);
    for (const resource of version.resources) {
      const handlers = generated(`${version.name}/${resource.collection}/routes.ts`);
      const ids = new Set<string>();
      for (const route of resource.routes) {
        routes++;
        assert.ok(!ids.has(route.operationId), `one ${route.operationId}`);
        ids.add(route.operationId);
        assert.ok(route.path.startsWith(`/${version.name}/`), route.path);
        const operation = doc.paths[route.path]?.[route.method];
        assert.ok(operation, `${version.name} documents ${route.method} ${route.path}`);
        assert.equal(operation.operationId, route.operationId);
        assert.equal(operation.summary, route.summary);
        assert.deepEqual(Object.keys(operation.responses).map(Number).sort((a, b) => a - b), [route.status, ...route.errors].sort((a, b) => a - b));
        const requestBody = (operation as { requestBody?: { content: Record<string, { schema: { $ref: string } }> } }).requestBody;
        assert.equal(requestBody?.content["application/json"]?.schema.$ref ?? null, route.body && `#/components/schemas/${route.body}`, `${route.operationId}'s body`);
        const answer = (operation.responses[String(route.status)] as { content?: Record<string, { schema: { $ref?: string } }> }).content?.["application/json"]?.schema;
        if (route.kind !== "list" && route.kind !== "list-under") assert.equal(answer?.$ref ?? null, route.record && `#/components/schemas/${route.record}`, `${route.operationId}'s record`);
        if (route.body) assert.ok(generated(`${version.name}/${resource.collection}/types.ts`).match(new RegExp(`export (interface|type) ${route.body}\\b`)) !== null, `${route.body} is a type`);
        assert.ok(handlers.includes(`app.${route.method}("${route.serverPath}"`), `${version.name} serves ${route.method} ${route.serverPath}`);
        // A list is called through the list helper (pages), any other route through `call`.
        const called = route.kind === "list" || route.kind === "list-under" ? `list(${JSON.stringify(route.path)}, ` : `call("${route.method.toUpperCase()}", ${JSON.stringify(route.path)}, `;
        assert.ok(client.includes(called), `the ${version.name} client calls ${route.method} ${route.path}`);
        for (const event of route.events) assert.ok(handlers.includes(`"${event}"`), `${route.operationId} publishes ${event}`);
      }
    }
  }
  assert.ok(routes > 50, `${routes} routes`);
});

test("prose names take the article their sound takes, and no output says \"an user\"", () => {
  const cases: Record<string, string> = {
    user: "a user",
    order: "an order",
    invoice: "an invoice",
    "book copy": "a book copy",
    unit: "a unit",
    umbrella: "an umbrella",
    hour: "an hour",
    euro: "a euro",
    "one-time code": "a one-time code",
    item: "an item",
  };
  for (const [noun, expected] of Object.entries(cases)) assert.equal(withArticle(noun), expected);
  for (const file of ["v1/openapi.json", "v2/openapi.json", "v3/openapi.json", "v1/client.ts", "v3/client.ts", "v3/users/types.ts", "v3/orders/types.ts"]) {
    assert.doesNotMatch(generated(file), /\ban user\b/i, file);
  }
});

test("the runtime's error status table is what the server throws, the documents list and the client catches", () => {
  const doc = JSON.parse(generated("v3/openapi.json")) as { components: { responses: Record<string, { description: string; headers: Record<string, unknown> }> } };
  const client = generated("v3/client.ts");
  const table = /const ERROR_CLASSES: Record<number, typeof ApiError> = \{\n([^}]*)\};/.exec(client)?.[1] ?? "";
  const mapped = [...table.matchAll(/(\d+): (\w+),/g)].map((m) => [Number(m[1]), m[2]]);
  assert.deepEqual(mapped, ERROR_STATUSES.map((e) => [e.status, e.className]));
  for (const e of ERROR_STATUSES) {
    const ServerClass = (runtimeErrors as unknown as Record<string, new (...args: unknown[]) => runtimeErrors.ApiError>)[e.className];
    assert.ok(ServerClass, `runtime/errors.ts has ${e.className}`);
    const thrown = new ServerClass([]);
    assert.equal(thrown.status, e.status, e.className);
    assert.equal(thrown.code, e.code, e.className);
    for (const header of e.headers) assert.ok(header in thrown.headers, `${e.className} carries ${header}`);
    const response = doc.components.responses[e.response];
    assert.ok(response, `the document has the response ${e.response}`);
    assert.ok(response.description.startsWith(`${e.code}: `));
    for (const header of [...e.headers, ...e.optionalHeaders.map((h) => h.name)]) assert.ok(header in response.headers, `${e.response} lists ${header}`);
    assert.match(client, new RegExp(`export class ${e.className} extends ApiError`));
  }
  assert.deepEqual(Object.keys(doc.components.responses).sort(), ERROR_STATUSES.map((e) => e.response).sort());
});
