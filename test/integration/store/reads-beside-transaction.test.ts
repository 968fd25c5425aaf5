import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../../src/store/open.ts';
import type { Store } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';

/**
 * A long transaction (a CAR import's) does not hold up reads outside it: they answer at once with what was committed
 * before it (on SQLite through the reader beside the writer, store/sqlite-driver.ts). A write outside it waits for it
 * and stays its own: the transaction's rollback does not take it along.
 */

const role = (name: string) => ({ name, description: name, grants: [], builtin: false });

for (const backend of backends())
  describe(`reads beside a transaction (${backend.name})`, () => {
    let db: Awaited<ReturnType<typeof backend.create>>;
    let store: Store;
    before(async () => {
      db = await backend.create();
      store = await openStore({ dataDir: db.dataDir, ...(db.databaseUrl ? { databaseUrl: db.databaseUrl } : {}) });
      await store.upsertRole(role('before'));
    });
    after(async () => {
      await store?.close();
      await db?.cleanup();
    });

    test('a read answers while a transaction is open, with what was committed before it', {
      timeout: 60_000,
    }, async () => {
      let begun!: () => void;
      const inside = new Promise<void>((resolve) => {
        begun = resolve;
      });
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => {
        finish = resolve;
      });
      const open = store.transaction(async (tx) => {
        await tx.upsertRole(role('inside'));
        begun();
        await finished;
      });
      await inside;
      // With one connection for everything, these reads would wait for `finished`, which comes only after them.
      assert.equal((await store.getRole('before'))?.name, 'before');
      assert.equal(await store.getRole('inside'), undefined, 'not committed yet');
      assert.deepEqual(
        (await store.listRoles()).map((r) => r.name).filter((n) => n === 'before' || n === 'inside'),
        ['before'],
      );
      finish();
      await open;
      assert.equal((await store.getRole('inside'))?.name, 'inside', 'seen once committed');
    });

    test('a write outside a transaction is its own: the rollback leaves it', async () => {
      let begun!: () => void;
      const inside = new Promise<void>((resolve) => {
        begun = resolve;
      });
      const failed = store.transaction(async (tx) => {
        await tx.upsertRole(role('rolled-back'));
        begun();
        // Given time to run while the transaction is open: it must neither join it nor be lost with it.
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('the import found a bad object');
      });
      await inside;
      const written = store.upsertRole(role('own'));
      await assert.rejects(failed, /bad object/);
      await written;
      assert.equal(await store.getRole('rolled-back'), undefined);
      assert.equal((await store.getRole('own'))?.name, 'own');
    });
  });
