import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FailureLimiter, WINDOW_MS } from '../../../src/services/failure-limiter.ts';
import type { AuthFailureStore } from '../../../src/store/auth-failure-store.ts';
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

    test('checks in flight together read a stale name once, and all see what it read', async () => {
      const stored = t.store.authFailures;
      const t0 = 7_000_000;
      await stored.add(['a:203.0.113.5'], t0, WINDOW_MS);
      const asked: string[][] = [];
      const counting: AuthFailureStore = {
        read: (names) => {
          asked.push([...names]);
          return stored.read(names);
        },
        add: (names, now, windowMs) => stored.add(names, now, windowMs),
        prune: (before) => stored.prune(before),
      };
      const counts = new SharedFailureCounts(counting);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => counts.read(['a:203.0.113.5', i % 2 ? 'u:dave' : 'u:erin'], t0 + 1)),
      );
      assert.deepEqual(
        asked.map((names) => names.join(' ')),
        ['a:203.0.113.5 u:erin', 'u:dave'],
        'the first check reads its names, the second only the name not yet being read, the others none',
      );
      for (const a of answers) assert.deepEqual(a.get('a:203.0.113.5'), { count: 1, start: t0 });
      // A second later the cached window is stale: it is read again, once.
      await Promise.all([1, 2, 3].map(() => counts.read(['a:203.0.113.5'], t0 + 1 + SharedFailureCounts.FRESH_MS)));
      assert.equal(asked.length, 3);
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
