import { PGlite, protocol, parse } from "@electric-sql/pglite";
const db = new PGlite("memory://");
await db.waitReady;
await db.exec(`create table t (row_id bigint generated always as identity primary key, id uuid not null unique, name text, created_at timestamptz not null default now(), n bigint, tags jsonb);
insert into t (id, name, n, tags) select gen_random_uuid(), 'name ' || g, g, '["a","b"]' from generate_series(1,1000) g;`);
const ids = (await db.query("select id from t")).rows.map(r => r.id);
const sel = `select "id", to_char("created_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "created_at", "name", "n", "tags"::text as "tags" from t where "id" = $1`;
async function bench(label, fn, n = 5000) {
  for (let i = 0; i < 500; i++) await fn(ids[i % 1000]);
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn(ids[i % 1000]);
  console.log(label, ((performance.now() - t) / n * 1000).toFixed(1), "µs");
}
await bench("query()", (id) => db.query(sel, [id]));
// named
const S = protocol.serialize;
const concat = (...bufs) => { const out = new Uint8Array(bufs.reduce((a, b) => a + b.length, 0)); let o = 0; for (const b of bufs) { out.set(b, o); o += b.length; } return out; };
await db.execProtocol(concat(S.parse({ name: "s1", text: sel, types: [] }), S.sync()));
await bench("named execProtocol", async (id) => {
  const r = await db.execProtocol(concat(S.bind({ statement: "s1", values: [id] }), S.describe({ type: "P" }), S.execute({}), S.sync()), { syncToFs: false });
  return parse.parseResults(r.messages, db.parsers);
});
await bench("unnamed one-buffer", async (id) => {
  const r = await db.execProtocol(concat(S.parse({ text: sel, types: [] }), S.bind({ values: [id] }), S.describe({ type: "P" }), S.execute({}), S.sync()), { syncToFs: false });
  return parse.parseResults(r.messages, db.parsers);
});
const r = await db.execProtocol(concat(S.bind({ statement: "s1", values: [ids[3]] }), S.describe({ type: "P" }), S.execute({}), S.sync()));
console.log(parse.parseResults(r.messages, db.parsers));
