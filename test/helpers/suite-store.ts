import { join } from 'node:path';
import { after, before } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/store.ts';
import type { Backend } from './backends.ts';

export type BackendDatabase = Awaited<ReturnType<Backend['create']>>;

/**
 * A fresh database on `backend` with a store open on it, for the suite that calls this: made in the suite's first
 * `before` hook, closed and dropped in its `after`. Read `.store` and `.db` in the tests and later hooks; a test may
 * put a reopened store in `.store`, which `after` then closes.
 */
export function suiteStore(backend: Backend): { store: Store; db: BackendDatabase } {
  const suite = {} as { store: Store; db: BackendDatabase };
  before(async () => {
    suite.db = await backend.create();
    suite.store = await openStore(suite.db);
  });
  after(async () => {
    await suite.store?.close();
    await suite.db?.cleanup();
  });
  return suite;
}

/** `alter table … add column … text` on the suite's database, as a migration of a newer version would. */
export async function addColumn(db: BackendDatabase, table: string, column: string): Promise<void> {
  const statement = `alter table "${table}" add column "${column}" text`;
  if (db.databaseUrl) {
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  } else {
    const file = new BetterSqlite3(join(db.dataDir, 'millrace.sqlite'));
    try {
      file.exec(statement);
    } finally {
      file.close();
    }
  }
}
