import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openStore } from '../../../src/store/open.ts';
import { isUniqueViolation, type StoredObject } from '../../../src/store/store.ts';
import { backends } from '../../helpers/backends.ts';
import { addColumn, suiteStore } from '../../helpers/suite-store.ts';

const queue = (uniqueId: number, key: string): StoredObject => ({
  uniqueId,
  type: 'Queue',
  key,
  partition: key.split('.')[0] as string,
  data: { Name: key.split('.')[1], Held: false },
  protection: null,
  creationTime: 1_700_000_000_000,
  modificationTime: 1_700_000_000_000,
});

for (const backend of backends()) {
  describe(`the Store contract (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('unique ids come from one increasing sequence, also under concurrent callers', async () => {
      const batches = await Promise.all(Array.from({ length: 20 }, () => t.store.nextUniqueIds(5)));
      const all = batches.flat();
      assert.equal(new Set(all).size, 100);
      assert.ok(all.every((id) => Number.isSafeInteger(id) && id > 0));
      const [next] = await t.store.nextUniqueIds(1);
      assert.ok((next as number) > Math.max(...all));
    });

    test('a transaction that throws leaves nothing behind', async () => {
      const [id] = await t.store.nextUniqueIds(1);
      await assert.rejects(
        t.store.transaction(async (tx) => {
          await tx.insertObject(queue(id as number, 'GLOBAL.Rollback'), []);
          assert.ok(await tx.getObject('Queue', 'GLOBAL.Rollback'), 'visible inside the transaction');
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal(await t.store.getObject('Queue', 'GLOBAL.Rollback'), undefined);
    });

    test('a second object with the same type and key is a unique violation', async () => {
      const [a, b] = await t.store.nextUniqueIds(2);
      await t.store.insertObject(queue(a as number, 'GLOBAL.Twice'), []);
      const err = await t.store.insertObject(queue(b as number, 'GLOBAL.Twice'), []).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isUniqueViolation(err), `expected a unique violation, got ${String(err)}`);
    });

    test('objects list in key order with keyset pagination, per partition', async () => {
      const ids = await t.store.nextUniqueIds(30);
      for (const [i, id] of ids.entries())
        await t.store.insertObject(queue(id, `P${i % 2}.Q${String(i).padStart(2, '0')}`), []);
      const pages: string[][] = [];
      let afterKey: string | undefined;
      for (;;) {
        const page = await t.store.listObjects('Queue', {
          partition: 'P1',
          limit: 4,
          ...(afterKey ? { afterKey } : {}),
        });
        if (page.length === 0) break;
        pages.push(page.map((o) => o.key));
        afterKey = page.at(-1)?.key;
      }
      const keys = pages.flat();
      assert.equal(keys.length, 15);
      assert.deepEqual(keys, [...keys].sort());
      assert.ok(keys.every((k) => k.startsWith('P1.')));
    });

    test('object summaries: narrow rows in key order, per partition, with the Description only when it is text', async () => {
      const descriptions: unknown[] = [
        'plain',
        'a & b <c> "d" \u00e9\u{1F600}\ttab',
        '',
        42,
        null,
        { x: 1 },
        undefined,
      ];
      const ids = await t.store.nextUniqueIds(descriptions.length);
      for (const [i, id] of ids.entries()) {
        const o = queue(id, `S${i % 2}.Sum${i}`);
        const d = descriptions[i];
        await t.store.insertObject({ ...o, data: { ...o.data, ...(d === undefined ? {} : { Description: d }) } }, []);
      }
      const all = await t.store.listObjectSummaries('Queue', { partitions: ['S0', 'S1'], limit: 100 });
      const full = await t.store.listObjects('Queue', { partitions: ['S0', 'S1'], limit: 100 });
      assert.deepEqual(
        all,
        full.map((o) => ({
          key: o.key,
          partition: o.partition,
          protection: o.protection,
          description: typeof o.data.Description === 'string' ? o.data.Description : null,
        })),
      );
      assert.deepEqual(
        all.map((o) => o.description),
        // in key order: S0.Sum0, S0.Sum2, S0.Sum4, S0.Sum6, S1.Sum1, S1.Sum3, S1.Sum5
        ['plain', '', null, null, 'a & b <c> "d" \u00e9\u{1F600}\ttab', null, null],
      );
      const page = await t.store.listObjectSummaries('Queue', { partitions: ['S1'], afterKey: 'S1.Sum1', limit: 2 });
      assert.deepEqual(
        page.map((o) => o.key),
        ['S1.Sum3', 'S1.Sum5'],
      );
      assert.deepEqual(await t.store.listObjectSummaries('Queue', { partitions: [], limit: 10 }), []);
    });

    test('references are found from their target, and go with the referring object', async () => {
      const [target, from] = await t.store.nextUniqueIds(2);
      await t.store.insertObject(queue(target as number, 'GLOBAL.Target'), []);
      await t.store.insertObject({ ...queue(from as number, 'GLOBAL.Def'), type: 'JobDefinition' }, [
        { path: 'DefaultQueue', toId: target as number },
      ]);
      assert.deepEqual(await t.store.findReferrer(target as number), {
        type: 'JobDefinition',
        key: 'GLOBAL.Def',
        path: 'DefaultQueue',
      });
      assert.deepEqual(await t.store.referrerKeys(target as number, 'JobDefinition', 'DefaultQueue'), ['GLOBAL.Def']);
      await t.store.deleteObject(from as number);
      assert.equal(await t.store.findReferrer(target as number), undefined);
    });

    test('referrers through any item of a list are found once each, in key order, and only through that field', async () => {
      const [target, other, a, b, c] = await t.store.nextUniqueIds(5);
      await t.store.insertObject(queue(target as number, 'GLOBAL.Ev'), []);
      await t.store.insertObject(queue(other as number, 'GLOBAL.Other'), []);
      const def = (id: number, key: string) => ({ ...queue(id, key), type: 'JobDefinition' as const });
      // B names the target in two items, A in its second item only; C names it in another field and another list.
      await t.store.insertObject(def(b as number, 'GLOBAL.B'), [
        { path: 'WaitEvents[0].EventDefinition', toId: target as number },
        { path: 'WaitEvents[1].EventDefinition', toId: target as number },
      ]);
      await t.store.insertObject(def(a as number, 'GLOBAL.A'), [
        { path: 'WaitEvents[0].EventDefinition', toId: other as number },
        { path: 'WaitEvents[1].EventDefinition', toId: target as number },
      ]);
      await t.store.insertObject(def(c as number, 'GLOBAL.C'), [
        { path: 'DefaultQueue', toId: target as number },
        { path: 'RaiseEvents[0].EventDefinition', toId: target as number },
      ]);
      const found = (to: number) => t.store.referrerKeysInList(to, 'JobDefinition', 'WaitEvents', 'EventDefinition');
      assert.deepEqual(await found(target as number), ['GLOBAL.A', 'GLOBAL.B']);
      assert.deepEqual(await found(other as number), ['GLOBAL.A']);
      assert.deepEqual(
        await t.store.referrerKeysInList(target as number, 'Queue', 'WaitEvents', 'EventDefinition'),
        [],
      );
      await t.store.deleteObject(b as number);
      assert.deepEqual(await found(target as number), ['GLOBAL.A']);
    });

    test('instants and large ids survive the round trip as numbers', async () => {
      const o = { ...queue(2 ** 40, 'GLOBAL.Big'), creationTime: 4_102_444_800_123 };
      await t.store.insertObject(o, []);
      const back = await t.store.getObject('Queue', 'GLOBAL.Big');
      assert.equal(back?.uniqueId, 2 ** 40);
      assert.equal(back?.creationTime, 4_102_444_800_123);
      assert.equal(typeof back?.creationTime, 'number');
    });

    test('opening the database again finds it migrated, with the data kept', async () => {
      const again = await openStore(t.db);
      try {
        assert.ok(await again.getObject('Queue', 'GLOBAL.Twice'));
      } finally {
        await again.close();
      }
    });

    // Last: it adds a column. An object's read is a prepared statement on PostgreSQL (src/store/pg-prepared.ts).
    test('an object reads as before after a newer node adds a column to objects', async () => {
      const o = queue(2 ** 41, 'GLOBAL.Added');
      await t.store.insertObject(o, []);
      for (let i = 0; i < 3; i++) assert.deepEqual(await t.store.getObject('Queue', 'GLOBAL.Added'), o);
      await addColumn(t.db, 'objects', 'added_by_a_newer_node');
      for (let i = 0; i < 3; i++) assert.deepEqual(await t.store.getObject('Queue', 'GLOBAL.Added'), o);
    });
  });
}

describe('PostgreSQL closing idle connections does not end the server', {
  skip: !backends().some((b) => b.name === 'postgres'),
}, () => {
  test('after pg_terminate_backend on every idle connection, the next query works', async () => {
    const pgBackend = backends().find((b) => b.name === 'postgres');
    assert.ok(pgBackend);
    const db = await pgBackend.create();
    const store = await openStore(db);
    try {
      await Promise.all([store.getMeta('a'), store.getMeta('b'), store.getMeta('c')]);
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: db.databaseUrl });
      await admin.connect();
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      await admin.end();
      await new Promise((r) => setTimeout(r, 200)); // let the pool notice; an unhandled 'error' would end the process here
      await store.setMeta('after', 'ok');
      assert.equal(await store.getMeta('after'), 'ok');
    } finally {
      await store.close();
      await db.cleanup();
    }
  });
});
