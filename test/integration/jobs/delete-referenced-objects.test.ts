import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, submit, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`objects a job refers to cannot be deleted while the job exists (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      // The first request readies the HTTP app (slow once); keep that out of the timed tests.
      assert.equal((await t.req('GET', '/Queue/GLOBAL.System')).status, 200);
    });
    after(() => t.close());

    test('a JobDefinition with a historic job → 409 naming the job; deletable once the job is gone', async () => {
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Old', { body: { Script: 'true' } })).status, 201);
      const job = await submit(t, 'GLOBAL.Old');
      assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
      assertError(await t.req('DELETE', '/JobDefinition/GLOBAL.Old'), 409, new RegExp(`Job:${job.jobId}\\b`));
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Old')).status, 200, 'it is kept');
      assert.equal((await t.req('DELETE', `/Job/${job.jobId}`)).status, 204);
      assert.equal((await t.req('DELETE', '/JobDefinition/GLOBAL.Old')).status, 204);
      assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Old')).status, 404);
    });

    test('a Queue a completed job ran in → 409 naming the job; deletable once the job is gone', async () => {
      await systemQueue(t, 'GLOBAL.Gone');
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Gone' });
      await waitForStatus(t, job.jobId, 'Completed');
      assert.equal((await t.req('DELETE', '/QueueProvider/GLOBAL.System.GLOBAL.Gone')).status, 204);
      assertError(await t.req('DELETE', '/Queue/GLOBAL.Gone'), 409, new RegExp(`Job:${job.jobId}\\b`));
      assert.equal((await t.req('GET', '/Queue/GLOBAL.Gone')).status, 200, 'it is kept');
      assert.equal((await t.req('DELETE', `/Job/${job.jobId}`)).status, 204);
      assert.equal((await t.req('DELETE', '/Queue/GLOBAL.Gone')).status, 204);
    });

    test('a Queue a waiting job is in → 409', async () => {
      assert.equal((await t.req('POST', '/Queue/GLOBAL.Waiting', { body: {} })).status, 201);
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Waiting' });
      assert.equal(job.Status, 'Queued');
      assertError(await t.req('DELETE', '/Queue/GLOBAL.Waiting'), 409, new RegExp(`Job:${job.jobId}\\b`));
    });
  });
}
