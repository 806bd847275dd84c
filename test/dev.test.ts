// `canon dev`: a save regenerates and serves the new code over the same store (PGlite, opened
// once: its data stays); a definition error is printed with its position and the last good
// service keeps answering.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { bin, canon, workspace } from "./support/cli.ts";

const headers = { authorization: "Bearer dev-writer", "content-type": "application/json" };

function startDev(
  dir: string,
  args: string[] = [],
  onOutput: (output: string) => void = () => {},
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const child = spawn(process.execPath, [bin, "dev", "--port", "0", ...args], { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      onOutput(output);
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, base: match[1]!, output: () => output });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dev exited (${code}):\n${output}`));
    });
  });
}

async function eventually(what: string, check: () => Promise<boolean> | boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen:\n${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("canon dev serves each saved definition without restarting the store, and keeps the last good one on an error", { timeout: 300_000 }, async () => {
  const dir = workspace("dev");
  assert.equal(canon(["init"], dir).code, 0);
  const users = path.join(dir, "definitions", "users.yaml");
  const dev = await startDev(dir);
  try {
    const created = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "ann@example.com", name: "Ann" }) });
    assert.equal(created.status, 201);
    const ann = (await created.json()) as { id: string };
    const cy = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "cy@example.com", name: "Cy" }) });
    assert.equal(cy.status, 201);
    const firstPage = (await (await fetch(`${dev.base}/v1/users?limit=1`, { headers })).json()) as { pagination: { next_cursor: string } };
    const cursor = firstPage.pagination.next_cursor;

    // A new optional field: the new code answers once the save is picked up.
    writeFileSync(users, readFileSync(users, "utf8").replace(/(  name: .*\n)/, "$1  nickname: { type: string, max_length: 40, optional: true }\n"));
    const withNickname = () =>
      fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "bo@example.com", name: "Bo", nickname: "b" }) });
    let bo: { id: string; nickname?: string } | undefined;
    await eventually(
      "the new field",
      async () => {
        const response = await withNickname();
        if (response.status === 201) bo = (await response.json()) as { id: string };
        else await response.arrayBuffer();
        return response.status === 201;
      },
      dev.output,
    );
    assert.equal(bo!.nickname, "b");
    assert.match(dev.output(), /canon dev: serving the new code \(\d+ ms after the change\)/);
    // The store was not restarted: the record made before the change is still there.
    const read = await fetch(`${dev.base}/v1/users/${ann.id}`, { headers });
    assert.equal(read.status, 200);
    // A cursor handed out before the save still works after it.
    const nextPage = await fetch(`${dev.base}/v1/users?limit=1&cursor=${encodeURIComponent(cursor)}`, { headers });
    assert.equal(nextPage.status, 200, await nextPage.clone().text());
    // What the dev loop wrote (with what it kept from its earlier runs) is what generate writes.
    const checked = canon(["check"], dir);
    assert.equal(checked.code, 0, `${checked.stdout}${checked.stderr}`);

    // A save that changes no migration (a description) makes its store without migrating again;
    // the next one that does (a new field) migrates: the field is stored and read back.
    const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
    const before = served();
    writeFileSync(users, readFileSync(users, "utf8").replace(/^description: .*$/m, "description: People who use the service, described again."));
    await eventually("the new description", () => served() > before, dev.output);
    const afterDescription = await fetch(`${dev.base}/v1/users/${bo!.id}`, { headers });
    assert.equal(afterDescription.status, 200);
    assert.equal(((await afterDescription.json()) as { nickname?: string }).nickname, "b");
    writeFileSync(users, readFileSync(users, "utf8").replace(/(  name: .*\n)/, "$1  bio: { type: string, max_length: 200, optional: true }\n"));
    let di: { id: string; bio?: string } | undefined;
    await eventually(
      "the field after a save without migrations",
      async () => {
        const response = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "di@example.com", name: "Di", bio: "hi" }) });
        if (response.status === 201) di = (await response.json()) as { id: string };
        else await response.arrayBuffer();
        return response.status === 201;
      },
      dev.output,
    );
    const readDi = await fetch(`${dev.base}/v1/users/${di!.id}`, { headers });
    assert.equal(((await readDi.json()) as { bio?: string }).bio, "hi");

    // A save whose code does not start (a required field the stored rows lack): the last good
    // version keeps answering, with its own document, not the one the save wrote.
    const refusals = () => (dev.output().match(/still serving the last good version/g) ?? []).length;
    writeFileSync(users, readFileSync(users, "utf8").replace(/(  name: .*\n)/, "$1  age: { type: integer, minimum: 0 }\n"));
    await eventually("the refusal", () => refusals() === 1, dev.output);
    const document = await fetch(`${dev.base}/v1/openapi.json`, { headers });
    assert.equal(document.status, 200);
    const text = await document.text();
    assert.match(text, /"bio"/);
    assert.doesNotMatch(text, /"age"/);
    const restored = served();
    writeFileSync(users, readFileSync(users, "utf8").replace("  age: { type: integer, minimum: 0 }\n", ""));
    await eventually("the save that takes it back", () => served() > restored, dev.output);

    // A definition error: printed with its position; the last good service keeps answering.
    writeFileSync(users, `${readFileSync(users, "utf8")}  age: { type: numbr }\n`);
    await eventually("the error report", () => refusals() === 2, dev.output);
    assert.match(dev.output(), /definitions\/users\.yaml:\d+:\d+ error schema fields\.age\.type/);
    const list = await fetch(`${dev.base}/v1/users`, { headers });
    assert.equal(list.status, 200);
    assert.deepEqual(
      ((await list.json()) as { data: Array<{ id: string }> }).data.map((u) => u.id),
      [ann.id, (await cy.json() as { id: string }).id, bo!.id, di!.id],
    );
  } finally {
    dev.child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
    dev.child.kill("SIGTERM");
    assert.equal(await exited, 0, dev.output());
  }
  assert.match(dev.output(), /canon dev: closed/);
});

test("canon dev started on definitions with errors waits for a save that fixes them", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-broken");
  assert.equal(canon(["init"], dir).code, 0);
  const users = path.join(dir, "definitions", "users.yaml");
  const good = readFileSync(users, "utf8");
  writeFileSync(users, good.replace("type: string, format: email", "type: strng, format: email"));
  let fixed = false;
  // It prints the error and waits; the save that fixes it starts the service.
  const dev = await startDev(dir, ["--store", "memory"], (output) => {
    if (!fixed && /waiting for a save that fixes the definitions/.test(output)) {
      fixed = true;
      writeFileSync(users, good);
    }
  });
  try {
    assert.ok(fixed);
    assert.match(dev.output(), /definitions\/users\.yaml:\d+:\d+ error schema fields\.email\.type/);
    assert.equal((await fetch(`${dev.base}/v1/users`, { headers })).status, 200);
  } finally {
    dev.child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
    dev.child.kill("SIGTERM");
    assert.equal(await exited, 0);
  }
});

// Found by a sweep of the dev loop: a save made while dev started (after its first generation
// read the definitions, before it watched them) was never served.
test("canon dev serves a save made while it starts, after its first generation", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-early-save");
  assert.equal(canon(["init"], dir).code, 0);
  const users = path.join(dir, "definitions", "users.yaml");
  const good = readFileSync(users, "utf8");
  let saved = false;
  // The first generation's report is printed before the PGlite store is opened and migrated and
  // the server listens (a second or so): the save lands in between.
  const dev = await startDev(dir, [], (output) => {
    if (!saved && /added +generated\//.test(output)) {
      saved = true;
      writeFileSync(users, good.replace("fields:\n", "fields:\n  nickname: { type: string, max_length: 40, optional: true }\n"));
    }
  });
  try {
    assert.ok(saved);
    await eventually(
      "the early save served",
      async () => JSON.stringify(await (await fetch(`${dev.base}/v1/openapi.json`)).json()).includes('"nickname"'),
      dev.output,
    );
  } finally {
    dev.child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
    dev.child.kill("SIGTERM");
    assert.equal(await exited, 0);
  }
});

test("canon dev on the memory store takes each save's references: a save that makes a reference cascade holds at once", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-references");
  assert.equal(canon(["init"], dir).code, 0);
  const posts = path.join(dir, "definitions", "posts.yaml");
  const postsYaml = (onDelete: string) =>
    [
      "resource: posts",
      "description: What users write.",
      "operations: [list, read, create, update, delete]",
      "fields:",
      `  author_id: { type: uuid, references: users${onDelete} }`,
      "  title: { type: string, max_length: 200 }",
      "",
    ].join("\n");
  writeFileSync(posts, postsYaml(""));
  const dev = await startDev(dir, ["--store", "memory"]);
  try {
    const post = (body: unknown) => fetch(`${dev.base}/v1/posts`, { method: "POST", headers, body: JSON.stringify(body) });
    const user = (await (await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "ann@example.com", name: "Ann" }) })).json()) as { id: string };
    const created = await post({ author_id: user.id, title: "Hello" });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };
    // restrict, the default: the user cannot go while the post names them.
    const refused = await fetch(`${dev.base}/v1/users/${user.id}`, { method: "DELETE", headers });
    assert.equal(refused.status, 422);
    await refused.arrayBuffer();

    const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
    const before = served();
    writeFileSync(posts, postsYaml(", on_delete: cascade"));
    await eventually("the cascade", () => served() > before, dev.output);
    // The store kept the records and takes the new reference: the delete takes the post along.
    assert.equal((await fetch(`${dev.base}/v1/posts/${id}`, { headers })).status, 200);
    const deleted = await fetch(`${dev.base}/v1/users/${user.id}`, { method: "DELETE", headers });
    assert.equal(deleted.status, 204, await deleted.clone().text());
    assert.equal((await fetch(`${dev.base}/v1/posts/${id}`, { headers })).status, 404);
  } finally {
    dev.child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
    dev.child.kill("SIGTERM");
    assert.equal(await exited, 0, dev.output());
  }
});

test("canon dev on the memory store refuses a save that requires a value its records lack, and carries new defaults and renames into them", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-memory-carry");
  assert.equal(canon(["init"], dir).code, 0);
  const users = path.join(dir, "definitions", "users.yaml");
  const api = path.join(dir, "definitions", "api.yaml");
  const original = readFileSync(users, "utf8");
  const withField = (field: string) => original.replace(/(  name: .*\n)/, `$1  ${field}\n`);
  const dev = await startDev(dir, ["--store", "memory", "--log-level", "warn"]);
  const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
  const refusals = () => (dev.output().match(/canon dev: the new code did not start/g) ?? []).length;
  const read = async (version: string, id: string) => {
    const response = await fetch(`${dev.base}/${version}/users/${id}`, { headers });
    assert.equal(response.status, 200);
    return (await response.json()) as Record<string, unknown>;
  };
  try {
    const created = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "ann@example.com", name: "Ann" }) });
    assert.equal(created.status, 201);
    const { id } = (await created.json()) as { id: string };

    // A required field without a default: refused as a SQL store's migration is; the old code serves on.
    writeFileSync(users, withField("code: { type: string, max_length: 10 }"));
    await eventually("the refusal", () => refusals() > 0, dev.output);
    assert.match(
      dev.output(),
      /canon dev: the new code did not start \(the memory store holds 1 record of users without code, which the definitions now require: give code a default, or make it optional, or delete that record \(or restart canon dev: the memory store starts empty\)\); still serving the last good version\n/,
    );
    const old = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify({ email: "bo@example.com", name: "Bo" }) });
    assert.equal(old.status, 201, "the last good code still serves");
    const bo = ((await old.json()) as { id: string }).id;

    // With a default: the records stored before the save get it, as the SQL column's rows do.
    let before = served();
    writeFileSync(users, withField('code: { type: string, max_length: 10, default: "x1" }'));
    await eventually("the default", () => served() > before, dev.output);
    assert.equal((await read("v1", id)).code, "x1");
    assert.equal((await read("v1", bo)).code, "x1");
    const patched = await fetch(`${dev.base}/v1/users/${id}`, { method: "PATCH", headers, body: JSON.stringify({ code: "c7" }) });
    assert.equal(patched.status, 200, await patched.clone().text());
    await patched.arrayBuffer();

    // Renamed in v2 (required, no default): the values move to the new name, v1 still reads them under the old one.
    before = served();
    writeFileSync(api, readFileSync(api, "utf8").replace(/(  v1: .*\n)/, "$1  v2: { draft: true }\n"));
    writeFileSync(users, withField("label: { type: string, max_length: 10, renamed: { in: v2, from: code } }"));
    await eventually("the rename", () => served() > before, dev.output);
    assert.equal((await read("v2", id)).label, "c7");
    assert.equal((await read("v1", id)).code, "c7");
    assert.equal((await read("v2", bo)).label, "x1");

    // A tenant field: refused too, naming it and the records that lack it.
    const organizations = ["resource: organizations", "description: Who pays.", "operations: [list, read, create, update, delete]", "fields:", "  title: { type: string, max_length: 200 }", ""];
    writeFileSync(path.join(dir, "definitions", "organizations.yaml"), organizations.join("\n"));
    const refused = refusals();
    writeFileSync(users, withField('label: { type: string, max_length: 10, renamed: { in: v2, from: code } }\n  organization_id: { type: uuid, references: organizations, tenant: true }'));
    await eventually("the tenant refusal", () => refusals() > refused, dev.output);
    // Not "a default" nor "optional", which lint refuses on a tenant field (found by a sweep of the dev loop).
    assert.match(dev.output(), /the memory store holds 2 records of users without organization_id, the tenant field the definitions now give users: add organization_id without tenant: true \(optional\) first, give every record its tenant, then add tenant: true; or delete those records \(or restart canon dev: the memory store starts empty\)\); still serving the last good version/);
    assert.doesNotMatch(dev.output(), /organization_id a default/);
    assert.equal((await read("v2", id)).label, "c7");
  } finally {
    dev.child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
    dev.child.kill("SIGTERM");
    assert.equal(await exited, 0, dev.output());
  }
});

test("canon dev on the memory store brings its decimals to a new scale at every depth, as a migration does, and refuses a save that would lose digits", { timeout: 300_000 }, async () => {
  const dir = workspace("dev-memory-decimals");
  assert.equal(canon(["init"], dir).code, 0);
  const items = path.join(dir, "definitions", "items.yaml");
  const itemsYaml = (scale: number, description = "Things with prices.") => {
    const d = `type: decimal, precision: ${scale + 4}, scale: ${scale}`;
    return [
      "resource: items",
      `description: ${description}`,
      "operations: [list, read, create, update, delete]",
      "fields:",
      `  price: { ${d} }`,
      `  rate: { ${d}, optional: true, nullable: true }`,
      `  box: { type: object, optional: true, fields: { price: { ${d} } } }`,
      `  lines: { type: array, optional: true, items: { type: object, fields: { unit: { ${d} } } } }`,
      `  prices: { type: map, optional: true, items: { ${d} } }`,
      "",
    ].join("\n");
  };
  writeFileSync(items, itemsYaml(2));
  const dev = await startDev(dir, ["--store", "memory", "--allow-breaking", "--log-level", "warn"]);
  const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
  const refusals = () => (dev.output().match(/canon dev: the new code did not start/g) ?? []).length;
  const read = async (id: string) => {
    const one = (await (await fetch(`${dev.base}/v1/items/${id}`, { headers })).json()) as Record<string, unknown>;
    const listed = (await (await fetch(`${dev.base}/v1/items`, { headers })).json()) as { data: Array<Record<string, unknown>> };
    assert.deepEqual(listed.data.find((item) => item.id === id), one, "the list shows what the read does");
    const { price, rate, box, lines, prices } = one;
    return { price, rate, box, lines, prices };
  };
  try {
    const created = await fetch(`${dev.base}/v1/items`, { method: "POST", headers, body: JSON.stringify({ price: "7", rate: "1.2", box: { price: "3.5" }, lines: [{ unit: "-0.25" }, { unit: "0" }], prices: { a: "1.2" } }) });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = (await created.json()) as { id: string };
    assert.deepEqual(await read(id), { price: "7.00", rate: "1.20", box: { price: "3.50" }, lines: [{ unit: "-0.25" }, { unit: "0.00" }], prices: { a: "1.20" } });

    // Widened: every stored value carries the new scale's digits, at every depth.
    let before = served();
    writeFileSync(items, itemsYaml(3));
    await eventually("the wider scale", () => served() > before, dev.output);
    assert.deepEqual(await read(id), { price: "7.000", rate: "1.200", box: { price: "3.500" }, lines: [{ unit: "-0.250" }, { unit: "0.000" }], prices: { a: "1.200" } });

    // Narrowed past a value's digits: refused as the SQL migration is, naming the record, the value and where it is.
    writeFileSync(items, itemsYaml(1));
    await eventually("the refusal", () => refusals() > 0, dev.output);
    assert.match(
      dev.output(),
      new RegExp(`canon dev: the new code did not start \\(the memory store holds record ${id} of items with "-0\\.250" at lines\\.0\\.unit, which numeric\\(5, 1\\) cannot keep exactly: change that record \\(or give the field a type that keeps it\\) \\(or restart canon dev: the memory store starts empty\\)\\); still serving the last good version\\n`),
    );
    assert.deepEqual((await read(id)).lines, [{ unit: "-0.250" }, { unit: "0.000" }], "the last good code still serves");
    const patched = await fetch(`${dev.base}/v1/items/${id}`, { method: "PATCH", headers, body: JSON.stringify({ lines: [{ unit: "-0.2" }] }) });
    assert.equal(patched.status, 200, await patched.clone().text());
    await patched.arrayBuffer();

    // Once no value would lose digits: kept exactly at the narrower scale.
    before = served();
    writeFileSync(items, itemsYaml(1, "Things with prices, narrower."));
    await eventually("the narrower scale", () => served() > before, dev.output);
    assert.deepEqual(await read(id), { price: "7.0", rate: "1.2", box: { price: "3.5" }, lines: [{ unit: "-0.2" }], prices: { a: "1.2" } });
  } finally {
    dev.child.removeAllListeners("exit");
    const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
    dev.child.kill("SIGTERM");
    assert.equal(await exited, 0, dev.output());
  }
});

// Found by a sweep of the dev loop: an array of ids made a relation while a record named no
// record with it was served on the memory store (the record kept an id no tag has), where the
// SQL store's migration refuses it; and PGlite refused every such save, valid ids too, with
// "reset the dev store". Now both move the ids and refuse a dangling one naming the record.
test("canon dev makes an array of ids a relation over the records it holds, and refuses an id that names no record until it is fixed", { timeout: 300_000 }, async () => {
  for (const store of ["memory", "pglite"]) {
    const dir = workspace(`dev-relation-${store}`);
    assert.equal(canon(["init"], dir).code, 0);
    writeFileSync(path.join(dir, "definitions", "tags.yaml"), "resource: tags\ndescription: Labels.\noperations: [list, read, create, delete]\nfields:\n  label: { type: string, max_length: 40 }\n");
    const tickets = path.join(dir, "definitions", "tickets.yaml");
    const ticketsYaml = (items: string, comment = "") =>
      `resource: tickets\ndescription: Requests.${comment}\noperations: [list, read, create, update, delete]\nfields:\n  subject: { type: string, max_length: 200 }\n  tag_ids: { type: array, items: ${items}, max_items: 50 }\n`;
    writeFileSync(tickets, ticketsYaml("{ type: uuid }"));
    const dev = await startDev(dir, ["--store", store === "memory" ? "memory" : `pglite:${path.join(dir, ".data")}`, "--log-level", "warn"]);
    const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
    const refusals = () => (dev.output().match(/canon dev: the new code did not start/g) ?? []).length;
    try {
      const post = async (collection: string, body: unknown) => {
        const response = await fetch(`${dev.base}/v1/${collection}`, { method: "POST", headers, body: JSON.stringify(body) });
        assert.equal(response.status, 201, await response.clone().text());
        return ((await response.json()) as { id: string }).id;
      };
      const [a, b] = [await post("tags", { label: "a" }), await post("tags", { label: "b" })];
      const ghost = "01900000-0000-7000-8000-0000000000ff";
      const one = await post("tickets", { subject: "one", tag_ids: [b, a] });
      const two = await post("tickets", { subject: "two", tag_ids: [a, ghost] });

      writeFileSync(tickets, ticketsYaml("{ type: uuid, references: tags }"));
      await eventually("the refusal", () => refusals() > 0, dev.output);
      assert.match(dev.output(), new RegExp(`tickets\\.tag_ids (refers to|becomes a relation to) tags, and record ${two} names ${ghost}, which is no record of tags: remove that id from the records that hold it \\(or create the record it names\\), then save`));
      assert.doesNotMatch(dev.output(), /reset the dev store/);
      const fixed = await fetch(`${dev.base}/v1/tickets/${two}`, { method: "PATCH", headers, body: JSON.stringify({ tag_ids: [a] }) });
      assert.equal(fixed.status, 200, await fixed.clone().text());

      const before = served();
      writeFileSync(tickets, ticketsYaml("{ type: uuid, references: tags }", " Fixed."));
      await eventually("the relation", () => served() > before, dev.output);
      const list = (await (await fetch(`${dev.base}/v1/tickets`, { headers })).json()) as { data: Array<{ id: string; tag_ids: string[] }> };
      assert.deepEqual(list.data.map((t) => [t.id, t.tag_ids]), [[one, [b, a]], [two, [a]]], store);
      const held = await fetch(`${dev.base}/v1/tags/${a}`, { method: "DELETE", headers });
      assert.equal(held.status, 422, `${store}: the relation holds the tag`);
    } finally {
      dev.child.removeAllListeners("exit");
      const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
      dev.child.kill("SIGTERM");
      assert.equal(await exited, 0, dev.output());
    }
  }
});

// Found by a sweep of the dev loop: a composite `unique` saved while two records repeat it was
// served on the memory store (both kept, the constraint silently not holding them, and every
// later write of one of them answering 409), where the SQL store's unique index refuses it.
test("canon dev refuses a unique constraint that two stored records repeat, on every store, naming them, until one is changed", { timeout: 300_000 }, async () => {
  for (const store of ["memory", "pglite"]) {
    const dir = workspace(`dev-unique-${store}`);
    assert.equal(canon(["init"], dir).code, 0);
    const users = path.join(dir, "definitions", "users.yaml");
    const original = readFileSync(users, "utf8").replace(/(  name: .*\n)/, "$1  team: { type: string, max_length: 20 }\n");
    writeFileSync(users, original);
    const dev = await startDev(dir, ["--store", store === "memory" ? "memory" : `pglite:${path.join(dir, ".data")}`, "--log-level", "warn"]);
    const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
    const refusals = () => (dev.output().match(/canon dev: the new code did not start/g) ?? []).length;
    try {
      const post = (body: unknown) => fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify(body) });
      const ann = ((await (await post({ email: "ann@example.com", name: "Ann", team: "red" })).json()) as { id: string }).id;
      const twin = ((await (await post({ email: "ann2@example.com", name: "Ann", team: "red" })).json()) as { id: string }).id;

      writeFileSync(users, `${original}unique: [[team, name]]\n`);
      await eventually("the refusal", () => refusals() > 0, dev.output);
      assert.match(
        dev.output(),
        store === "memory"
          ? new RegExp(`the memory store holds records ${ann} and ${twin} of users with the same \\(team, name\\) = \\(red, Ann\\), which the definitions now require to be unique: change or delete one of them, then save again`)
          : /is duplicated\): remove or change the records that repeat it/,
      );
      const list = (await (await fetch(`${dev.base}/v1/users`, { headers })).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(list.data.map((u) => u.id), [ann, twin], `${store}: the records are kept`);
      const patched = await fetch(`${dev.base}/v1/users/${twin}`, { method: "PATCH", headers, body: JSON.stringify({ team: "blue" }) });
      assert.equal(patched.status, 200, await patched.clone().text());

      const before = served();
      writeFileSync(users, `${original.replace("People who use the API.", "People.")}unique: [[team, name]]\n`);
      await eventually("the constraint", () => served() > before, dev.output);
      const again = await post({ email: "ann3@example.com", name: "Ann", team: "blue" });
      assert.equal(again.status, 409, `${store}: ${await again.clone().text()}`);
      const renamed = await fetch(`${dev.base}/v1/users/${ann}`, { method: "PATCH", headers, body: JSON.stringify({ email: "ann@example.org" }) });
      assert.equal(renamed.status, 200, `${store}: a record that repeats nothing is written`);
    } finally {
      dev.child.removeAllListeners("exit");
      const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
      dev.child.kill("SIGTERM");
      assert.equal(await exited, 0, dev.output());
    }
  }
});

// Found by a sweep of the dev loop: an optional field made required with a default while records
// lacked it was refused on both stores, PGlite saying "reset the dev store" and the memory store
// "give amount a default" (it had one), where a released migration gives those rows the default.
test("canon dev makes an optional field required with a default over the records it holds: those without a value take the default, on every store", { timeout: 300_000 }, async () => {
  for (const store of ["memory", "pglite"]) {
    const dir = workspace(`dev-required-${store}`);
    assert.equal(canon(["init"], dir).code, 0);
    const users = path.join(dir, "definitions", "users.yaml");
    const original = readFileSync(users, "utf8");
    const withAmount = (amount: string) => original.replace(/(  name: .*\n)/, `$1  amount: { type: decimal, precision: 10, scale: 2, ${amount} }\n`);
    writeFileSync(users, withAmount("optional: true"));
    const dev = await startDev(dir, ["--store", store === "memory" ? "memory" : `pglite:${path.join(dir, ".data")}`, "--log-level", "warn"]);
    const served = () => (dev.output().match(/canon dev: serving the new code/g) ?? []).length;
    try {
      const post = async (body: unknown) => {
        const response = await fetch(`${dev.base}/v1/users`, { method: "POST", headers, body: JSON.stringify(body) });
        assert.equal(response.status, 201, await response.clone().text());
        return ((await response.json()) as { id: string }).id;
      };
      const ann = await post({ email: "ann@example.com", name: "Ann", amount: "12.5" });
      const bo = await post({ email: "bo@example.com", name: "Bo" });
      const before = served();
      writeFileSync(users, withAmount('default: "0.00"'));
      await eventually("the required field", () => served() > before, dev.output);
      assert.doesNotMatch(dev.output(), /did not start/);
      const list = (await (await fetch(`${dev.base}/v1/users`, { headers })).json()) as { data: Array<{ id: string; amount: string }> };
      assert.deepEqual(list.data.map((u) => [u.id, u.amount]), [[ann, "12.50"], [bo, "0.00"]], store);
      const filtered = (await (await fetch(`${dev.base}/v1/users/${bo}`, { headers })).json()) as { amount: string };
      assert.equal(filtered.amount, "0.00", store);
    } finally {
      dev.child.removeAllListeners("exit");
      const exited = new Promise<number | null>((resolve) => dev.child.once("exit", resolve));
      dev.child.kill("SIGTERM");
      assert.equal(await exited, 0, dev.output());
    }
  }
});
