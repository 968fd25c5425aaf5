import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, staysIn, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { FakeClock } from '../../../src/time/clock.ts';

for (const backend of backends()) {
  describe(`queue Held (${backend.name})`, () => {
    let t: TestServer;
    // Virtual time: a Scheduled job's start comes when the test moves the clock, whatever the machine's speed.
    const clock = new FakeClock(Date.now());
    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      await systemQueue(t, 'GLOBAL.Q1', { ExecutionSize: 1 });
    });
    after(() => t.close());

    const holdQueue = async (held: boolean) => {
      const res = await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { Held: held } });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Held, held);
    };

    test('holding a queue turns its waiting jobs QueueHeld; the running job runs on', async () => {
      const running = await submitSleep(t, 60_000, { Queue: 'GLOBAL.Q1' });
      await waitForStatus(t, running.jobId, 'Running');
      const waiting = [
        await submitSleep(t, 0, { Queue: 'GLOBAL.Q1' }),
        await submitSleep(t, 0, { Queue: 'GLOBAL.Q1' }),
      ];
      for (const j of waiting) assert.equal(j.Status, 'Queued');
      await holdQueue(true);
      for (const j of waiting) {
        const got = await waitForStatus(t, j.jobId, 'QueueHeld');
        assert.equal(got.StatusCode, 'B');
      }
      assert.equal((await getJob(t, running.jobId)).Status, 'Running');

      // The slot frees, but the queue is held: nothing starts.
      assert.equal((await act(t, running.jobId, 'kill')).status, 200);
      for (const j of waiting) await staysIn(t, j.jobId, 'QueueHeld', 150);

      await holdQueue(false);
      for (const j of waiting) await waitForStatus(t, j.jobId, 'Completed');
    });

    test('a job submitted into a held queue is QueueHeld at once, and runs when the queue is released', async () => {
      await holdQueue(true);
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1' });
      assert.equal(job.Status, 'QueueHeld');
      await staysIn(t, job.jobId, 'QueueHeld', 150);
      await holdQueue(false);
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(done.ReturnCode, 0);
    });

    test('a Scheduled job whose start comes while its queue is held → QueueHeld', async () => {
      await holdQueue(true);
      const start = clock.now() + 60_000;
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1', RequestedStartTime: new Date(start).toISOString() });
      assert.equal(job.Status, 'Scheduled');
      clock.set(start + 1000);
      await t.server.engine.tick();
      await waitForStatus(t, job.jobId, 'QueueHeld');
      await holdQueue(false);
      await waitForStatus(t, job.jobId, 'Completed');
    });

    test('GLOBAL.System cannot be held', async () => {
      assertError(await t.req('PUT', '/Queue/GLOBAL.System', { body: { Held: true } }), 409, /GLOBAL\.System/);
      assert.equal((await t.req('GET', '/Queue/GLOBAL.System')).json.Held, false);
    });
  });
}
