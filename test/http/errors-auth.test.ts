// SPEC §5 over real HTTP: conflicts, business rules, authentication, authorization, the
// rate limit, unknown paths, unexpected failures, and the request id of every response.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, test } from "node:test";
import type { ResourceService } from "../../generated/runtime/index.ts";
import type { OrderValues } from "../../generated/values.ts";
import { buildApp, devAuthenticate, MemoryStore, scopeAuthorize } from "../../generated/index.ts";
import { defaultServices } from "../../generated/services.ts";
import { suiteFixture } from "../support/fixture.ts";
import {
  call,
  createInvoice,
  createOrder,
  createProduct,
  createUser,
  detailFields,
  expectError,
  expectStatus,
  orderBody,
  productBody,
  startApp,
  UNKNOWN_ID,
  userBody,
  UUID_V7,
  V4_UUID,
  withApp,
} from "./helpers.ts";
import { storeFromEnvironment } from "../store/stores.ts";

type Obj = Record<string, any>;

const api = suiteFixture(() => startApp());

describe("409 CONFLICT and 422 BUSINESS_RULE_VIOLATION", () => {
  test("a duplicate of a unique field answers 409 on create and on update, and writes nothing", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const dupOrder = await expectError(api, "POST", "/v2/orders", 409, "CONFLICT", { body: orderBody("v2", user.id, { code: order.code }) });
    assert.deepEqual(detailFields(dupOrder), ["code"]);
    await expectError(api, "POST", "/v1/orders", 409, "CONFLICT", { body: orderBody("v1", user.id, { code: order.code }) });
    const second = await createOrder(api, user.id);
    await expectError(api, "PATCH", `/v2/orders/${second.id}`, 409, "CONFLICT", { body: { code: order.code } });
    assert.equal((await expectStatus(api, "GET", `/v2/orders/${second.id}`, 200)).body.code, second.code);
    // Re-sending a record's own value is not a conflict.
    await expectStatus(api, "PATCH", `/v2/orders/${order.id}`, 200, { body: { code: order.code } });

    const product = await createProduct(api);
    await expectError(api, "POST", "/v2/products", 409, "CONFLICT", { body: productBody({ sku: product.sku }) });
    const other = await createProduct(api);
    await expectError(api, "PUT", `/v2/products/${other.id}`, 409, "CONFLICT", { body: productBody({ sku: product.sku }) });

    const dupUser = await expectError(api, "POST", "/v2/users", 409, "CONFLICT", { body: userBody({ email: user.email }) });
    assert.deepEqual(detailFields(dupUser), ["email"]);
    const listed = (await expectStatus(api, "GET", `/v2/users/${user.id}/orders`, 200)).body;
    assert.equal(listed.data.length, 2, "the refused creates wrote nothing");
  });

  test("a reference to a record that does not exist answers 422 naming the field", async () => {
    const error = await expectError(api, "POST", "/v2/orders", 422, "BUSINESS_RULE_VIOLATION", { body: orderBody("v2", UNKNOWN_ID) });
    assert.deepEqual(detailFields(error), ["user_id"]);
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    await expectError(api, "PATCH", `/v2/orders/${order.id}`, 422, "BUSINESS_RULE_VIOLATION", { body: { user_id: V4_UUID } });
    assert.equal((await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200)).body.user_id, user.id);
    await expectError(api, "POST", "/v2/invoices", 422, "BUSINESS_RULE_VIOLATION", {
      body: { order_id: UNKNOWN_ID, amount_cents: 1, due_date: "2026-01-01" },
    });
    const invoice = await createInvoice(api, order.id);
    await expectError(api, "PATCH", `/v2/invoices/${invoice.id}`, 422, "BUSINESS_RULE_VIOLATION", { body: { order_id: UNKNOWN_ID } });
    // A deleted user is no longer a valid reference.
    const gone = await createUser(api);
    await expectStatus(api, "DELETE", `/v2/users/${gone.id}`, 204);
    await expectError(api, "POST", "/v2/orders", 422, "BUSINESS_RULE_VIOLATION", { body: orderBody("v2", gone.id) });
  });
});

describe("authentication and authorization", () => {
  const unauthenticated: Array<[string, Record<string, string>]> = [
    ["no Authorization", {}],
    ["an unknown token", { authorization: "Bearer nobody" }],
    ["a Basic credential", { authorization: "Basic ZGV2LXdyaXRlcjp4" }],
    ["a bare token", { authorization: "dev-writer" }],
    ["an empty Bearer", { authorization: "Bearer " }],
    ["a token with trailing junk", { authorization: "Bearer dev-writer extra" }],
  ];
  for (const [label, headers] of unauthenticated) {
    test(`${label}: 401 UNAUTHENTICATED with WWW-Authenticate, on reads and writes, v1 and v2`, async () => {
      for (const [method, url, body] of [
        ["GET", "/v2/orders", undefined],
        ["GET", `/v2/orders/${UNKNOWN_ID}`, undefined],
        ["POST", "/v2/orders", { code: "x" }],
        ["DELETE", `/v2/products/${UNKNOWN_ID}`, undefined],
        ["GET", "/v1/users", undefined],
        ["GET", "/v2/events", undefined],
      ] as const) {
        const res = await expectStatus(api, method, url, 401, { auth: null, headers, ...(body ? { body } : {}) });
        assert.equal(res.body.error.code, "UNAUTHENTICATED");
        assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
      }
    });
  }

  test("dev-reader may read; its writes answer 403 FORBIDDEN and change nothing", async () => {
    const user = await createUser(api);
    const order = await createOrder(api, user.id);
    const product = await createProduct(api);
    const reader = { auth: "dev-reader" };
    await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200, reader);
    await expectStatus(api, "GET", "/v2/orders", 200, reader);
    await expectStatus(api, "GET", `/v2/users/${user.id}/orders`, 200, reader);
    await expectStatus(api, "GET", "/v2/users", 200, reader);
    await expectStatus(api, "GET", "/v2/events", 200, reader);
    for (const [method, url, body] of [
      ["POST", "/v2/orders", orderBody("v2", user.id)],
      ["POST", "/v2/users", userBody()],
      ["PATCH", `/v2/orders/${order.id}`, { note: "no" }],
      ["PUT", `/v2/products/${product.id}`, productBody()],
      ["DELETE", `/v2/orders/${order.id}`, undefined],
      ["POST", `/v2/orders/${order.id}/cancellations`, { reason: "no" }],
      ["POST", "/v1/orders", orderBody("v1", user.id)],
    ] as const) {
      const error = await expectError(api, method, url, 403, "FORBIDDEN", { ...reader, ...(body ? { body } : {}) });
      assert.ok(!("details" in error));
    }
    assert.deepEqual((await expectStatus(api, "GET", `/v2/orders/${order.id}`, 200)).body, order);
    assert.deepEqual((await expectStatus(api, "GET", `/v2/products/${product.id}`, 200)).body, product);
  });

  test("authorize is called on every access to a record by id, with the record", async () => {
    const seen: Obj[] = [];
    await withApp({
      authorize: (access) => {
        seen.push(structuredClone(access));
        return scopeAuthorize(access);
      },
    }, async (spy) => {
      const user = await createUser(spy);
      const order = await createOrder(spy, user.id);
      const product = await createProduct(spy);
      const check = async (method: string, url: string, status: number, action: string, collection: string, id: string, body?: unknown) => {
        seen.length = 0;
        await expectStatus(spy, method, url, status, body === undefined ? {} : { body });
        const hit = seen.find((a) => a.action === action && a.collection === collection);
        assert.ok(hit, `${method} ${url}: authorize saw no ${action} on ${collection}: ${JSON.stringify(seen)}`);
        assert.equal(hit.record?.id, id, `${method} ${url}: authorize was not given the record`);
        assert.equal(hit.principal.id, "dev-writer");
        assert.equal(typeof hit.record.values, "object");
      };
      await check("GET", `/v2/orders/${order.id}`, 200, "read", "orders", order.id);
      await check("GET", `/v1/orders/${order.id}`, 200, "read", "orders", order.id);
      await check("PATCH", `/v2/orders/${order.id}`, 200, "update", "orders", order.id, { note: "n" });
      await check("PUT", `/v2/products/${product.id}`, 200, "replace", "products", product.id, productBody({ sku: product.sku }));
      await check("POST", `/v2/orders/${order.id}/cancellations`, 201, "action", "orders/cancellations", order.id, { reason: "r" });
      await check("GET", `/v2/users/${user.id}/orders`, 200, "read", "users", user.id);
      await check("GET", `/v2/orders/${order.id}/invoices`, 200, "read", "orders", order.id);
      await check("GET", `/v3/users/${user.id}/invoices`, 200, "read", "users", user.id);
      await check("DELETE", `/v2/orders/${order.id}`, 204, "delete", "orders", order.id);
      await check("DELETE", `/v2/products/${product.id}`, 204, "delete", "products", product.id);
      const event = (await expectStatus(spy, "GET", "/v2/events?limit=1", 200)).body.data[0];
      await check("GET", `/v2/events/${event.id}`, 200, "read", "events", event.id);
      // The password is in the record given to authorize (it is a stored value), never in a response.
      seen.length = 0;
      await expectStatus(spy, "GET", `/v2/users/${user.id}`, 200);
      assert.equal(seen[0]!.record.id, user.id);
    });
  });

  test("authorize saying no for one record answers 403 for that record only", async () => {
    let denied = "";
    await withApp({ authorize: (access) => access.record?.id !== denied && scopeAuthorize(access) }, async (guarded) => {
      const user = await createUser(guarded);
      const a = await createOrder(guarded, user.id);
      const b = await createOrder(guarded, user.id);
      denied = a.id;
      await expectError(guarded, "GET", `/v2/orders/${a.id}`, 403, "FORBIDDEN");
      await expectError(guarded, "PATCH", `/v2/orders/${a.id}`, 403, "FORBIDDEN", { body: { note: "x" } });
      await expectError(guarded, "DELETE", `/v2/orders/${a.id}`, 403, "FORBIDDEN");
      await expectError(guarded, "POST", `/v2/orders/${a.id}/cancellations`, 403, "FORBIDDEN", { body: { reason: "x" } });
      await expectStatus(guarded, "GET", `/v2/orders/${b.id}`, 200);
      denied = user.id;
      await expectError(guarded, "GET", `/v2/users/${user.id}/orders`, 403, "FORBIDDEN");
      // A list_under list (SPEC §12.3: authorize read on the record it is under), as a child list.
      await expectError(guarded, "GET", `/v3/users/${user.id}/invoices`, 403, "FORBIDDEN");
      const other = await createUser(guarded);
      await expectStatus(guarded, "GET", `/v3/users/${other.id}/invoices`, 200);
    });
  });

  test("a list under a record answers 404, then 403, before its own 400s; a service of your own reads the parent", async () => {
    // The SQL store reads the user in the page's statement (runtime/lists.ts listUnder): the answers stay those of reading it first.
    let denied = "";
    const factory = storeFromEnvironment();
    const store = await factory.create();
    const hidden = new Set<string>();
    // A store of its own: closing an app closes its store.
    const second = await factory.create();
    const base = defaultServices(second);
    // The default service but for its `get`, which hides the users in `hidden`.
    const users: typeof base.users = Object.create(base.users);
    users.get = async (id) => (hidden.has(id) ? null : base.users.get(id));
    try {
      await withApp({ store, authorize: (access) => access.record?.id !== denied && scopeAuthorize(access) }, async (guarded) => {
        const user = await createUser(guarded);
        await createOrder(guarded, user.id);
        const bad = ["sort=nope", "cursor=not-a-cursor", "limit=0", "status%5Bin%5D=nope"];
        for (const query of bad) {
          await expectError(guarded, "GET", `/v2/users/${UNKNOWN_ID}/orders?${query}`, 404, "NOT_FOUND");
          await expectError(guarded, "GET", `/v2/users/${user.id}/orders?${query}`, 400, "VALIDATION_ERROR");
        }
        assert.equal((await expectStatus(guarded, "GET", `/v2/users/${user.id}/orders`, 200)).body.data.length, 1);
        denied = user.id;
        for (const query of ["", ...bad]) await expectError(guarded, "GET", `/v2/users/${user.id}/orders?${query}`, 403, "FORBIDDEN");
      });
      await withApp({ store: second, services: { users } }, async (own) => {
        const user = await createUser(own);
        await createOrder(own, user.id);
        assert.equal((await expectStatus(own, "GET", `/v2/users/${user.id}/orders`, 200)).body.data.length, 1);
        hidden.add(user.id);
        await expectError(own, "GET", `/v2/users/${user.id}/orders`, 404, "NOT_FOUND");
        await expectError(own, "GET", `/v2/users/${user.id}/orders?sort=nope`, 404, "NOT_FOUND");
      });
    } finally {
      await factory.cleanup();
    }
  });
});

describe("rate limit", () => {
  test("over the limit: 429 RATE_LIMITED with Retry-After in seconds; per principal", async () => {
    await withApp({ rateLimit: { max: 5, windowMs: 60_000 } }, async (limited) => {
      for (let i = 0; i < 5; i++) await expectStatus(limited, "GET", "/v2/products", 200);
      const res = await expectStatus(limited, "GET", "/v2/products", 429);
      assert.equal(res.body.error.code, "RATE_LIMITED");
      const retryAfter = res.headers.get("retry-after");
      assert.match(retryAfter ?? "", /^\d+$/);
      assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
      // Every header the refusal carries (but those of every answer) is in the version's document.
      assert.equal(res.headers.get("x-ratelimit-limit"), "5");
      assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
      const documented = (await expectStatus(limited, "GET", "/v2/openapi.json", 200)).body.components.responses.TooManyRequests.headers as Obj;
      const general = new Set(["content-type", "content-length", "date", "connection", "keep-alive", "x-request-id", "cache-control", "x-content-type-options"]);
      const sent = [...res.headers.keys()].filter((h) => !general.has(h));
      const named = new Set(Object.keys(documented).map((h) => h.toLowerCase()));
      assert.deepEqual(sent.filter((h) => !named.has(h)), [], `429 headers ${sent.join(", ")} all documented`);
      await expectError(limited, "POST", "/v2/products", 429, "RATE_LIMITED", { body: productBody() });
      await expectError(limited, "GET", "/v1/products", 429, "RATE_LIMITED");
      // Another principal has its own budget.
      await expectStatus(limited, "GET", "/v2/products", 200, { auth: "dev-reader" });
    });
  });
});

describe("rate limit without credentials", () => {
  test("requests without a principal count against the client address: guessing credentials is limited too", async () => {
    await withApp({ rateLimit: { max: 3, windowMs: 60_000 } }, async (limited) => {
      for (let i = 0; i < 3; i++) await expectError(limited, "GET", "/v2/orders", 401, "UNAUTHENTICATED", { auth: `guess-${i}` });
      const res = await expectStatus(limited, "GET", "/v2/orders", 429, { auth: "guess-4" });
      assert.match(res.headers.get("retry-after") ?? "", /^\d+$/);
      await expectError(limited, "GET", "/v2/orders", 429, "RATE_LIMITED", { auth: null });
      // A principal has its own budget.
      await expectStatus(limited, "GET", "/v2/orders", 200);
    });
  });
});

describe("the client's address behind a load balancer", () => {
  // The tests connect over loopback, which is believed by default, as a balancer on the same
  // machine would be (and nothing else is: a private network is not, unless named).
  const from = (address: string) => ({ auth: null, headers: { "x-forwarded-for": address } });

  test("requests without credentials count against the client X-Forwarded-For names, not the balancer", async () => {
    await withApp({ rateLimit: { max: 2, windowMs: 60_000 } }, async (limited) => {
      for (let i = 0; i < 2; i++) await expectError(limited, "GET", "/v2/orders", 401, "UNAUTHENTICATED", from("203.0.113.7"));
      await expectError(limited, "GET", "/v2/orders", 429, "RATE_LIMITED", from("203.0.113.7"));
      // Another client behind the same balancer has its own budget; the balancer's own address too.
      await expectError(limited, "GET", "/v2/orders", 401, "UNAUTHENTICATED", from("203.0.113.8"));
      await expectError(limited, "GET", "/v2/orders", 401, "UNAUTHENTICATED", { auth: null });
      // The client is the address the balancer appended last: one the client sent before it is not believed.
      await expectError(limited, "GET", "/v2/orders", 429, "RATE_LIMITED", from("198.51.100.1, 203.0.113.7"));
    });
  });

  test("by default only loopback is believed: a peer on a private network is counted as itself; named, it is believed", async () => {
    const inject = (app: Obj, forwarded: string) =>
      app.inject({ method: "GET", url: "/v2/orders", remoteAddress: "10.1.2.3", headers: { "x-forwarded-for": forwarded } });
    const app = await buildApp({ authenticate: devAuthenticate, rateLimit: { max: 2, windowMs: 60_000 }, store: new MemoryStore() });
    try {
      const statuses = [];
      for (const client of ["203.0.113.7", "203.0.113.8", "203.0.113.9"]) statuses.push((await inject(app, client)).statusCode);
      assert.deepEqual(statuses, [401, 401, 429], "every client of an unnamed balancer shares its address");
    } finally {
      await app.close();
    }
    const named = await buildApp({ authenticate: devAuthenticate, rateLimit: { max: 2, windowMs: 60_000 }, store: new MemoryStore(), trustProxy: "10.0.0.0/8" });
    try {
      const statuses = [];
      for (const client of ["203.0.113.7", "203.0.113.8", "203.0.113.9"]) statuses.push((await inject(named, client)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401], "a named balancer's clients each have their own budget");
    } finally {
      await named.close();
    }
  });

  test("trustProxy: false believes no peer: every client of the balancer shares its address", async () => {
    await withApp({ rateLimit: { max: 2, windowMs: 60_000 }, trustProxy: false }, async (limited) => {
      await expectError(limited, "GET", "/v2/orders", 401, "UNAUTHENTICATED", from("203.0.113.7"));
      await expectError(limited, "GET", "/v2/orders", 401, "UNAUTHENTICATED", from("203.0.113.8"));
      await expectError(limited, "GET", "/v2/orders", 429, "RATE_LIMITED", from("203.0.113.9"));
    });
  });
});

describe("paths that name no operation: 404 NOT_FOUND", () => {
  test("unknown path, unknown version, paths without a version, unknown methods", async () => {
    for (const [method, url] of [
      ["GET", "/v2/nothing"],
      ["GET", "/v2/orders/" + UNKNOWN_ID + "/refunds"],
      ["GET", "/v9/orders"],
      ["GET", "/v0/orders"],
      ["GET", "/V2/orders"],
      ["GET", "/v2.1/orders"],
      ["GET", "/orders"],
      ["GET", "/openapi.json"],
      ["GET", "/docs"],
      ["GET", "/health"],
      ["GET", "/"],
      ["GET", "/v2"],
      ["GET", "/v2/"],
      ["POST", "/v2/events"],
      ["PUT", `/v2/orders/${UNKNOWN_ID}`],
      ["DELETE", `/v2/invoices/${UNKNOWN_ID}`],
      ["PATCH", "/v2/orders"],
      ["GET", "/v1/nothing"],
    ] as const) {
      for (const auth of ["dev-writer", null] as const) {
        const error = await expectError(api, method, url, 404, "NOT_FOUND", { auth });
        assert.ok(!("details" in error));
      }
    }
  });
});

describe("unexpected failures", () => {
  test("a service that throws: 500 INTERNAL_ERROR, no internals in the body, the original error logged", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const base = defaultServices(new MemoryStore());
    const secret = "connection to postgres://admin:hunter2@db.internal:5432 refused";
    const broken: ResourceService<OrderValues> = {
      ...base.orders,
      list: async () => {
        throw new Error(secret);
      },
      get: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'row_id')");
      },
      create: async () => {
        throw Object.assign(new Error(secret), { statusCode: 409, code: "ER_DUP_ENTRY" });
      },
    };
    await withApp({ services: { orders: broken }, logger: { level: "error", stream } }, async (failing) => {
      const user = await createUser(failing);
      for (const [method, url, body] of [
        ["GET", "/v2/orders", undefined],
        ["GET", `/v2/orders/${UNKNOWN_ID}`, undefined],
        ["GET", `/v1/orders/${UNKNOWN_ID}`, undefined],
        ["POST", "/v2/orders", orderBody("v2", user.id)],
        ["POST", `/v2/orders/${UNKNOWN_ID}/cancellations`, { reason: "x" }],
      ] as const) {
        const res = await expectStatus(failing, method, url, 500, body ? { body } : {});
        assert.deepEqual(res.body, { error: { code: "INTERNAL_ERROR", message: "An unexpected error occurred." } });
        assert.doesNotMatch(res.text, /hunter2|postgres|row_id|TypeError|stack|at \//);
      }
      const logged = lines.join("");
      assert.match(logged, /hunter2/, "the original error is logged");
      assert.match(logged, /Cannot read properties of undefined/);
      assert.match(logged, /"stack"/);
    });
  });
});

describe("request ids", () => {
  test("X-Request-Id: the caller's when it is a UUID v7, else a new v7", async () => {
    const mine = "01890a5d-ac96-7e4b-bcce-b302099a8057";
    for (const url of ["/v2/orders", `/v2/orders/${UNKNOWN_ID}`, "/nothing", "/v1/orders"]) {
      const echoed = await call(api, "GET", url, { headers: { "x-request-id": mine } });
      assert.equal(echoed.headers.get("x-request-id"), mine, url);
    }
    const upper = await call(api, "GET", "/v2/orders", { headers: { "x-request-id": mine.toUpperCase() } });
    assert.equal(upper.headers.get("x-request-id"), mine);
    const unauth = await call(api, "GET", "/v2/orders", { auth: null, headers: { "x-request-id": mine } });
    assert.equal(unauth.status, 401);
    assert.equal(unauth.headers.get("x-request-id"), mine);

    const seen = new Set<string>();
    for (const given of [V4_UUID, "c232ab00-9414-11ec-b3c8-9f6bdeced846", "hello", "", mine + "0", "01890a5d-ac96-7e4b-ccce-b302099a8057"]) {
      const res = await call(api, "GET", "/v2/orders", { headers: { "x-request-id": given } });
      const id = res.headers.get("x-request-id")!;
      assert.match(id, UUID_V7);
      assert.notEqual(id, given.toLowerCase(), `${given} is replaced`);
      seen.add(id);
    }
    const plain = await call(api, "GET", "/v2/orders");
    seen.add(plain.headers.get("x-request-id")!);
    assert.equal(seen.size, 7, "every new id is new");
  });

  test("a request id is also on 400s raised before routing (bad URL, long URL, bad body)", async () => {
    const mine = "01890a5d-ac96-7e4b-bcce-b302099a8057";
    for (const [method, url, body] of [
      ["GET", "/v2/orders/%E0%A4%A", undefined],
      ["GET", `/v2/orders/${"a".repeat(5000)}`, undefined],
      ["POST", "/v2/orders", "{nope"],
    ] as const) {
      const res = await call(api, method, url, { headers: { "x-request-id": mine, "content-type": "application/json" }, ...(body ? { body } : {}) });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("x-request-id"), mine);
    }
  });
});
