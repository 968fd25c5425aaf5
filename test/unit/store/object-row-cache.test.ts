import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ObjectRowCache } from '../../../src/store/object-row-cache.ts';

/** The rows kept across transactions (src/store/object-row-cache.ts): by version, never older, bounded. */

const row = (key: string, data = '{}') => ({
  unique_id: 1,
  type: 'Queue' as const,
  key,
  partition: 'GLOBAL',
  data,
  protection: null,
  creation_time: 0,
  modification_time: 0,
});

test('a row is found at the version it was kept under; a newer version starts again, an older one is ignored', () => {
  const cache = new ObjectRowCache();
  cache.set(5, 'Queue\0A', row('GLOBAL.A'));
  cache.set(5, 'Queue\0Missing', null);
  assert.equal(cache.get(5, 'Queue\0A')?.key, 'GLOBAL.A');
  assert.equal(cache.get(5, 'Queue\0Missing'), null, 'an object that does not exist is kept as null');
  assert.equal(cache.get(6, 'Queue\0A'), undefined, 'not at another version');
  cache.set(4, 'Queue\0B', row('GLOBAL.B'));
  assert.equal(cache.get(4, 'Queue\0B'), undefined, 'a transaction knowing an older version does not fill it');
  assert.equal(cache.get(5, 'Queue\0A')?.key, 'GLOBAL.A', 'nor empties it');
  cache.set(6, 'Queue\0B', row('GLOBAL.B'));
  assert.equal(cache.get(6, 'Queue\0B')?.key, 'GLOBAL.B');
  assert.equal(cache.get(5, 'Queue\0A'), undefined, 'the rows of the older version are gone');
  assert.equal(cache.get(6, 'Queue\0A'), undefined);
});

test('past its bytes of data it starts again, so large definitions never pile up', () => {
  const cache = new ObjectRowCache();
  const big = 'x'.repeat(ObjectRowCache.MAX_BYTES / 2);
  cache.set(1, 'a', row('GLOBAL.A', big));
  cache.set(1, 'b', row('GLOBAL.B', big));
  assert.ok(cache.get(1, 'a') && cache.get(1, 'b'), 'two halves fit');
  cache.set(1, 'c', row('GLOBAL.C', '{"x":1}'));
  assert.equal(cache.get(1, 'a'), undefined, 'one byte more starts again');
  assert.equal(cache.get(1, 'c')?.key, 'GLOBAL.C');
});
