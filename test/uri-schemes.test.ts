// `format: uri` accepts http and https by default and the schemes a definition lists with
// `schemes` (issue 14, point 5): through the generated validators and the OpenAPI document.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";
import { canon, workspace } from "./support/cli.ts";

test("schemes: [https, mailto] accepts those schemes only, and the document says so", async () => {
  const dir = workspace("uri-schemes", "test/fixtures/openapi");
  const run = canon(["generate"], dir);
  assert.equal(run.code, 0, run.stderr);
  const { authorCreate } = (await import(pathToFileURL(path.join(dir, "generated/v1/authors/validators.ts")).href)) as {
    authorCreate: { safeParse(value: unknown): { success: boolean; error?: { issues: Array<{ message: string }> } } };
  };
  for (const contact of ["https://example.com/me", "mailto:ann@example.com"]) {
    assert.equal(authorCreate.safeParse({ name: "Ann", contact }).success, true, contact);
  }
  for (const contact of ["http://example.com/", "javascript:alert(1)", "data:text/plain,x", "ftp://example.com/"]) {
    const parsed = authorCreate.safeParse({ name: "Ann", contact });
    assert.equal(parsed.success, false, contact);
    assert.equal(parsed.error!.issues[0]!.message, "must be a URL with scheme https or mailto");
  }
  const document = JSON.parse(readFileSync(path.join(dir, "generated/v1/openapi.json"), "utf8"));
  const contact = document.components.schemas.Author.properties.contact;
  assert.deepEqual(contact, { type: "string", format: "uri", description: "A URL with scheme https or mailto." });
});
