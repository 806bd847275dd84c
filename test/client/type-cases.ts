// Type tests of the generated clients: never run, only compiled (test/client/types.test.ts runs
// tsc over this file). Each `@ts-expect-error` marks a call that must not compile: if it ever
// compiled, tsc would report the directive as unused and the test would fail.
import * as v1 from "../../generated/v1/client.ts";
import * as v2 from "../../generated/v2/client.ts";
import type { Order as V2Order } from "../../generated/v2/orders/types.ts";
import type { OrdersPage, UsersPage } from "../../generated/v2/pagination.ts";
import type { User } from "../../generated/v2/users/types.ts";

declare const api: v2.Client;
declare const old: v1.Client;
declare const id: string;

export async function cases(): Promise<void> {
  const order = { user_id: id, code: "ORD-000001", total_cents: 1, currency: "EUR", amount_due_cents: 1 };
  const created: V2Order = await api.orders.create(order);
  await api.orders.create({ ...order, gift_wrap: true });
  // @ts-expect-error legacy_ref was removed in v2
  await api.orders.create({ ...order, legacy_ref: "L-1" });
  // @ts-expect-error due_cents is called amount_due_cents in v2
  await api.orders.create({ user_id: id, code: "ORD-000001", total_cents: 1, currency: "EUR", due_cents: 1 });
  // @ts-expect-error total_cents is a number
  await api.orders.create({ ...order, total_cents: "1" });
  // @ts-expect-error status is read-only: not in a body
  await api.orders.update(id, { status: "paid" });
  // @ts-expect-error a required field is missing
  await api.orders.create({ user_id: id, code: "ORD-000001", total_cents: 1, currency: "EUR" });
  // @ts-expect-error gift_wrap is v2 only
  await old.orders.create({ user_id: id, code: "ORD-000001", total_cents: 1, currency: "EUR", due_cents: 1, gift_wrap: true });
  await old.orders.create({ user_id: id, code: "ORD-000001", total_cents: 1, currency: "EUR", due_cents: 1, legacy_ref: "x" });
  // @ts-expect-error password is write-only: never in a record
  (await api.users.get(id)).password;
  // @ts-expect-error an enum takes its values only
  await api.users.update(id, { role: "root" });
  void created.gift_wrap;

  // Methods exist exactly for the operations a version has: invoices have no delete or replace,
  // orders no replace; products have every operation.
  // @ts-expect-error invoices cannot be deleted
  api.invoices.delete(id);
  // @ts-expect-error orders have no PUT
  api.orders.replace(id, order);
  await api.products.replace(id, { sku: "SKU-1", name: "n", price_cents: 1 });
  // @ts-expect-error a product's replace needs every required field
  await api.products.replace(id, { name: "n" });
  // @ts-expect-error users are no child of orders
  api.orders.users;

  // Child lists under their parent, actions under their resource.
  const mine: v2.CursorPage<V2Order> = await api.users.orders.list(id, { limit: 5, status: "paid" });
  const cancellation = await api.orders.cancellations.create(id, { reason: "r" });
  const target: string = cancellation.order_id;
  // @ts-expect-error an action body has its own fields
  await api.orders.cancellations.create(id, { note: "r" });
  // @ts-expect-error a child list needs the parent's id
  api.users.orders.list({ limit: 5 });

  // Lists: one page when awaited, every record when iterated; typed queries.
  const page: OrdersPage = await api.orders.list({ status: "shipped", currency: "EUR", q: "gift", limit: 10 });
  const same: v2.CursorPage<V2Order> = page;
  for await (const o of api.orders.list()) void (o.amount_due_cents satisfies number);
  for await (const p of api.orders.list().pages()) void (p.pagination.next_cursor satisfies string | null);
  // @ts-expect-error status takes the enum's values
  api.orders.list({ status: "lost" });
  api.orders.list({ sort: "-placed_at" });
  api.orders.list({ sort: ["-placed_at", "status", "created_at"] });
  const keys: v2.OrdersSortKey[] = ["total_cents"];
  api.orders.list({ sort: [keys[0]!] });
  // @ts-expect-error sort takes at most 3 keys (SPEC §12.1)
  api.orders.list({ sort: ["-placed_at", "status", "created_at", "total_cents"] });
  // @ts-expect-error sort takes the list's declared keys
  api.orders.list({ sort: ["code"] });
  // A field named twice compiles: the client throws the service's 400 before sending (docs/client.md
  // says why the types do not refuse it: one reason is that a sort built from a variable must compile).
  api.orders.list({ sort: ["placed_at", "-placed_at"] });
  const column: v2.OrdersSortKey = Math.random() > 0.5 ? "status" : "-total_cents";
  api.orders.list({ sort: [column, "created_at"] });
  // q is any text (its length is checked before sending).
  api.products.list({ q: "ab" });
  // @ts-expect-error page size is a number
  api.orders.list({ limit: "10" });
  // @ts-expect-error orders are cursor-paginated: no page
  api.orders.list({ page: 2 });
  // Offset mode: an offset page without q, a cursor page with it.
  const users: v2.OffsetPage<User> = await api.users.list({ per_page: 10, page: 2, role: "admin" });
  const total: number = users.pagination.total;
  const search: v2.CursorPage<unknown> = await api.users.list({ q: "ann", limit: 5 });
  const either: UsersPage = await api.users.list({ q: Math.random() > 0.5 ? "ann" : undefined });
  // @ts-expect-error an offset page is not a cursor page
  const wrong: v2.CursorPage<unknown> = await api.users.list({ per_page: 10 });
  // One mode's keys never in the other's (the service answers 400).
  // @ts-expect-error limit is a search's: an offset list without q takes per_page
  api.users.list({ limit: 5 });
  // @ts-expect-error cursor is a search's
  api.users.list({ cursor: "abc" });
  // @ts-expect-error per_page and limit are two modes'
  api.users.list({ per_page: 5, limit: 5 });
  // @ts-expect-error page is not allowed in a search
  api.users.list({ q: "ann", page: 2 });
  // @ts-expect-error nor per_page, with a q that may be undefined
  api.users.list({ q: Math.random() > 0.5 ? "ann" : undefined, per_page: 5 });
  const maybe: UsersPage = await api.users.list({ q: Math.random() > 0.5 ? "ann" : undefined, limit: 5 });

  // Exports: the body names an exportable collection and takes its list's filters.
  const job = await api.exports.create({ resource: "orders", format: "csv", q: "gift", filters: { status: "paid" } });
  const file: string = await api.exports.download(job);
  // @ts-expect-error users are not exportable
  api.exports.create({ resource: "users" });
  // @ts-expect-error the filters are the list's
  api.exports.create({ resource: "orders", filters: { code: "ORD-000001" } });
  void file;

  // Results carry their answer; errors are typed.
  const { data, etag, requestId, status } = await api.orders.get(id).withResponse();
  await api.orders.update(id, { note: data.note ?? "" }, { ifMatch: etag ?? "", requestId });
  try {
    await api.orders.get(id);
  } catch (error) {
    if (error instanceof v2.ValidationError) void error.details.map((d) => d.field + d.issue);
    if (error instanceof v2.RateLimitedError) void (error.retryAfterSeconds satisfies number | null);
    if (error instanceof v2.ApiError) void [error.status, error.code, error.message, error.requestId];
  }
  v1.createClient({ baseUrl: "", onDeprecation: (n) => void [n.sunset?.getTime(), n.successor, n.version] });
  void [same, mine, target, page, total, search, either, wrong, status];
}
