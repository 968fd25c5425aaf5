import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Connection URL of the throwaway cluster started by scripts/test.sh (unset when the PostgreSQL suite is skipped). */
export function pgAdminUrl(): string | undefined {
  return process.env.MILLRACE_TEST_PG_URL || undefined;
}

async function withClient<T>(connectionString: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a fresh, empty database `mr_test_<random hex>` in the test cluster and returns its URL.
 * `drop()` terminates its remaining connections and drops it; calling it again is a no-op.
 */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = pgAdminUrl();
  if (!adminUrl) throw new Error('MILLRACE_TEST_PG_URL is not set (run the tests through scripts/test.sh)');
  const name = `mr_test_${randomBytes(8).toString('hex')}`;
  // template0 is never connected to, so concurrent CREATE DATABASE calls cannot trip over each other.
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8'`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    drop() {
      dropped ??= withClient(adminUrl, async (c) => {
        await c.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      });
      return dropped;
    },
  };
}
