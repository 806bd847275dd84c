// The names canon gives its own parts of an OpenAPI document (the error envelope, health,
// readiness, the event feed, exports: emit/openapi/names.ts) where a user's names meet them: a
// collection `healths` has a record `Health` and an operation `getHealth`, as `GET /vN/health`
// does. Two components or operations never share a name, every document stays valid for an
// independent validator, and a published document keeps the names it gave.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { generate } from "../generator/generate.ts";

type Obj = Record<string, any>;

const root = mkdtempSync(path.join(tmpdir(), "canon-openapi-names-"));
after(() => rmSync(root, { recursive: true, force: true }));

const API = (events: boolean) => `title: Names API\nbase_url: https://api.example.com\nversions:\n  v1: {}\nevents: ${events}\n`;

const FILES: Record<string, string> = {
  "healths.yaml": "resource: healths\nfields:\n  score: { type: integer }\n",
  "readinesses.yaml": "resource: readinesses\nfields:\n  level: { type: integer }\n",
  // Its record is `Event`, its page `EventCursorPage`, its read `getEvent`: the feed's names.
  "happenings.yaml": "resource: happenings\nsingular: event\nexport: true\nfields:\n  title: { type: string, max_length: 10 }\n",
  // `Export`, `ExportCreate`, `ExportCursorPage`, `createExport`, `getExport`: the exports' names.
  "shipments.yaml": "resource: shipments\nsingular: export\nfields:\n  carrier: { type: string, max_length: 10 }\n",
  "errors.yaml": "resource: errors\nfields:\n  message: { type: string, max_length: 100 }\n",
  // `ApiHealth`: the name canon's health schema would yield to.
  "api-healths.yaml": "resource: api-healths\nfields:\n  note: { type: string, max_length: 10 }\n",
  "stores.yaml": "resource: stores\nfields:\n  name: { type: string, max_length: 10 }\n",
};

/** Writes the definitions (`files` of FILES) into `dir`/definitions and generates into `dir`/out. */
async function generated(dir: string, files: string[], events = true): Promise<Obj> {
  const definitions = path.join(dir, "definitions");
  rmSync(definitions, { recursive: true, force: true });
  mkdirSync(definitions, { recursive: true });
  writeFileSync(path.join(definitions, "api.yaml"), API(events));
  for (const f of files) writeFileSync(path.join(definitions, f), FILES[f]!);
  const result = await generate({ definitions, out: path.join(dir, "out"), write: true, cacheFile: null, today: "2026-11-21", cwd: dir });
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.rule} ${d.message}`),
    [],
  );
  return JSON.parse(readFileSync(path.join(dir, "out/v1/openapi.json"), "utf8")) as Obj;
}

/** The document is valid, its operation ids are unique and every `$ref` to a schema names one. */
async function assertSound(document: Obj): Promise<void> {
  const result = await new Validator().validate(structuredClone(document));
  assert.ok(result.valid, String(JSON.stringify(result.errors)).slice(0, 2000));
  const ids = new Map<string, string[]>();
  for (const [p, item] of Object.entries(document.paths as Obj)) {
    for (const [method, operation] of Object.entries(item as Obj)) ids.set(operation.operationId, [...(ids.get(operation.operationId) ?? []), `${method} ${p}`]);
  }
  assert.deepEqual([...ids].filter(([, at]) => at.length > 1), [], "each operationId names one operation");
  for (const target of new Set(JSON.stringify(document).match(/#\/components\/schemas\/[^"]+/g))) {
    assert.ok(document.components.schemas[target.slice("#/components/schemas/".length)], `${target} names a schema`);
  }
}

const json = (response: Obj): Obj => response.content["application/json"].schema;
const schemaOf = (document: Obj, ref: Obj): Obj => document.components.schemas[(ref.$ref as string).split("/").pop()!];
const operation = (document: Obj, p: string, method: string): Obj => document.paths[p][method];

describe("OpenAPI names a user's definitions share with canon's own", () => {
  test("in a version not yet published, the user's names win and canon's parts yield (ApiHealth, getApiHealth)", async () => {
    const document = await generated(path.join(root, "fresh"), Object.keys(FILES));
    await assertSound(document);
    const schemas = document.components.schemas as Obj;
    // The user's schemas are named as their TypeScript types.
    assert.deepEqual(Object.keys(schemas.Health.properties).sort(), ["created_at", "id", "score", "updated_at"]);
    assert.deepEqual(Object.keys(schemas.Readiness.properties).sort(), ["created_at", "id", "level", "updated_at"]);
    assert.deepEqual(Object.keys(schemas.Event.properties).sort(), ["created_at", "id", "title", "updated_at"]);
    assert.deepEqual(Object.keys(schemas.Export.properties).sort(), ["carrier", "created_at", "id", "updated_at"]);
    assert.deepEqual(Object.keys(schemas.Error.properties).sort(), ["created_at", "id", "message", "updated_at"]);
    assert.deepEqual(Object.keys(schemas.ApiHealth.properties).sort(), ["created_at", "id", "note", "updated_at"]);
    assert.equal(operation(document, "/v1/healths/{id}", "get").operationId, "getHealth");
    assert.equal(operation(document, "/v1/happenings/{id}", "get").operationId, "getEvent");
    assert.equal(operation(document, "/v1/shipments", "post").operationId, "createExport");
    // canon's own, under the names they yield to; what they answer is canon's.
    const health = operation(document, "/v1/health", "get");
    assert.equal(health.operationId, "getApiHealth2", "getApiHealth reads an api-health");
    assert.equal(operation(document, "/v1/api-healths/{id}", "get").operationId, "getApiHealth");
    assert.deepEqual(schemaOf(document, json(health.responses["200"])).properties.status.enum, ["ok"]);
    assert.equal(json(health.responses["200"]).$ref, "#/components/schemas/ApiHealth2", "ApiHealth is the user's too");
    const ready = operation(document, "/v1/ready", "get");
    assert.equal(ready.operationId, "getApiReadiness");
    assert.deepEqual(schemaOf(document, json(ready.responses["200"])).properties.status.enum, ["ready"]);
    const event = operation(document, "/v1/events/{id}", "get");
    assert.equal(event.operationId, "getApiEvent");
    assert.ok(schemaOf(document, json(event.responses["200"])).properties.occurred_at, "the feed's event");
    assert.ok(schemaOf(document, json(operation(document, "/v1/events", "get").responses["200"])).properties.pagination, "the feed's page");
    const createExport = operation(document, "/v1/exports", "post");
    assert.equal(createExport.operationId, "createApiExport");
    assert.ok(schemaOf(document, json(createExport.requestBody)).oneOf, "the export job's body");
    assert.ok(schemaOf(document, json(createExport.responses["201"])).properties.status, "the export job");
    assert.ok(schemaOf(document, json(operation(document, "/v1/exports/{id}", "get").responses["200"])).properties.download_url);
    assert.equal(json(document.components.responses.NotFound).$ref, "#/components/schemas/ApiError");
  });

  test("a version published before adds collections named as canon's parts: the published names stay canon's, the new schemas and operations yield", async () => {
    const dir = path.join(root, "published");
    const before = await generated(dir, ["stores.yaml"]);
    await assertSound(before);
    const after = await generated(dir, ["stores.yaml", "errors.yaml", "healths.yaml"]);
    await assertSound(after);
    // A client generated from the published document keeps its meaning: `Error` is the
    // envelope, `Health` and `getHealth` the instance's health.
    assert.deepEqual(after.components.schemas.Error, before.components.schemas.Error);
    assert.deepEqual(after.components.responses, before.components.responses);
    assert.deepEqual(after.paths["/v1/health"], before.paths["/v1/health"]);
    assert.deepEqual(after.components.schemas.Health, before.components.schemas.Health);
    assert.deepEqual(Object.keys(after.components.schemas.ErrorRecord.properties).sort(), ["created_at", "id", "message", "updated_at"]);
    assert.deepEqual(Object.keys(after.components.schemas.HealthRecord.properties).sort(), ["created_at", "id", "score", "updated_at"]);
    assert.equal(json(operation(after, "/v1/errors/{id}", "get").responses["200"]).$ref, "#/components/schemas/ErrorRecord");
    assert.equal(operation(after, "/v1/healths/{id}", "get").operationId, "getHealthRecord");
    assert.equal(operation(after, "/v1/errors/{id}", "get").operationId, "getError");
    // The next run keeps them: nothing changes.
    const again = await generated(dir, ["stores.yaml", "errors.yaml", "healths.yaml"]);
    assert.deepEqual(again, after);
  });

  test("a published version whose record is Event turns the event feed on: the user's names stay, the feed's yield", async () => {
    const dir = path.join(root, "feed");
    const first = await generated(dir, ["happenings.yaml"], false);
    await assertSound(first);
    assert.equal(operation(first, "/v1/happenings/{id}", "get").operationId, "getEvent");
    const next = await generated(dir, ["happenings.yaml"], true);
    await assertSound(next);
    assert.deepEqual(next.components.schemas.Event, first.components.schemas.Event);
    assert.deepEqual(next.components.schemas.EventCursorPage, first.components.schemas.EventCursorPage);
    assert.equal(operation(next, "/v1/happenings/{id}", "get").operationId, "getEvent");
    const feed = operation(next, "/v1/events/{id}", "get");
    assert.equal(feed.operationId, "getApiEvent");
    assert.equal(json(feed.responses["200"]).$ref, "#/components/schemas/ApiEvent");
    assert.equal(json(operation(next, "/v1/events", "get").responses["200"]).$ref, "#/components/schemas/ApiEventCursorPage");
  });
});
