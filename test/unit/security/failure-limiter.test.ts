import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DELAY_MS, FailureLimiter } from '../../../src/services/failure-limiter.ts';
import { MemoryFailureCounts } from '../../../src/services/memory-failure-counts.ts';

/** docs/architecture.md §10: failed sign-ins limited per address, and per user name only for addresses that failed. */

const limiterOf = (perMinute: number, maxEntries?: number) => {
  const counts = new MemoryFailureCounts(maxEntries);
  return { counts, limiter: new FailureLimiter(counts, perMinute) };
};

test('an address limited a moment ago stays limited after failures from 10,000 other addresses', async () => {
  const { counts, limiter } = limiterOf(5, 1000);
  const t0 = 1_000_000;
  for (let i = 0; i < 5; i++) await limiter.fail({ address: '10.0.0.1' }, t0);
  assert.deepEqual(await limiter.check({ address: '10.0.0.1' }, t0), { kind: 'refuse', retryAfterSeconds: 60 });
  for (let i = 0; i < 10_000; i++) {
    await limiter.fail({ address: `192.168.${i >> 8}.${i & 255}` }, t0 + 10 + i);
    // The limited address keeps trying (and is refused) now and then: it stays among the most recently seen.
    if (i % 500 === 0) assert.equal((await limiter.check({ address: '10.0.0.1' }, t0 + 10 + i)).kind, 'refuse');
  }
  assert.ok(counts.size <= 1000, `the table holds ${counts.size} entries`);
  assert.equal((await limiter.check({ address: '10.0.0.1' }, t0 + 20_000)).kind, 'refuse', 'still limited');
  // The least recently seen went first: the early flood addresses are gone, the last ones remain.
  for (let i = 0; i < 4; i++) await limiter.fail({ address: '192.168.0.0' }, t0 + 20_000);
  assert.deepEqual(await limiter.check({ address: '192.168.0.0' }, t0 + 20_000), { kind: 'allow' }, 'counted afresh');
});

test('a user name limited from many addresses is refused to those addresses, delayed for the others', async () => {
  const { limiter } = limiterOf(3);
  const t0 = 5_000_000;
  for (let i = 0; i < 3; i++) await limiter.fail({ address: `10.1.0.${i}`, user: 'alice' }, t0 + i * 1000);
  // An address that failed (once, for alice) waits until the first of its window and alice's ends.
  assert.deepEqual(await limiter.check({ address: '10.1.0.2', user: 'alice' }, t0 + 5000), {
    kind: 'refuse',
    retryAfterSeconds: 55,
  });
  assert.deepEqual(await limiter.check({ address: '10.9.9.9', user: 'alice' }, t0 + 5000), {
    kind: 'delay',
    ms: DELAY_MS,
  });
  assert.deepEqual(await limiter.check({ address: '10.9.9.9', user: 'bob' }, t0 + 5000), { kind: 'allow' });
  assert.deepEqual(await limiter.check({ address: '10.1.0.1' }, t0 + 5000), { kind: 'allow' }, 'an API key');
  // A delayed address that fails in turn is refused for alice from then on.
  await limiter.fail({ address: '10.9.9.9', user: 'alice' }, t0 + 6000);
  assert.equal((await limiter.check({ address: '10.9.9.9', user: 'alice' }, t0 + 6000)).kind, 'refuse');
  // The windows end a minute after their first failure.
  assert.deepEqual(await limiter.check({ address: '10.1.0.2', user: 'alice' }, t0 + 60_000), { kind: 'allow' });
});

test('a clock set back by more than a minute ends a window rather than stretching it', async () => {
  const { limiter } = limiterOf(1);
  await limiter.fail({ address: '10.0.0.1' }, 10 * 60_000);
  assert.equal((await limiter.check({ address: '10.0.0.1' }, 10 * 60_000 - 30_000)).kind, 'refuse');
  assert.deepEqual(await limiter.check({ address: '10.0.0.1' }, 5 * 60_000), { kind: 'allow' });
});

test('a user named like an address is not that address', async () => {
  const { limiter } = limiterOf(1);
  await limiter.fail({ address: '10.0.0.1', user: '10.0.0.2' }, 0);
  assert.deepEqual(await limiter.check({ address: '10.0.0.2' }, 1), { kind: 'allow' });
});

test('whatever fails elsewhere, an address that has not failed is never refused; one over the limit always is', async () => {
  const addresses = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'];
  const users = ['admin', 'alice', undefined];
  const failure = fc.record({
    address: fc.constantFrom(...addresses),
    user: fc.constantFrom(...users),
    after: fc.integer({ min: 0, max: 5000 }),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(failure, { maxLength: 80 }), fc.constantFrom(...users), async (failures, user) => {
      const { limiter } = limiterOf(5);
      let now = 1_000_000;
      const recent: Array<{ address: string; at: number }> = [];
      for (const f of failures) {
        now += f.after;
        const verdict = await limiter.check({ address: f.address, user: f.user }, now);
        if (verdict.kind === 'refuse') continue; // refused attempts are not failures
        await limiter.fail({ address: f.address, user: f.user }, now);
        recent.push({ address: f.address, at: now });
      }
      const fresh = await limiter.check({ address: '192.0.2.1', user }, now);
      assert.notEqual(fresh.kind, 'refuse', 'an address that never failed');
      // An address whose failures in the last minute reach the limit is refused whatever it presents.
      for (const address of addresses) {
        const mine = recent.filter((r) => r.address === address);
        const windowStart = mine.reduce<number | undefined>(
          (start, r) => (start === undefined || r.at - start >= 60_000 ? r.at : start),
          undefined,
        );
        const inWindow = mine.filter((r) => windowStart !== undefined && r.at >= windowStart).length;
        if (windowStart !== undefined && now - windowStart < 60_000 && inWindow >= 5)
          assert.equal((await limiter.check({ address, user }, now)).kind, 'refuse', address);
      }
    }),
    { seed: 25, numRuns: 300 },
  );
});
