import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventEnvironment } from '../../../src/domain/event-comment.ts';
import { folderProblem, isInside, watchesOf } from '../../../src/domain/file-watch.ts';

test('folders must be absolute and hold no ".." part', () => {
  assert.equal(folderProblem('/data/in'), undefined);
  assert.equal(folderProblem('/data/..in'), undefined, 'a name that starts with two dots is a name');
  assert.equal(folderProblem('data/in'), 'must be an absolute path (starting with /)');
  assert.equal(folderProblem('/data/../etc'), 'must not hold a ".." part');
  assert.equal(folderProblem('/data/..'), 'must not hold a ".." part');
});

test('inside a root: the root itself or below it, not a sibling sharing its prefix', () => {
  assert.ok(isInside('/data/in', '/data'));
  assert.ok(isInside('/data', '/data/'));
  assert.ok(isInside('/data/in/deep', '/data/in'));
  assert.ok(!isInside('/database', '/data'));
  assert.ok(!isInside('/etc', '/data'));
  assert.ok(isInside('/anything', '/'), 'the root folder holds everything');
});

test('the watches of a process server: its enabled items only, with the defaults filled in', () => {
  const defs = [
    {
      key: 'GLOBAL.A',
      data: {
        FileEvents: [
          { ProcessServer: 'GLOBAL.Local', Directory: '/in', Pattern: '*.csv', PollSeconds: 2, StableSeconds: 3 },
          { ProcessServer: 'GLOBAL.Other', Directory: '/x' },
          { ProcessServer: 'GLOBAL.Local', Directory: '/off', Enabled: false },
          { ProcessServer: 'GLOBAL.Local', Directory: '/m', MoveDirectory: '/done' },
        ],
      },
    },
    { key: 'GLOBAL.B', data: { FileEvents: null } },
  ];
  assert.deepEqual(watchesOf('GLOBAL.Local', defs), [
    {
      definition: 'GLOBAL.A',
      directory: '/in',
      pattern: '*.csv',
      pollSeconds: 2,
      stableSeconds: 3,
      moveDirectory: null,
    },
    {
      definition: 'GLOBAL.A',
      directory: '/m',
      pattern: '*',
      pollSeconds: 10,
      stableSeconds: 5,
      moveDirectory: '/done',
    },
  ]);
});

test("a job's environment: the first WaitEvent's comment, and each by its definition's name in upper case", () => {
  assert.deepEqual(eventEnvironment({ data: {} }), {});
  assert.deepEqual(
    eventEnvironment({
      data: {
        eventComments: [
          { definition: 'GLOBAL.CsvArrived', comment: '/in/a.csv' },
          { definition: 'Finance.Ready', comment: null },
        ],
      },
    }),
    {
      MILLRACE_EVENT_COMMENT: '/in/a.csv',
      MILLRACE_EVENT_COMMENT_CSVARRIVED: '/in/a.csv',
      MILLRACE_EVENT_COMMENT_READY: '',
    },
  );
});
