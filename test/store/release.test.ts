// Migrations per release (issue 28.2): while the newest migration is pending (0016_pending.sql),
// every generate writes that one migration again instead of adding another, so a whole dev
// session leaves one migration; canon release freezes it under its released name, and the next
// change starts a new pending migration. check fails when the pending migration's text differs
// from what generate would write.
import assert from "node:assert/strict";
import { appendFileSync, cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { canon, repoRoot, workspace } from "../support/cli.ts";

const migrations = (sql: string) => readdirSync(sql).filter((n) => /^\d{4}_.*\.sql$/.test(n)).sort();

test("a dev session leaves one pending migration; canon release freezes it; the next change starts another", () => {
  const dir = workspace("release", "definitions");
  cpSync(path.join(repoRoot, "generated"), path.join(dir, "generated"), { recursive: true });
  const sql = path.join(dir, "generated", "sql");
  const released = migrations(sql);
  const products = path.join(dir, "definitions", "products.yaml");

  // Nothing pending: release says so and changes nothing.
  const nothing = canon(["release"], dir);
  assert.equal(nothing.code, 0, nothing.stderr);
  assert.match(nothing.stdout, /canon release: nothing to release/);

  appendFileSync(products, "  weight_g: { type: integer, minimum: 0, optional: true }\n");
  assert.equal(canon(["generate"], dir).code, 0);
  assert.deepEqual(migrations(sql), [...released, "0016_pending.sql"]);
  const first = readFileSync(path.join(sql, "0016_pending.sql"), "utf8");
  assert.match(first, /^-- Pending migration 0016 of the Storefront API, to be released as 0016_add_products_weight_g\.sql: canon generate$/m);

  // Another save: the same pending migration, rewritten, holds both changes.
  appendFileSync(products, "  featured: { type: boolean, default: false }\n");
  assert.equal(canon(["generate"], dir).code, 0);
  assert.deepEqual(migrations(sql), [...released, "0016_pending.sql"]);
  const second = readFileSync(path.join(sql, "0016_pending.sql"), "utf8");
  assert.match(second, /add column if not exists "weight_g"/);
  assert.match(second, /add column if not exists "featured" boolean not null default false/);
  assert.match(second, /to be released as 0016_add_products_weight_g_and_add_products_featured\.sql/);
  assert.equal(canon(["check"], dir).code, 0);

  // A pending migration edited by hand is not what generate writes: check fails.
  writeFileSync(path.join(sql, "0016_pending.sql"), `${second}-- ours\n`);
  const edited = canon(["check"], dir);
  assert.equal(edited.code, 1);
  assert.match(edited.stderr, /differs  generated\/sql\/0016_pending\.sql/);
  writeFileSync(path.join(sql, "0016_pending.sql"), second);

  // A change taken back: the pending migration goes with it.
  const withBoth = readFileSync(products, "utf8");
  writeFileSync(products, withBoth.replace(/  weight_g: .*\n  featured: .*\n/, ""));
  assert.equal(canon(["generate", "--allow-breaking"], dir).code, 0);
  assert.deepEqual(migrations(sql), released);
  writeFileSync(products, withBoth);
  assert.equal(canon(["generate"], dir).code, 0);
  assert.equal(readFileSync(path.join(sql, "0016_pending.sql"), "utf8"), second);

  const release = canon(["release"], dir);
  assert.equal(release.code, 0, release.stderr);
  assert.match(release.stdout, /0016_pending\.sql is released as generated\/sql\/0016_add_products_weight_g_and_add_products_featured\.sql/);
  const frozen = readFileSync(path.join(sql, "0016_add_products_weight_g_and_add_products_featured.sql"), "utf8");
  assert.match(frozen, /^-- Migration 0016 of the Storefront API: written once, never rewritten\./m);
  assert.equal(frozen.split("\n").slice(4).join("\n"), second.split("\n").slice(4).join("\n"));
  assert.deepEqual(JSON.parse(readFileSync(path.join(sql, "schema.json"), "utf8")).migrations, migrations(sql));
  const check = canon(["check"], dir);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(canon(["generate"], dir).stdout, /up to date/);

  // The next change: a new pending migration after the released one, which stays as it is.
  appendFileSync(products, "  color: { type: string, optional: true }\n");
  assert.equal(canon(["generate"], dir).code, 0);
  assert.deepEqual(migrations(sql), [...released, "0016_add_products_weight_g_and_add_products_featured.sql", "0017_pending.sql"]);
  assert.equal(readFileSync(path.join(sql, "0016_add_products_weight_g_and_add_products_featured.sql"), "utf8"), frozen);
  assert.match(readFileSync(path.join(sql, "0017_pending.sql"), "utf8"), /add column if not exists "color" text/);
});
