import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { getJob, staysIn, submit, submitSleep, utcMillis } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`job submit: where a new job waits (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      for (const [key, body] of [
        ['/Queue/GLOBAL.Batch', {}],
        ['/Queue/GLOBAL.Other', {}],
        ['/JobDefinition/GLOBAL.InBatch', { Script: 'true', DefaultQueue: 'GLOBAL.Batch' }],
        ['/JobDefinition/GLOBAL.Holds', { Script: 'true', HoldOnSubmit: true }],
      ] as const) {
        const res = await t.req('POST', key, { body });
        assert.equal(res.status, 201, `${key}: ${res.body}`);
      }
    });
    after(() => t.close());

    test('a RequestedStartTime in the future → Scheduled, shown in the zone it was given in', async () => {
      const job = await submitSleep(t, 0, { RequestedStartTime: '2099/01/02 03:04:05,006 Europe/Amsterdam' });
      assert.equal(job.Status, 'Scheduled');
      assert.equal(job.StatusCode, 'S');
      assert.equal(job.RequestedStartTime, '2099/01/02 03:04:05,006 Europe/Amsterdam');
      await staysIn(t, job.jobId, 'Scheduled', 150);
      const got = await getJob(t, job.jobId);
      assert.equal(got.RunStart, null);
      assert.equal(got.ProcessServer, null);
    });

    test('an ISO-8601 RequestedStartTime in the future → Scheduled at that instant', async () => {
      const at = Date.now() + 3_600_000;
      const res = await t.req('POST', '/Job/GLOBAL.InBatch', {
        body: { RequestedStartTime: new Date(at).toISOString() },
      });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.Status, 'Scheduled');
      assert.equal(utcMillis(res.json.RequestedStartTime), at);
    });

    test('a RequestedStartTime in the past → the job may run now', async () => {
      const job = await submit(t, 'GLOBAL.InBatch', { RequestedStartTime: '2001/01/01 00:00:00,000 UTC' });
      assert.equal(job.Status, 'Queued');
      assert.equal(job.RequestedStartTime, '2001/01/01 00:00:00,000 UTC');
    });

    test('HoldOnSubmit true → Held, and it stays Held', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      assert.equal(job.Status, 'Held');
      assert.equal(job.StatusCode, 'H');
      await staysIn(t, job.jobId, 'Held', 150);
    });

    test('a definition with HoldOnSubmit → Held, unless the body says false', async () => {
      assert.equal((await submit(t, 'GLOBAL.Holds')).Status, 'Held');
      assert.equal((await submit(t, 'GLOBAL.Holds', { HoldOnSubmit: false })).Status, 'Queued');
    });

    test('HoldOnSubmit wins over a future start', async () => {
      const job = await submitSleep(t, 0, { HoldOnSubmit: true, RequestedStartTime: '2099/01/01 00:00:00,000 UTC' });
      assert.equal(job.Status, 'Held');
    });

    test("the queue defaults to the definition's DefaultQueue; the body's Queue overrides it", async () => {
      assert.equal((await submit(t, 'GLOBAL.InBatch')).Queue, 'GLOBAL.Batch');
      assert.equal((await submit(t, 'GLOBAL.InBatch', { Queue: 'GLOBAL.Other' })).Queue, 'GLOBAL.Other');
      assert.equal(
        (await submit(t, 'GLOBAL.InBatch', { Queue: 'Other' })).Queue,
        'GLOBAL.Other',
        'a bare queue name is GLOBAL',
      );
      assert.equal((await submitSleep(t, 0, { HoldOnSubmit: true })).Queue, 'GLOBAL.System');
    });

    test('a job of an agent type waits Queued while no agent is connected', async () => {
      const job = await submit(t, 'GLOBAL.InBatch', { Queue: 'GLOBAL.Default' });
      assert.equal(job.Status, 'Queued');
      await staysIn(t, job.jobId, 'Queued', 200);
      assert.equal((await getJob(t, job.jobId)).ProcessServer, null);
    });
  });
}
