import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * `PUT /Job/<id>/<action>` takes "optional JSON of process properties". Each action applies the
 * properties that may change in the job's status with the action, in one transaction; one that may not → 400
 * naming it, and neither the action nor any property is done.
 */

for (const backend of backends()) {
  describe(`bodies on job actions (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      for (const [key, body] of [
        ['/JobDefinition/GLOBAL.Echo', { Script: 'echo hi', Parameters: [{ Name: 'WHO', DefaultValue: 'world' }] }],
        ['/Queue/GLOBAL.Closed', { Held: true }],
        ['/Queue/GLOBAL.Other', { Held: true }],
      ] as const)
        assert.equal((await t.req('POST', key, { body })).status, 201);
    });
    after(() => t.close());

    test('hold with Description, Priority, Queue, RequestedStartTime and parameters changes them with the hold', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { Queue: 'GLOBAL.Closed' });
      const res = await act(t, job.jobId, 'hold', {
        Description: 'held by ops',
        Priority: 20,
        Queue: 'GLOBAL.Other',
        RequestedStartTime: '2099/01/01 06:00:00,000 UTC',
        JobParameters: [{ Name: 'WHO', InValueString: 'Ada' }],
      });
      assert.equal(res.status, 200, res.body);
      const held = await getJob(t, job.jobId);
      assert.equal(held.Status, 'Held');
      assert.equal(held.Description, 'held by ops');
      assert.equal(held.Priority, 20);
      assert.equal(held.Queue, 'GLOBAL.Other');
      assert.equal(held.RequestedStartTime, '2099/01/01 06:00:00,000 UTC');
      assert.equal(held.JobParameters.find((p: { Name: string }) => p.Name === 'WHO').InValueString, 'Ada');
      // Released, it follows its new start time.
      assert.equal((await act(t, job.jobId, 'release', { Description: 'back' })).json.Status, 'Scheduled');
    });

    test('runnow with Priority', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { Queue: 'GLOBAL.Closed', HoldOnSubmit: true });
      const res = await act(t, job.jobId, 'runnow', { Priority: 90 });
      assert.equal(res.status, 200, res.body);
      assert.equal((await getJob(t, job.jobId)).Priority, 90);
    });

    test('a property that cannot change in the status → 400 naming it; the action is not done', async () => {
      const job = await submitSleep(t, 60_000);
      await waitForStatus(t, job.jobId, 'Running', 30_000);
      assertError(
        await act(t, job.jobId, 'kill', { Description: 'stop', Priority: 90 }),
        400,
        `Field "Priority" cannot be changed while Job:${job.jobId} is Running`,
      );
      const still = await getJob(t, job.jobId);
      assert.equal(still.Status, 'Running');
      assert.equal(still.Description, null);
      // The description alone may change in any status.
      const killed = await act(t, job.jobId, 'kill', { Description: 'stopped by ops' });
      assert.equal(killed.status, 200, killed.body);
      const done = await waitForStatus(t, job.jobId, 'Killed', 30_000);
      assert.equal(done.Description, 'stopped by ops');
    });

    test('fields given at submit, unknown fields and bad values → 400, nothing changes', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { Queue: 'GLOBAL.Closed' });
      assertError(
        await act(t, job.jobId, 'hold', { SubmitFrame: 'GLOBAL.Daily' }),
        400,
        'Field "SubmitFrame" is given at submit; the hold action cannot change it',
      );
      assertError(await act(t, job.jobId, 'hold', { Colour: 'red' }), 400, 'Unknown field "Colour"');
      assertError(await act(t, job.jobId, 'hold', { Description: 'x', Priority: 500 }), 400, /Priority/);
      assertError(await act(t, job.jobId, 'hold', { Queue: 'GLOBAL.Nope' }), 400, /Queue.*does not exist/);
      const same = await getJob(t, job.jobId);
      assert.equal(same.Status, 'QueueHeld');
      assert.equal(same.Description, null);
    });

    test('restart applies the body to the new job and leaves the finished one as it was', async () => {
      const job = await submitSleep(t, 0);
      await waitForStatus(t, job.jobId, 'Completed', 30_000);
      const res = await act(t, job.jobId, 'restart', {
        Description: 'second try',
        Priority: 70,
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 1 }],
      });
      assert.equal(res.status, 201, res.body);
      assert.notEqual(res.json.jobId, job.jobId);
      assert.equal(res.json.Description, 'second try');
      assert.equal(res.json.Priority, 70);
      const old = await getJob(t, job.jobId);
      assert.equal(old.Description, null);
      assert.equal(old.Priority, 50);
      assert.equal((await waitForStatus(t, res.json.jobId, 'Completed', 30_000)).Description, 'second try');
    });
  });
}
