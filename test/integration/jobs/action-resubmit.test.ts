import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, submit, submitSleep, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const MS_REF = 'JobDefinitionParameter:GLOBAL.System_Sleep.MilliSeconds';

for (const backend of backends()) {
  describe(`job resubmit: PUT /Job/<id> and /resubmit (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      assert.equal((await t.req('POST', '/JobDefinition/GLOBAL.Echo', { body: { Script: 'echo hi' } })).status, 201);
    });
    after(() => t.close());

    test('PUT /Job/<id> with a body → 201 with a new job, the body applied; the original is unchanged', async () => {
      const original = await submitSleep(t, 0, { Description: 'first' });
      const done = await waitForStatus(t, original.jobId, 'Completed');
      const res = await act(t, original.jobId, '', {
        Description: 'second',
        JobParameters: [{ JobDefinitionParameter: MS_REF, InValueNumber: 250 }],
      });
      assert.equal(res.status, 201, res.body);
      const copy = res.json;
      assert.notEqual(copy.jobId, original.jobId);
      assert.equal(copy.JobDefinition, 'GLOBAL.System_Sleep');
      assert.equal(copy.Description, 'second');
      assert.equal(copy.JobParameters[0].InValueNumber, 250);
      assert.equal(copy.JobParameters[0].JobDefinitionParameter, MS_REF);
      const copyDone = await waitForStatus(t, copy.jobId, 'Completed');
      const ran = utcMillis(copyDone.RunEnd) - utcMillis(copyDone.RunStart);
      assert.ok(ran >= 240, `the new job slept ${ran} ms`);
      const after = await getJob(t, original.jobId);
      assert.deepEqual(after, done, 'the original keeps its status, parameters and description');
    });

    test('PUT /Job/<id>/resubmit with parameters by Name and a Priority', async () => {
      const original = await submitSleep(t, 0, { Description: 'kept', Priority: 40 });
      await waitForStatus(t, original.jobId, 'Completed');
      const res = await act(t, original.jobId, 'resubmit', {
        Priority: 70,
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 5 }],
      });
      assert.equal(res.status, 201, res.body);
      assert.notEqual(res.json.jobId, original.jobId);
      assert.equal(res.json.Priority, 70);
      assert.equal(res.json.Description, 'kept', 'properties not in the body are copied');
      assert.equal(res.json.JobParameters[0].InValueNumber, 5);
      await waitForStatus(t, res.json.jobId, 'Completed');
    });

    test('a resubmit without a body copies the job', async () => {
      const original = await submitSleep(t, 7, { Description: 'copy me' });
      await waitForStatus(t, original.jobId, 'Completed');
      for (const path of [`/Job/${original.jobId}`, `/Job/${original.jobId}/resubmit`]) {
        const res = await t.req('PUT', path);
        assert.equal(res.status, 201, `${path}: ${res.body}`);
        assert.notEqual(res.json.jobId, original.jobId);
        assert.equal(res.json.Description, 'copy me');
        assert.equal(res.json.JobParameters[0].InValueNumber, 7);
      }
    });

    test('HoldOnSubmit and RequestedStartTime of the body set where the new job waits', async () => {
      const original = await submit(t, 'GLOBAL.Echo');
      const held = await act(t, original.jobId, 'resubmit', { HoldOnSubmit: true });
      assert.equal(held.status, 201, held.body);
      assert.equal(held.json.Status, 'Held');
      const later = await act(t, original.jobId, '', { RequestedStartTime: '2099/06/01 12:00:00,000 Europe/Paris' });
      assert.equal(later.status, 201, later.body);
      assert.equal(later.json.Status, 'Scheduled');
      assert.equal(later.json.RequestedStartTime, '2099/06/01 12:00:00,000 Europe/Paris');
      assert.equal((await getJob(t, original.jobId)).Status, 'Queued', 'a pending job can be resubmitted too');
    });

    test('a bad body → 400 naming the field, and no new job', async () => {
      const original = await submitSleep(t, 0);
      await waitForStatus(t, original.jobId, 'Completed');
      for (const [body, message] of [
        [{ JobParameters: [{ Name: 'MilliSeconds', InValueString: 'abc' }] }, /MilliSeconds/],
        [{ JobParameters: [{ Name: 'Nope', InValueNumber: 1 }] }, /Nope/],
        [{ Priority: 0 }, /Priority/],
        [{ Queue: 'GLOBAL.Missing' }, /GLOBAL\.Missing/],
        [{ Unknown: true }, /Unknown/],
      ] as const)
        assertError(await act(t, original.jobId, 'resubmit', body), 400, message);
      assert.equal((await t.req('GET', `/Job/${original.jobId + 1}`)).status, 404);
    });

    test('a missing job → 404', async () => {
      assertError(await act(t, 999_999, '', {}), 404, 'Unable to find object Job:999999');
    });
  });
}
