import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Principal, partitionsWith } from '../../../src/security/privileges.ts';
import { encodeCursor, PAGE_PARAMS, partitionsToRead, readPage, readParams } from '../../../src/services/list-query.ts';

/** The pure parts of the lists: parameters, cursors, and the partitions a caller's grants let a list read. */

const principal = (grants: Principal['grants']): Principal => ({ user: 'u', roles: [], grants });

describe('partitionsWith', () => {
  it('a grant on every partition covers the privilege; named grants intersect across privileges', () => {
    assert.equal(
      partitionsWith(principal([{ type: '*', partition: '*', privileges: ['View'] }]), 'Job', ['View']),
      undefined,
    );
    const p = principal([
      { type: 'Job', partition: 'A', privileges: ['View'] },
      { type: '*', partition: 'B', privileges: ['View', 'Reply'] },
      { type: 'Queue', partition: 'C', privileges: ['View'] },
      { type: 'UserMessage', partition: '*', privileges: ['Reply'] },
    ]);
    assert.deepEqual(partitionsWith(p, 'Job', ['View']), ['A', 'B']);
    assert.deepEqual(partitionsWith(p, 'UserMessage', ['View', 'Reply']), ['B']);
    assert.deepEqual(partitionsWith(p, 'Alert', ['Reply']), ['B']);
    assert.deepEqual(partitionsWith(principal([]), 'Job', ['View']), []);
  });

  it('a partition asked for narrows the visible ones; one not visible reads nothing', () => {
    assert.deepEqual(partitionsToRead(undefined, 'A'), ['A']);
    assert.deepEqual(partitionsToRead(['A', 'B'], 'B'), ['B']);
    assert.deepEqual(partitionsToRead(['A'], 'B'), []);
    assert.equal(partitionsToRead(undefined, undefined), undefined);
  });
});

describe('list parameters and cursors', () => {
  it('names are matched without regard to case; unknown and repeated ones are refused by name', () => {
    assert.deepEqual(
      [...readParams({ limit: '5', FIELDS: 'jobId' }, PAGE_PARAMS)],
      [
        ['Limit', '5'],
        ['fields', 'jobId'],
      ],
    );
    assert.throws(() => readParams({ Offset: '5' }, PAGE_PARAMS), /Unknown query parameter "Offset"/);
    assert.throws(() => readParams({ Limit: ['1', '2'] }, PAGE_PARAMS), /"Limit" is given more than once/);
    assert.throws(() => readParams({ Limit: '1', limit: '2' }, PAGE_PARAMS), /"Limit" is given more than once/);
  });

  it('a cursor is read back only by a list of its own kind', () => {
    const values = (after: string) => new Map([['After', after]]);
    assert.equal(readPage(values(encodeCursor('j', 42)), 'j').after, '42');
    assert.equal(readPage(values(encodeCursor('k', 'GLOBAL.A.B')), 'k').after, 'GLOBAL.A.B');
    assert.throws(() => readPage(values(encodeCursor('j', 42)), 'm'), /"After" is not a cursor/);
    assert.throws(() => readPage(values(encodeCursor('j', '0')), 'j'), /"After" is not a cursor/);
    assert.throws(() => readPage(values('a+b/'), 'j'), /"After" is not a cursor/);
    assert.deepEqual(readPage(new Map(), 'j'), { limit: 100, after: undefined, fields: undefined });
    assert.equal(readPage(new Map([['Limit', '1000']]), 'j').limit, 1000);
    for (const bad of ['0', '1001', '1.5', '-1', ''])
      assert.throws(() => readPage(new Map([['Limit', bad]]), 'j'), /"Limit" must be a whole number/);
  });
});
