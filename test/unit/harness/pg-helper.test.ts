import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { backends } from '../../helpers/backends.ts';
import { createPgDatabase, pgAdminUrl } from '../../helpers/pg.ts';

test('createPgDatabase creates a usable database and drop() removes it', async (t) => {
  const adminUrl = pgAdminUrl();
  if (!adminUrl) {
    // CI sets MILLRACE_REQUIRE_PG=1: a missing cluster there is a failure, not a skip.
    assert.notEqual(process.env.MILLRACE_REQUIRE_PG, '1', 'MILLRACE_REQUIRE_PG=1 but MILLRACE_TEST_PG_URL is not set');
    t.skip('no PostgreSQL');
    return;
  }
  const db = await createPgDatabase();
  const name = new URL(db.url).pathname.slice(1);
  assert.match(name, /^mr_test_[0-9a-f]+$/);

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const res = await client.query<{ one: number; db: string }>('select 1 as one, current_database() as db');
    assert.deepEqual(res.rows, [{ one: 1, db: name }]);
  } finally {
    await client.end();
  }

  await db.drop();
  await db.drop(); // idempotent

  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const res = await admin.query('select 1 from pg_database where datname = $1', [name]);
    assert.equal(res.rowCount, 0);
  } finally {
    await admin.end();
  }
});

test('backends() lists postgres only when a cluster is available', async () => {
  const names = backends().map((b) => b.name);
  assert.deepEqual(names, pgAdminUrl() ? ['sqlite', 'postgres'] : ['sqlite']);
  for (const backend of backends()) {
    const created = await backend.create();
    try {
      assert.ok(created.dataDir.length > 0);
      assert.equal(created.databaseUrl !== undefined, backend.name === 'postgres');
    } finally {
      await created.cleanup();
    }
  }
});
