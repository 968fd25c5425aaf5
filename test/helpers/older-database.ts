import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrationProvider } from '../../src/store/migrations/index.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import type { Backend } from './backends.ts';

/**
 * An upgrade test's database: migrated up to `migration` (an older release's schema), filled by `fill` with rows as
 * that release wrote them, then opened by the store, which runs the migrations after it.
 */
export async function upgradedFrom(
  backend: Backend,
  db: { dataDir: string; databaseUrl?: string },
  migration: string,
  fill: (older: Kysely<unknown>) => Promise<void>,
): Promise<Store> {
  const older = new Kysely<unknown>({
    dialect: db.databaseUrl
      ? new PostgresDialect({ pool: new pg.Pool({ connectionString: db.databaseUrl, max: 1 }) })
      : new SqliteDialect({ database: new BetterSqlite3(join(db.dataDir, 'millrace.sqlite')) }),
  });
  try {
    const { error } = await new Migrator({ db: older, provider: migrationProvider(backend.name) }).migrateTo(migration);
    assert.equal(error, undefined);
    await fill(older);
  } finally {
    await older.destroy();
  }
  return openStore({ dataDir: db.dataDir, ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}) });
}
