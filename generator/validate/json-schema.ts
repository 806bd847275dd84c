import { z } from "zod";
import { ApiSchema, ResourceSchema } from "./schema.ts";

/** The JSON Schemas published for editors, made from the same zod schemas that validate definitions. */
export function definitionJsonSchemas(): Record<string, string> {
  const render = (schema: z.ZodType, id: string) =>
    `${JSON.stringify({ ...z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }), $id: id }, null, 2)}\n`;
  return {
    "api.schema.json": render(ApiSchema, "https://canon.dev/schema/api.schema.json"),
    "resource.schema.json": render(ResourceSchema, "https://canon.dev/schema/resource.schema.json"),
  };
}
