// The SQL emitter's sort indexes (SPEC §12.1: every declared key is served by an index): one per
// declared key on the store's own sort expression, a second (descending, nulls last) for a column
// that may be null, `notNull` in schema.ts for the store's row comparisons; and none without `sort`.
// The model's `sort` is set by hand here, on the showcase's invoices as they were before the keys of §12.
import assert from "node:assert/strict";
import { test } from "node:test";
import { migrationBetween } from "../../generator/emit/sql/diff.ts";
import { collectionPlans, snapshotOf, systemTables } from "../../generator/emit/sql/snapshot.ts";
import { runFrontEnd } from "../../generator/pipeline.ts";

test("a declared sort key gets its sort indexes; nothing changes without one", async () => {
  const front = await runFrontEnd("definitions", { today: "2026-01-01" });
  assert.ok(front.model, front.diagnostics.map((d) => d.message).join("\n"));
  const model = front.model;
  // The showcase's invoices as they were before §12: filtered by status only, no sort keys.
  const invoices = model.storage.find((r) => r.collection === "invoices")!;
  invoices.sort = [];
  invoices.filters = ["status"];
  const before = snapshotOf(collectionPlans(model), systemTables(model));
  invoices.sort = ["status", "due_date", "created_at", "amount_cents"];
  const plans = collectionPlans(model);
  const plan = plans.find((p) => p.collection === "invoices")!;
  const sortIndexes = plan.table.indexes.filter((i) => i.name.includes("_sort"));
  const keys: Array<[string, string]> = [
    ["status", `(array_position(ARRAY['draft', 'issued', 'paid', 'void']::text[], "status"))`],
    ["due_date", `"due_date"`],
    ["created_at", `"created_at"`],
    ["amount_cents", `"amount_cents"`],
  ];
  // The collection's list, then each list under a record: the parent order's
  // (/orders/{id}/invoices) and an approver's (`list_under`, /users/{id}/invoices), led by the field naming it.
  assert.deepEqual(
    sortIndexes.map((i) => [i.name, i.definition]),
    keys.flatMap(([key, element]) => [
      [`invoices_${key}_sort_idx`, `using btree (${element}, "id")`],
      [`invoices_order_id_${key}_sort_idx`, `using btree ("order_id", ${element}, "id")`],
      [`invoices_approved_by_${key}_sort_idx`, `using btree ("approved_by", ${element}, "id")`],
    ]),
  );
  // The showcase's invoice fields are required: one index serves both directions, and the store is told.
  assert.deepEqual(
    plan.fields.filter((f) => f.notNull).map((f) => f.field),
    ["amount_cents", "due_date", "status"],
  );
  // The next migration creates them.
  const migration = migrationBetween(before, snapshotOf(plans, systemTables(model)));
  const text = JSON.stringify(migration);
  for (const index of sortIndexes) assert.ok(text.includes(index.name), index.name);
});

test("a nullable sort column gets a descending index too", async () => {
  const front = await runFrontEnd("definitions", { today: "2026-01-01" });
  const model = front.model!;
  const orders = model.storage.find((r) => r.collection === "orders")!;
  const nullable = orders.fields.find((f) => f.optional || f.nullable)!;
  orders.sort = [nullable.storageName];
  const plan = collectionPlans(model).find((p) => p.collection === "orders")!;
  const names = plan.table.indexes.filter((i) => i.name.includes("_sort")).map((i) => i.name);
  const key = nullable.storageName;
  // The collection's list, and the list under the parent user (/users/{id}/orders).
  assert.deepEqual(names, [`orders_${key}_sort_idx`, `orders_${key}_sort_desc_idx`, `orders_user_id_${key}_sort_idx`, `orders_user_id_${key}_sort_desc_idx`]);
  assert.equal(plan.fields.find((f) => f.field === nullable.storageName)!.notNull, undefined);
});

test("a sort key whose order is its column's own shares the filter's (column, id) index: no index twice", async () => {
  const front = await runFrontEnd("definitions", { today: "2026-01-01" });
  assert.ok(front.model);
  for (const plan of collectionPlans(front.model)) {
    const definitions = plan.table.indexes.map((i) => i.definition);
    assert.equal(new Set(definitions).size, definitions.length, `${plan.collection}: ${definitions.join("; ")}`);
  }
  const invoices = collectionPlans(front.model).find((p) => p.collection === "invoices")!;
  assert.ok(invoices.table.indexes.some((i) => i.name === "invoices_due_date_id_idx"));
  assert.ok(!invoices.table.indexes.some((i) => i.name === "invoices_due_date_sort_idx"));
});
