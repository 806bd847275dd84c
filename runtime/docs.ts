/**
 * `/vN/openapi.json` and the API reference page `/vN/docs`, rendered from the version's
 * document by Swagger UI (@fastify/swagger-ui), whose assets are served from this process:
 * no CDN.
 */
import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance, FastifyRequest } from "fastify";

/**
 * A version's committed OpenAPI document, parsed when it is first used (its first request), not
 * when the app is built: the documents are large (megabytes for a hundred resources), and
 * `canon dev` builds an app on every save. Swagger wants the object at registration, so this
 * is an object that holds the file's bytes from its call, parses them on its first inspection and
 * from then on is that document.
 */
export function readDocument(url: URL): Record<string, unknown> {
  const document: Record<string, unknown> = {};
  // Its bytes now, parsed when first asked: an app `canon dev` keeps serving after a save whose
  // code did not start answers with its own document, not the one that save wrote.
  let bytes: Buffer | null = readFileSync(url);
  const loaded = () => {
    if (bytes !== null) {
      Object.assign(document, JSON.parse(bytes.toString("utf8")) as Record<string, unknown>);
      bytes = null;
    }
    return document;
  };
  return new Proxy(document, {
    get: (_target, key) => Reflect.get(loaded(), key),
    has: (_target, key) => Reflect.has(loaded(), key),
    ownKeys: () => Reflect.ownKeys(loaded()),
    getOwnPropertyDescriptor: (_target, key) => Reflect.getOwnPropertyDescriptor(loaded(), key),
  });
}

export async function registerDocs(
  app: FastifyInstance,
  version: string,
  document: Record<string, unknown>,
): Promise<void> {
  // Serialised on the first request, as the document is read (readDocument).
  let text: string | undefined;
  app.get(`/${version}/openapi.json`, { schema: { hide: true } }, async (_request, reply) =>
    reply.type("application/json; charset=utf-8").send((text ??= JSON.stringify(document))),
  );
  await app.register(swagger, { mode: "static", specification: { document: document as never } });
  await app.register(swaggerUi, {
    routePrefix: `/${version}/docs`,
    uiConfig: { docExpansion: "list", deepLinking: true },
    staticCSP: true,
    transformSpecification: (spec, request) => withServingOrigin(spec, request),
  });
}

/** A well-formed Host header (name or address, optional port): nothing else is echoed back. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The page's copy of the document lists the origin that served it first among its servers,
 * so "Try it out" calls this service; `base_url` stays listed after it. The document served
 * at `/vN/openapi.json` is the committed one, unchanged.
 */
function withServingOrigin(
  spec: Readonly<Record<string, unknown>>,
  request: FastifyRequest,
): Record<string, unknown> {
  const host = request.headers.host;
  if (!host || !HOST.test(host)) return { ...spec };
  const origin = `${request.protocol}://${host}`;
  const servers = Array.isArray(spec.servers) ? (spec.servers as Array<{ url?: unknown }>) : [];
  return {
    ...spec,
    servers: [
      { url: origin, description: "this server" },
      ...servers.filter((server) => server.url !== origin),
    ],
  };
}
