import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job action restart (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
    });
    after(() => t.close());

    test('a Completed job → 201 with a new job that runs; the original stays Completed', async () => {
      const original = await submitSleep(t, 20, { Description: 'first run', Priority: 65 });
      const done = await waitForStatus(t, original.jobId, 'Completed');
      const res = await act(t, original.jobId, 'restart');
      assert.equal(res.status, 201, res.body);
      const copy = res.json;
      assert.notEqual(copy.jobId, original.jobId);
      assert.ok(copy.jobId > original.jobId);
      assert.notEqual(copy.uniqueId, original.uniqueId);
      assert.equal(copy.businessKey, `Job:${copy.jobId}`);
      assert.equal(copy.JobDefinition, 'GLOBAL.System_Sleep');
      assert.equal(copy.Description, 'first run');
      assert.equal(copy.Priority, 65);
      assert.equal(copy.Queue, 'GLOBAL.System');
      assert.equal(copy.JobParameters[0].InValueNumber, 20);
      assert.ok(['Queued', 'Running', 'Completed'].includes(copy.Status), copy.Status);
      assert.equal(copy.ReturnCode, null);
      assert.equal(copy.RunEnd, null);
      assert.deepEqual(copy.JobNotes, []);
      const copyDone = await waitForStatus(t, copy.jobId, 'Completed');
      assert.equal(copyDone.ReturnCode, 0);
      assert.deepEqual(await getJob(t, original.jobId), done, 'the original is unchanged');
    });

    test('Killed, Canceled and Unknown jobs can be restarted too', async () => {
      const killed = await submitSleep(t, 60_000);
      await waitForStatus(t, killed.jobId, 'Running');
      assert.equal((await act(t, killed.jobId, 'kill')).status, 200);
      const canceled = await submit(t, 'GLOBAL.Echo');
      assert.equal((await act(t, canceled.jobId, 'cancel')).status, 200);
      const unknown = await submit(t, 'GLOBAL.Echo');
      assert.equal((await act(t, unknown.jobId, 'unknown')).status, 200);
      for (const [job, status] of [
        [killed, 'Killed'],
        [canceled, 'Canceled'],
        [unknown, 'Unknown'],
      ] as const) {
        const res = await act(t, job.jobId, 'restart');
        assert.equal(res.status, 201, res.body);
        assert.notEqual(res.json.jobId, job.jobId);
        assert.equal(res.json.JobDefinition, job.JobDefinition);
        assert.equal((await getJob(t, job.jobId)).Status, status, 'the original keeps its status');
      }
    });

    test('the restarted sleep runs with the original parameters', async () => {
      const job = await submitSleep(t, 60_000);
      await waitForStatus(t, job.jobId, 'Running');
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
      const copy = (await act(t, job.jobId, 'restart')).json;
      const running = await waitForStatus(t, copy.jobId, 'Running');
      assert.equal(running.JobParameters[0].InValueNumber, 60_000);
      assert.equal((await act(t, copy.jobId, 'kill')).status, 200);
    });

    test("the restarter is the new job's SubmittedBy", async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
      const operator = await t.keyWithRoles('operator1', ['Operator']);
      const res = await act(t, job.jobId, 'restart', undefined, operator);
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.SubmittedBy, 'operator1');
      assert.equal((await getJob(t, job.jobId)).SubmittedBy, 'admin');
    });

    test('a job that is not final → 409 naming its status, and no new job', async () => {
      const queued = await submit(t, 'GLOBAL.Echo');
      assertError(await act(t, queued.jobId, 'restart'), 409, /Queued/);
      const running = await submitSleep(t, 60_000);
      await waitForStatus(t, running.jobId, 'Running');
      assertError(await act(t, running.jobId, 'restart'), 409, /Running/);
      assert.equal((await act(t, running.jobId, 'kill')).status, 200);
      assert.equal((await t.req('GET', `/Job/${running.jobId + 1}`)).status, 404);
    });
  });
}
