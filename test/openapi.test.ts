import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { openapiEmitter } from "../generator/emit/openapi/index.ts";
import { openapiDocument } from "../generator/emit/openapi/document.ts";
import type { EmitContext, EmittedFile } from "../generator/emit/emitter.ts";
import type { ApiModel } from "../generator/model/types.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { resolveRef } from "./support/openapi-ref.ts";

type Obj = Record<string, any>;

const methods = ["get", "put", "post", "patch", "delete"];

/** The OpenAPI emitter reads only the model: a context that it would use fails the test. */
const noContext: EmitContext = {
  render: () => assert.fail("the openapi emitter renders no template"),
  templateText: () => assert.fail("the openapi emitter places no template"),
  runtimeFile: () => assert.fail("the openapi emitter copies no runtime file"),
  runtimeFiles: () => assert.fail("the openapi emitter copies no runtime file"),
  runtimeExports: () => assert.fail("the openapi emitter imports no runtime file"),
  canonTypeNames: () => assert.fail("the openapi emitter imports no user type beside canon's code"),
  unit: (unit, slice) => unit.compute(slice, noContext),
  // The document is built from the model alone; the real context only keeps it for the run.
  openapiDocument: (model, version) => openapiDocument(model, version) as Record<string, unknown>,
  openapiText: (model, version) => `${JSON.stringify(openapiDocument(model, version), null, 2)}\n`,
  verify: true,
};

function emit(model: ApiModel): EmittedFile[] {
  return openapiEmitter.emit(model, noContext);
}

async function modelOf(dir: string): Promise<ApiModel> {
  const { model, diagnostics } = await runFrontEnd(dir, { today: "2026-01-01" });
  assert.ok(model, `no model for ${dir}: ${diagnostics.map((d) => d.message).join("; ")}`);
  return model;
}

function documents(model: ApiModel): Map<string, Obj> {
  return new Map(emit(model).map((f) => [f.path, JSON.parse(f.content) as Obj]));
}

interface Op {
  path: string;
  method: string;
  op: Obj;
}

function operations(doc: Obj): Op[] {
  return Object.entries(doc.paths as Obj).flatMap(([path, item]) =>
    methods.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] as Obj })),
  );
}

function operation(doc: Obj, operationId: string): Op {
  const found = operations(doc).find((o) => o.op.operationId === operationId);
  assert.ok(found, `no operation ${operationId}`);
  return found;
}

function params(doc: Obj, op: Obj): Obj[] {
  return ((op.parameters ?? []) as Obj[]).map((p) => resolveRef(doc, p));
}

function ajvFor(doc: Obj) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc, "openapi.json");
  return (schema: string) => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${schema}`);
    assert.ok(validate, `schema ${schema} does not compile`);
    return (instance: unknown) => validate(instance) as boolean;
  };
}

/** The query parameters of the showcase's order lists (v2). */
const ORDERS_LIST = ["limit", "cursor", "q", "sort", "status", "currency", "total_cents", "status[in]", "currency[in]", "total_cents[in]", "total_cents[gt]", "total_cents[gte]", "total_cents[lt]", "total_cents[lte]", "placed_at[gt]", "placed_at[gte]", "placed_at[lt]", "placed_at[lte]", "placed_at[null]", "created_at[gt]", "created_at[gte]", "created_at[lt]", "created_at[lte]"];

let showcase: ApiModel;
let fixture: ApiModel;
let v1: Obj;
let v2: Obj;
let lib: Obj;
let lib2: Obj;

before(async () => {
  showcase = await modelOf("definitions");
  fixture = await modelOf("test/fixtures/openapi");
  const docs = documents(showcase);
  assert.deepEqual([...docs.keys()], ["v1/openapi.json", "v2/openapi.json", "v3/openapi.json"]);
  v1 = docs.get("v1/openapi.json")!;
  v2 = docs.get("v2/openapi.json")!;
  const libDocs = documents(fixture);
  lib = libDocs.get("v1/openapi.json")!;
  lib2 = libDocs.get("v2/openapi.json")!;
});

describe("openapi emitter: validity and determinism", () => {
  test("every document is valid OpenAPI 3.1 for an independent validator", async () => {
    for (const model of [showcase, fixture]) {
      for (const file of emit(model)) {
        // Written as JSON.stringify(doc, null, 2) prints it: canonical, and no prettier pass on large documents.
        assert.equal(file.parser, null);
        assert.equal(file.content, `${JSON.stringify(JSON.parse(file.content), null, 2)}\n`);
        const result = await new Validator().validate(JSON.parse(file.content));
        assert.ok(result.valid, `${file.path}: ${JSON.stringify(result.errors)}`);
      }
    }
  });

  test("the validator catches a broken document (control)", async () => {
    const broken = structuredClone(v2);
    broken.paths["/v2/orders/{id}"].get.parameters[0].in = "body";
    const result = await new Validator().validate(broken);
    assert.equal(result.valid, false);
  });

  test("same input, byte-identical output", async () => {
    const again = await modelOf("definitions");
    const first = emit(showcase);
    assert.deepEqual(emit(showcase), first);
    assert.deepEqual(emit(again), first);
    assert.deepEqual(emit(fixture), emit(await modelOf("test/fixtures/openapi")));
  });

  test("paths, components and tags are sorted; the document says it is generated", () => {
    for (const doc of [v1, v2, lib, lib2]) {
      assert.match(doc["x-generated"], /^Generated by canon from the definitions\. Do not edit/);
      const sorted = (keys: string[]) => [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      assert.deepEqual(Object.keys(doc.paths), sorted(Object.keys(doc.paths)));
      for (const kind of Object.keys(doc.components)) {
        assert.deepEqual(Object.keys(doc.components[kind]), sorted(Object.keys(doc.components[kind])), kind);
      }
      const tags = doc.tags.map((t: Obj) => t.name);
      assert.deepEqual(tags, sorted(tags));
    }
  });
});

describe("openapi emitter: the showcase", () => {
  test("info, servers and security", () => {
    assert.equal(v2.openapi, "3.1.0");
    assert.equal(v1.info.version, "v1");
    assert.equal(v2.info.version, "v2");
    assert.deepEqual(v2.servers, [{ url: "https://api.example.com" }]);
    assert.deepEqual(v1.servers, v2.servers);
    assert.match(v2.info.description, /65536 bytes/);
    assert.match(v1.info.description, /2026-09-01/);
    assert.match(v1.info.description, /2027-06-30/);
    assert.doesNotMatch(v2.info.description, /[Dd]eprecated/);
    assert.deepEqual(v2.security, [{ bearerAuth: [] }]);
    assert.deepEqual(v2.components.securitySchemes.bearerAuth, { type: "http", scheme: "bearer" });
    assert.deepEqual(
      v2.tags.map((t: Obj) => t.name),
      ["events", "exports", "health", "invoices", "orders", "products", "users"],
    );
    assert.equal(v2.tags.find((t: Obj) => t.name === "orders").description, "Orders placed by users.");
  });

  test("full paths with the version, docs and the document itself not listed", () => {
    assert.deepEqual(Object.keys(v2.paths), [
      "/v2/events",
      "/v2/events/{id}",
      "/v2/exports",
      "/v2/exports/{id}",
      "/v2/exports/{id}/files/{token}",
      "/v2/health",
      "/v2/invoices",
      "/v2/invoices/{id}",
      "/v2/orders",
      "/v2/orders/{id}",
      "/v2/orders/{id}/cancellations",
      "/v2/orders/{id}/invoices",
      "/v2/products",
      "/v2/products/{id}",
      "/v2/ready",
      "/v2/users",
      "/v2/users/{id}",
      "/v2/users/{id}/orders",
    ]);
    assert.ok(Object.keys(v1.paths).every((p) => p.startsWith("/v1/")));
  });

  test("operation ids, methods, summaries and tags", () => {
    const ids = operations(v2).map((o) => `${o.method} ${o.path} ${o.op.operationId}`);
    for (const expected of [
      "get /v2/orders listOrders",
      "get /v2/orders/{id} getOrder",
      "post /v2/orders createOrder",
      "patch /v2/orders/{id} updateOrder",
      "delete /v2/orders/{id} deleteOrder",
      "get /v2/users/{id}/orders listUserOrders",
      "get /v2/orders/{id}/invoices listOrderInvoices",
      "post /v2/orders/{id}/cancellations createOrderCancellation",
      "put /v2/products/{id} replaceProduct",
      "get /v2/events listEvents",
      "get /v2/events/{id} getEvent",
    ]) {
      assert.ok(ids.includes(expected), expected);
    }
    assert.ok(!ids.some((i) => i.includes("replaceOrder")), "replace is opt-in");
    assert.ok(!ids.some((i) => i.includes("deleteInvoice")), "invoices have no delete");
    const unique = new Set(operations(v2).map((o) => o.op.operationId));
    assert.equal(unique.size, operations(v2).length);
    for (const { op } of operations(v2)) {
      assert.ok(op.summary, op.operationId);
      assert.equal(op.tags.length, 1);
    }
    assert.deepEqual(operation(v2, "listUserOrders").op.tags, ["orders"]);
    assert.deepEqual(operation(v2, "createOrderCancellation").op.tags, ["orders"]);
  });

  test("cursor lists: limit, cursor, q and the filters", () => {
    const list = params(v2, operation(v2, "listOrders").op);
    assert.deepEqual(
      list.map((p) => p.name),
      // SPEC §12: sort, then the equality filters, then each operator under its full name.
      ["limit", "cursor", "q", "sort", "status", "currency", "total_cents", "status[in]", "currency[in]", "total_cents[in]", "total_cents[gt]", "total_cents[gte]", "total_cents[lt]", "total_cents[lte]", "placed_at[gt]", "placed_at[gte]", "placed_at[lt]", "placed_at[lte]", "placed_at[null]", "created_at[gt]", "created_at[gte]", "created_at[lt]", "created_at[lte]"],
    );
    const limit = list.find((p) => p.name === "limit")!;
    assert.deepEqual(limit.schema, { type: "integer", minimum: 1, maximum: 100, default: 20 });
    assert.equal(limit.in, "query");
    assert.deepEqual(list.find((p) => p.name === "status")!.schema, {
      type: "string",
      enum: ["pending", "paid", "shipped", "cancelled"],
    });
    const ok = operation(v2, "listOrders").op.responses["200"];
    assert.deepEqual(ok.content["application/json"].schema, { $ref: "#/components/schemas/OrderCursorPage" });
    const page = v2.components.schemas.OrderCursorPage;
    assert.equal(page.properties.data.maxItems, 100);
    assert.deepEqual(page.properties.pagination.properties.next_cursor.type, ["string", "null"]);
    assert.deepEqual(page.properties.pagination.required, ["next_cursor", "has_more"]);
    assert.equal(page.additionalProperties, false);
    assert.equal(page.properties.pagination.additionalProperties, false);
    assert.deepEqual(
      params(v2, operation(v2, "listEvents").op).map((p) => p.name),
      ["limit", "cursor"],
    );
  });

  test("offset lists: page, per_page and cursor mode for q; the page is one of two shapes", () => {
    for (const id of ["listUsers"]) {
      const list = params(v2, operation(v2, id).op);
      assert.deepEqual(
        list.map((p) => p.name),
        ["page", "per_page", "limit", "cursor", "q", "sort", "role", "role[in]", "created_at[gt]", "created_at[gte]", "created_at[lt]", "created_at[lte]"],
      );
      assert.deepEqual(list.find((p) => p.name === "per_page")!.schema, {
        type: "integer",
        minimum: 1,
        maximum: 100,
        default: 20,
      });
      assert.deepEqual(list.find((p) => p.name === "page")!.schema, { type: "integer", minimum: 1, default: 1 });
      assert.deepEqual(operation(v2, id).op.responses["200"].content["application/json"].schema, {
        oneOf: [{ $ref: "#/components/schemas/UserOffsetPage" }, { $ref: "#/components/schemas/UserCursorPage" }],
      });
    }
    const page = v2.components.schemas.UserOffsetPage;
    assert.deepEqual(page.properties.pagination.required, ["page", "per_page", "total", "total_pages"]);
    assert.equal(page.properties.data.maxItems, 100);
  });

  test("child list: the parent's id in the path, the child's pagination", () => {
    const { op } = operation(v2, "listUserOrders");
    const list = params(v2, op);
    assert.deepEqual(
      list.map((p) => `${p.in} ${p.name}`),
      ["path id", ...(ORDERS_LIST as string[]).map((n) => `query ${n}`)],
    );
    assert.deepEqual(list[0]!.schema, { type: "string", format: "uuid" });
    assert.equal(list[0]!.required, true);
  });

  test("versions: fields as each version shows them, no row_id anywhere", () => {
    const order1 = Object.keys(v1.components.schemas.Order.properties);
    const order2 = Object.keys(v2.components.schemas.Order.properties);
    assert.ok(order1.includes("due_cents") && order1.includes("legacy_ref") && !order1.includes("gift_wrap"));
    assert.ok(!order1.includes("amount_due_cents"));
    assert.ok(order2.includes("amount_due_cents") && order2.includes("gift_wrap"));
    assert.ok(!order2.includes("due_cents") && !order2.includes("legacy_ref"));
    assert.equal(order2[0], "id");
    assert.deepEqual(order2.slice(-2), ["created_at", "updated_at"]);
    for (const doc of [v1, v2, lib, lib2]) assert.doesNotMatch(JSON.stringify(doc), /row_id/);
  });

  test("records, create, update and replace bodies", () => {
    const s = v2.components.schemas;
    assert.deepEqual(s.Order.properties.id, { type: "string", format: "uuid", description: "UUID v7, assigned by the server." });
    assert.deepEqual(s.Order.required, [
      "id",
      "user_id",
      "code",
      "status",
      "total_cents",
      "currency",
      "gift_wrap",
      "amount_due_cents",
      "created_at",
      "updated_at",
    ]);
    assert.equal(s.Order.additionalProperties, false);
    assert.ok(!("status" in s.OrderCreate.properties), "read-only fields are not input");
    assert.deepEqual(s.OrderCreate.required, ["user_id", "code", "total_cents", "currency", "amount_due_cents"]);
    assert.equal(s.OrderCreate.properties.gift_wrap.default, false);
    assert.equal(s.OrderUpdate.required, undefined);
    assert.equal(s.OrderUpdate.properties.gift_wrap.default, undefined);
    assert.ok(!("password" in s.User.properties), "write-only fields are not returned");
    assert.ok("password" in s.UserCreate.properties);
    assert.deepEqual(s.User.properties.email, { type: "string", format: "email", maxLength: 254 });
    assert.deepEqual(s.Product.properties.homepage, { type: ["string", "null"], format: "uri", description: "A URL with scheme http or https." });
    assert.deepEqual(s.Product.properties.tags, {
      type: "array",
      items: { type: "string", minLength: 1, maxLength: 30 },
      maxItems: 10,
    });
    assert.equal(s.Product.properties.dimensions.additionalProperties, false);
    assert.deepEqual(s.Product.properties.dimensions.required, ["width_mm", "height_mm"]);
    assert.deepEqual(s.ProductReplace, s.ProductCreate);
    assert.equal(s.OrderReplace, undefined);
    assert.deepEqual(s.Invoice.properties.due_date, { type: "string", format: "date" });
    assert.deepEqual(s.Order.properties.placed_at, { type: "string", format: "date-time" });
    const body = operation(v2, "replaceProduct").op.requestBody;
    assert.equal(body.required, true);
    // What a PUT does with a field it leaves out (README, business rules; test/http/rules.test.ts).
    assert.equal(
      operation(v2, "replaceProduct").op.description,
      "Replaces the record: the body is a whole record, as on create. A field left out takes its default, a change like any other (a transition may refuse it: 422); read-only fields keep their values.",
    );
    assert.deepEqual(body.content["application/json"].schema, { $ref: "#/components/schemas/ProductReplace" });
  });

  test("actions, events and the error envelope", () => {
    const s = v2.components.schemas;
    assert.deepEqual(Object.keys(s.OrderCancellation.properties), ["id", "order_id", "reason", "created_at"]);
    assert.deepEqual(s.OrderCancellation.required, ["id", "order_id", "reason", "created_at"]);
    assert.deepEqual(s.OrderCancellationCreate.required, ["reason"]);
    const { op } = operation(v2, "createOrderCancellation");
    assert.deepEqual(op.responses["201"].content["application/json"].schema, { $ref: "#/components/schemas/OrderCancellation" });
    assert.deepEqual(op.requestBody.content["application/json"].schema, {
      $ref: "#/components/schemas/OrderCancellationCreate",
    });
    assert.deepEqual(Object.keys(s.Event.properties), ["id", "type", "occurred_at", "data"]);
    assert.deepEqual(s.EventCursorPage.properties.data.items, { $ref: "#/components/schemas/Event" });
    assert.deepEqual(s.Error.required, ["error"]);
    assert.deepEqual(s.Error.properties.error.required, ["code", "message"]);
    assert.deepEqual(s.Error.properties.error.properties.details.items.required, ["field", "issue"]);
    assert.equal(s.Error.properties.error.properties.details.items.additionalProperties, false);
  });

  test("statuses: the common errors everywhere, 404 where a record is looked up, 409 and 422 on writes", () => {
    for (const doc of [v1, v2, lib, lib2]) {
      for (const { path, method, op } of operations(doc)) {
        const statuses = Object.keys(op.responses);
        const lookup = path.includes("{id}");
        const write = method !== "get";
        const errors = [400, 401, 403, ...(lookup ? [404] : []), ...(write ? [409, 422] : []), 429, 500].map(String);
        // Health and readiness: no credentials, no rate limit; readiness answers 503 when the store does not.
        if (op.tags[0] === "health") errors.splice(0, errors.length, "400", "500", ...(path.endsWith("/ready") ? ["503"] : []));
        assert.deepEqual(
          statuses.filter((s) => Number(s) >= 400),
          errors,
          op.operationId,
        );
        for (const status of errors) {
          const response = resolveRef(doc, op.responses[status]);
          assert.ok(op.responses[status].$ref.startsWith("#/components/responses/"), `${op.operationId} ${status}`);
          assert.deepEqual(response.content["application/json"].schema, { $ref: "#/components/schemas/Error" });
        }
        const success = statuses.filter((s) => Number(s) < 400);
        assert.equal(success.length, 1, op.operationId);
      }
    }
    const success = (id: string) => Object.keys(operation(v2, id).op.responses)[0];
    assert.equal(success("createOrder"), "201");
    assert.equal(success("getOrder"), "200");
    assert.equal(success("updateOrder"), "200");
    assert.equal(success("replaceProduct"), "200");
    assert.equal(success("deleteOrder"), "204");
    assert.equal(operation(v2, "deleteOrder").op.responses["204"].content, undefined);
    assert.equal(success("createOrderCancellation"), "201");
    assert.equal(success("listUserOrders"), "200");
  });

  test("headers: request id everywhere, ETag on records, Location on create, auth and rate limit headers", () => {
    for (const doc of [v1, v2]) {
      for (const { op } of operations(doc)) {
        for (const [status, raw] of Object.entries(op.responses as Obj)) {
          const headers = resolveRef(doc, raw as Obj).headers;
          const xid = resolveRef(doc, headers["X-Request-Id"]);
          assert.deepEqual(xid.schema, { type: "string", format: "uuid" }, `${op.operationId} ${status}`);
          if (status === "401") assert.ok(headers["WWW-Authenticate"]);
          if (status === "429") assert.deepEqual(resolveRef(doc, headers["Retry-After"]).schema, { type: "integer", minimum: 0 });
        }
      }
      for (const id of ["getOrder", "createOrder", "updateOrder", "replaceProduct"]) {
        const ok = Object.values(operation(doc, id).op.responses)[0] as Obj;
        assert.ok(ok.headers.ETag, id);
      }
      assert.ok(operation(doc, "createOrder").op.responses["201"].headers.Location);
    }
    const ifMatch = (id: string) => params(v2, operation(v2, id).op).some((p) => p.name === "If-Match" && p.in === "header");
    assert.ok(ifMatch("updateOrder") && ifMatch("replaceProduct") && ifMatch("deleteOrder"));
    assert.ok(!ifMatch("getOrder") && !ifMatch("createOrder"));
  });

  test("a deprecated version: every operation deprecated, every response with Deprecation, Sunset and Link", () => {
    for (const { path, op } of operations(v1)) {
      assert.equal(op.deprecated, true, op.operationId);
      // Health and readiness link to their own path in the successor.
      const collection = op.tags[0] === "health" ? path.split("/")[2] : op.tags[0];
      for (const [status, raw] of Object.entries(op.responses as Obj)) {
        const headers = resolveRef(v1, raw as Obj).headers;
        const at = `${op.operationId} ${status}`;
        assert.deepEqual(resolveRef(v1, headers.Deprecation).schema, { type: "string", enum: ["true"] }, at);
        assert.equal(resolveRef(v1, headers.Sunset).example, "Wed, 30 Jun 2027 00:00:00 GMT", at);
        const link = resolveRef(v1, headers.Link);
        assert.equal(link.schema.type, "string", at);
        if (Number(status) < 400) {
          assert.equal(link.example, `<https://api.example.com/v2/${collection}>; rel="successor-version"`, at);
        }
      }
    }
    const orders = showcase.versions[0]!.resources.find((r) => r.collection === "orders")!;
    const getOrder = operation(v1, "getOrder").op.responses["200"];
    assert.equal(resolveRef(v1, getOrder.headers.Link).example, orders.successorLink);
  });

  test("a current version: nothing deprecated", () => {
    const text = JSON.stringify(v2);
    for (const { op } of operations(v2)) assert.equal(op.deprecated, undefined);
    assert.doesNotMatch(text, /"Deprecation"|"Sunset"|"Link"|successor-version/);
  });
});

describe("openapi emitter: a fixture with replace, a 204 action, a nullable enum and an offset child list", () => {
  test("replace without delete, and no events", () => {
    const ids = operations(lib).map((o) => o.op.operationId);
    assert.ok(ids.includes("replaceAuthor") && !ids.includes("deleteAuthor"));
    assert.ok(ids.includes("deleteBookCopy"));
    assert.equal(operation(lib, "replaceAuthor").method, "put");
    assert.ok(!Object.keys(lib.paths).some((p) => p.includes("events")));
    assert.equal(lib.components.schemas.Event, undefined);
    assert.deepEqual(
      lib.tags.map((t: Obj) => t.name),
      ["authors", "book-copies", "health"],
    );
    assert.match(lib.info.description, /2048 bytes/);
    assert.equal(lib.components.headers.Deprecation, undefined);
  });

  test("a 204 action has no content and no record schema", () => {
    const { path, op } = operation(lib, "createAuthorReview");
    assert.equal(path, "/v1/authors/{id}/reviews");
    assert.deepEqual(
      Object.keys(op.responses).filter((s) => Number(s) < 400),
      ["204"],
    );
    assert.equal(op.responses["204"].content, undefined);
    assert.equal(lib.components.schemas.AuthorReview, undefined);
    assert.ok(lib.components.schemas.AuthorReviewCreate);
  });

  test("a nullable enum takes null, but not as a filter", () => {
    assert.deepEqual(lib.components.schemas.Author.properties.genre, {
      type: ["string", "null"],
      enum: ["fiction", "nonfiction", null],
    });
    const genre = params(lib, operation(lib, "listAuthors").op).find((p) => p.name === "genre")!;
    assert.deepEqual(genre.schema, { type: "string", enum: ["fiction", "nonfiction"] });
  });

  test("an offset child list pages like its child", () => {
    const { path, op } = operation(lib, "listAuthorBookCopies");
    assert.equal(path, "/v1/authors/{id}/book-copies");
    assert.deepEqual(
      params(lib, op).map((p) => p.name),
      ["id", "page", "per_page", "limit", "cursor", "q", "shelf", "shelf[in]"],
    );
    assert.deepEqual(op.responses["200"].content["application/json"].schema.oneOf, [
      { $ref: "#/components/schemas/BookCopyOffsetPage" },
      { $ref: "#/components/schemas/BookCopyCursorPage" },
    ]);
  });

  test("a read-only field that no input or default sets is not required in the record", () => {
    const s = lib.components.schemas;
    assert.ok("barcode" in s.BookCopy.properties);
    assert.ok(!s.BookCopy.required.includes("barcode"));
    assert.ok(s.BookCopy.required.includes("shelf"));
    assert.deepEqual(lib2.components.schemas.BookCopy, s.BookCopy);
  });

  test("read-only, write-only and nested values", () => {
    const s = lib.components.schemas;
    assert.ok("barcode" in s.BookCopy.properties && !("barcode" in s.BookCopyCreate.properties));
    assert.ok(!("secret" in s.BookCopy.properties) && "secret" in s.BookCopyCreate.properties);
    assert.deepEqual(s.BookCopyCreate.properties.loans.items.required, ["borrower"]);
    assert.equal(s.BookCopyCreate.properties.loans.items.properties.returned.default, false);
    assert.equal(s.BookCopyUpdate.properties.loans.items.properties.returned.default, undefined);
    assert.equal(s.BookCopy.properties.loans.maxItems, 5);
  });
});

describe("openapi emitter: schemas compile with Ajv 2020 and judge instances", () => {
  const id = "01890a5d-ac96-774b-bcce-b302099a8057";
  const at = "2026-01-02T03:04:05.000Z";
  const order = {
    id,
    user_id: id,
    code: "ORD-000001",
    status: "pending",
    total_cents: 1200,
    currency: "EUR",
    gift_wrap: false,
    amount_due_cents: 1200,
    created_at: at,
    updated_at: at,
  };

  test("every component schema of every document compiles", () => {
    for (const doc of [v1, v2, lib, lib2]) {
      const schema = ajvFor(doc);
      for (const name of Object.keys(doc.components.schemas)) schema(name);
    }
  });

  test("records", () => {
    const schema = ajvFor(v2);
    const isOrder = schema("Order");
    assert.equal(isOrder(order), true);
    assert.equal(isOrder({ ...order, note: "ring twice" }), true);
    assert.equal(isOrder({ ...order, row_id: 7 }), false);
    assert.equal(isOrder({ ...order, id: "not-a-uuid" }), false);
    assert.equal(isOrder({ ...order, status: "lost" }), false);
    const { created_at: _, ...noTimestamp } = order;
    assert.equal(isOrder(noTimestamp), false);
    const isV1Order = ajvFor(v1)("Order");
    const { amount_due_cents, gift_wrap: __, ...rest } = order;
    assert.equal(isV1Order({ ...rest, due_cents: amount_due_cents }), true);
    assert.equal(isV1Order(order), false);
  });

  test("bodies", () => {
    const schema = ajvFor(v2);
    const isCreate = schema("OrderCreate");
    const body = { user_id: id, code: "ORD-000002", total_cents: 1, currency: "USD", amount_due_cents: 0 };
    assert.equal(isCreate(body), true);
    assert.equal(isCreate({ ...body, status: "paid" }), false);
    assert.equal(isCreate({ ...body, id }), false);
    const { code: _, ...noCode } = body;
    assert.equal(isCreate(noCode), false);
    assert.equal(schema("OrderUpdate")({}), true);
    assert.equal(schema("OrderUpdate")({ note: "x" }), true);
    assert.equal(schema("OrderUpdate")({ row_id: 1 }), false);
    assert.equal(schema("ProductCreate")({ sku: "ABC-1", name: "Lamp", price_cents: 10, homepage: null }), true);
    assert.equal(schema("ProductCreate")({ sku: "ABC-1", name: "Lamp", price_cents: 10, tags: Array(11).fill("t") }), false);
  });

  test("pages and errors", () => {
    const schema = ajvFor(v2);
    const cursorPage = { data: [order], pagination: { next_cursor: null, has_more: false } };
    assert.equal(schema("OrderCursorPage")(cursorPage), true);
    assert.equal(schema("OrderCursorPage")({ ...cursorPage, pagination: { has_more: false } }), false);
    assert.equal(schema("OrderCursorPage")({ ...cursorPage, data: Array(101).fill(order) }), false);
    const offset = { data: [], pagination: { page: 1, per_page: 20, total: 0, total_pages: 0 } };
    assert.equal(schema("UserOffsetPage")(offset), true);
    assert.equal(schema("UserCursorPage")(offset), false);
    const isError = schema("Error");
    assert.equal(
      isError({ error: { code: "VALIDATION_ERROR", message: "bad", details: [{ field: "limit", issue: "too big" }] } }),
      true,
    );
    assert.equal(isError({ error: { code: "NOT_FOUND", message: "no" } }), true);
    assert.equal(isError({ error: { code: "NOT_FOUND" } }), false);
    assert.equal(isError({ error: { code: "X", message: "y" }, stack: "…" }), false);
    assert.equal(isError({ error: { code: "X", message: "y", details: [{ field: "a" }] } }), false);
    const event = { id, type: "order.created", occurred_at: at, data: order };
    assert.equal(schema("Event")(event), true);
    assert.equal(schema("Event")({ ...event, extra: 1 }), false);
  });
});

describe("openapi emitter: decimal and map fields (test/fixtures/ledger)", () => {
  let ledger: Obj;
  before(async () => {
    ledger = documents(await modelOf("test/fixtures/ledger")).get("v1/openapi.json")!;
  });

  test("the document is valid OpenAPI 3.1 for an independent validator, and its schemas compile", async () => {
    const result = await new Validator().validate(structuredClone(ledger));
    assert.ok(result.valid, JSON.stringify(result.errors));
    const schema = ajvFor(ledger);
    for (const name of Object.keys(ledger.components.schemas)) schema(name);
  });

  test("a decimal is a string of format decimal with a pattern, its digits and bounds as x- keywords", () => {
    const balance = ledger.components.schemas.Account.properties.balance;
    assert.deepEqual(balance, {
      type: "string",
      format: "decimal",
      pattern: "^-?(0|[1-9][0-9]{0,9})\\.[0-9]{2}$",
      "x-precision": 12,
      "x-scale": 2,
      "x-minimum": "-1000.00",
      "x-maximum": "9999999999.99",
      description: "An exact decimal as a string, up to 12 digits with 2 after the point, at least -1000.00 and at most 9999999999.99.",
    });
    assert.equal(ledger.components.schemas.AccountCreate.properties.balance.pattern, "^-?(0|[1-9][0-9]{0,9})(\\.[0-9]{1,2})?$");
    assert.deepEqual(ledger.components.schemas.Account.properties.rate.type, ["string", "null"]);
    assert.equal(ledger.components.schemas.Account.properties.rate.pattern, "^-?0\\.[0-9]{4}$");
    assert.equal(ledger.components.schemas.Account.properties.shares.pattern, "^-?(0|[1-9][0-9]{0,4})$");
  });

  test("a map is an object with additionalProperties, propertyNames and maxProperties", () => {
    const labels = ledger.components.schemas.Account.properties.labels;
    const names = { pattern: "^[A-Za-z0-9_.-]{1,40}$" };
    assert.deepEqual(labels.additionalProperties, { type: "object", additionalProperties: { type: "integer" }, propertyNames: names, maxProperties: 5 });
    assert.deepEqual(labels.propertyNames, names);
    assert.equal(labels.maxProperties, 100);
    assert.equal(ledger.components.schemas.Account.properties.metadata.maxProperties, 50);
  });

  test("the schemas judge records and bodies", () => {
    const schema = ajvFor(ledger);
    const id = "01890a5d-ac96-774b-bcce-b302099a8057";
    const at = "2026-01-02T03:04:05.000Z";
    const account = { id, name: "A", balance: "12.50", shares: "0", limits: {}, created_at: at, updated_at: at };
    const record = schema("Account");
    assert.equal(record(account), true);
    assert.equal(record({ ...account, balance: "12.5" }), false, "a response always has scale digits");
    assert.equal(record({ ...account, balance: 12.5 }), false);
    assert.equal(record({ ...account, metadata: { "ok.key-1": "x" } }), true);
    assert.equal(record({ ...account, metadata: { "bad key": "x" } }), false);
    assert.equal(record({ ...account, labels: { a: { b: "x" } } }), false);
    const create = schema("AccountCreate");
    for (const balance of ["12.5", "12", "-1000", "0.01"]) assert.equal(create({ name: "A", balance }), true, balance);
    for (const balance of ["1e3", "+1", "01", "12.505", "12345678901", 1]) assert.equal(create({ name: "A", balance }), false, String(balance));
    assert.equal(create({ name: "A", balance: "1", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "x"])) }), false);
  });
});
