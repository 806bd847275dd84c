// Writes schema/*.schema.json from the definition format's zod schemas. The test suite fails
// when the committed files differ, so they cannot drift from the validator.
import { writeFileSync } from "node:fs";
import { definitionJsonSchemas } from "../generator/validate/json-schema.ts";

for (const [name, text] of Object.entries(definitionJsonSchemas())) {
  writeFileSync(new URL(`../schema/${name}`, import.meta.url), text);
  console.log(`wrote schema/${name}`);
}
