import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';
import { signal } from '../../helpers/wait.ts';

/**
 * A long transaction (a CAR import's) does not hold up reads outside it: they answer at once with what was committed
 * before it (on SQLite through the reader beside the writer, store/sqlite-driver.ts). A write outside it waits for it
 * and stays its own: the transaction's rollback does not take it along.
 */

const role = (name: string) => ({ name, description: name, grants: [], builtin: false });

for (const backend of backends())
  describe(`reads beside a transaction (${backend.name})`, () => {
    const t = suiteStore(backend);
    before(() => t.store.upsertRole(role('before')));

    test('a read answers while a transaction is open, with what was committed before it', {
      timeout: 60_000,
    }, async () => {
      const inside = signal();
      const finish = signal();
      const open = t.store.transaction(async (tx) => {
        await tx.upsertRole(role('inside'));
        inside.fire();
        await finish.done;
      });
      await inside.done;
      // With one connection for everything, these reads would wait for `finished`, which comes only after them.
      assert.equal((await t.store.getRole('before'))?.name, 'before');
      assert.equal(await t.store.getRole('inside'), undefined, 'not committed yet');
      assert.deepEqual(
        (await t.store.listRoles()).map((r) => r.name).filter((n) => n === 'before' || n === 'inside'),
        ['before'],
      );
      finish.fire();
      await open;
      assert.equal((await t.store.getRole('inside'))?.name, 'inside', 'seen once committed');
    });

    test('a write outside a transaction is its own: the rollback leaves it', async () => {
      const inside = signal();
      const writeSent = signal();
      const failed = t.store.transaction(async (tx) => {
        await tx.upsertRole(role('rolled-back'));
        inside.fire();
        await writeSent.done;
        throw new Error('the import found a bad object');
      });
      await inside.done;
      const written = t.store.upsertRole(role('own'));
      // Two turns of the event loop: a write that did not wait for the writer would have run by now, inside the
      // open transaction, and be rolled back with it.
      for (let i = 0; i < 2; i++) await new Promise<void>((resolve) => setImmediate(resolve));
      writeSent.fire();
      await assert.rejects(failed, /bad object/);
      await written;
      assert.equal(await t.store.getRole('rolled-back'), undefined);
      assert.equal((await t.store.getRole('own'))?.name, 'own');
    });
  });
