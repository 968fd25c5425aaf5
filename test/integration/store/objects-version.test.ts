import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DispatchObjectsCache } from '../../../src/engine/dispatch-objects.ts';
import { openStore } from '../../../src/store/open.ts';
import type { Store, StoredObject } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * PostgreSQL's version of the objects (migration 0020, docs/architecture.md §2): moved once by every committed
 * transaction that wrote objects, by whichever node, and by nothing else; a dispatch pass keeps its objects while
 * it stays, so two nodes on one database each see the other's change of a queue at their next pass.
 */

const postgres = backends().find((b) => b.name === 'postgres');

const queue = (uniqueId: number, key: string, held = false): StoredObject => ({
  uniqueId,
  type: 'Queue',
  key,
  partition: 'GLOBAL',
  data: { Name: key.split('.')[1], Held: held },
  protection: null,
  creationTime: 1_700_000_000_000,
  modificationTime: 1_700_000_000_000,
});

describe('the objects version (postgres)', { skip: postgres ? false : 'no PostgreSQL' }, () => {
  // biome-ignore lint/style/noNonNullAssertion: skipped above without PostgreSQL
  const t = suiteStore(postgres!);
  /** A second server node on the same database. */
  let other: Store;
  before(async () => {
    other = await openStore(t.db);
  });
  after(() => other?.close());

  const version = async (store: Store) => Number(await store.objectsVersion());

  test('moves once per committed transaction that writes objects, whichever node commits it', async () => {
    const v0 = await version(t.store);
    const [a, b] = await other.nextUniqueIds(2);
    assert.ok(a && b);
    await other.transaction(async (tx) => {
      await tx.insertObject(queue(a, 'GLOBAL.VersionA'), []);
      await tx.insertObject(queue(b, 'GLOBAL.VersionB'), []);
      await tx.updateObject(queue(a, 'GLOBAL.VersionA', true), []);
    });
    assert.equal(await version(t.store), v0 + 1, 'three writes, one transaction, one move; seen by the other node');
    await t.store.deleteObject(b);
    assert.equal(await version(other), v0 + 2, 'a write outside a transaction moves it too');
    await assert.rejects(
      t.store.transaction(async (tx) => {
        await tx.updateObject(queue(a, 'GLOBAL.VersionA', false), []);
        throw new Error('rolled back');
      }),
    );
    await t.store.transaction((tx) => tx.setMeta('unrelated', 'x'));
    await t.store.jobs.nextJobIds(1);
    assert.equal(await version(t.store), v0 + 2, 'a rollback, and writes that are not objects, leave it');
  });

  test("a dispatch pass's objects are kept while the version stays, and read again once another node writes one", async () => {
    const [id] = await t.store.nextUniqueIds(1);
    assert.ok(id);
    await t.store.insertObject(queue(id, 'GLOBAL.Kept'), []);
    const cache = new DispatchObjectsCache((tx) => tx.objectsVersion());
    const held = async () => {
      const objects = await t.store.transaction((tx) => cache.read(tx));
      return { objects, held: objects.queues.find((q) => q.key === 'GLOBAL.Kept')?.data.Held };
    };
    const first = await held();
    assert.equal(first.held, false);
    const sent = () => t.store.poolStats()?.roundTrips ?? Number.NaN;
    const before = sent();
    const second = await held();
    assert.equal(second.objects, first.objects, 'the same lists, not read again');
    assert.equal(sent() - before, 3, 'BEGIN, the version, COMMIT: no list read');
    await other.updateObject(queue(id, 'GLOBAL.Kept', true), []);
    assert.equal((await held()).held, true, "the other node's write is seen at the next read");
  });

  test('the objects read by key in a group of submits are kept for the next group while no node writes one', async () => {
    const [id] = await t.store.nextUniqueIds(1);
    assert.ok(id);
    await t.store.insertObject(queue(id, 'GLOBAL.Grouped'), []);
    const sent = () => t.store.poolStats()?.roundTrips ?? Number.NaN;
    // A group's transaction: its job ids (and with them the objects version), then the reads of its submits.
    const group = async () => {
      const before = sent();
      const held = await t.store.transaction(async (tx) => {
        await tx.jobs.expectNew(2);
        return (await tx.getObject('Queue', 'GLOBAL.Grouped'))?.data.Held;
      });
      return { held, statements: sent() - before };
    };
    assert.deepEqual(await group(), { held: false, statements: 3 }, 'BEGIN with the ids and version, the read, COMMIT');
    assert.deepEqual(await group(), { held: false, statements: 2 }, 'the queue kept: no read');
    await other.updateObject(queue(id, 'GLOBAL.Grouped', true), []);
    assert.deepEqual(await group(), { held: true, statements: 3 }, "the other node's write: read again");
    // A transaction reads its own writes, never the rows kept for others.
    const own = await t.store.transaction(async (tx) => {
      await tx.jobs.expectNew(2);
      await tx.updateObject(queue(id, 'GLOBAL.Grouped', false), []);
      await tx.objectsVersion();
      return (await tx.getObject('Queue', 'GLOBAL.Grouped'))?.data.Held;
    });
    assert.equal(own, false);
    assert.deepEqual(await group(), { held: false, statements: 3 }, 'its commit moved the version');
  });
});
