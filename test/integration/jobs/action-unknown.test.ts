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
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job action unknown (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
    });
    after(() => t.close());

    async function setsUnknown(jobId: number): Promise<void> {
      const res = await act(t, jobId, 'unknown');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.jobId, jobId);
      assert.equal(res.json.Status, 'Unknown');
      assert.equal(res.json.StatusCode, 'U');
      assert.equal((await getJob(t, jobId)).Status, 'Unknown');
    }

    test('a Queued job → Unknown', async () => {
      await setsUnknown((await submit(t, 'GLOBAL.Echo')).jobId);
    });

    test('a Held job → Unknown', async () => {
      await setsUnknown((await submitSleep(t, 0, { HoldOnSubmit: true })).jobId);
    });

    test('a Scheduled job → Unknown', async () => {
      await setsUnknown((await submitSleep(t, 0, { RequestedStartTime: '2099/01/01 00:00:00,000 UTC' })).jobId);
    });

    test('a Running System_Sleep → Unknown, and it stays Unknown when its time is up', async () => {
      // Ten seconds: a loaded machine sees it Running and sets it Unknown well before its end ...
      const job = await submitSleep(t, 10_000);
      const running = await waitForStatus(t, job.jobId, 'Running');
      await setsUnknown(job.jobId);
      // ... and it stays Unknown until a second past the moment it would have ended.
      const due = utcMillis(running.RunStart) + 10_000;
      await staysIn(t, job.jobId, 'Unknown', Math.max(0, due + 1000 - Date.now()));
    });

    test('a final job → 409 naming its status', async () => {
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assertError(await act(t, done.jobId, 'unknown'), 409, /Completed/);
      const unknown = await submit(t, 'GLOBAL.Echo');
      await setsUnknown(unknown.jobId);
      assertError(await act(t, unknown.jobId, 'unknown'), 409, /Unknown/);
    });
  });
}
