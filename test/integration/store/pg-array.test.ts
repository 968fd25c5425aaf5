import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { pgArray } from '../../../src/store/pg-array.ts';
import { pgAdminUrl } from '../../helpers/pg.ts';

/**
 * The array literals of the `unnest` statements (src/store/pg-array.ts) read back by PostgreSQL as the values they
 * were made from: any text (quotes, backslashes, braces, commas, the word NULL, blanks, emoji), nulls, and
 * integers up to the size of a bigint that JavaScript holds exactly.
 */

describe('PostgreSQL array literals', { skip: pgAdminUrl() ? false : 'no PostgreSQL' }, () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: pgAdminUrl() });
    await client.connect();
  });
  after(async () => {
    await client?.end();
  });

  const readBack = async (literal: string, type: 'text' | 'bigint') =>
    (await client.query<{ a: (string | null)[] }>(`select $1::${type}[] as a`, [literal])).rows[0]?.a;

  test('awkward texts and nulls', async () => {
    const values = ['"', '\\', '\\"', '{a,b}', ',', 'NULL', 'null', '', ' ', ' padded ', 'ünï ✓ 🚀', null, 'a\nb\tc'];
    // JSON texts (the `data` column) take JSON.stringify's quoting unless a control character or emoji is in them.
    values.push(JSON.stringify({ a: 'q"b\\c', n: [1, null], s: '\u00e9' }), '"\u0001"', '"🚀"', '\\"\n');
    assert.deepEqual(await readBack(pgArray(values), 'text'), values);
    assert.deepEqual(await readBack(pgArray([]), 'text'), []);
  });

  test('any text or null (property)', async () => {
    // PostgreSQL's text holds no NUL character, whatever the literal.
    const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text, { nil: null }), { maxLength: 30 }), async (values) => {
        assert.deepEqual(await readBack(pgArray(values), 'text'), values);
      }),
      { numRuns: 200 },
    );
  });

  test('integers and nulls as bigint', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.option(
            fc.maxSafeInteger().map((n) => n * (n % 2 === 0 ? 1 : -1)),
            { nil: null },
          ),
          {
            maxLength: 30,
          },
        ),
        async (values) => {
          // pg answers bigint as text, so that no digit is lost.
          assert.deepEqual(
            await readBack(pgArray(values), 'bigint'),
            values.map((v) => (v === null ? null : String(v))),
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});
