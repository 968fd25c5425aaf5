import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FailureLimiter, WINDOW_MS } from '../../../src/services/failure-limiter.ts';
import { SharedFailureCounts } from '../../../src/services/shared-failure-counts.ts';
import { backends } from '../../helpers/backends.ts';
import { suiteStore } from '../../helpers/suite-store.ts';

/**
 * Failed sign-ins counted in the database (migration 0012, docs/architecture.md §16): one upsert per failure, a new
 * window a minute after the first failure, ended windows pruned; two limiters on one database (two nodes) count
 * together.
 */
for (const backend of backends())
  describe(`failed sign-ins in the database (${backend.name})`, () => {
    const t = suiteStore(backend);

    test('counts per name in a window from the first failure; an ended window starts again at one', async () => {
      const f = t.store.authFailures;
      const t0 = 1_000_000;
      assert.deepEqual(
        await f.add(['a:x', 'u:admin'], t0, WINDOW_MS),
        new Map([
          ['a:x', { count: 1, start: t0 }],
          ['u:admin', { count: 1, start: t0 }],
        ]),
      );
      assert.deepEqual(await f.add(['a:x'], t0 + 59_999, WINDOW_MS), new Map([['a:x', { count: 2, start: t0 }]]));
      assert.deepEqual(
        await f.add(['a:x'], t0 + 60_000, WINDOW_MS),
        new Map([['a:x', { count: 1, start: t0 + 60_000 }]]),
      );
      assert.deepEqual(
        await f.read(['a:x', 'u:admin', 'u:nobody']),
        new Map([
          ['a:x', { count: 1, start: t0 + 60_000 }],
          ['u:admin', { count: 1, start: t0 }],
        ]),
      );
      await f.prune(t0 + 60_000);
      assert.deepEqual([...(await f.read(['a:x', 'u:admin'])).keys()], ['a:x'], 'the ended window is gone');
    });

    test('two nodes count one address together, each seeing the other within FRESH_MS', async () => {
      const [n1, n2] = [1, 2].map(() => new FailureLimiter(new SharedFailureCounts(t.store.authFailures), 4));
      assert.ok(n1 && n2);
      const t0 = 5_000_000;
      const attempt = { address: '192.0.2.7', user: 'carol' };
      for (let i = 0; i < 2; i++) {
        await n1.fail(attempt, t0 + i);
        await n2.fail(attempt, t0 + i);
      }
      for (const n of [n1, n2])
        assert.equal((await n.check(attempt, t0 + SharedFailureCounts.FRESH_MS + 10)).kind, 'refuse');
      // The user name is limited everywhere; an address that never failed is delayed on either node, not refused.
      for (const n of [n1, n2])
        assert.equal((await n.check({ address: '192.0.2.8', user: 'carol' }, t0 + 2000)).kind, 'delay');
    });
  });
