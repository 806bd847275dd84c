import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { Node, Project, SyntaxKind, type CallExpression } from "ts-morph";
import { repoRoot } from "./support/cli.ts";

// Structural checks of the generated handlers with ts-morph: properties that hold for every
// route of every version, whatever the definitions, read from the code rather than from text.
const generated = path.join(repoRoot, "generated");
const routeFiles = readdirSync(generated, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith("routes.ts"))
  .map((f) => path.join(generated, f));

const project = new Project({ skipAddingFilesFromTsConfig: true, compilerOptions: { allowJs: false } });
const sources = routeFiles.map((f) => project.addSourceFileAtPath(f));

/** Every `app.<method>("<path>", [options,] handler)` registration of a file (options: a route config, the version's field names). */
function routes(file: (typeof sources)[number]): Array<{ method: string; path: string; body: Node }> {
  return file
    .getDescendantsOfKind(SyntaxKind.CallExpression)
    .filter((call) => /^app\.(get|post|patch|put|delete)$/.test(call.getExpression().getText()))
    .map((call) => {
      const args = call.getArguments();
      const [pathArg] = args;
      const handler = args.at(-1);
      assert.ok(args.length === 2 || (args.length === 3 && Node.isObjectLiteralExpression(args[1])), "a path, route options, a handler");
      assert.ok(pathArg && Node.isStringLiteral(pathArg) || Node.isNoSubstitutionTemplateLiteral(pathArg!), "a literal path");
      assert.ok(handler && Node.isArrowFunction(handler), "an arrow handler");
      return { method: call.getExpression().getText().slice(4), path: pathArg!.getText().slice(1, -1), body: handler.getBody() };
    });
}

const callsNamed = (node: Node, pattern: RegExp): CallExpression[] =>
  node.getDescendantsOfKind(SyntaxKind.CallExpression).filter((c) => pattern.test(c.getExpression().getText()));

test("there are generated route files to check", () => {
  assert.ok(routeFiles.length >= 8, routeFiles.join(", "));
});

test("every route authorizes before it touches a service's writes or answers; by-id routes pass the record", () => {
  let checked = 0;
  for (const file of sources) {
    for (const route of routes(file)) {
      const authorizations = callsNamed(route.body, /^authorizeOrThrow$/);
      assert.ok(authorizations.length >= 1, `${route.method} ${route.path} calls authorizeOrThrow`);
      const firstAuthorization = Math.min(...authorizations.map((c) => c.getStart()));
      for (const effect of callsNamed(route.body, /^services\.\w+\.(create|update|remove|list|page)$|^(sendRecord|listByCursor|listByOffset)$|^events\.publish$/)) {
        assert.ok(effect.getStart() > firstAuthorization, `${route.method} ${route.path}: ${effect.getExpression().getText()} runs after authorize`);
      }
      if (route.path.includes("/:id")) {
        // The record looked up by id is what authorize sees (conventions §2.2.9).
        const withRecord = authorizations.filter((c) => c.getArguments().length >= 5);
        assert.ok(withRecord.length >= 1, `${route.method} ${route.path} passes the record to authorize`);
        // A list under a record: runtime/lists.ts `listUnder(services.<parent>, parent, check, context, list)`
        // reads the parent (in the page's statement on SQL) and hands it to `check`, which authorizes it
        // before the list's answer is made.
        const under = callsNamed(route.body, /^listUnder$/);
        if (under.length > 0) {
          const [service, , check] = under[0]!.getArguments();
          assert.match(service!.getText(), /^services\.\w+$/, `${route.method} ${route.path}: listUnder reads the parent through its service`);
          const checkText = route.body.getText().match(new RegExp(`const ${check!.getText()} = async \\(record[^)]*\\) => \\{[\\s\\S]*?\\n    \\};`))?.[0] ?? "";
          assert.match(checkText, /authorizeOrThrow\(authorize, request, "read", "\w+", record/, `${route.method} ${route.path}: the parent read is what authorize sees`);
          checked++;
          continue;
        }
        const lookups = callsNamed(route.body, /^services\.\w+\.get$/);
        assert.ok(lookups.length >= 1, `${route.method} ${route.path} looks its record up`);
        assert.ok(withRecord[0]!.getStart() > lookups[0]!.getStart(), `${route.method} ${route.path}: authorize sees the looked-up record`);
      }
      checked++;
    }
  }
  assert.ok(checked >= 30, `${checked} routes checked`);
});

test("every route validates its path parameters and query with a zod schema before using them", () => {
  for (const file of sources) {
    for (const route of routes(file)) {
      const text = route.body.getText();
      if (route.path.includes("/:id")) assert.match(text, /parseParams\(\w+IdParams, request\.params\)/, `${route.method} ${route.path}`);
      if (/request\.query/.test(text)) assert.match(text, /parseParams\(\w+ListQuery, request\.query\)/, `${route.method} ${route.path}`);
      if (/request\.body/.test(text)) assert.match(text, /parseBody\(\w+, request\.body/, `${route.method} ${route.path}`);
      assert.doesNotMatch(text, /row_id/, `${route.method} ${route.path} never names row_id`);
    }
  }
});

test("views are built field by field: no spread of stored values into a response", () => {
  for (const file of sources) {
    for (const fn of file.getFunctions().filter((f) => /^to[A-Z]/.test(f.getName() ?? ""))) {
      const returned = fn.getDescendantsOfKind(SyntaxKind.ReturnStatement)[0]?.getExpression();
      assert.ok(returned && Node.isObjectLiteralExpression(returned), `${fn.getName()} returns an object literal`);
      assert.equal(returned.getDescendantsOfKind(SyntaxKind.SpreadAssignment).length, 0, `${fn.getName()} in ${file.getBaseName()} spreads nothing`);
    }
  }
});
