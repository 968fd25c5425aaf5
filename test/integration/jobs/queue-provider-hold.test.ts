import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { getJob, staysIn, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`queue provider Held and limits (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await systemQueue(t, 'GLOBAL.Q3');
      const bare = await t.req('POST', '/Queue/GLOBAL.Unserved', { body: {} });
      assert.equal(bare.status, 201, bare.body);
    });
    after(() => t.close());

    const holdProvider = async (held: boolean) => {
      const res = await t.req('PUT', '/QueueProvider/GLOBAL.System.GLOBAL.Q3', { body: { Held: held } });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Held, held);
    };

    test('a held queue provider dispatches nothing through it; released, its jobs run', async () => {
      await holdProvider(true);
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Q3' });
      assert.equal(job.Status, 'Queued', 'the queue itself is not held');
      await staysIn(t, job.jobId, 'Queued', 200);
      assert.equal((await getJob(t, job.jobId)).ProcessServer, null);
      await holdProvider(false);
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(done.ProcessServer, 'GLOBAL.System');
    });

    test('a provider ExecutionSize limits its queue when it is the more restrictive', async () => {
      const limit = await t.req('PUT', '/QueueProvider/GLOBAL.System.GLOBAL.Q3', { body: { ExecutionSize: 1 } });
      assert.equal(limit.status, 200, limit.body);
      const first = await submitSleep(t, 60_000, { Queue: 'GLOBAL.Q3' });
      await waitForStatus(t, first.jobId, 'Running');
      const second = await submitSleep(t, 0, { Queue: 'GLOBAL.Q3' });
      await staysIn(t, second.jobId, 'Queued', 200);
      assert.equal((await t.req('PUT', `/Job/${first.jobId}/kill`)).status, 200);
      await waitForStatus(t, second.jobId, 'Completed');
    });

    test('a queue no process server serves keeps its jobs Queued', async () => {
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Unserved' });
      await staysIn(t, job.jobId, 'Queued', 200);
      const link = await t.req('POST', '/QueueProvider/GLOBAL.System.GLOBAL.Unserved', { body: {} });
      assert.equal(link.status, 201, link.body);
      await waitForStatus(t, job.jobId, 'Completed');
    });
  });
}
