import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type ChainLink, canonicalJson, chainHash, checkLinks } from '../../../src/domain/audit-chain.ts';

/** docs/architecture.md §18: the hash chain finds any entry changed, removed or put out of order. */

function chain(contents: readonly unknown[]): ChainLink[] {
  let prev = '';
  return contents.map((content, i) => {
    const hash = chainHash(prev, content);
    const link = { id: i + 1, content, prevHash: prev, hash };
    prev = hash;
    return link;
  });
}

test('canonical JSON sorts keys at every depth and drops undefined', () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } }),
    '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}',
  );
  assert.equal(chainHash('p', { a: 1, b: 2 }), chainHash('p', { b: 2, a: 1 }));
});

test('an intact chain passes; any entry changed or removed is found and named', () => {
  const value = fc.oneof(fc.string(), fc.integer(), fc.constant(null));
  fc.assert(
    fc.property(
      fc.array(fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), value), { minLength: 2, maxLength: 12 }),
      fc.nat(),
      (contents, pick) => {
        const links = chain(contents);
        assert.equal(checkLinks(undefined, links), undefined);
        const at = pick % links.length;
        const edited = links.map((l, i) =>
          i === at ? { ...l, content: { ...(l.content as object), x: 'edited' } } : l,
        );
        assert.deepEqual(checkLinks(undefined, edited)?.id, at + 1);
        const removed = links.filter((_, i) => i !== at);
        const found = checkLinks(undefined, removed);
        // The first entry removed leaves a chain that starts later (a purge looks the same): nothing to find there.
        if (at === 0) assert.equal(found, undefined);
        else assert.equal(found?.id, at < links.length - 1 ? at + 2 : undefined);
      },
    ),
  );
});

test('a chain checked from a purge point takes the oldest kept entry as given', () => {
  const links = chain([{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }]);
  assert.equal(checkLinks(undefined, links.slice(2)), undefined);
  assert.match(
    checkLinks({ id: 1, hash: links[0]?.hash ?? '' }, links.slice(2))?.problem ?? '',
    /entries 2 to 2 are missing/,
  );
});
