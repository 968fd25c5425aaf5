import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { contributions, quantileMs, type RunContribution } from '../../../src/domain/runtime-figures.ts';
import { openStore } from '../../../src/store/open.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * The runtime statistics rows (migration 0014, docs/architecture.md §8b): runs are added by upserts, so two stores
 * on one database (two server nodes on PostgreSQL) adding to the same definition at once lose nothing, each in its
 * own transaction (on SQLite, one store's transactions in turn).
 */
for (const backend of backends())
  describe(`runtime statistics rows (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('two stores adding to the same rows at once: every run counted, the extremes kept', async () => {
      // Several nodes share PostgreSQL only; SQLite has one server, its transactions taken in turn.
      const other = backend.name === 'postgres' ? await openStore(t.db) : t.store;
      try {
        const run = (ms: number, status: RunContribution['status'] = 'Completed'): RunContribution => ({
          definition: 'GLOBAL.Both',
          step: '',
          status,
          ms,
        });
        const batches = Array.from({ length: 40 }, (_, i) => [run(1000 + i), run(2000 + i, 'Error'), run(1000)]);
        await Promise.all(
          batches.map((runs, i) => (i % 2 === 0 ? t.store : other).transaction((tx) => tx.runtimeStats.record(runs))),
        );
        const [stats] = (await t.store.runtimeStats.read(['GLOBAL.Both'])).get('GLOBAL.Both') ?? [];
        assert.ok(stats);
        assert.deepEqual(stats.aggregate, {
          runs: 120,
          completed: 80,
          error: 40,
          killed: 0,
          unknown: 0,
          totalMs: batches.flat().reduce((n, r) => n + r.ms, 0),
          maxMs: 2039,
        });
        // 120 runs: rank 60 is the 60th shortest (1000 ms × 40, then 1001 … 1039), rank 114 the 114th.
        assert.equal(stats.p50Ms, 1019);
        assert.equal(stats.p95Ms, 2033);
        await t.store.runtimeStats.drop('GLOBAL.Both');
        assert.equal((await t.store.runtimeStats.read(['GLOBAL.Both'])).size, 0);
      } finally {
        if (other !== t.store) await other.close();
      }
    });
    test('P50 and P95 found in SQL are those of the walk over the buckets in hand, for any durations', async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 3_600_000 })), {
            minLength: 1,
            maxLength: 200,
          }),
          async (ms) => {
            const definition = `GLOBAL.Random${++n}`;
            const runs = ms.map((m): RunContribution => ({ definition, step: '', status: 'Completed', ms: m }));
            // In two transactions, as runs finish at different times.
            const cut = Math.floor(runs.length / 2);
            for (const part of [runs.slice(0, cut), runs.slice(cut)])
              await t.store.transaction((tx) => tx.runtimeStats.record(part));
            const [stats] = (await t.store.runtimeStats.read([definition])).get(definition) ?? [];
            const buckets = contributions(runs).buckets;
            assert.equal(stats?.p50Ms, quantileMs(buckets, 50));
            assert.equal(stats?.p95Ms, quantileMs(buckets, 95));
          },
        ),
        { numRuns: 30 },
      );
    });
  });
