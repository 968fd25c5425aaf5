import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, staysIn, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { FakeClock } from '../../../src/time/clock.ts';

for (const backend of backends()) {
  describe(`job action cancel (${backend.name})`, () => {
    let t: TestServer;
    // Virtual time: a Scheduled job's start comes when the test moves the clock, not while a slow machine polls.
    const clock = new FakeClock(Date.now());
    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      for (const [key, body] of [
        ['/JobDefinition/GLOBAL.Echo', { Script: 'echo hi' }],
        ['/Queue/GLOBAL.Closed', { Held: true }],
      ] as const)
        assert.equal((await t.req('POST', key, { body })).status, 201);
    });
    after(() => t.close());

    async function cancels(jobId: number, from: string): Promise<void> {
      assert.equal((await getJob(t, jobId)).Status, from);
      const res = await act(t, jobId, 'cancel');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.jobId, jobId);
      assert.equal(res.json.Status, 'Canceled');
      assert.equal(res.json.StatusCode, 'A');
      const got = await getJob(t, jobId);
      assert.equal(got.Status, 'Canceled');
      assert.equal(got.RunStart, null, 'it never ran');
      assert.equal(got.ProcessServer, null);
    }

    test('a Held job → Canceled', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      await cancels(job.jobId, 'Held');
      await staysIn(t, job.jobId, 'Canceled', 100);
    });

    test('a Scheduled job → Canceled, and does not run at its start time', async () => {
      const start = clock.now() + 60_000;
      const job = await submitSleep(t, 0, { RequestedStartTime: new Date(start).toISOString() });
      await cancels(job.jobId, 'Scheduled');
      // Its start time comes and passes: what a timer would do then does not run it.
      clock.set(start + 1000);
      await t.server.engine.tick();
      await staysIn(t, job.jobId, 'Canceled', 200);
    });

    test('a Queued job → Canceled', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      await cancels(job.jobId, 'Queued');
    });

    test('a QueueHeld job → Canceled', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { Queue: 'GLOBAL.Closed' });
      await cancels(job.jobId, 'QueueHeld');
    });

    test('cancelRecurrence=true on a job outside a recurrence cancels that job', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      const res = await t.req('PUT', `/Job/${job.jobId}/cancel?cancelRecurrence=true`);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Canceled');
    });

    test('a Completed job → 409 naming Completed; it stays Completed', async () => {
      const job = await submitSleep(t, 0);
      await waitForStatus(t, job.jobId, 'Completed');
      assertError(await act(t, job.jobId, 'cancel'), 409, /Completed/);
      assert.equal((await getJob(t, job.jobId)).Status, 'Completed');
    });

    test('a Running job → 409 naming Running', async () => {
      const job = await submitSleep(t, 60_000);
      await waitForStatus(t, job.jobId, 'Running');
      assertError(await act(t, job.jobId, 'cancel'), 409, /Running/);
      assert.equal((await getJob(t, job.jobId)).Status, 'Running');
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
    });

    test('a Canceled job → 409 naming Canceled', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
      assertError(await act(t, job.jobId, 'cancel'), 409, /Canceled/);
    });

    test('cancel takes an optional body of process properties, applied with it', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      const res = await act(t, job.jobId, 'cancel', { Description: 'not needed today' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Canceled');
      assert.equal((await getJob(t, job.jobId)).Description, 'not needed today');
      const other = await submit(t, 'GLOBAL.Echo');
      assert.equal((await act(t, other.jobId, 'cancel', {})).status, 200, 'an empty body is no body');
    });
  });
}
