import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PREPARED, preparing } from '../../../src/store/pg-prepared.ts';
import { pgAdminUrl } from '../../helpers/pg.ts';

/**
 * Named prepared statements for the statements the store marks (src/store/pg-prepared.ts): a marked statement with
 * parameters is prepared once on a connection and answers as before each time; an unmarked one, or one without
 * parameters, is sent unnamed.
 */

describe('prepared statements (postgres)', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let raw: pg.Pool;
  before(() => {
    raw = new pg.Pool({ connectionString: pgAdminUrl(), max: 1 });
  });
  after(async () => {
    await raw?.end();
  });

  test('a marked statement is prepared once per connection and answers each time', async () => {
    const pool = preparing(raw);
    const client = await pool.connect();
    try {
      const marked = `${PREPARED}select $1::int + 1 as n`;
      for (const v of [1, 41]) {
        const r = await client.query<{ n: number }>(marked, [v]);
        assert.equal(r.rows[0]?.n, v + 1);
      }
      await client.query('select $1::int as unmarked', [1]);
      await client.query(`${PREPARED}select 1 as no_parameters`, []);
      const prepared = await client.query<{ name: string; statement: string }>(
        'select name, statement from pg_prepared_statements order by name',
        [],
      );
      assert.deepEqual(
        prepared.rows.map((r) => [r.name, r.statement]),
        [['millrace_1', marked]],
      );
    } finally {
      client.release();
    }
  });
});
