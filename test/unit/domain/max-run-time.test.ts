import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobRecord } from '../../../src/domain/job.ts';
import { engineCause } from '../../../src/domain/job-history.ts';
import { JOB_STATUS_NAMES } from '../../../src/model/fields.ts';
import { limitDue, maxRunDue } from '../../../src/domain/max-run-time.ts';

const job = (over: Partial<JobRecord> = {}, spec: Record<string, unknown> = {}, data: Record<string, unknown> = {}) =>
  ({
    jobId: 7,
    status: 'Running',
    runStart: 1_000,
    returnCode: null,
    processServer: 'GLOBAL.Local',
    parentJob: null,
    ...over,
    data: { notes: [], spec: { type: 'BASH', maxRunTime: 30, ...spec }, ...data },
  }) as unknown as JobRecord;

test('a limited job is due at its run start plus the limit, only while the kill action applies to it', () => {
  for (const status of JOB_STATUS_NAMES)
    assert.equal(
      maxRunDue(job({ status })),
      ['Running', 'Waiting', 'Console'].includes(status) ? 31_000 : null,
      status,
    );
});

test('no limit, no start, or a chain step: never due', () => {
  assert.equal(maxRunDue(job({}, { maxRunTime: null })), null);
  assert.equal(maxRunDue(job({}, { maxRunTime: undefined })), null, 'a job stored before limits existed');
  assert.equal(maxRunDue(job({ runStart: null })), null);
  assert.equal(maxRunDue(job({ status: 'Waiting' }, {}, { chain: { step: { index: 0, runs: 1 } } })), null);
  assert.equal(limitDue(job({ status: 'Killing' })), 31_000, 'the limit itself stays, whatever the status');
});

test('the end of a job killed at its limit records the cause and names the limit', () => {
  const killed = job({ status: 'Killed', returnCode: 143 }, {}, { overrun: 30 });
  assert.deepEqual(engineCause(killed, 'Killing', 'Killed'), {
    cause: 'maxruntime',
    detail: 'Job:7 ran past its MaxRunTime of 30 s',
  });
  assert.notEqual(engineCause(job({ status: 'Killed' }), 'Killing', 'Killed').cause, 'maxruntime');
});
