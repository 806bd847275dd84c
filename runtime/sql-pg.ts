/**
 * The `pg` driver: a pool of connections to a PostgreSQL server. A named statement goes as
 * `{ name, text, values }`: `pg` prepares it on a connection the first time that connection
 * runs it, and from then on only binds and executes it, in the same single round trip.
 */
import { SESSION_SETTINGS, type Row, type SqlDriver, type SqlQueryable } from "./sql-driver.ts";

type PgQuery = string | { name: string; text: string; values: unknown[] };
interface PgResult {
  rows: Row[];
}
interface PgClient {
  query(query: PgQuery, params?: unknown[]): Promise<PgResult>;
  release(error?: Error | boolean): void;
  on(event: "error", listener: (error: Error) => void): void;
  off(event: "error", listener: (error: Error) => void): void;
}
interface PgPool {
  query(query: PgQuery, params?: unknown[]): Promise<PgResult>;
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): void;
}
type PgPoolConstructor = new (config: { connectionString: string; max: number; options?: string }) => PgPool;

export interface PostgresOptions {
  schema: string | undefined;
  max: number;
  statementTimeoutMs: number;
}

const rowsOf = (result: PgResult): Row[] => result.rows;

function queryable(target: PgClient | PgPool): SqlQueryable {
  return {
    // `pg` reads the parameters without changing them: they go as they are, not copied.
    query(statement, params = []) {
      const values = params as unknown[];
      return (
        typeof statement === "string"
          ? target.query(statement, values)
          : target.query({ name: statement.name, text: statement.text, values })
      ).then(rowsOf);
    },
    async exec(text) {
      await target.query(text);
    },
  };
}

export async function openPostgres(connectionString: string, options: PostgresOptions): Promise<SqlDriver> {
  const pgModule: string = "pg";
  const pg = (await import(pgModule)) as { default: { Pool: PgPoolConstructor } };
  // Settings travel in the startup message: no statement of their own on any request. A
  // transaction left idle as long as a statement may run is ended: one whose client died (a
  // machine gone without closing its connection) would otherwise hold its locks, and the events
  // feed's horizon (sql-events.ts), until TCP notices, hours later.
  const settings = [
    `-c statement_timeout=${options.statementTimeoutMs}`,
    `-c idle_in_transaction_session_timeout=${options.statementTimeoutMs}`,
    ...Object.entries(SESSION_SETTINGS).map(([name, value]) => `-c ${name}=${value}`),
  ];
  if (options.schema) settings.push(`-c search_path=${options.schema},public`);
  const pool = new pg.default.Pool({ connectionString, max: options.max, options: settings.join(" ") });
  // A connection that breaks while idle is dropped by the pool; the next query opens another.
  pool.on("error", () => {});
  // Fail now, with the server's message, rather than on the first request.
  await pool.query("select 1");
  return {
    kind: "postgres",
    ...queryable(pool),
    async transaction(fn) {
      const client = await pool.connect();
      // The server may end the connection while it is ours (an idle transaction past its
      // timeout, an administrator, a failover): without a listener that is an uncaught error
      // that ends the process. The transaction's next statement fails instead, with the server's reason.
      let lost: Error | undefined;
      const broken = (error: Error) => {
        lost = error;
      };
      client.on("error", broken);
      try {
        await client.query("begin");
        const result = await fn(queryable(client));
        await client.query("commit");
        client.release();
        return result;
      } catch (error) {
        try {
          await client.query("rollback");
          client.release();
        } catch {
          client.release(true);
        }
        throw lost ?? error;
      } finally {
        client.off("error", broken);
      }
    },
    close: () => pool.end(),
  };
}
