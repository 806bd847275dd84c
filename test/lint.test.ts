// Tests of the lint stage: (a) the front end over the broken corpus and the good fixtures,
// (b) `canon lint` as a child process. Each test/fixtures/broken/<case>/ is a definitions
// folder that breaks one rule; its expected.json lists every diagnostic (rule, file, line,
// column) the run must report, and nothing else.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { RULES } from "../generator/diagnostics/catalog.ts";
import type { Diagnostic } from "../generator/diagnostics/diagnostic.ts";
import { lint } from "../generator/lint/index.ts";
import { Engine, EngineRecords } from "../generator/engine.ts";
import { checkCollectionName, collectionNameProblems, suggestedActionNouns } from "../generator/lint/naming.ts";
import type { Definitions, FieldDef, ResourceDef } from "../generator/model/types.ts";
import { runFrontEnd } from "../generator/pipeline.ts";
import { workspace } from "./support/cli.ts";

const root = path.resolve(import.meta.dirname, "..");
const brokenDir = path.join(root, "test/fixtures/broken");
const goodDir = path.join(root, "test/fixtures/good");
const today = "2026-11-21";

interface Expected {
  rule: string;
  file: string;
  line: number;
  column: number;
}

const cases = readdirSync(brokenDir).filter((name) => existsSync(path.join(brokenDir, name, "expected.json"))).sort();

function expectedOf(name: string): Expected[] {
  return JSON.parse(readFileSync(path.join(brokenDir, name, "expected.json"), "utf8")) as Expected[];
}

const key = (e: Expected) => `${e.file}:${e.line}:${e.column} ${e.rule}`;
const keys = (list: Expected[]) => list.map(key).sort();

/** Diagnostics as (rule, file, line, column), files relative to `cwd`. */
function located(diagnostics: Diagnostic[]): Expected[] {
  return diagnostics.map((d) => ({ rule: d.rule, file: d.location.file, line: d.location.line, column: d.location.column }));
}

/** Runs the front end with the fixture folder as working directory, so files read `orders.yaml`. */
async function lintFolder(dir: string) {
  return runFrontEnd(dir, { today, cwd: dir });
}

describe("broken corpus", () => {
  for (const name of cases) {
    test(name, async () => {
      const dir = path.join(brokenDir, name);
      const result = await lintFolder(dir);
      assert.deepEqual(keys(located(result.diagnostics)), keys(expectedOf(name)), `diagnostics of ${name}:\n${result.diagnostics.map((d) => `${key({ ...d.location, rule: d.rule })} ${d.message}`).join("\n")}`);
      for (const d of result.diagnostics) {
        assert.ok(d.message.length > 0 && d.fix.length > 0, `${d.rule} has a message and a fix`);
        assert.equal(d.severity, RULES[d.rule as keyof typeof RULES]?.severity, `${d.rule} is in the catalog with its severity`);
      }
      const errors = result.diagnostics.some((d) => d.severity === "error");
      assert.equal(result.model === null, errors, "a model exists exactly when there is no error");
    });
  }

  test("every rule in the catalog is covered by at least one case", () => {
    const covered = new Set(cases.flatMap((name) => expectedOf(name).map((e) => e.rule)));
    const missing = Object.keys(RULES).filter((rule) => !covered.has(rule));
    assert.deepEqual(missing, []);
  });

  test("each case but multiple-files breaks exactly one rule", () => {
    for (const name of cases) {
      if (name === "multiple-files") continue;
      const rules = new Set(expectedOf(name).map((e) => e.rule));
      assert.equal(rules.size, 1, `${name} breaks ${[...rules].join(", ")}`);
    }
  });

  test("several problems in several files are all reported in one run", async () => {
    const result = await lintFolder(path.join(brokenDir, "multiple-files"));
    const files = new Set(result.diagnostics.map((d) => d.location.file));
    assert.deepEqual([...files].sort(), ["api.yaml", "orders.yaml", "products.yaml", "users.yaml"]);
    assert.ok(result.diagnostics.length >= 6);
  });
});

describe("messages", () => {
  const diagnosticsOf = async (name: string) => (await lintFolder(path.join(brokenDir, name))).diagnostics;

  test("field-id-type reads like the spec", async () => {
    const [d] = await diagnosticsOf("field-id-type");
    assert.equal(d?.message, `"customer_id" ends in _id and must be type uuid`);
    assert.match(d!.fix, /uuid/);
  });

  test("unknown keys suggest the key meant", async () => {
    const [d] = await diagnosticsOf("unknown-key-pagination");
    assert.match(d!.message, /pagnation/);
    assert.match(d!.fix, /did you mean "pagination"\?/);
    const [option] = await diagnosticsOf("unknown-key-field-option");
    assert.match(option!.fix, /"max_length"/);
  });

  test("a missing required key names it", async () => {
    const [d] = await diagnosticsOf("schema-missing-key");
    assert.match(d!.message, /missing required key "fields"/);
  });

  test("unknown references and parents suggest a defined collection", async () => {
    const [parent] = await diagnosticsOf("reference-unknown-parent");
    assert.match(parent!.fix, /did you mean "users"\?/);
    const filters = await diagnosticsOf("filter-field");
    assert.ok(filters.some((d) => /did you mean "category"\?/.test(d.fix)));
    assert.ok(filters.some((d) => /uuid/.test(d.message) && /parent/.test(d.fix + d.message)));
  });

  test("minor versions are refused as such", async () => {
    const [d] = await diagnosticsOf("version-name-minor");
    assert.match(d!.message, /minor versions are not allowed/);
    const [gap] = await diagnosticsOf("version-name-gap");
    assert.match(gap!.message, /after v1 comes v2/);
    assert.match(gap!.fix, /rename it v2/);
  });

  test("versioning inside object and action fields is refused", async () => {
    const list = await diagnosticsOf("version-ref-nested");
    assert.ok(list.every((d) => /not allowed/.test(d.message)));
  });

  test("verbs in action names suggest a noun", async () => {
    const [d] = await diagnosticsOf("path-no-verb-action");
    assert.match(d!.fix, /cancellations/);
  });

  test("sunset-near says how many days are left, or that it has passed", async () => {
    const [near] = await diagnosticsOf("sunset-near");
    assert.equal(near!.severity, "warning");
    assert.match(near!.message, /in 10 days/);
    assert.match(near!.fix, /write retired: true on v1 in api\.yaml/);
    const [passed] = await diagnosticsOf("sunset-near-passed");
    assert.match(passed!.message, /passed on 2026-09-01, 81 days ago/);
  });

  test("a pattern that can backtrack catastrophically is refused at its position, with a safe rewrite as the fix", async () => {
    const list = await diagnosticsOf("pattern-backtracking");
    const at = (line: number) => list.find((d) => d.location.line === line)!;
    // Issue 14's example: 31 characters and a "!" held the event loop for 55 s.
    const title = at(4);
    assert.deepEqual([title.location.line, title.location.column], [4, 35]);
    assert.match(title.message, /^pattern '\^\(\\w\+\\s\?\)\*\$' of "title" can backtrack catastrophically: its part '\(\\w\+\\s\?\)\*' .* exponential/);
    assert.equal(title.fix, String.raw`use pattern: '^(\w+(\s\w+)*\s?)?$', which matches the same strings and reads each character one way only`);
    assert.match(at(5).fix, /'\^\[A-Z\]\+\(-\[A-Z\]\+\)\*-\?\$'/);
    assert.match(at(6).message, /polynomial/);
    assert.match(at(6).fix, /each character can be matched one way only/);
    // Every rewrite offered is itself linear, and matches what the pattern matched.
    for (const d of list) {
      const offered = /^use pattern: '(.*)', which/.exec(d.fix)?.[1];
      if (offered === undefined) continue;
      const original = new RegExp(/^pattern '(.*?)' of/.exec(d.message)![1]!);
      const rewrite = new RegExp(offered);
      for (const sample of ["", "a", "ab cd", "ab  cd", "AB-CD", "AB--CD", "AB-", "12", "a b ", " a", "x!"]) {
        assert.equal(rewrite.test(sample), original.test(sample), `${offered} and ${original.source} on ${JSON.stringify(sample)}`);
      }
    }
  });

  test("the patterns of the showcase and the fixtures pass the backtracking check", async () => {
    const { backtrackingOf } = await import("../generator/lint/patterns/backtracking.ts");
    for (const pattern of ["^[A-Z0-9-]{3,32}$", "^ORD-[0-9]{6}$", "^[A-Z]{3}$", "^[0-9]{5}$", "^[0-9-]{10,17}$", "^[a-z0-9]+(-[a-z0-9]+)*$", "^(?:[a-z]+\\.)*[a-z]+$", "^\\w+(\\s\\w+)*\\s?$"]) {
      assert.equal(backtrackingOf(pattern), null, pattern);
    }
  });
});

describe("clean definitions", () => {
  test("the showcase has no diagnostics", async () => {
    const result = await runFrontEnd(path.join(root, "definitions"), { today, cwd: root });
    assert.deepEqual(result.diagnostics, []);
    assert.ok(result.model);
  });

  for (const name of readdirSync(goodDir).sort()) {
    test(`good/${name} has no diagnostics`, async () => {
      const result = await lintFolder(path.join(goodDir, name));
      assert.deepEqual(result.diagnostics.map((d) => `${key({ ...d.location, rule: d.rule })} ${d.message}`), []);
      assert.ok(result.model);
    });
  }

  test("the showcase warns once its sunset is near, and the warning is not an error", async () => {
    const result = await runFrontEnd(path.join(root, "definitions"), { today: "2027-06-10", cwd: root });
    assert.deepEqual(
      result.diagnostics.map((d) => [d.rule, d.severity]),
      [["sunset-near", "warning"]],
    );
    assert.ok(result.model, "warnings do not block the model");
  });
});

describe("robustness and docs", () => {
  test("docs/rules.md documents every rule of the catalog", () => {
    const doc = readFileSync(path.join(root, "docs/rules.md"), "utf8");
    for (const rule of Object.keys(RULES)) assert.match(doc, new RegExp(`^### ${rule} \\(${RULES[rule as keyof typeof RULES].severity}\\)$`, "m"), rule);
  });

  test("no rule throws on odd definitions", () => {
    const at = () => ({ file: "x.yaml", line: 1, column: 1 });
    const field = (name: string, extra: Partial<FieldDef> = {}): FieldDef => ({
      name, type: "string", optional: false, nullable: false, hasDefault: false, readOnly: false, writeOnly: false, unique: false, at, ...extra,
    });
    const resource = (collection: string, extra: Partial<ResourceDef> = {}): ResourceDef => ({
      file: `${collection}.yaml`, collection, singular: collection, operations: [], pagination: "cursor", search: [], filters: [], sort: [],
      uniqueTogether: [], exportable: false, fields: [], actions: [], at, ...extra,
    });
    const odd: Definitions = {
      title: "", baseUrl: "::", versions: [{ name: "v1.1", retired: false, draft: false, at }, { name: "", deprecated: "x", sunset: "2026-13-45", retired: false, draft: true, at }],
      rateLimit: null, events: true, bodyLimit: 1, searchMinLength: 3, at,
      resources: [
        resource("", { parent: "", added: "v9", removed: "v0", search: ["", "nope"], filters: ["x"] }),
        resource("a/b/c", { parent: "a/b/c", actions: [{ name: "", fields: [field("", { renamed: { in: "v7", from: "" } })], response: 204, requires: [], sets: [], at }] }),
        resource("xs", { parent: "ys", uniqueTogether: [[], ["ys_id", "ys_id"], ["nope", ""]], fields: [field("ys_id", { type: "array", renamed: { in: "v1.1", from: "ys_id" }, removed: "" })] }),
        resource("ys", { parent: "xs", fields: [field("o", { type: "object", fields: [], default: { a: 1 }, hasDefault: true }), field("e", { type: "enum", default: 3, hasDefault: true })] }),
      ],
    };
    const found = lint(odd, { today: "not a date" });
    assert.ok(found.length > 0);
    assert.ok(found.every((d) => d.rule in RULES && d.message && d.fix));
  });
});

describe("checkCollectionName", () => {
  const rulesOf = (name: string) => checkCollectionName(name).map((p) => p.rule);

  for (const [name, rules] of [
    ["Orders", ["path-lowercase"]],
    ["get-orders", ["path-no-verb"]],
    ["order", ["path-plural"]],
    ["address", ["path-plural"]],
    ["order_items", ["path-lowercase"]],
    ["orders--x", ["path-lowercase", "path-plural"]],
    ["-orders", ["path-lowercase"]],
    ["cancel", ["path-no-verb"]],
    // Verbs the lexicon knows (WordNet, generator/lint/lexicon.ts), on no word list.
    ["close-tickets", ["path-no-verb"]],
    ["generate-reports", ["path-no-verb"]],
    ["assign-tickets", ["path-no-verb"]],
    ["closes", ["path-no-verb"]],
    ["generates", ["path-no-verb"]],
    // Every verb SPEC §2.3 names, wherever it stands, in a compound noun too.
    ["cancel-orders", ["path-no-verb"]],
    ["change-logs", ["path-no-verb"]],
    ["check-ins", ["path-no-verb"]],
    ["login-attempts", ["path-no-verb"]],
    ["orders-archive", ["path-no-verb"]],
    ["users/orders", ["path-nesting"]],
    ["", ["path-lowercase"]],
  ] as const) {
    test(`refuses ${JSON.stringify(name)} (${rules.join(", ")})`, () => {
      assert.deepEqual(rulesOf(name), rules);
      for (const p of checkCollectionName(name)) assert.ok(p.message && p.fix);
    });
  }

  for (const name of ["orders", "orders-archives", "people", "book-copies", "returns", "cancellations", "data", "settings", "news", "tags", "reports", "order-items", "runs", "updates", "blog-posts", "closures", "echo-items", "no-shows", "follow-ups", "work-orders", "pull-requests", "play-lists", "merge-requests", "upload-sessions", "sign-ups", "roll-outs", "record-holds", "time-entries", "sla-policies"]) {
    test(`accepts ${JSON.stringify(name)}`, () => {
      assert.deepEqual(checkCollectionName(name), []);
    });
  }

  test("every action noun path-no-verb suggests passes the path rules itself", () => {
    const refused = suggestedActionNouns().filter((noun) => checkCollectionName(noun, "action").length > 0);
    assert.deepEqual(refused, []);
  });

  test("a cold run takes a name's problems from the engine's records, as checking it gives them", () => {
    const records = path.join(workspace("lint-name-records"), "engine.json");
    const names = ["close-tickets", "orders", "Orders"];
    const first = new Engine(new EngineRecords(records, "test"));
    const checked = first.within(() => names.map((name) => collectionNameProblems(name, "collection")));
    assert.deepEqual(checked, names.map((name) => checkCollectionName(name)));
    assert.equal(first.computed, names.length);
    first.save();
    // A new engine over the same records: a new process, which reads no WordNet for them.
    const second = new Engine(new EngineRecords(records, "test"));
    assert.deepEqual(second.within(() => names.map((name) => collectionNameProblems(name, "collection"))), checked);
    assert.deepEqual({ computed: second.computed, recalled: second.recalled }, { computed: 0, recalled: names.length });
  });

  test("suggests a fix that passes", () => {
    assert.match(checkCollectionName("Orders")[0]!.fix, /"orders"/);
    assert.match(checkCollectionName("order")[0]!.fix, /"orders"/);
    assert.match(checkCollectionName("address")[0]!.fix, /"addresses"/);
    assert.match(checkCollectionName("get-orders")[0]!.fix, /"orders"/);
    assert.match(checkCollectionName("book-copy")[0]!.fix, /"book-copies"/);
    assert.match(checkCollectionName("close-tickets")[0]!.fix, /"closures".*"tickets"/);
    assert.match(checkCollectionName("closes")[0]!.fix, /"closures"/);
    assert.match(checkCollectionName("generate-reports")[0]!.fix, /"reports"/);
    // A noun that is also a verb and lacks its plural is told its plural.
    assert.deepEqual(checkCollectionName("return").map((p) => p.rule), ["path-plural"]);
    assert.match(checkCollectionName("return")[0]!.fix, /"returns"/);
  });
});

describe("canon lint (child process)", () => {
  const cli = path.join(root, "bin/canon.js");
  const cliReady = existsSync(path.join(root, "generator/cli/main.ts"));
  const line = /^(\S+):(\d+):(\d+) (error|warning) (\S+) .+$/;

  function lint(...args: string[]) {
    const run = spawnSync(process.execPath, [cli, "lint", ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
    const found: Expected[] = [];
    const lines = run.stderr.split("\n");
    lines.forEach((text, i) => {
      const m = line.exec(text);
      if (!m) return;
      found.push({ file: m[1]!, line: Number(m[2]), column: Number(m[3]), rule: m[5]! });
      assert.match(lines[i + 1] ?? "", /^\s+fix: \S/, `a fix line follows ${text}`);
    });
    return { status: run.status, found, stderr: run.stderr };
  }

  const relative = (name: string, e: Expected): Expected => ({ ...e, file: `test/fixtures/broken/${name}/${e.file}` });

  for (const name of ["multiple-files", "field-id-type", "yaml-syntax-tab", "version-name-gap", "parent-cycle"]) {
    test(`reports every problem of ${name} and exits 1`, { skip: !cliReady && "generator/cli/main.ts is not there yet" }, () => {
      const run = lint("--definitions", `test/fixtures/broken/${name}`);
      assert.equal(run.status, 1, run.stderr);
      assert.deepEqual(keys(run.found), keys(expectedOf(name).map((e) => relative(name, e))));
    });
  }

  test("a warning alone exits 0", { skip: !cliReady && "generator/cli/main.ts is not there yet" }, () => {
    const run = lint("--definitions", "test/fixtures/broken/sunset-near");
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(keys(run.found), keys(expectedOf("sunset-near").map((e) => relative("sunset-near", e))));
    assert.match(run.stderr, / warning sunset-near /);
  });

  test("clean definitions exit 0 without diagnostics", { skip: !cliReady && "generator/cli/main.ts is not there yet" }, () => {
    const run = lint("--definitions", "test/fixtures/good/minimal");
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.found, []);
  });

  test("a usage error exits 2", { skip: !cliReady && "generator/cli/main.ts is not there yet" }, () => {
    const run = lint("--no-such-flag");
    assert.equal(run.status, 2, run.stderr);
  });
});

describe("diagnostics while sketching", () => {
  test("an unreadable field type leaves out that field, not its resource: no false error elsewhere, and a did-you-mean", async () => {
    const result = await lintFolder(path.join(brokenDir, "field-type-unknown"));
    assert.deepEqual(
      result.diagnostics.map((d) => `${d.location.file} ${d.rule} ${d.message}`),
      ['tags.yaml schema fields.label.type: unknown type "strng"'],
    );
    assert.match(result.diagnostics[0]!.fix, /^did you mean "string"\?/);
  });

  test("the rest of a resource with an unreadable field type is still checked", async () => {
    const dir = path.join(root, "test", ".tmp", `sketch-${process.pid}`);
    const { cpSync, writeFileSync, rmSync } = await import("node:fs");
    rmSync(dir, { recursive: true, force: true });
    cpSync(path.join(brokenDir, "field-type-unknown"), dir, { recursive: true });
    writeFileSync(path.join(dir, "tags.yaml"), "resource: tags\nfields:\n  label: { type: strng }\n  Color: { type: string }\n");
    const result = await lintFolder(dir);
    assert.deepEqual(result.diagnostics.map((d) => `${d.location.file} ${d.rule}`).sort(), ["tags.yaml field-name", "tags.yaml schema"]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("a record type may be named as canon's own types; a name canon derives from it may not", async () => {
    const dir = path.join(root, "test", ".tmp", `canon-names-${process.pid}`);
    const { cpSync, writeFileSync, rmSync } = await import("node:fs");
    rmSync(dir, { recursive: true, force: true });
    cpSync(path.join(brokenDir, "duplicate-resource-generated-names"), dir, { recursive: true });
    // `cursor` makes the page type CursorPage, the runtime's, which pagination.ts would declare
    // beside its import of the runtime's (the collection is no plural noun either: path-plural).
    writeFileSync(path.join(dir, "cursor.yaml"), "resource: cursor\nsingular: cursor-item\nfields:\n  name: { type: string }\n");
    const result = await lintFolder(dir);
    rmSync(dir, { recursive: true, force: true });
    const refused = result.diagnostics.filter((d) => d.rule === "duplicate-resource").map((d) => `${d.location.file} ${d.message}`);
    assert.equal(refused.length, 2, refused.join("\n"));
    assert.match(refused.find((m) => m.startsWith("cursor.yaml")) ?? "", /the name CursorPage, which the generated code uses for a type of its own/);
    // stores (Store), accounts (singular client: Client) and hooks (Hook) are taken.
    assert.ok(refused.some((m) => m.startsWith("orders.yaml")));
  });

  test("an empty definition file is one diagnostic that says so", async () => {
    const result = await lintFolder(path.join(brokenDir, "empty-file"));
    assert.equal(result.diagnostics.length, 1);
    assert.equal(result.diagnostics[0]!.message, "users.yaml is empty: a resource file describes one collection");
    assert.match(result.diagnostics[0]!.fix, /resource: <plural noun> and fields:/);
  });
});
