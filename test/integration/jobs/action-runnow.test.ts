import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  assertError,
  getJob,
  staysIn,
  submit,
  submitSleep,
  systemQueue,
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job action runnow (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
      await systemQueue(t, 'GLOBAL.Closed', { Held: true });
      await systemQueue(t, 'GLOBAL.Full', { ExecutionSize: 0 });
    });
    after(() => t.close());

    test('a Scheduled job with a start far ahead runs now', async () => {
      const job = await submitSleep(t, 0, { RequestedStartTime: '2099/01/01 00:00:00,000 UTC' });
      assert.equal(job.Status, 'Scheduled');
      const res = await act(t, job.jobId, 'runnow');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.jobId, job.jobId);
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(done.ProcessServer, 'GLOBAL.System');
      assert.ok(utcMillis(done.RunStart) < Date.UTC(2099, 0, 1), 'it ran before its requested start');
      assert.equal(done.RequestedStartTime, '2099/01/01 00:00:00,000 UTC', 'the requested start is kept');
    });

    test('a Held job runs now', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      assert.equal((await act(t, job.jobId, 'runnow')).status, 200);
      await waitForStatus(t, job.jobId, 'Completed');
    });

    test('a job in a held queue runs now; the queue stays held for the others', async () => {
      const other = await submitSleep(t, 0, { Queue: 'GLOBAL.Closed' });
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Closed' });
      assert.equal(job.Status, 'QueueHeld');
      assert.equal((await act(t, job.jobId, 'runnow')).status, 200);
      await waitForStatus(t, job.jobId, 'Completed');
      await staysIn(t, other.jobId, 'QueueHeld', 150);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Closed')).json.Held, true);
    });

    test('a job waiting for a full queue runs now', async () => {
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Full' });
      await staysIn(t, job.jobId, 'Queued', 150);
      assert.equal((await act(t, job.jobId, 'runnow')).status, 200);
      await waitForStatus(t, job.jobId, 'Completed');
    });

    test('an agent job with no process server able to run it stays Queued', async () => {
      const job = await submit(t, 'GLOBAL.Echo', { HoldOnSubmit: true });
      const res = await act(t, job.jobId, 'runnow');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Queued');
      await staysIn(t, job.jobId, 'Queued', 150);
      assert.equal((await getJob(t, job.jobId)).ProcessServer, null);
    });

    test('a Running or a final job → 409 naming its status', async () => {
      const running = await submitSleep(t, 60_000);
      await waitForStatus(t, running.jobId, 'Running');
      assertError(await act(t, running.jobId, 'runnow'), 409, /Running/);
      assert.equal((await act(t, running.jobId, 'kill')).status, 200);
      assertError(await act(t, running.jobId, 'runnow'), 409, /Killed/);
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assertError(await act(t, done.jobId, 'runnow'), 409, /Completed/);
    });
  });
}
