// The gate leaves out the paths that are the same in the published and the new document
// (compat/unchanged.ts): what it finds must be exactly what comparing the whole documents finds.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { compareDocuments } from "../generator/compat/compare.ts";
import type { Json, JsonObject } from "../generator/compat/types.ts";
import { documentDigest, partDigests } from "../generator/compat/parts.ts";
import { publishedDocument } from "../generator/compat/published.ts";
import { withoutUnchangedPaths } from "../generator/compat/unchanged.ts";
import { openapiDocument } from "../generator/emit/openapi/document.ts";
import { Engine } from "../generator/engine.ts";
import { generate } from "../generator/generate.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { createSession } from "../generator/session.ts";
import { workspace } from "./support/cli.ts";

async function documents(definitions: string, dir: string): Promise<Map<string, string>> {
  const result = await generate({
    definitions,
    out: path.join(dir, "none"),
    write: false,
    today: "2026-11-21",
    cacheFile: null,
    cwd: dir,
  });
  assert.ok(result.model, result.diagnostics.map((d) => d.message).join("; "));
  return new Map(
    result.files.filter((f) => f.path.endsWith("/openapi.json")).map((f) => [f.path, f.content]),
  );
}

test("leaving out the unchanged paths finds exactly the changes the whole documents show", async () => {
  const dir = workspace("compat-unchanged", "definitions");
  const definitions = path.join(dir, "definitions");
  const products = path.join(definitions, "products.yaml");
  const users = path.join(definitions, "users.yaml");
  const original = { products: readFileSync(products, "utf8"), users: readFileSync(users, "utf8") };
  const published = await documents(definitions, dir);
  const edits: Array<[string, () => void]> = [
    [
      "a narrower field",
      () => writeFileSync(products, original.products.replace("max_length: 200 }", "max_length: 100 }")),
    ],
    ["a removed field", () => writeFileSync(products, original.products.replace(/  homepage: .*\n/, ""))],
    [
      "a new action",
      () =>
        writeFileSync(
          products,
          `${original.products}actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n`,
        ),
    ],
    [
      "an edit of two files",
      () =>
        writeFileSync(
          users,
          original.users.replace(/(  name: .*\n)/, "$1  nickname: { type: string, max_length: 40 }\n"),
        ),
    ],
  ];
  let pruned = 0;
  let breaking = 0;
  for (const [what, edit] of edits) {
    edit();
    const next = await documents(definitions, dir);
    for (const [file, text] of published) {
      const fresh = next.get(file);
      assert.ok(fresh, file);
      const [a, b] = [JSON.parse(text) as JsonObject, JSON.parse(fresh) as JsonObject];
      const [x, y] = withoutUnchangedPaths(a, b);
      pruned += Object.keys(a.paths as JsonObject).length - Object.keys(x.paths as JsonObject).length;
      const whole = compareDocuments(a, b);
      breaking += whole.filter((c) => c.breaking).length;
      assert.deepEqual(compareDocuments(x, y), whole, `${what}: ${file}`);
      // Remembering the changes of each path (remembered.ts) finds them too, before and after it has seen these.
      assert.deepEqual(compareDocuments(a, b, true), whole, `${what}: ${file}, remembered`);
      assert.deepEqual(compareDocuments(a, b, true), whole, `${what}: ${file}, remembered again`);
    }
  }
  assert.ok(pruned > 0, "some paths were left out");
  assert.ok(breaking > 0, "the edits break the published documents");
  // A component that every operation reaches refers to something else than a component: no path
  // can be told to be the same, even in two equal documents.
  const odd = () => {
    const doc = JSON.parse([...published.values()][0]!) as JsonObject;
    Object.assign((doc.components as { responses: { InternalError: JsonObject } }).responses.InternalError, {
      x: { $ref: "other.json#/x" },
    });
    return doc;
  };
  const doc = odd();
  const [x] = withoutUnchangedPaths(doc, odd());
  assert.equal(x, doc);
  // Without it, every path of two equal documents is left out.
  const plain = JSON.parse([...published.values()][0]!) as JsonObject;
  assert.deepEqual(withoutUnchangedPaths(plain, structuredClone(plain))[0].paths, {});
  // References are read from each part's JSON text (parts.ts): a string that looks like one is
  // none, and a `$ref` that holds an object is walked (here to a reference to no component).
  const described = (description: string, extra: JsonObject = {}) => {
    const doc = JSON.parse([...published.values()][0]!) as JsonObject;
    Object.assign((doc.components as { responses: { InternalError: JsonObject } }).responses.InternalError, {
      description,
      ...extra,
    });
    return doc;
  };
  const quoted = `{"$ref":"other.json#/x"},"$ref":"other.json#/y" \\","$ref":"other.json#/z"`;
  assert.deepEqual(withoutUnchangedPaths(described(quoted), described(quoted))[0].paths, {});
  const nested = () => described("nested", { x: { $ref: { $ref: "other.json#/x" } } });
  const withNested = nested();
  assert.equal(withoutUnchangedPaths(withNested, nested())[0], withNested);
});

test("a published document read through its recorded part digests is the document its text holds", async () => {
  const dir = workspace("compat-published", "definitions");
  const definitions = path.join(dir, "definitions");
  const products = path.join(definitions, "products.yaml");
  const original = readFileSync(products, "utf8");
  const published = await documents(definitions, dir);
  const tables = new Map(
    [...published].map(([file, text]) => [file, partDigests(JSON.parse(text) as JsonObject)]),
  );
  const edits = [
    original,
    original.replace("max_length: 200 }", "max_length: 100 }"),
    original.replace(/  homepage: .*\n/, ""),
    `${original}actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n`,
  ];
  let shared = 0;
  let parsed = 0;
  for (const text of edits) {
    writeFileSync(products, text);
    for (const [file, content] of await documents(definitions, dir)) {
      const before = published.get(file)!;
      const now = JSON.parse(content) as JsonObject;
      const read = publishedDocument(before, tables.get(file)!, now);
      assert.ok(read, file);
      // The same content, keys in the same order, as parsing the whole text.
      assert.equal(JSON.stringify(read), JSON.stringify(JSON.parse(before)), file);
      const count = (a: JsonObject, b: JsonObject) => {
        for (const [key, value] of Object.entries(a))
          if (value === b[key]) shared++;
          else parsed++;
      };
      count(read.paths as JsonObject, now.paths as JsonObject);
      const components = read.components as Record<string, JsonObject>;
      for (const kind of Object.keys(components))
        count(components[kind]!, (now.components as Record<string, JsonObject>)[kind]!);
    }
  }
  assert.ok(shared > 4 * parsed, `${shared} parts taken from the new document, ${parsed} parsed`);
  assert.ok(parsed > 0, "the edited resource's parts are parsed from the text");
  // A text laid out otherwise is not read this way.
  const [file, text] = [...published][0]!;
  assert.equal(
    publishedDocument(JSON.stringify(JSON.parse(text)), tables.get(file)!, JSON.parse(text) as JsonObject),
    undefined,
  );
});

test("a published document that takes a component from the new one still compares what that component's references reach", async () => {
  // ExportCreate is the same in both (a oneOf of $refs): the published document read through its
  // digests takes it from the new one. OrderExportCreate, which it names, lost "csv" (orders
  // export ndjson only; products still csv, so no media type goes): a break the gate must see.
  const dir = workspace("compat-published-refs", "definitions");
  const definitions = path.join(dir, "definitions");
  const products = path.join(definitions, "products.yaml");
  const orders = path.join(definitions, "orders.yaml");
  writeFileSync(
    products,
    readFileSync(products, "utf8").replace(
      "resource: products\n",
      "resource: products\nexport: { formats: [ndjson, csv] }\n",
    ),
  );
  const published = await documents(definitions, dir);
  writeFileSync(orders, readFileSync(orders, "utf8").replace(/^export: .*$/m, "export: true"));
  const next = await documents(definitions, dir);
  let found = 0;
  for (const [file, before] of published) {
    const now = JSON.parse(next.get(file)!) as JsonObject;
    const read = publishedDocument(before, partDigests(JSON.parse(before) as JsonObject), now);
    assert.ok(read, file);
    const whole = compareDocuments(JSON.parse(before) as JsonObject, now).filter((c) => c.breaking);
    assert.deepEqual(
      compareDocuments(...withoutUnchangedPaths(read, now)).filter((c) => c.breaking),
      whole,
      file,
    );
    found += whole.filter(
      (c) => c.kind === "enum-value-removed" && c.operation?.operationId === "createExport",
    ).length;
  }
  assert.ok(found > 0, "the format no longer taken is a break of createExport");
});

test("documents that share the objects of unchanged resources (a dev session) leave out the same paths", async () => {
  const dir = workspace("compat-unchanged-objects", "definitions");
  const definitions = path.join(dir, "definitions");
  const products = path.join(definitions, "products.yaml");
  const original = readFileSync(products, "utf8");
  const session = createSession();
  const build = async () => {
    const { model } = await runFrontEnd(definitions, { today: "2026-11-21", cwd: dir, session });
    assert.ok(model);
    return model.versions.map((v) => openapiDocument(model, v));
  };
  const published = await build();
  const edits = [
    original.replace("max_length: 200 }", "max_length: 100 }"),
    original.replace(/  homepage: .*\n/, ""),
    `${original}actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n`,
  ];
  for (const text of edits) {
    writeFileSync(products, text);
    const next = await build();
    published.forEach((a, i) => {
      const b = next[i]!;
      const [x, y] = withoutUnchangedPaths(a, b);
      const left = Object.keys(y.paths as JsonObject).length;
      assert.ok(
        Object.keys(x.paths as JsonObject).length < Object.keys(a.paths as JsonObject).length / 2,
        "most paths are left out",
      );
      const whole = compareDocuments(a, b);
      if (whole.length > 0) assert.ok(left > 0, "the changed resource's paths are compared");
      assert.deepEqual(compareDocuments(x, y), whole);
    });
  }
});

test("the changes from one version to the next, remembered path by path, are those of the whole documents after every edit", async () => {
  const dir = workspace("compat-remembered", "definitions");
  const definitions = path.join(dir, "definitions");
  const products = path.join(definitions, "products.yaml");
  const original = readFileSync(products, "utf8");
  const texts = [
    original,
    `${original}actions:\n  reviews:\n    fields:\n      comment: { type: string, max_length: 200 }\n`,
    original.replace("max_length: 200 }", "max_length: 100 }"),
    original,
  ];
  for (const text of texts) {
    writeFileSync(products, text);
    const docs = await documents(definitions, dir);
    const [v1, v2] = [docs.get("v1/openapi.json")!, docs.get("v2/openapi.json")!];
    const whole = compareDocuments(JSON.parse(v1) as JsonObject, JSON.parse(v2) as JsonObject);
    assert.ok(whole.length > 0);
    assert.deepEqual(
      compareDocuments(JSON.parse(v1) as JsonObject, JSON.parse(v2) as JsonObject, true),
      whole,
    );
  }
});

test("a document's digest, made from its parts' digests, tells its content: a copy's is the same, a change of any value another", async () => {
  const { model } = await runFrontEnd("definitions", { today: "2026-11-21" });
  assert.ok(model);
  new Engine().within(() => {
    for (const version of model.versions) {
      // Built as the emitters build it: the digests of the resources' parts are known, not computed.
      const doc = openapiDocument(model, version);
      const digest = documentDigest(doc);
      assert.equal(
        documentDigest(structuredClone(doc)),
        digest,
        `${version.name}: a copy (every digest computed)`,
      );
      const leaves = leavesOf(doc);
      assert.ok(leaves.length > 1000, `${leaves.length} values`);
      // Every one of a spread of values, changed in a copy of the objects on its way only (the
      // others keep their known digests, as in a dev session).
      for (let i = 0; i < leaves.length; i += 7) {
        const at = leaves[i]!;
        assert.notEqual(
          documentDigest(changedAt(doc, at) as JsonObject),
          digest,
          `${version.name}: ${at.join(".")} changed`,
        );
      }
    }
  });
});

/** The path of each value in `value` that is no object or array. */
function leavesOf(value: Json, at: string[] = []): string[][] {
  if (typeof value !== "object" || value === null) return [at];
  return Object.entries(value).flatMap(([key, inner]) => leavesOf(inner, [...at, key]));
}

/** `value` with the value at `at` changed, its objects and arrays on the way copied. */
function changedAt(value: Json, at: string[]): Json {
  if (at.length === 0)
    return typeof value === "string"
      ? `${value}.`
      : typeof value === "number"
        ? value + 1
        : typeof value === "boolean"
          ? !value
          : 0;
  const [key, ...rest] = at;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as JsonObject) }) as Record<string, Json>;
  copy[key!] = changedAt(copy[key!]!, rest);
  return copy as Json;
}
