/**
 * A Kysely driver for better-sqlite3 with a reader beside the writer. Kysely's own SqliteDriver has one connection
 * behind a mutex, so a read waits for whatever transaction holds it: a 10,000-object import's one transaction made
 * every request that needed the database wait ~2 s (bench/README.md, B8). WAL lets a second connection read the
 * last committed state while a transaction is open; no well-kept library gives Kysely that, hence this file (its
 * statement handling follows Kysely's SqliteDriver).
 *
 * Which connection runs a statement:
 * - in a transaction (begun on a lease): the writer, which the lease holds until it is released;
 * - outside one, a statement that SQLite says writes nothing (`Statement.readonly`): the reader, at once. It sees
 *   every commit made before it runs, since a commit returns only once it is in the WAL;
 * - any other statement: the writer, as soon as no transaction holds it.
 */
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
} from 'kysely';

/** Prepares a statement, from a cache of statements by SQL text. */
export type Prepare = (sql: string) => BetterSqlite3.Statement;

export interface ReaderBesideWriter {
  writer: Prepare;
  reader: Prepare;
  /** Told after each commit of the writer (a transaction's, or a single write's). */
  committed(): void;
  /** Whether the writer is inside a transaction (SQLite ends one by itself on some errors: SQLITE_FULL, I/O). */
  inTransaction(): boolean;
  /** Told of every statement that failed, before its error reaches the caller (it may mark the error). */
  failed(err: unknown): void;
  close(): Promise<void>;
}

function run(statement: BetterSqlite3.Statement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/** First come, first served: whoever waits longest gets the writer next. */
class Mutex {
  private locked = false;
  private readonly waiting: (() => void)[] = [];

  async lock(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  unlock(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.locked = false;
  }
}

/** What Kysely acquires for each query or transaction; it takes the writer only when it needs it. */
/** The connection Kysely hands back is one this driver leased: anything else is a bug. */
function leaseOf(connection: DatabaseConnection): Lease {
  if (!(connection instanceof Lease)) throw new Error('not a connection of the SQLite driver');
  return connection;
}

class Lease implements DatabaseConnection {
  holding = false;
  /**
   * The error with which SQLite ended this lease's transaction by itself (SQLITE_FULL, an I/O error): its later
   * statements get that error instead of running outside any transaction, and its rollback has nothing to undo.
   */
  ended: unknown;
  private readonly driver: ReaderBesideDriver;

  constructor(driver: ReaderBesideDriver) {
    this.driver = driver;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { sql, parameters } = query;
    const { connections, writer } = this.driver;
    if (this.holding && this.ended !== undefined) throw this.ended;
    try {
      if (this.holding) return this.inTransaction(connections, sql, parameters) as QueryResult<R>;
      if (connections.writer(sql).readonly) return run(connections.reader(sql), parameters) as QueryResult<R>;
      await writer.lock();
      try {
        return run(connections.writer(sql), parameters) as QueryResult<R>;
      } finally {
        writer.unlock();
        connections.committed();
      }
    } catch (err) {
      connections.failed(err);
      throw err;
    }
  }

  private inTransaction(connections: ReaderBesideWriter, sql: string, parameters: readonly unknown[]) {
    try {
      return run(connections.writer(sql), parameters);
    } catch (err) {
      if (!connections.inTransaction() && sql !== 'begin') this.ended = err;
      throw err;
    }
  }

  // biome-ignore lint/correctness/useYield: the store never streams (open.ts's statement cache relies on it).
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite store does not stream queries');
  }
}

class ReaderBesideDriver implements Driver {
  readonly writer = new Mutex();
  readonly connections: ReaderBesideWriter;

  constructor(connections: ReaderBesideWriter) {
    this.connections = connections;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const lease = leaseOf(connection);
    await this.writer.lock();
    lease.holding = true;
    await lease.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
    this.connections.committed();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // A transaction SQLite ended by itself: a rollback would fail ("no transaction is active") and hide the error.
    if (leaseOf(connection).ended !== undefined || !this.connections.inTransaction()) return;
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const lease = leaseOf(connection);
    if (!lease.holding) return;
    lease.holding = false;
    lease.ended = undefined;
    this.writer.unlock();
  }

  async destroy(): Promise<void> {
    await this.connections.close();
  }
}

/** SQLite's dialect (compiler, adapter, introspector) over the driver above. */
export class ReaderBesideDialect extends SqliteDialect {
  private readonly connections: ReaderBesideWriter;

  constructor(connections: ReaderBesideWriter) {
    // The config is SqliteDriver's, which this dialect does not create.
    super({ database: {} as SqliteDialectConfig['database'] });
    this.connections = connections;
  }

  override createDriver(): Driver {
    return new ReaderBesideDriver(this.connections);
  }
}
