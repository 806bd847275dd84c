// The hand-written baseline of tenant-scoped reads over PostgreSQL (issue 25 point 5): what a
// developer would write by hand for GET /v1/comments/{id} and the cursor list GET /v1/comments of
// the tenancy fixture (test/fixtures/tenancy) with Fastify 5, zod and `pg`, over the very tables
// the generated migrations create: the tenant taken from the bearer token, the tenant condition in
// each named statement (`organization_id = $n`), the list a keyset over the same
// (organization_id, id) index, its HMAC-signed cursor bound to the tenant. None of canon's other
// conventions (request id, rate limiter, ETag).
import Fastify, { type FastifyInstance } from "fastify";
import pg from "pg";
import { z } from "zod";
import { badRequest, decodeCursor, encodeCursor } from "./baseline.ts";

const COLUMNS = "id, ticket_id, organization_id, body, created_at, updated_at";
const BY_ID = {
  name: "comment_by_id",
  text: `select ${COLUMNS} from comments where id = $1 and organization_id = $2`,
};
const FIRST_PAGE = {
  name: "comments_first_page",
  text: `select ${COLUMNS} from comments where organization_id = $1 order by id limit $2`,
};
const NEXT_PAGE = {
  name: "comments_next_page",
  text: `select ${COLUMNS} from comments where organization_id = $1 and id > $2 order by id limit $3`,
};

interface CommentRow {
  id: string;
  ticket_id: string;
  organization_id: string;
  body: string;
  created_at: Date;
  updated_at: Date;
}

function toComment(row: CommentRow): object {
  return {
    id: row.id,
    ticket_id: row.ticket_id,
    organization_id: row.organization_id,
    body: row.body,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const TOKEN = /^Bearer dev-reader\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
const idParams = z.object({ id: z.uuid() });
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(4096).optional(),
});
const unauthorized = { error: { code: "UNAUTHORIZED", message: "A tenant's bearer token is required." } };

/** `url` is a postgres:// URL; its `schema` parameter names the schema of the tables. */
export async function buildHandwrittenTenancyPg(url: string, poolSize: number): Promise<FastifyInstance> {
  const target = new URL(url);
  const schema = target.searchParams.get("schema");
  target.searchParams.delete("schema");
  const pool = new pg.Pool({
    connectionString: target.toString(),
    max: poolSize,
    ...(schema ? { options: `-c search_path=${schema},public` } : {}),
  });
  const app = Fastify({ logger: false });
  app.addHook("onClose", () => pool.end());
  const tenantOf = (authorization: string | undefined) => TOKEN.exec(authorization ?? "")?.[1];

  app.get("/v1/comments/:id", async (request, reply) => {
    const tenant = tenantOf(request.headers.authorization);
    if (!tenant) return reply.code(401).send(unauthorized);
    const params = idParams.safeParse(request.params);
    if (!params.success) return reply.code(400).send(badRequest("id", "must be a valid UUID"));
    const { rows } = await pool.query<CommentRow>({ ...BY_ID, values: [params.data.id, tenant] });
    if (!rows[0])
      return reply.code(404).send({ error: { code: "NOT_FOUND", message: "No comment has this id." } });
    return toComment(rows[0]);
  });

  app.get("/v1/comments", async (request, reply) => {
    const tenant = tenantOf(request.headers.authorization);
    if (!tenant) return reply.code(401).send(unauthorized);
    const query = listQuery.safeParse(request.query);
    if (!query.success)
      return reply
        .code(400)
        .send(badRequest(String(query.error.issues[0]?.path[0] ?? "query"), "is not valid"));
    const { limit, cursor } = query.data;
    let after: string | null = null;
    if (cursor !== undefined) {
      const decoded = decodeCursor(cursor);
      const position = decoded === null ? null : (JSON.parse(decoded) as [string, string]);
      if (position === null || position[0] !== tenant)
        return reply.code(400).send(badRequest("cursor", "is not a cursor of this list"));
      after = position[1];
    }
    const { rows } = await pool.query<CommentRow>(
      after === null
        ? { ...FIRST_PAGE, values: [tenant, limit + 1] }
        : { ...NEXT_PAGE, values: [tenant, after, limit + 1] },
    );
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toComment),
      pagination: {
        next_cursor: hasMore && last ? encodeCursor(JSON.stringify([tenant, last.id])) : null,
        has_more: hasMore,
      },
    };
  });
  return app;
}
