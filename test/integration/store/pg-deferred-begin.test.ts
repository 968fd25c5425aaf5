import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { deferredBegin } from '../../../src/store/pg-deferred-begin.ts';
import type { Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * A transaction's BEGIN held back until its first statement (src/store/pg-deferred-begin.ts): sent with it when it
 * has no parameters (one round trip less), on its own before it otherwise, not at all for a transaction that
 * sends nothing. Either way the transaction is one: what it writes is seen by no other connection before the
 * commit, and nothing of it stays after a rollback.
 */

const role = (name: string) => ({ name, description: name, grants: [], builtin: false });

const postgres = backends().find((b) => b.name === 'postgres');

describe('the deferred BEGIN (postgres)', { skip: postgres ? false : 'no PostgreSQL' }, () => {
  // biome-ignore lint/style/noNonNullAssertion: skipped above without PostgreSQL
  const t = suiteStore(postgres!);
  const sent = (store: Store) => store.poolStats()?.roundTrips ?? Number.NaN;

  test('round trips: a parameterless first statement carries the BEGIN; one with parameters does not', async () => {
    let before = sent(t.store);
    await t.store.transaction(async (tx) => {
      await tx.jobs.expectNew(3); // the ids of three jobs: no parameters
    });
    assert.equal(sent(t.store) - before, 2, 'BEGIN with the ids, then COMMIT');

    before = sent(t.store);
    await t.store.transaction(async (tx) => {
      await tx.getRole('nobody'); // a read with a parameter
    });
    assert.equal(sent(t.store) - before, 3, 'BEGIN, the read, COMMIT');

    before = sent(t.store);
    await t.store.transaction(async () => {});
    assert.equal(sent(t.store) - before, 0, 'a transaction that sends nothing');
  });

  for (const first of ['parameterless', 'with parameters'] as const)
    test(`a transaction whose first statement is ${first} is seen by nobody before its commit`, async () => {
      const name = `r-${first.replace(' ', '-')}`;
      let seenInside: unknown = 'not looked';
      await t.store.transaction(async (tx) => {
        if (first === 'parameterless') await tx.jobs.expectNew(2);
        else await tx.getRole('nobody');
        await tx.upsertRole(role(name));
        // t.store outside the transaction reads through another pooled connection.
        seenInside = await t.store.getRole(name);
      });
      assert.equal(seenInside, undefined, 'not visible before the commit');
      assert.equal((await t.store.getRole(name))?.name, name, 'visible after it');
    });

  test('a failed transaction whose BEGIN went with its first statement leaves nothing', async () => {
    await assert.rejects(
      t.store.transaction(async (tx) => {
        await tx.jobs.expectNew(2);
        await tx.upsertRole(role('r-rolled-back'));
        throw new Error('the change failed');
      }),
      /the change failed/,
    );
    assert.equal(await t.store.getRole('r-rolled-back'), undefined);
    // The connection is clean for the next transaction.
    await t.store.transaction((tx) => tx.upsertRole(role('r-after')));
    assert.equal((await t.store.getRole('r-after'))?.name, 'r-after');
  });

  test('a first statement that fails in the message of its BEGIN leaves the transaction to roll back, and no more', async () => {
    // The wrapper alone on a pool of one connection, as Kysely drives it: begin, statements, rollback.
    const raw = new pg.Pool({ connectionString: t.db.databaseUrl, max: 1 });
    try {
      const client = await deferredBegin(raw).connect();
      await client.query('begin', []);
      await assert.rejects(client.query('select 1 / 0', []), /division by zero/);
      // Inside the transaction that BEGIN opened: aborted until it is rolled back.
      await assert.rejects(client.query('select $1::int as n', [1]), /current transaction is aborted/);
      await client.query('rollback', []);
      assert.equal((await client.query<{ n: number }>('select $1::int as n', [2])).rows[0]?.n, 2);
      client.release();
    } finally {
      await raw.end();
    }
  });
});
