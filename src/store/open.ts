import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, type PostgresPool, sql } from 'kysely';
import pg from 'pg';
import { KyselyStore } from './kysely-store.ts';
import type { Database } from './tables.ts';
import { migrationProvider } from './migrations/index.ts';
import { PgChannel } from './pg-channel.ts';
import { Checkpointer, WAL_LIMIT_BYTES } from './sqlite-checkpointer.ts';
import { keptPlan } from './sqlite-kept-plans.ts';
import { deferredBegin } from './pg-deferred-begin.ts';
import { wrapClients } from './pg-pool-wrap.ts';
import { preparing } from './pg-prepared.ts';
import { type Prepare, ReaderBesideDialect } from './sqlite-driver.ts';
import { isDiskFull, type Store } from './store.ts';
import { lowOnSpace } from './free-space.ts';
import { errorCode } from '../errors.ts';

export interface StoreOptions {
  /** Data folder; the SQLite file lives here when no database URL is given. */
  dataDir: string;
  /** A `postgres://` or `postgresql://` URL selects PostgreSQL. */
  databaseUrl?: string;
  /**
   * The server node opening it: on PostgreSQL, migrations are refused while nodes of another version are alive
   * (their heartbeat within `aliveMs`), unless `migrateAnyway` (docs/architecture.md §16, rolling upgrade).
   */
  node?: { id: string; version: string; aliveMs: number; migrateAnyway: boolean };
  /** Told of every statement refused for want of space (`isDiskFull`), on either dialect. */
  onDiskFull?: (err: unknown) => void;
  /** False: finished jobs are not added to the runtime statistics (`--no-runtime-statistics`, benchmarks). */
  runtimeStatistics?: boolean;
}

export const isPostgresUrl = (url: string | undefined): url is string =>
  url !== undefined && /^postgres(ql)?:\/\//.test(url);

// int8 (bigint) arrives as text from pg; every bigint we store (ids, epoch ms) is below 2^53.
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Kysely prepares every statement anew, which costs more than running it on SQLite; our queries are a small
 * fixed set, so reuse prepared statements by SQL text. Safe because the driver runs each statement to the end
 * (`all`/`run`) before the next one; we never stream results.
 */
function statementCache(db: BetterSqlite3.Database): Prepare {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= 1000) statements.clear();
      statement = db.prepare(keptPlan(sql));
      statements.set(sql, statement);
    }
    return statement;
  };
}

/** A connection to the SQLite file that waits up to 5 s for a lock another process holds, foreign keys enforced. */
function openSqlite(file: string): BetterSqlite3.Database {
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return sqlite;
}

/** Names of the migrations the database has not run; one query of the migration table (readiness). */
async function pendingMigrations(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  const known = Object.keys(await migrationProvider(dialect).getMigrations());
  const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const done = new Set(rows.rows.map((r) => r.name));
  return known.filter((name) => !done.has(name));
}

/**
 * A node of a newer version must not change the schema under older nodes still serving: it refuses to migrate
 * while another node of another version beat lately. Nothing to check on a new database or one without nodes.
 */
async function refuseMigrationBesideOthers(
  db: Kysely<Database>,
  node: { id: string; version: string; aliveMs: number },
): Promise<void> {
  const tables = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_name in ('kysely_migration', 'cluster_nodes')`.execute(db);
  const has = new Set(tables.rows.map((r) => r.name));
  if (!has.has('kysely_migration') || !has.has('cluster_nodes')) return;
  if ((await pendingMigrations(db, 'postgres')).length === 0) return;
  const others = await sql<{ id: string; version: string }>`select id, version from cluster_nodes
    where id <> ${node.id} and version <> ${node.version} and seen_at > ${Date.now() - node.aliveMs}`.execute(db);
  if (others.rows.length === 0) return;
  const list = others.rows.map((r) => `${r.id} (${r.version})`).join(', ');
  throw new Error(
    `the database needs migrations for version ${node.version}, but nodes of another version are alive: ${list}. ` +
      'Stop them first, or start this node with --migrate-beside-older-nodes (MILLRACE_MIGRATE_BESIDE_OLDER_NODES=true) ' +
      'if they can work with the migrated schema.',
  );
}

/**
 * The pool as Kysely uses it (`connect`, then `query` and `release` on the client), with every failed query of a
 * client looked at: one refused for want of space (disk_full, 53100) is told to `onDiskFull`.
 */
function watched(pool: pg.Pool, onDiskFull: (err: unknown) => void): PostgresPool {
  const look = (err: unknown) => {
    if (isDiskFull(err)) onDiskFull(err);
  };
  return wrapClients(pool, (send) => ({
    query: (text, values) => {
      const result = send(text, values);
      if (result instanceof Promise) result.catch(look);
      return result;
    },
  }));
}

/**
 * Counts the round trips of every pooled client (each `query` is one: pg sends a statement and waits for its
 * answer before the next), so the cost of a job in statements is measured, not guessed (metrics, bench/README.md B1).
 */
function countRoundTrips(pool: pg.Pool): () => number {
  let sent = 0;
  pool.on('connect', (client) => {
    const query = client.query;
    client.query = function (this: pg.PoolClient, ...args: unknown[]) {
      sent++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof client.query;
  });
  return () => sent;
}

/** Opens the database, runs pending migrations, and returns the Store. */
export async function openStore(options: StoreOptions): Promise<Store> {
  let store: KyselyStore;
  let db: Kysely<Database>;
  const { databaseUrl } = options;
  if (isPostgresUrl(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, types: pgTypes });
    const onDiskFull = options.onDiskFull;
    // An idle client whose connection the server closed (restart, failover) emits 'error'; unhandled, that would
    // end the process. The pool drops the client and the next query connects afresh (or answers 503).
    pool.on('error', () => {});
    // A client checked out (a transaction between two statements) has no idle listener: the server ending its
    // connection (restart, failover: 57P01) would be an unhandled 'error' and end the process. The statement that
    // follows fails instead, and the request gets 503.
    pool.on('connect', (client) => client.on('error', () => {}));
    const roundTrips = countRoundTrips(pool);
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: deferredBegin(preparing(onDiskFull ? watched(pool, onDiskFull) : pool)) }),
    });
    const kdb = db;
    store = new KyselyStore(db, 'postgres', {
      onClose: () => db.destroy(),
      pendingMigrations: () => pendingMigrations(kdb, 'postgres'),
      poolStats: () => ({
        total: pool.totalCount,
        idle: pool.idleCount,
        waiting: pool.waitingCount,
        roundTrips: roundTrips(),
      }),
      openChannel: () => new PgChannel(databaseUrl, pool),
      ...(options.runtimeStatistics === false ? { runtimeStatistics: false } : {}),
    });
  } else {
    if (options.databaseUrl !== undefined) throw new Error(`unsupported database URL: ${options.databaseUrl}`);
    mkdirSync(options.dataDir, { recursive: true });
    const file = join(options.dataDir, 'millrace.sqlite');
    const sqlite = openSqlite(file);
    // WAL lets the reader run beside the writer; NORMAL survives a process crash (only an OS crash may lose
    // the last transactions); busy_timeout makes the CLI and the server wait for each other briefly.
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // Checkpoints run in a worker thread (sqlite-checkpointer.ts), not in the commits.
    sqlite.pragma('wal_autocheckpoint = 0');
    sqlite.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    const checkpointer = new Checkpointer(file, () => sqlite.pragma('wal_autocheckpoint = 1000'));
    // The second connection only reads (sqlite-driver.ts); query_only makes SQLite refuse it any write.
    const reader = openSqlite(file);
    reader.pragma('query_only = ON');
    const connections = {
      writer: statementCache(sqlite),
      reader: statementCache(reader),
      committed: () => checkpointer.committed(),
      inTransaction: () => sqlite.inTransaction,
      failed: (err: unknown) => {
        // better-sqlite3 gives no errno: an I/O error while the file system has no room is taken for a full disk.
        const code = errorCode(err);
        if (typeof code === 'string' && code.startsWith('SQLITE_IOERR') && lowOnSpace(options.dataDir))
          Object.assign(Object(err), { diskFull: true });
        if (isDiskFull(err)) options.onDiskFull?.(err);
      },
      close: async () => {
        await checkpointer.close();
        reader.close();
        sqlite.close();
      },
    };
    db = new Kysely<Database>({ dialect: new ReaderBesideDialect(connections) });
    const dataVersion = sqlite.prepare('pragma data_version').pluck();
    // Read at most once a millisecond: the pragma was a noticeable share of a cached GET (bench/README.md, B3). It only
    // tells of commits by other connections (a CLI on the same file); ours are counted exactly by the store.
    let external = 0;
    let readAt = Number.NEGATIVE_INFINITY;
    const externalVersion = () => {
      const now = performance.now();
      if (now - readAt >= 1) [external, readAt] = [dataVersion.get() as number, now];
      return external;
    };
    const kdb = db;
    store = new KyselyStore(db, 'sqlite', {
      onClose: () => db.destroy(),
      pendingMigrations: () => pendingMigrations(kdb, 'sqlite'),
      externalVersion,
      ...(options.runtimeStatistics === false ? { runtimeStatistics: false } : {}),
    });
  }
  if (store.dialect === 'postgres' && options.node && !options.node.migrateAnyway) {
    try {
      await refuseMigrationBesideOthers(db, options.node);
    } catch (err) {
      await db.destroy();
      throw err;
    }
  }
  const migrator = new Migrator({ db, provider: migrationProvider(store.dialect) });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    throw error instanceof Error ? error : new Error(String(error));
  }
  return store;
}
