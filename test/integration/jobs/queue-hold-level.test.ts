import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { staysIn, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`queue HoldLevel (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await systemQueue(t, 'GLOBAL.Q1', { HoldLevel: 50 });
    });
    after(() => t.close());

    test('a job with a priority below the HoldLevel waits; at or above it, it runs', async () => {
      const low = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1', Priority: 40 });
      const at = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1', Priority: 50 });
      const high = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1', Priority: 90 });
      await waitForStatus(t, at.jobId, 'Completed');
      await waitForStatus(t, high.jobId, 'Completed');
      await staysIn(t, low.jobId, 'Queued', 200);
    });

    test('lowering the HoldLevel lets the waiting job run', async () => {
      const low = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1', Priority: 10 });
      await staysIn(t, low.jobId, 'Queued', 150);
      const res = await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { HoldLevel: 5 } });
      assert.equal(res.status, 200, res.body);
      await waitForStatus(t, low.jobId, 'Completed');
    });

    test('clearing the HoldLevel lets every priority run', async () => {
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { HoldLevel: 100 } })).status, 200);
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1', Priority: 1 });
      await staysIn(t, job.jobId, 'Queued', 150);
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { HoldLevel: null } })).status, 200);
      await waitForStatus(t, job.jobId, 'Completed');
    });
  });
}
