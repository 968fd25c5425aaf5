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
  describe(`job action kill (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
    });
    after(() => t.close());

    test('a Running System_Sleep → Killed at once, with its run times', async () => {
      const job = await submitSleep(t, 60_000);
      const running = await waitForStatus(t, job.jobId, 'Running');
      const res = await act(t, job.jobId, 'kill');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.jobId, job.jobId);
      assert.equal(res.json.Status, 'Killed');
      assert.equal(res.json.StatusCode, 'K');
      const got = await getJob(t, job.jobId);
      assert.equal(got.Status, 'Killed');
      assert.equal(got.ProcessServer, 'GLOBAL.System');
      assert.equal(got.RunStart, running.RunStart);
      assert.ok(utcMillis(got.RunEnd) >= utcMillis(got.RunStart));
    });

    test('a killed sleep does not turn Completed when its time is up', async () => {
      // Ten seconds: a loaded machine sees it Running and kills it well before its end ...
      const job = await submitSleep(t, 10_000);
      const running = await waitForStatus(t, job.jobId, 'Running');
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
      // ... and it stays Killed until a second past the moment it would have ended.
      const due = utcMillis(running.RunStart) + 10_000;
      await staysIn(t, job.jobId, 'Killed', Math.max(0, due + 1000 - Date.now()));
    });

    test('kill of a job that is not running → 409 naming its status', async () => {
      const queued = await submit(t, 'GLOBAL.Echo');
      assertError(await act(t, queued.jobId, 'kill'), 409, /Queued/);
      assert.equal((await getJob(t, queued.jobId)).Status, 'Queued');
      const held = await submitSleep(t, 0, { HoldOnSubmit: true });
      assertError(await act(t, held.jobId, 'kill'), 409, /Held/);
      const scheduled = await submitSleep(t, 0, { RequestedStartTime: '2099/01/01 00:00:00,000 UTC' });
      assertError(await act(t, scheduled.jobId, 'kill'), 409, /Scheduled/);
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assertError(await act(t, done.jobId, 'kill'), 409, /Completed/);
    });

    test('kill of a Killed job → 409 naming Killed', async () => {
      const job = await submitSleep(t, 60_000);
      await waitForStatus(t, job.jobId, 'Running');
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
      assertError(await act(t, job.jobId, 'kill'), 409, /Killed/);
    });
  });
}
