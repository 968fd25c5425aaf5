import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`DELETE /Job/<id> (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
    });
    after(() => t.close());

    test('a final job → 204 with no body; then GET → 404 Unable to find object Job:<id>', async () => {
      const job = await submitSleep(t, 0);
      await waitForStatus(t, job.jobId, 'Completed');
      const res = await t.req('DELETE', `/Job/${job.jobId}`);
      assert.equal(res.status, 204, res.body);
      assert.equal(res.body, '');
      assertError(await t.req('GET', `/Job/${job.jobId}`), 404, `Unable to find object Job:${job.jobId}`);
    });

    test('deleting it again, or acting on it → 404', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
      assert.equal((await t.req('DELETE', `/Job/${job.jobId}`)).status, 204);
      assertError(await t.req('DELETE', `/Job/${job.jobId}`), 404, `Unable to find object Job:${job.jobId}`);
      assertError(await act(t, job.jobId, 'restart'), 404, `Unable to find object Job:${job.jobId}`);
    });

    test('every final status can be deleted', async () => {
      const killed = await submitSleep(t, 60_000);
      await waitForStatus(t, killed.jobId, 'Running');
      assert.equal((await act(t, killed.jobId, 'kill')).status, 200);
      const unknown = await submit(t, 'GLOBAL.Echo');
      assert.equal((await act(t, unknown.jobId, 'unknown')).status, 200);
      for (const job of [killed, unknown]) {
        assert.equal((await t.req('DELETE', `/Job/${job.jobId}`)).status, 204);
        assert.equal((await t.req('GET', `/Job/${job.jobId}`)).status, 404);
      }
    });

    test('a job that is not final → 409 naming its status; it is kept', async () => {
      const queued = await submit(t, 'GLOBAL.Echo');
      assertError(await t.req('DELETE', `/Job/${queued.jobId}`), 409, /Queued/);
      const held = await submitSleep(t, 0, { HoldOnSubmit: true });
      assertError(await t.req('DELETE', `/Job/${held.jobId}`), 409, /Held/);
      const running = await submitSleep(t, 60_000);
      await waitForStatus(t, running.jobId, 'Running');
      assertError(await t.req('DELETE', `/Job/${running.jobId}`), 409, /Running/);
      assert.equal((await getJob(t, queued.jobId)).Status, 'Queued');
      assert.equal((await getJob(t, running.jobId)).Status, 'Running');
      assert.equal((await act(t, running.jobId, 'kill')).status, 200);
    });

    test('a job id that does not exist or is not a number → 404', async () => {
      assertError(await t.req('DELETE', '/Job/999999'), 404, 'Unable to find object Job:999999');
      assertError(await t.req('DELETE', '/Job/x1'), 404, 'Unable to find object Job:x1');
    });
  });
}
