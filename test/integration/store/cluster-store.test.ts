import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { LeaseLost } from '../../../src/store/cluster-store.ts';
import { openStore } from '../../../src/store/open.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * What server nodes sharing a database agree through (migration 0010, docs/architecture.md §16): the timer lease and
 * its fencing token, where agents are, and the refusal to migrate beside nodes of another version.
 */
for (const backend of backends())
  describe(`cluster tables (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('the lease goes to one holder at a time; its token grows when the holder changes, not when it renews', async () => {
      const c = t.store.cluster;
      assert.equal(await c.takeLease('t1', 'a', 1000, 2000), 1);
      assert.equal(await c.takeLease('t1', 'b', 1500, 2500), undefined, 'held by a until 2000');
      assert.equal(await c.takeLease('t1', 'a', 1900, 2900), 1, 'a renews');
      assert.equal(await c.takeLease('t1', 'b', 2000, 3000), undefined, 'still held at 2000 (renewed to 2900)');
      assert.equal(await c.takeLease('t1', 'b', 2901, 3901), 2, 'expired: b takes it with a new token');
      assert.equal(await c.takeLease('t1', 'a', 3000, 4000), undefined);
      await c.releaseLease('t1', 'b');
      assert.equal(await c.takeLease('t1', 'a', 3000, 4000), 3, 'given up: a takes it at once');
    });

    test('fencing: only the holder with the current token, unexpired, passes', async () => {
      const c = t.store.cluster;
      assert.equal(await c.takeLease('t2', 'a', 1000, 2000), 1);
      await t.store.transaction((tx) => tx.cluster.fence('t2', 'a', 1, 1500));
      for (const [holder, token, now] of [
        ['a', 2, 1500],
        ['b', 1, 1500],
        ['a', 1, 2000],
      ] as const)
        await assert.rejects(
          t.store.transaction((tx) => tx.cluster.fence('t2', holder, token, now)),
          (e: unknown) => e instanceof LeaseLost,
          `${holder} ${token} at ${now}`,
        );
      assert.equal(await c.takeLease('t2', 'b', 2500, 3500), 2);
      await assert.rejects(
        t.store.transaction((tx) => tx.cluster.fence('t2', 'a', 1, 2600)),
        (e: unknown) => e instanceof LeaseLost,
      );
    });

    if (backend.name === 'postgres')
      test('a takeover waits for a transaction fenced by the old holder to end', async () => {
        const c = t.store.cluster;
        assert.equal(await c.takeLease('t3', 'a', 1000, 2000), 1);
        const order: string[] = [];
        let release: () => void = () => {};
        const held = new Promise<void>((r) => {
          release = r;
        });
        let fenced: () => void = () => {};
        const isFenced = new Promise<void>((r) => {
          fenced = r;
        });
        const work = t.store.transaction(async (tx) => {
          await tx.cluster.fence('t3', 'a', 1, 1500);
          fenced();
          await held;
          order.push('fenced work committed');
        });
        await isFenced;
        const takeover = c.takeLease('t3', 'b', 2500, 3500).then((token) => {
          order.push(`taken with token ${token}`);
        });
        // Until PostgreSQL shows the takeover's statement waiting for a lock: then it cannot have gone through.
        const watcher = new pg.Client({ connectionString: t.db.databaseUrl as string });
        await watcher.connect();
        try {
          await waitFor(
            'the takeover waiting for the lease row',
            async () => {
              const r = await watcher.query(
                "select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%cluster_leases%'",
              );
              return r.rowCount === 1 ? true : undefined;
            },
            60_000,
          );
        } finally {
          await watcher.end();
        }
        assert.deepEqual(order, [], 'the takeover waits');
        release();
        await Promise.all([work, takeover]);
        assert.deepEqual(order, ['fenced work committed', 'taken with token 2']);
      });

    test("agents' presence: written by the node holding them, taken over by another, dropped only by its holder", async () => {
      const c = t.store.cluster;
      await c.putAgents('n1', [{ processServer: 'GLOBAL.A', node: 'n1', seenAt: 10, ready: true }]);
      await c.putAgents('n2', [{ processServer: 'GLOBAL.A', node: 'n2', seenAt: 20, ready: false }]);
      assert.deepEqual(await c.agents(), [
        { processServer: 'GLOBAL.A', node: 'n2', seenAt: 20, ready: false, instance: '' },
      ]);
      await c.dropAgent('GLOBAL.A', 'n1');
      assert.equal((await c.agents()).length, 1, 'n1 no longer holds it');
      await c.dropAgent('GLOBAL.A', 'n2');
      assert.deepEqual(await c.agents(), []);
    });

    test("one agent instance per process server: another is refused while the holder's node beats", async () => {
      const c = t.store.cluster;
      await c.beat({ id: 'live', version: '1', startedAt: 1, seenAt: 5000, address: 'http://live' });
      const agent = (node: string, instance: string) => ({
        processServer: 'GLOBAL.B',
        node,
        instance,
        seenAt: 1,
        ready: false,
      });
      assert.equal(await c.claimAgent(agent('live', 'x'), 1000), undefined, 'free: taken');
      const holder = await c.claimAgent(agent('other', 'y'), 1000);
      assert.deepEqual([holder?.node, holder?.instance], ['live', 'x'], 'another instance elsewhere: refused');
      assert.equal(await c.claimAgent(agent('other', 'x'), 1000), undefined, 'the same instance moves to another node');
      await c.putAgents('live', [agent('live', 'z')]);
      assert.equal(
        (await c.agents()).find((a) => a.processServer === 'GLOBAL.B')?.instance,
        'x',
        'a beat of another node and instance changes nothing',
      );
      await c.beat({ id: 'other', version: '1', startedAt: 1, seenAt: 100, address: 'http://other' });
      assert.equal(await c.claimAgent(agent('live', 'y'), 1000), undefined, "the holder's node stopped beating: taken");
      await c.dropAgent('GLOBAL.B', 'live');
      for (const id of ['live', 'other']) await c.removeNode(id);
    });

    test('nodes beat, are listed, and removed', async () => {
      const c = t.store.cluster;
      await c.beat({ id: 'x', version: '1', startedAt: 1, seenAt: 5, address: 'http://x' });
      await c.beat({ id: 'x', version: '1', startedAt: 1, seenAt: 9, address: 'http://x' });
      assert.deepEqual(
        (await c.nodes()).filter((n) => n.id === 'x'),
        [{ id: 'x', version: '1', startedAt: 1, seenAt: 9, address: 'http://x' }],
      );
      await c.removeNode('x');
      assert.deepEqual(
        (await c.nodes()).filter((n) => n.id === 'x'),
        [],
      );
    });

    if (backend.name === 'postgres')
      test('a node that needs migrations refuses to run them while a node of another version is alive', async () => {
        const url = t.db.databaseUrl as string;
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          // As if this release's last migration had not run yet, with a node of the old version beating.
          await client.query("delete from kysely_migration where name = '0009_chain_structures'");
          await client.query(
            "insert into cluster_nodes (id, version, started_at, seen_at, address) values ('old-1', '0.9.0', 0, $1, 'http://old')",
            [Date.now()],
          );
          await assert.rejects(
            openStore({
              dataDir: t.db.dataDir,
              databaseUrl: url,
              node: { id: 'new-1', version: '1.0.0', aliveMs: 10_000, migrateAnyway: false },
            }),
            /needs migrations for version 1\.0\.0, but nodes of another version are alive: old-1 \(0\.9\.0\).*--migrate-beside-older-nodes/,
          );
          const left = await client.query("select 1 from kysely_migration where name = '0009_chain_structures'");
          assert.equal(left.rowCount, 0, 'nothing migrated');
        } finally {
          await client.query(
            "insert into kysely_migration (name, timestamp) values ('0009_chain_structures', '2026-01-01')",
          );
          await client.end();
        }
      });
  });
