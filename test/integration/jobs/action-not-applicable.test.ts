import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job actions: updateJob, disable, enable and unknown actions (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      for (const [key, body] of [
        ['/JobDefinition/GLOBAL.Echo', { Script: 'echo hi' }],
        ['/JobDefinition/GLOBAL.Ext', { Script: 'echo hi', CompletionStrategy: 'External' }],
      ] as const)
        assert.equal((await t.req('POST', key, { body })).status, 201);
    });
    after(() => t.close());

    test('updateJob on a running job whose definition is not External → 409; the job is unchanged', async () => {
      const job = await submitSleep(t, 60_000);
      await waitForStatus(t, job.jobId, 'Running');
      const res = await act(t, job.jobId, 'updateJob', { Status: 'Completed', Description: 'done by hand' });
      assertError(res, 409, /External/);
      const got = await getJob(t, job.jobId);
      assert.equal(got.Status, 'Running');
      assert.equal(got.Description, null);
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
    });

    test('updateJob on a job that is not running → 409 naming its status', async () => {
      const plain = await submit(t, 'GLOBAL.Echo');
      assertError(await act(t, plain.jobId, 'updateJob', { Status: 'Completed' }), 409, /Queued/);
      const external = await submit(t, 'GLOBAL.Ext');
      assertError(await act(t, external.jobId, 'updateJob', { Status: 'Completed' }), 409, /Queued/);
      assert.equal((await getJob(t, external.jobId)).Status, 'Queued');
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assertError(await act(t, done.jobId, 'updateJob', {}), 409, /Completed/);
    });

    test('disable and enable on a job that is not a chain step → 409 naming its status', async () => {
      const queued = await submit(t, 'GLOBAL.Echo');
      assertError(await act(t, queued.jobId, 'disable'), 409, /Queued/);
      assertError(await act(t, queued.jobId, 'enable'), 409, /Queued/);
      const held = await submitSleep(t, 0, { HoldOnSubmit: true });
      assertError(await act(t, held.jobId, 'disable'), 409, /Held/);
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assertError(await act(t, done.jobId, 'disable'), 409, /Completed/);
      assertError(await act(t, done.jobId, 'enable'), 409, /Completed/);
      assert.equal((await getJob(t, queued.jobId)).Status, 'Queued');
    });

    test('an unknown action → 400 naming it', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      assertError(await act(t, job.jobId, 'explode'), 400, /explode/);
      assertError(await act(t, job.jobId, 'Cancel'), 400, /Cancel/);
      assert.equal((await getJob(t, job.jobId)).Status, 'Queued');
    });

    test('an action on a job that does not exist → 404', async () => {
      assertError(await act(t, 999_999, 'cancel'), 404, 'Unable to find object Job:999999');
      assertError(await t.req('PUT', '/Job/abc/cancel'), 404, 'Unable to find object Job:abc');
      assertError(await t.req('GET', '/Job/0'), 404, 'Unable to find object Job:0');
    });
  });
}
