import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StableFiles, type Sighting } from '../../../src/agent/stable-files.ts';

const file = (name: string, size: number, mtime = 1000, inode = '7'): Sighting => ({ name, size, mtime, inode });

test('a file counts once its size, mtime and inode stayed the same for StableSeconds, measured from the first look', () => {
  const s = new StableFiles();
  assert.deepEqual(s.look([file('a.csv', 10)], 0, 1000), []);
  assert.deepEqual(s.look([file('a.csv', 10)], 999, 1000), []);
  assert.deepEqual(s.look([file('a.csv', 10)], 1000, 1000), [file('a.csv', 10)]);
  // Counted once: forgotten, the caller remembers the identity it raised.
  assert.deepEqual(s.look([file('a.csv', 10)], 1500, 1000), []);
});

test('growing, touched or replaced under its name, it starts again', () => {
  const s = new StableFiles();
  s.look([file('a.csv', 10)], 0, 1000);
  assert.deepEqual(s.look([file('a.csv', 20)], 1000, 1000), [], 'grew');
  assert.deepEqual(s.look([file('a.csv', 20, 2000)], 2000, 1000), [], 'touched');
  assert.deepEqual(s.look([file('a.csv', 20, 2000, '8')], 3000, 1000), [], 'replaced');
  assert.deepEqual(s.look([file('a.csv', 20, 2000, '8')], 4000, 1000), [file('a.csv', 20, 2000, '8')]);
});

test('StableSeconds 0: counted at the first look; a file gone from the folder is forgotten', () => {
  const s = new StableFiles();
  assert.deepEqual(s.look([file('now.csv', 1)], 0, 0), [file('now.csv', 1)]);
  s.look([file('b.csv', 1)], 0, 1000);
  s.look([], 500, 1000);
  assert.deepEqual(s.look([file('b.csv', 1)], 1200, 1000), [], 'seen again: its wait starts again');
});

test('property: a file whose size changes at every look is never counted', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 30 }), (gaps) => {
      const s = new StableFiles();
      let now = 0;
      for (const [i, gap] of gaps.entries()) {
        now += gap;
        assert.deepEqual(s.look([file('w.csv', i)], now, 10_000), []);
      }
    }),
  );
});
