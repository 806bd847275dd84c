/**
 * The `pg` driver: a pool of connections to a PostgreSQL server. A named statement runs as a
 * `StatementRun` (below): prepared on a connection the first time that connection runs it, and
 * from then on only bound and executed, in the same single round trip.
 */
import { type Client, ClientGoneError, currentClient, isGone, onGone } from "./client-scope.ts";
import {
  SESSION_SETTINGS,
  type Row,
  type SqlDriver,
  type SqlQueryable,
  type Statement,
} from "./sql-types.ts";

interface PgResult {
  rows: Row[];
}
/** What `pg` hands a submittable (its `Connection`): the messages of the extended protocol. */
interface PgConnection {
  parsedStatements: Record<string, string | undefined>;
  /** Statements whose Parse is on its way, where `pg` keeps them (its recent versions). */
  submittedNamedStatements?: Record<string, string | undefined>;
  stream: { cork(): void; uncork(): void };
  parse(message: { name: string; text: string }): void;
  bind(message: {
    statement: string;
    values: readonly unknown[];
    valueMapper: (value: unknown) => unknown;
  }): void;
  describe(message: { type: "P"; name: string }): void;
  execute(message: object): void;
  sync(): void;
  sendCopyFail(message: string): void;
}
interface PgField {
  name: string;
  dataTypeID: number;
}
interface PgClient {
  /** The server process and key a cancel request names (never logged). */
  processID: number | null;
  secretKey: number | null;
  /** The client's wire (its socket): destroyed when the server stops answering. */
  connection?: { stream?: { destroy(error?: Error): void } };
  query(query: string, params?: unknown[]): Promise<PgResult>;
  query(run: StatementRun, values: undefined, callback: (error: Error | null, rows?: Row[]) => void): void;
  release(error?: Error | boolean): void;
  on(event: "error", listener: (error: Error) => void): void;
  off(event: "error", listener: (error: Error) => void): void;
}
interface PgPool {
  query(query: string, params?: unknown[]): Promise<PgResult>;
  query(run: StatementRun): Promise<Row[]>;
  connect(): Promise<PgClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): void;
}
/** A `pg.Client` used only to send a cancel request: its connection and where it connects. */
interface PgCanceller {
  host: string;
  port: number;
  connection: {
    connect(port: number | string, host?: string): void;
    cancel(processID: number, secretKey: number): void;
    on(event: "connect", listener: () => void): void;
    once(event: "end" | "error", listener: () => void): void;
    stream?: { destroy(): void };
  };
}
interface PgModule {
  Client: new (config: { connectionString: string }) => PgCanceller;
  Pool: new (config: {
    connectionString: string;
    max: number;
    options?: string;
    connectionTimeoutMillis?: number;
  }) => PgPool;
  types: { getTypeParser(oid: number, format: "text"): (text: string) => unknown };
  utils: { prepareValue(value: unknown): unknown };
}

export interface PostgresOptions {
  schema: string | undefined;
  max: number;
  statementTimeoutMs: number;
  /** Longest wait for a connection of the pool (all busy) or a new one: past it, the request answers 500 with Retry-After. */
  connectionTimeoutMs: number;
}

/** Makes a row object from a DataRow's texts (SQL NULL is null), each value through its type's parser. */
type RowMaker = (texts: ReadonlyArray<string | null>) => Row;

/**
 * The row maker of a result shape, made once per shape and pool (every connection's run of a
 * statement shares it): an object literal with the columns as `pg` names them (the last of two
 * equal names wins, as in `pg`), each value through `pg`'s own parser of its type.
 */
function rowMaker(fields: readonly PgField[], statements: PgStatements): RowMaker {
  const shape = JSON.stringify(fields.map((field) => [field.name, field.dataTypeID]));
  let maker = statements.makers.get(shape);
  if (!maker) {
    maker = compileRowMaker(fields, statements.pg);
    statements.makers.set(shape, maker);
  }
  return maker;
}

function compileRowMaker(fields: readonly PgField[], pg: PgModule): RowMaker {
  const parsers = fields.map((field) => pg.types.getTypeParser(field.dataTypeID, "text"));
  const entries = fields.map((field, i) => {
    const key = JSON.stringify(field.name);
    // A computed key is always an own property, even `__proto__`.
    return `${field.name === "__proto__" ? `[${key}]` : key}: t[${i}] === null ? null : p[${i}](t[${i}])`;
  });
  const make = new Function("p", `return (t) => ({ ${entries.join(", ")} });`) as (
    p: Array<(text: string) => unknown>,
  ) => RowMaker;
  return make(parsers);
}

/**
 * One run of a named statement, as a `pg` submittable (the interface `pg` documents for custom
 * queries, as pg-cursor uses it). It does what `pg`'s own query does for a named statement
 * (Parse once per connection, under `pg`'s own bookkeeping of which statements a connection has;
 * then Bind, Execute, Sync), with less per request: the statement's rows have one shape, so
 * once a connection has described it (`Describe`, the columns' names and types, sent with the
 * first run after its Parse), that connection only binds and executes it, and each row is made
 * by the shape's row maker, instead of `pg` describing the result and building its row parsers
 * again on every query. Values are sent as `pg` sends them (its `prepareValue`) and read by the
 * parsers `pg` would use.
 */
class StatementRun {
  readonly name: string;
  readonly text: string;
  readonly values: readonly unknown[];
  callback: ((error: Error | null, rows?: Row[]) => void) | undefined = undefined;
  private readonly driver: PgStatements;
  private readonly rows: Row[] = [];
  /** The row makers of the statements the connection running this one has described. */
  private shapes: Map<string, RowMaker> | undefined = undefined;
  private make: RowMaker | undefined = undefined;
  private described = false;
  private failed: Error | undefined = undefined;

  constructor(driver: PgStatements, statement: Statement, values: readonly unknown[]) {
    this.driver = driver;
    // After `forgetStatements`, each statement is prepared again under a name of its own.
    this.name = driver.generation ? `${statement.name}_${driver.generation}` : statement.name;
    this.text = statement.text;
    this.values = values;
  }

  submit(connection: PgConnection): Error | null {
    const previous =
      connection.parsedStatements[this.name] ?? connection.submittedNamedStatements?.[this.name];
    if (previous !== undefined && previous !== this.text)
      return new Error(
        `Prepared statements must be unique - '${this.name}' was used for a different statement`,
      );
    let shapes = this.driver.shapes.get(connection);
    if (!shapes) this.driver.shapes.set(connection, (shapes = new Map()));
    this.shapes = shapes;
    connection.stream.cork();
    try {
      if (previous === undefined) {
        // Prepared anew: described anew, with this run.
        this.driver.prepared = true;
        shapes.delete(this.name);
        connection.parse({ name: this.name, text: this.text });
        if (connection.submittedNamedStatements) connection.submittedNamedStatements[this.name] = this.text;
      }
      this.make = shapes.get(this.name);
      connection.bind({ statement: this.name, values: this.values, valueMapper: this.driver.prepareValue });
      if (!this.make) {
        connection.describe({ type: "P", name: "" });
        this.described = true;
      }
      connection.execute({});
      connection.sync();
    } catch (error) {
      // A value `pg` cannot send: no Bind went (a first run's Parse may have, which `pg` records
      // when the server answers it); the Sync is answered with ReadyForQuery.
      this.failed = error as Error;
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return null;
  }

  handleRowDescription(message: { fields: PgField[] }): void {
    this.make = rowMaker(message.fields, this.driver);
    if (this.described) this.shapes!.set(this.name, this.make);
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    if (this.failed) return;
    try {
      this.rows.push(this.make!(message.fields));
    } catch (error) {
      this.failed = error as Error;
    }
  }

  handleCommandComplete(): void {
    // A statement that returns no rows (NoData to its Describe): its shape has no columns.
    if (this.described && !this.make) {
      this.make = rowMaker([], this.driver);
      this.shapes!.set(this.name, this.make);
    }
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: PgConnection): void {
    connection.sendCopyFail("No source stream defined");
  }

  handleCopyData(): void {}

  handleError(error: Error): void {
    this.callback?.(this.failed ?? error);
  }

  handleReadyForQuery(): void {
    if (this.failed) this.callback?.(this.failed);
    else this.callback?.(null, this.rows);
  }
}

/** What every `StatementRun` of one pool shares: by connection, the row maker of each statement it described; `pg` itself. */
interface PgStatements {
  /** How many times the statements were forgotten (`forgetStatements`): part of each statement's name. */
  generation: number;
  /** Whether a statement was prepared under the current generation (else forgetting changes nothing). */
  prepared: boolean;
  readonly shapes: WeakMap<PgConnection, Map<string, RowMaker>>;
  /** The row maker of each result shape (columns' names and types). */
  readonly makers: Map<string, RowMaker>;
  readonly pg: PgModule;
  readonly prepareValue: (value: unknown) => unknown;
}

const rowsOf = (result: PgResult): Row[] => result.rows;

/**
 * Milliseconds past `statement_timeout` after which a statement the server has not answered is
 * taken for lost: the server cancels its own statements at `statement_timeout`, so silence beyond
 * it means the network (or the server's host) stopped answering, which `statement_timeout`
 * cannot bound. The connection is then destroyed: its statement fails as a connection failure
 * (500 with Retry-After) and the pool opens a new connection for the next one.
 */
export const SILENCE_GRACE_MS = 2000;

/** The message a statement fails with when its connection was destroyed for silence (a connection failure). */
export const silenceMessage = (ms: number) =>
  `Connection terminated: the database did not answer within ${ms} ms`;

/** Runs one statement on `connection`, destroying the connection if the server is silent past `deadlineMs`. */
function bounded<T>(connection: PgClient, deadlineMs: number, work: () => Promise<T>): Promise<T> {
  const timer = setTimeout(() => {
    connection.connection?.stream?.destroy(new Error(silenceMessage(deadlineMs)));
  }, deadlineMs);
  return work().finally(() => clearTimeout(timer));
}

/**
 * The pool's queries: a client is taken for each and given back when it has answered; in a
 * request, through `Cancellation`: a client that left while the query waited for a connection
 * never runs it, one that leaves while it runs cancels it. While it is taken, the client's
 * `error` events (the server or the network cut the connection) are listened to: the statement
 * fails with them and the connection leaves the pool (without a listener such an event would end
 * the process). A statement the server does not answer within `deadlineMs` destroys its connection.
 */
function poolQueryable(
  pool: PgPool,
  statements: PgStatements,
  cancellation: Cancellation,
  deadlineMs: number,
): SqlQueryable {
  async function run<T>(client: Client | undefined, work: (connection: PgClient) => Promise<T>): Promise<T> {
    const connection = client === undefined ? await pool.connect() : await cancellation.acquire(client);
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    connection.on("error", onError);
    try {
      const task = () => bounded(connection, deadlineMs, () => work(connection));
      return client === undefined ? await task() : await cancellation.watch(client, connection, task);
    } finally {
      connection.off("error", onError);
      connection.release(broken);
    }
  }
  return {
    query(statement, params = []) {
      return run(currentClient(), (connection) =>
        typeof statement === "string"
          ? connection.query(statement, params as unknown[]).then(rowsOf)
          : submitted(connection, new StatementRun(statements, statement, params)),
      );
    },
    async exec(text) {
      await run(currentClient(), (connection) => connection.query(text));
    },
  };
}

function submitted(client: PgClient, run: StatementRun): Promise<Row[]> {
  return new Promise((resolve, reject) =>
    client.query(run, undefined, (error, rows) => (error ? reject(error) : resolve(rows!))),
  );
}

/**
 * Work of a request whose client left is stopped. Waiting for a pool connection, the request
 * gives up at once (the connection, when it comes, goes straight back); running, its statement
 * is cancelled with PostgreSQL's cancel request (a connection of its own that names the
 * backend's process and secret key, so it works with every pool connection busy), and the
 * connection goes back to the pool only once the cancel request is done, so that a late cancel
 * never reaches another request's statement. A cancelled statement fails (57014) and its
 * connection stays healthy; a transaction rolls back as after any failure.
 */
interface Cancellation {
  acquire(client: Client): Promise<PgClient>;
  watch<T>(client: Client, connection: PgClient, work: () => Promise<T>): Promise<T>;
}

function cancellation(pool: PgPool, pg: PgModule, connectionString: string): Cancellation {
  return {
    acquire(client) {
      if (isGone(client)) return Promise.reject(new ClientGoneError());
      return new Promise((resolve, reject) => {
        let left = false;
        const stop = onGone(client, () => {
          left = true;
          reject(new ClientGoneError());
        });
        pool.connect().then(
          (connection) => {
            stop();
            if (left) connection.release();
            else resolve(connection);
          },
          (error: unknown) => {
            stop();
            reject(error as Error);
          },
        );
      });
    },
    async watch(client, connection, work) {
      let cancelling: Promise<void> | undefined;
      const stop = onGone(client, () => {
        cancelling = sendCancel(pg, connectionString, connection);
      });
      try {
        return await work();
      } catch (error) {
        throw cancelling ? new ClientGoneError(error) : error;
      } finally {
        stop();
        if (cancelling) await cancelling;
      }
    },
  };
}

/**
 * PostgreSQL's cancel request for the statement `connection` runs, on a connection of its own
 * (as `pg`'s `Client.cancel` sends it); resolves when the server has taken it (it closes that
 * connection), or after 2 s. The process id and key are never logged.
 */
function sendCancel(pg: PgModule, connectionString: string, connection: PgClient): Promise<void> {
  const { processID, secretKey } = connection;
  if (processID === null || secretKey === null) return Promise.resolve();
  return new Promise((resolve) => {
    const canceller = new pg.Client({ connectionString });
    const wire = canceller.connection;
    const done = () => {
      clearTimeout(timer);
      wire.stream?.destroy();
      resolve();
    };
    const timer = setTimeout(done, 2000);
    timer.unref();
    wire.once("end", done);
    wire.once("error", done);
    wire.on("connect", () => wire.cancel(processID, secretKey));
    if (canceller.host.startsWith("/")) wire.connect(`${canceller.host}/.s.PGSQL.${canceller.port}`);
    else wire.connect(canceller.port, canceller.host);
  });
}

/** A client's queries (a transaction's); with `watched`, none once that request's client has left. */
function clientQueryable(
  client: PgClient,
  statements: PgStatements,
  deadlineMs: number,
  watched?: Client,
): SqlQueryable {
  return {
    // `pg` reads the parameters without changing them: they go as they are, not copied.
    query(statement, params = []) {
      // A client gone between two statements: the transaction stops (a cancel reaches only a running one).
      if (watched !== undefined && isGone(watched)) return Promise.reject(new ClientGoneError());
      return bounded(client, deadlineMs, () =>
        typeof statement === "string"
          ? client.query(statement, params as unknown[]).then(rowsOf)
          : submitted(client, new StatementRun(statements, statement, params)),
      );
    },
    async exec(text) {
      await bounded(client, deadlineMs, () => client.query(text));
    },
  };
}

export async function openPostgres(connectionString: string, options: PostgresOptions): Promise<SqlDriver> {
  const pgModule: string = "pg";
  const pg = ((await import(pgModule)) as { default: PgModule }).default;
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
  const pool = new pg.Pool({
    connectionString,
    max: options.max,
    options: settings.join(" "),
    connectionTimeoutMillis: options.connectionTimeoutMs,
  });
  // A connection that breaks while idle is dropped by the pool; the next query opens another.
  pool.on("error", () => {});
  // Fail now, with the server's message, rather than on the first request.
  await pool.query("select 1");
  const statements: PgStatements = {
    generation: 0,
    prepared: false,
    shapes: new WeakMap(),
    makers: new Map(),
    pg,
    prepareValue: pg.utils.prepareValue,
  };
  // `/vN/ready`'s connection, of its own: a pool whose every connection waits (on a lock a
  // table's requests all queue behind, or a slow table) still has a database that answers, and
  // taking every instance out of its balancer then would turn one slow table into the whole API
  // down. Opened on the first ping; a connection the server does not answer is destroyed.
  let probePool: PgPool | undefined;
  const probe = () =>
    (probePool ??= (() => {
      const created = new pg.Pool({
        connectionString,
        max: 1,
        options: settings.join(" "),
        connectionTimeoutMillis: options.connectionTimeoutMs,
      });
      created.on("error", () => {});
      return created;
    })());
  const cancel = cancellation(pool, pg, connectionString);
  const deadlineMs = options.statementTimeoutMs + SILENCE_GRACE_MS;
  return {
    kind: "postgres",
    ...poolQueryable(pool, statements, cancel, deadlineMs),
    async transaction(fn) {
      const watched = currentClient();
      const client = watched ? await cancel.acquire(watched) : await pool.connect();
      // The server may end the connection while it is ours (an idle transaction past its
      // timeout, an administrator, a failover): without a listener that is an uncaught error
      // that ends the process. The transaction's next statement fails instead, with the server's reason.
      let lost: Error | undefined;
      const broken = (error: Error) => {
        lost = error;
      };
      client.on("error", broken);
      const say = (text: string) => bounded(client, deadlineMs, () => client.query(text));
      const work = async () => {
        await say("begin");
        const result = await fn(clientQueryable(client, statements, deadlineMs, watched));
        await say("commit");
        return result;
      };
      try {
        const result = await (watched ? cancel.watch(watched, client, work) : work());
        client.release();
        return result;
      } catch (error) {
        try {
          await say("rollback");
          client.release();
        } catch {
          client.release(true);
        }
        throw lost ?? error;
      } finally {
        client.off("error", broken);
      }
    },
    // Each connection keeps the statements it prepared (a few, in a dev session that retypes
    // columns); the next runs prepare theirs under new names.
    forgetStatements: async () => {
      if (!statements.prepared) return;
      statements.generation += 1;
      statements.prepared = false;
    },
    async ping(timeoutMs) {
      const connection = await probe().connect();
      let broken: Error | undefined;
      const onError = (error: Error) => {
        broken = error;
      };
      connection.on("error", onError);
      try {
        await bounded(connection, timeoutMs, () => connection.query("select 1"));
      } catch (error) {
        broken ??= error as Error;
        throw error;
      } finally {
        connection.off("error", onError);
        connection.release(broken);
      }
    },
    close: async () => {
      await Promise.all([pool.end(), probePool?.end()]);
    },
  };
}
