import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, getJob, type JobJson, submitSleep, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const HOUR = 3_600_000;

for (const backend of backends()) {
  describe(`GLOBAL.System_Sleep runs inside the server (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      // The first request readies the HTTP app (slow once); keep that out of the timed tests.
      assert.equal((await t.req('GET', '/Queue/GLOBAL.System')).status, 200);
    });
    after(() => t.close());

    test('MilliSeconds 0 → Completed on GLOBAL.System with ReturnCode 0', async () => {
      const submitted = await submitSleep(t, 0);
      const job = await waitForStatus(t, submitted.jobId, 'Completed');
      assert.equal(job.StatusCode, 'C');
      assert.equal(job.ProcessServer, 'GLOBAL.System');
      assert.equal(job.Queue, 'GLOBAL.System');
      assert.equal(job.ReturnCode, 0);
      assert.ok(utcMillis(job.ScheduledStartTime) >= utcMillis(job.RequestedStartTime));
      assert.ok(utcMillis(job.RunStart) >= utcMillis(job.RequestedStartTime));
      assert.ok(utcMillis(job.RunEnd) >= utcMillis(job.RunStart));
      assert.deepEqual(job.JobFiles, []);
      assert.equal(job.LastModificationTime, job.RunEnd);
    });

    test('a sleeping job shows Running on GLOBAL.System, with no end and no return code yet', async () => {
      // An hour: it stays Running however slow the machine, so the poll cannot miss it; killed once seen.
      const submitted = await submitSleep(t, HOUR);
      const running = await waitForStatus(t, submitted.jobId, 'Running');
      assert.equal(running.StatusCode, 'R');
      assert.equal(running.ProcessServer, 'GLOBAL.System');
      assert.equal(running.RunEnd, null);
      assert.equal(running.ReturnCode, null);
      assert.equal((await act(t, submitted.jobId, 'kill')).status, 200);
      await waitForStatus(t, submitted.jobId, 'Killed');
    });

    test('a small MilliSeconds is Running for at least that long, then Completed', async () => {
      const submitted = await submitSleep(t, 1500);
      const done = await waitForStatus(t, submitted.jobId, 'Completed');
      const ran = utcMillis(done.RunEnd) - utcMillis(done.RunStart);
      assert.ok(ran >= 1490, `ran ${ran} ms`); // at least what was asked (no upper bound: a loaded machine is late)
      assert.equal(done.ReturnCode, 0);
      // Its history shows the run: Running at RunStart, Completed at RunEnd (read after the fact, no window to catch).
      const history = (await t.req('GET', `/Job/${submitted.jobId}/history`)).json.items as JobJson[];
      const at = (to: string) => history.find((h) => h.ToStatus === to);
      assert.equal(at('Running')?.Time, done.RunStart);
      assert.equal(at('Completed')?.FromStatus, 'Running');
      assert.equal(at('Completed')?.Time, done.RunEnd);
    });

    test('the default MilliSeconds (1000) is used when none is given', async () => {
      const res = await t.req('POST', '/Job/System_Sleep');
      assert.equal(res.status, 201, res.body);
      const done = await waitForStatus(t, res.json.jobId, 'Completed');
      const ran = utcMillis(done.RunEnd) - utcMillis(done.RunStart);
      assert.ok(ran >= 990, `ran ${ran} ms`);
    });

    test('several sleeps run side by side on GLOBAL.System', async () => {
      // Sleeps of an hour: all five Running at once is a lasting state, not a moment to catch; killed afterwards.
      const jobs = await Promise.all([1, 2, 3, 4, 5].map(() => submitSleep(t, HOUR)));
      const running = await Promise.all(jobs.map((j) => waitForStatus(t, j.jobId, 'Running')));
      const now = await Promise.all(jobs.map((j) => getJob(t, j.jobId)));
      assert.deepEqual(
        now.map((j) => j.Status),
        Array(5).fill('Running'),
        'all five run at the same time',
      );
      assert.deepEqual(
        now.map((j) => j.RunStart),
        running.map((j) => j.RunStart),
      );
      for (const j of jobs) assert.equal((await act(t, j.jobId, 'kill')).status, 200);
      await Promise.all(jobs.map((j) => waitForStatus(t, j.jobId, 'Killed')));
    });
  });
}
