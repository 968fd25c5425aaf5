import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { submitSleep, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

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
      const job = await waitForStatus(t, submitted.jobId, 'Completed', 3000);
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

    test('a small MilliSeconds is Running for at least that long, then Completed', async () => {
      // Long enough that a poll sees it Running on a loaded machine.
      const submitted = await submitSleep(t, 1500);
      const running = await waitForStatus(t, submitted.jobId, 'Running', 3000);
      assert.equal(running.StatusCode, 'R');
      assert.equal(running.ProcessServer, 'GLOBAL.System');
      assert.equal(running.RunEnd, null);
      assert.equal(running.ReturnCode, null);
      const done = await waitForStatus(t, submitted.jobId, 'Completed', 5000);
      const ran = utcMillis(done.RunEnd) - utcMillis(done.RunStart);
      assert.ok(ran >= 1490, `ran ${ran} ms`); // at least what was asked (no upper bound: a loaded machine is late)
      assert.equal(done.ReturnCode, 0);
      assert.equal(done.RunStart, running.RunStart);
    });

    test('the default MilliSeconds (1000) is used when none is given', async () => {
      const res = await t.req('POST', '/Job/System_Sleep');
      assert.equal(res.status, 201, res.body);
      const done = await waitForStatus(t, res.json.jobId, 'Completed', 4000);
      const ran = utcMillis(done.RunEnd) - utcMillis(done.RunStart);
      assert.ok(ran >= 990, `ran ${ran} ms`);
    });

    test('several sleeps run side by side on GLOBAL.System', async () => {
      const jobs = await Promise.all([1, 2, 3, 4, 5].map(() => submitSleep(t, 1500)));
      const done = await Promise.all(jobs.map((j) => waitForStatus(t, j.jobId, 'Completed', 6000)));
      const starts = done.map((j) => utcMillis(j.RunStart));
      const ends = done.map((j) => utcMillis(j.RunEnd));
      assert.ok(Math.max(...starts) < Math.min(...ends), 'all five ran at the same time');
    });
  });
}
