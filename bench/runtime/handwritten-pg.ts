// The hand-written baseline over PostgreSQL: what a developer would write by hand for the same
// endpoints with Fastify 5, zod and `pg`, over the very tables the generated migrations
// create (seeded with the same products): named statements (prepared once per connection), the
// same pool size as the generated store, a zod-validated UUID, the same JSON, an HMAC-signed
// cursor, and none of the conventions (no authentication, request id, rate limiter, ETag).
import Fastify, { type FastifyInstance } from "fastify";
import pg from "pg";
import { z } from "zod";
import { badRequest, decodeCursor, encodeCursor } from "./baseline.ts";

const COLUMNS =
  "id, sku, name, description, price_cents, category, tags, dimensions, homepage, created_at, updated_at";
const BY_ID = { name: "product_by_id", text: `select ${COLUMNS} from products where id = $1` };
const FIRST_PAGE = {
  name: "products_first_page",
  text: `select ${COLUMNS} from products order by id limit $1`,
};
const NEXT_PAGE = {
  name: "products_next_page",
  text: `select ${COLUMNS} from products where id > $1 order by id limit $2`,
};

// Issue 24 point 6: `?category[in]=…&sort=-price_cents`, a keyset over (price_cents, id) as a
// developer would write it for that one list, over the same (price_cents, id) index.
const SORTED_FIRST = {
  name: "products_sorted_first",
  text: `select ${COLUMNS} from products where category = any($1::text[]) order by price_cents desc, id desc limit $2`,
};
const SORTED_NEXT = {
  name: "products_sorted_next",
  text: `select ${COLUMNS} from products where category = any($1::text[]) and (price_cents, id) < ($2, $3) order by price_cents desc, id desc limit $4`,
};
// Issue 24 point 6: `GET /v2/users/{id}/orders`, a keyset over (user_id, id) as a developer would
// write it, over the same (user_id, id) index; the user is looked up only when the page is empty
// (to answer 404 for an unknown user).
const ORDER_COLUMNS =
  "id, user_id, code, status, total_cents, currency, note, placed_at, gift_wrap, amount_due_cents, created_at, updated_at";
const ORDERS_FIRST = {
  name: "orders_of_user_first",
  text: `select ${ORDER_COLUMNS} from orders where user_id = $1 order by id limit $2`,
};
const ORDERS_NEXT = {
  name: "orders_of_user_next",
  text: `select ${ORDER_COLUMNS} from orders where user_id = $1 and id > $2 order by id limit $3`,
};
const USER_EXISTS = { name: "user_exists", text: "select 1 from users where id = $1" };

interface OrderRow {
  id: string;
  user_id: string;
  code: string;
  status: string;
  total_cents: string;
  currency: string;
  note: string | null;
  placed_at: string | null;
  gift_wrap: boolean;
  amount_due_cents: string;
  created_at: Date;
  updated_at: Date;
}

function toOrder(row: OrderRow): object {
  return {
    id: row.id,
    user_id: row.user_id,
    code: row.code,
    status: row.status,
    total_cents: Number(row.total_cents),
    currency: row.currency,
    note: row.note ?? undefined,
    placed_at: row.placed_at ?? undefined,
    gift_wrap: row.gift_wrap,
    amount_due_cents: Number(row.amount_due_cents),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const orderListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(4096).optional(),
});

const CATEGORIES = new Set(["books", "games", "tools", "other"]);

interface ProductRow {
  id: string;
  sku: string;
  name: string;
  description: string | null;
  price_cents: string;
  category: string;
  tags: string[];
  dimensions: { width_mm: number; height_mm: number } | null;
  homepage: string | null;
  created_at: Date;
  updated_at: Date;
}

function toProduct(row: ProductRow): object {
  return {
    id: row.id,
    sku: row.sku,
    name: row.name,
    description: row.description ?? undefined,
    price_cents: Number(row.price_cents),
    category: row.category,
    tags: row.tags,
    dimensions: row.dimensions ?? undefined,
    homepage: row.homepage,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const idParams = z.object({ id: z.uuid() });
const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(4096).optional(),
  "category[in]": z
    .string()
    .transform((text) => text.split(","))
    .refine((values) => values.length <= 100 && values.every((v) => CATEGORIES.has(v)))
    .optional(),
  sort: z.literal("-price_cents").optional(),
});

/** `url` is a postgres:// URL; its `schema` parameter names the schema of the tables. */
export async function buildHandwrittenPg(url: string, poolSize: number): Promise<FastifyInstance> {
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

  app.get("/v2/products/:id", async (request, reply) => {
    const params = idParams.safeParse(request.params);
    if (!params.success) return reply.code(400).send(badRequest("id", "must be a valid UUID"));
    const { rows } = await pool.query<ProductRow>({ ...BY_ID, values: [params.data.id] });
    if (!rows[0])
      return reply.code(404).send({ error: { code: "NOT_FOUND", message: "No product has this id." } });
    return toProduct(rows[0]);
  });

  app.get("/v2/products", async (request, reply) => {
    const query = listQuery.safeParse(request.query);
    if (!query.success)
      return reply
        .code(400)
        .send(badRequest(String(query.error.issues[0]?.path[0] ?? "query"), "is not valid"));
    const { limit, cursor } = query.data;
    const categories = query.data["category[in]"];
    if (categories && query.data.sort) {
      let position: [number, string] | null = null;
      if (cursor !== undefined) {
        const decoded = decodeCursor(cursor);
        position = decoded === null ? null : (JSON.parse(decoded) as [number, string]);
        if (position === null)
          return reply.code(400).send(badRequest("cursor", "is not a cursor of this list"));
      }
      const { rows } = await pool.query<ProductRow>(
        position === null
          ? { ...SORTED_FIRST, values: [categories, limit + 1] }
          : { ...SORTED_NEXT, values: [categories, position[0], position[1], limit + 1] },
      );
      const hasMore = rows.length > limit;
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        data: page.map(toProduct),
        pagination: {
          next_cursor:
            hasMore && last ? encodeCursor(JSON.stringify([Number(last.price_cents), last.id])) : null,
          has_more: hasMore,
        },
      };
    }
    let after: string | null = null;
    if (cursor !== undefined) {
      after = decodeCursor(cursor);
      if (after === null) return reply.code(400).send(badRequest("cursor", "is not a cursor of this list"));
    }
    const { rows } = await pool.query<ProductRow>(
      after === null ? { ...FIRST_PAGE, values: [limit + 1] } : { ...NEXT_PAGE, values: [after, limit + 1] },
    );
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toProduct),
      pagination: { next_cursor: hasMore && last ? encodeCursor(last.id) : null, has_more: hasMore },
    };
  });
  app.get("/v2/users/:id/orders", async (request, reply) => {
    const params = idParams.safeParse(request.params);
    if (!params.success) return reply.code(400).send(badRequest("id", "must be a valid UUID"));
    const query = orderListQuery.safeParse(request.query);
    if (!query.success)
      return reply
        .code(400)
        .send(badRequest(String(query.error.issues[0]?.path[0] ?? "query"), "is not valid"));
    const { limit, cursor } = query.data;
    const user = params.data.id;
    let after: string | null = null;
    if (cursor !== undefined) {
      after = decodeCursor(cursor);
      if (after === null) return reply.code(400).send(badRequest("cursor", "is not a cursor of this list"));
    }
    const { rows } = await pool.query<OrderRow>(
      after === null
        ? { ...ORDERS_FIRST, values: [user, limit + 1] }
        : { ...ORDERS_NEXT, values: [user, after, limit + 1] },
    );
    if (!rows.length && !(await pool.query({ ...USER_EXISTS, values: [user] })).rows.length)
      return reply.code(404).send({ error: { code: "NOT_FOUND", message: "No user has this id." } });
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(toOrder),
      pagination: { next_cursor: hasMore && last ? encodeCursor(last.id) : null, has_more: hasMore },
    };
  });
  return app;
}
