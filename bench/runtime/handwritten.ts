// The hand-written baseline: what a developer would write by hand for the same two endpoints
// with Fastify 5 and zod, doing the same work as the generated routes (a zod-validated UUID,
// the same in-memory store, the same JSON, an HMAC-signed cursor) and none of the conventions
// (no authentication, request id, rate limiter, ETag or deprecation headers).
import Fastify, { type FastifyInstance } from "fastify";
import { z } from "zod";
import { badRequest, decodeCursor, encodeCursor } from "./baseline.ts";
import type { StoredRecord } from "../../runtime/store.ts";
import { seededStore } from "./seed.ts";

interface ProductValues {
  sku: string;
  name: string;
  description?: string;
  price_cents: number;
  category: string;
  tags: string[];
  dimensions?: { width_mm: number; height_mm: number };
  homepage?: string | null;
}

function toProduct(record: StoredRecord): object {
  const v = record.values as unknown as ProductValues;
  return {
    id: record.id,
    sku: v.sku,
    name: v.name,
    description: v.description,
    price_cents: v.price_cents,
    category: v.category,
    tags: v.tags,
    dimensions: v.dimensions,
    homepage: v.homepage,
    created_at: record.created_at,
    updated_at: record.updated_at,
  };
}

const idParams = z.object({ id: z.uuid() });
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(1024).optional(),
  q: z.string().max(200).optional(),
  category: z.enum(["books", "games", "tools", "other"]).optional(),
});

export async function buildHandwritten(): Promise<FastifyInstance> {
  const store = await seededStore();
  const app = Fastify({ logger: false });

  for (const version of ["v1", "v2"]) {
    app.get(`/${version}/products/:id`, async (request, reply) => {
      const params = idParams.safeParse(request.params);
      if (!params.success) return reply.code(400).send(badRequest("id", "must be a valid UUID"));
      const record = await store.get("products", params.data.id.toLowerCase());
      if (!record)
        return reply.code(404).send({ error: { code: "NOT_FOUND", message: "No product has this id." } });
      return toProduct(record);
    });

    app.get(`/${version}/products`, async (request, reply) => {
      const query = listQuery.safeParse(request.query);
      if (!query.success)
        return reply
          .code(400)
          .send(badRequest(String(query.error.issues[0]?.path[0] ?? "query"), "is not valid"));
      const { limit, cursor, q, category } = query.data;
      let after: string | undefined;
      if (cursor !== undefined) {
        const decoded = decodeCursor(cursor);
        if (decoded === null)
          return reply.code(400).send(badRequest("cursor", "is not a cursor of this list"));
        after = decoded;
      }
      const text = q?.trim();
      const { records, hasMore } = await store.list("products", {
        where: category ? { category } : {},
        ...(text ? { search: { fields: ["name", "description"], text } } : {}),
        limit,
        ...(after === undefined ? {} : { after }),
      });
      const last = records[records.length - 1];
      return {
        data: records.map(toProduct),
        pagination: {
          next_cursor: hasMore && last ? encodeCursor(last.id) : null,
          has_more: hasMore && last !== undefined,
        },
      };
    });
  }
  return app;
}
