import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FailureLimiter } from '../../../src/services/failure-limiter.ts';

/** Issue 19 point 8: the failed-login table is bounded fairly and counts user names as well as addresses. */

test('an address limited a moment ago stays limited after failures from 10,000 other addresses', () => {
  const limiter = new FailureLimiter(5, 1000);
  const t0 = 1_000_000;
  for (let i = 0; i < 5; i++) limiter.fail({ address: '10.0.0.1' }, t0);
  assert.equal(limiter.retryAfter({ address: '10.0.0.1' }, t0), 60);
  for (let i = 0; i < 10_000; i++) {
    limiter.fail({ address: `192.168.${i >> 8}.${i & 255}` }, t0 + 10 + i);
    // The limited address keeps trying (and is refused) now and then: it stays among the most recently seen.
    if (i % 500 === 0) assert.ok(limiter.retryAfter({ address: '10.0.0.1' }, t0 + 10 + i) !== undefined);
  }
  assert.ok(limiter.size <= 1000, `the table holds ${limiter.size} entries`);
  assert.ok(limiter.retryAfter({ address: '10.0.0.1' }, t0 + 20_000) !== undefined, 'still limited');
  // The least recently seen went first: the early flood addresses are gone, the last ones remain.
  for (let i = 0; i < 4; i++) limiter.fail({ address: '192.168.0.0' }, t0 + 20_000);
  assert.equal(limiter.retryAfter({ address: '192.168.0.0' }, t0 + 20_000), undefined, 'evicted, counted afresh');
});

test('failures count per user name across addresses, and the window ends after a minute', () => {
  const limiter = new FailureLimiter(3);
  const t0 = 5_000_000;
  for (let i = 0; i < 3; i++) limiter.fail({ address: `10.1.0.${i}`, user: 'alice' }, t0);
  assert.equal(limiter.retryAfter({ address: '10.9.9.9', user: 'alice' }, t0 + 1000), 59);
  assert.equal(limiter.retryAfter({ address: '10.9.9.9', user: 'bob' }, t0 + 1000), undefined);
  assert.equal(limiter.retryAfter({ address: '10.9.9.9' }, t0 + 1000), undefined, 'an address alone is not limited');
  assert.equal(limiter.retryAfter({ address: '10.9.9.9', user: 'alice' }, t0 + 60_000), undefined);
});

test('a user named like an address is not that address', () => {
  const limiter = new FailureLimiter(1);
  limiter.fail({ address: '10.0.0.1', user: '10.0.0.2' }, 0);
  assert.equal(limiter.retryAfter({ address: '10.0.0.2' }, 1), undefined);
});
