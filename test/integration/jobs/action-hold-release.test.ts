import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, staysIn, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job actions hold and release (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      for (const [key, body] of [
        ['/JobDefinition/GLOBAL.Echo', { Script: 'echo hi' }],
        ['/Queue/GLOBAL.Closed', { Held: true }],
      ] as const)
        assert.equal((await t.req('POST', key, { body })).status, 201);
    });
    after(() => t.close());

    async function moves(jobId: number, action: string, to: string): Promise<void> {
      const res = await act(t, jobId, action);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.jobId, jobId);
      assert.equal(res.json.Status, to);
      assert.equal((await getJob(t, jobId)).Status, to);
    }

    test('Queued → hold → Held → release → Queued', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      await moves(job.jobId, 'hold', 'Held');
      assert.equal((await getJob(t, job.jobId)).StatusCode, 'H');
      await moves(job.jobId, 'release', 'Queued');
    });

    test('Scheduled → hold → Held → release → Scheduled again (its start is still ahead)', async () => {
      const job = await submitSleep(t, 0, { RequestedStartTime: '2099/01/01 00:00:00,000 UTC' });
      await moves(job.jobId, 'hold', 'Held');
      await moves(job.jobId, 'release', 'Scheduled');
    });

    test('a released job in a held queue → QueueHeld', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { Queue: 'GLOBAL.Closed' });
      assert.equal(job.Status, 'QueueHeld');
      await moves(job.jobId, 'hold', 'Held');
      await moves(job.jobId, 'release', 'QueueHeld');
    });

    test('a held System_Sleep job does not run; released, it runs to Completed', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      await staysIn(t, job.jobId, 'Held', 150);
      const res = await act(t, job.jobId, 'release');
      assert.equal(res.status, 200, res.body);
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(done.ReturnCode, 0);
    });

    test('hold of a Held job → 409 naming Held', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      assertError(await act(t, job.jobId, 'hold'), 409, /Held/);
    });

    test('release of a job that is not Held → 409 naming its status', async () => {
      const queued = await submit(t, 'GLOBAL.Echo');
      assertError(await act(t, queued.jobId, 'release'), 409, /Queued/);
      assert.equal((await getJob(t, queued.jobId)).Status, 'Queued');
      const scheduled = await submitSleep(t, 0, { RequestedStartTime: '2099/01/01 00:00:00,000 UTC' });
      assertError(await act(t, scheduled.jobId, 'release'), 409, /Scheduled/);
    });

    test('hold of a Running or a final job → 409 naming its status', async () => {
      const running = await submitSleep(t, 60_000);
      await waitForStatus(t, running.jobId, 'Running');
      assertError(await act(t, running.jobId, 'hold'), 409, /Running/);
      assert.equal((await act(t, running.jobId, 'kill')).status, 200);
      assertError(await act(t, running.jobId, 'hold'), 409, /Killed/);
      assertError(await act(t, running.jobId, 'release'), 409, /Killed/);
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assertError(await act(t, done.jobId, 'hold'), 409, /Completed/);
    });
  });
}
