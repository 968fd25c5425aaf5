import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgDatabase, pgAdminUrl } from './pg.ts';

export interface Backend {
  name: 'sqlite' | 'postgres';
  /**
   * A fresh empty database; returns the connection setting to give the server: for sqlite a data dir path
   * (mkdtemp under os.tmpdir()), for postgres a URL (plus its own temp data dir, since the server always needs
   * a data folder for keys and files). `cleanup()` removes the data dir and drops the database.
   */
  create(): Promise<{ dataDir: string; databaseUrl?: string; cleanup(): Promise<void> }>;
}

function tempDataDir(kind: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `millrace-test-${kind}-`));
}

const sqlite: Backend = {
  name: 'sqlite',
  async create() {
    const dataDir = await tempDataDir('sqlite');
    return {
      dataDir,
      async cleanup() {
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  },
};

const postgres: Backend = {
  name: 'postgres',
  async create() {
    const db = await createPgDatabase();
    let dataDir: string;
    try {
      dataDir = await tempDataDir('pg');
    } catch (err) {
      await db.drop();
      throw err;
    }
    return {
      dataDir,
      databaseUrl: db.url,
      async cleanup() {
        try {
          await db.drop();
        } finally {
          await rm(dataDir, { recursive: true, force: true });
        }
      },
    };
  },
};

/**
 * The database backends the integration tests run against: sqlite always, postgres when scripts/test.sh
 * started a cluster (MILLRACE_TEST_PG_URL is set).
 *
 *   for (const backend of backends()) { describe(backend.name, () => { ... }) }
 */
export function backends(): Backend[] {
  return pgAdminUrl() ? [sqlite, postgres] : [sqlite];
}
