/**
 * What the SQL store and its two drivers share (sql-driver.ts opens one): a row, a named
 * statement, and the driver interface. The drivers (sql-pg.ts, sql-pglite.ts) import these from
 * here, not from sql-driver.ts, which imports them in turn when a store of their kind opens.
 */

export type Row = Record<string, unknown>;

/**
 * A statement known before any request runs it: prepared once per connection under its name,
 * then only bound and executed. The name is derived from the text (sql-statements.ts), so one
 * name never stands for two texts.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export interface SqlQueryable {
  /** One statement with `$1`-style parameters (a `Statement` is prepared once per connection); the rows it returns. */
  query(statement: string | Statement, params?: readonly unknown[]): Promise<Row[]>;
  /** Statements without parameters, separated by `;` (a migration file). */
  exec(text: string): Promise<void>;
}

export interface SqlDriver extends SqlQueryable {
  readonly kind: "pglite" | "postgres";
  /** Runs `fn` in a transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  /**
   * Forgets every named statement prepared so far: the next run of each prepares it again.
   * `migrate` calls it after it changed the schema: a statement prepared before (the same text,
   * over a column whose type changed) would be refused by PostgreSQL ("cached plan must not
   * change result type"), which `canon dev` meets when a save retypes a column under a store
   * it keeps open.
   */
  forgetStatements?(): Promise<void>;
  /**
   * Whether the database answers, asked outside the pool of the requests (`/vN/ready`): a pool
   * every connection of which waits on a lock one table's requests hold is not a database that
   * does not answer. Rejects when it does not within `timeoutMs`.
   */
  ping?(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Settings of every session, beside `statement_timeout`: timestamps are read as PostgreSQL's
 * ISO text in UTC (sql-codec.ts `isoTimestamp`), whatever the server's own defaults.
 */
export const SESSION_SETTINGS = { TimeZone: "UTC", DateStyle: "ISO" } as const;
