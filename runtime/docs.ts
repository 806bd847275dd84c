/**
 * `/vN/openapi.json` and the API reference page `/vN/docs`, rendered from the version's
 * document by Swagger UI (@fastify/swagger-ui), whose assets are served from this process:
 * no CDN.
 */
import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";

/** Reads a version's committed OpenAPI document. */
export function readDocument(url: URL): Record<string, unknown> {
  return JSON.parse(readFileSync(url, "utf8")) as Record<string, unknown>;
}

export async function registerDocs(
  app: FastifyInstance,
  version: string,
  document: Record<string, unknown>,
): Promise<void> {
  const text = JSON.stringify(document);
  app.get(`/${version}/openapi.json`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type("application/json; charset=utf-8").send(text),
  );
  await app.register(swagger, { mode: "static", specification: { document: document as never } });
  await app.register(swaggerUi, {
    routePrefix: `/${version}/docs`,
    uiConfig: { docExpansion: "list", deepLinking: true },
    staticCSP: true,
  });
}
