import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, assertError, getJob, type JobJson, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * PATCH /Job/<id> (docs/architecture.md §6): a job changed before it starts, each change in its history; once it
 * has started, 409 and nothing changes. In virtual time: the server reads the clock the test moves, and
 * `engine.tick()` is what the wake-up timer would do at that moment. System_Sleep jobs run inside the server.
 */

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 20, 18, 0, 0);
const at = (ms: number) => new Date(ms).toISOString();

async function history(t: TestServer, jobId: number): Promise<JobJson[]> {
  const res = await t.req('GET', `/Job/${jobId}/history`);
  assert.equal(res.status, 200, res.body);
  return res.json.items;
}

/** What a client sees of a job, for "nothing changed". */
const visible = (j: JobJson) => [j.Status, j.Queue, j.Priority, j.Description, j.RequestedStartTime, j.JobParameters];

for (const backend of backends()) {
  describe(`PATCH /Job/<id> (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const advanceTo = async (ms: number) => {
      clock.set(ms);
      await t.server.engine.tick();
    };

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      // Jobs submitted into Stopped would wait there: its queue is held.
      await systemQueue(t, 'GLOBAL.Stopped', { Held: true });
      await systemQueue(t, 'GLOBAL.Tonight');
    });
    after(() => t.close());

    test('a Scheduled job moved to another queue and an earlier time starts there, then', async () => {
      clock.set(T0);
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Stopped', RequestedStartTime: at(T0 + 4 * HOUR) });
      assert.equal(job.Status, 'Scheduled');
      const res = await t.req('PATCH', `/Job/${job.jobId}`, {
        body: { Queue: 'GLOBAL.Tonight', RequestedStartTime: at(T0 + 2 * HOUR), Priority: 70, Description: 'tonight' },
      });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(
        [res.json.Status, res.json.Queue, res.json.Priority, res.json.Description],
        ['Scheduled', 'GLOBAL.Tonight', 70, 'tonight'],
      );
      assert.deepEqual(res.json, await getJob(t, job.jobId), 'the answer is the job as GET renders it');

      await advanceTo(T0 + 2 * HOUR - 1000);
      assert.equal((await getJob(t, job.jobId)).Status, 'Scheduled', 'not before its new time');
      await advanceTo(T0 + 2 * HOUR);
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(done.Queue, 'GLOBAL.Tonight', 'it ran in the queue it was moved to (the old one is held)');

      const changes = (await history(t, job.jobId)).filter((e) => e.Cause === 'modify');
      assert.deepEqual(
        changes.map((e) => [e.FromStatus, e.ToStatus, e.User, e.Detail]),
        [
          ['Scheduled', 'Scheduled', 'admin', 'Queue: Queue:GLOBAL.Stopped → Queue:GLOBAL.Tonight'],
          [
            'Scheduled',
            'Scheduled',
            'admin',
            'RequestedStartTime: 2026/11/20 22:00:00,000 UTC → 2026/11/20 20:00:00,000 UTC',
          ],
          ['Scheduled', 'Scheduled', 'admin', 'Priority: 50 → 70'],
          ['Scheduled', 'Scheduled', 'admin', 'Description: (none) → tonight'],
        ],
      );
    });

    test('a later start time is waited for; a Queued job given a later time is Scheduled again', async () => {
      clock.set(T0);
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.Stopped' });
      assert.equal(job.Status, 'QueueHeld');
      const res = await t.req('PATCH', `/Job/${job.jobId}`, {
        body: { Queue: 'GLOBAL.Tonight', RequestedStartTime: at(T0 + HOUR) },
      });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Scheduled');
      await advanceTo(T0 + HOUR - 1);
      assert.equal((await getJob(t, job.jobId)).Status, 'Scheduled');
      await advanceTo(T0 + HOUR);
      assert.equal((await waitForStatus(t, job.jobId, 'Completed')).Queue, 'GLOBAL.Tonight');
    });

    test('In values are checked as a submit checks them and recorded', async () => {
      clock.set(T0);
      const job = await submitSleep(t, 5, { HoldOnSubmit: true });
      assertError(
        await t.req('PATCH', `/Job/${job.jobId}`, {
          body: { JobParameters: [{ Name: 'MilliSeconds', InValueString: 'soon' }] },
        }),
        400,
        /MilliSeconds/,
      );
      assertError(
        await t.req('PATCH', `/Job/${job.jobId}`, { body: { JobParameters: [{ Name: 'Nope', InValueString: '1' }] } }),
        400,
        /Nope/,
      );
      const res = await t.req('PATCH', `/Job/${job.jobId}`, {
        body: { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] },
      });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Held');
      assert.equal(res.json.JobParameters.find((p: JobJson) => p.Name === 'MilliSeconds').InValueNumber, 0);
      assert.equal((await history(t, job.jobId)).at(-1).Detail, 'JobParameters MilliSeconds: 5 → 0');
      assert.equal((await act(t, job.jobId, 'release')).status, 200);
      await waitForStatus(t, job.jobId, 'Completed');
    });

    test('bad bodies are 400 naming the problem, and change nothing', async () => {
      clock.set(T0);
      const job = await submitSleep(t, 0, { HoldOnSubmit: true, Description: 'as it was' });
      const before = visible(await getJob(t, job.jobId));
      const historyBefore = await history(t, job.jobId);
      const refusals: Array<[unknown, RegExp | string]> = [
        [{ Colour: 'red' }, 'Unknown field "Colour"'],
        [{ Priority: 'high' }, /Field "Priority"/],
        [{ Priority: 500 }, /Field "Priority"/],
        [{ RequestedStartTime: 'tomorrow' }, /Field "RequestedStartTime"/],
        [{ Queue: 'GLOBAL.Nowhere', Priority: 60 }, 'Field "Queue": Queue:GLOBAL.Nowhere does not exist'],
        [{ HoldOnSubmit: false }, 'Unknown field "HoldOnSubmit"'],
        [{}, /at least one field/],
        [[], 'The body must be a JSON object'],
      ];
      for (const [body, message] of refusals)
        assertError(await t.req('PATCH', `/Job/${job.jobId}`, { body }), 400, message);
      for (const raw of [
        '{"__proto__": {"Priority": 1}}',
        '{"constructor": {"Priority": 1}}',
        '{"Priority": 60, "__proto__": null}',
      ])
        assertError(
          await t.req('PATCH', `/Job/${job.jobId}`, { payload: raw, headers: { 'content-type': 'application/json' } }),
          400,
          // The JSON parser refuses a __proto__ or constructor key itself; either way the interface's 400.
          /^(Unknown field "(__proto__|constructor)"|The body is not valid JSON)$/,
        );
      assert.deepEqual(visible(await getJob(t, job.jobId)), before);
      assert.deepEqual(await history(t, job.jobId), historyBefore);
      assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
    });

    test('a Running job is 409 and nothing changes; so is a finished one', async () => {
      clock.set(T0);
      // System_Sleep waits in real time: ten minutes keep it Running for the test.
      const job = await submitSleep(t, 600_000, { Queue: 'GLOBAL.Tonight' });
      await waitForStatus(t, job.jobId, 'Running');
      const before = visible(await getJob(t, job.jobId));
      const historyBefore = await history(t, job.jobId);
      assertError(
        await t.req('PATCH', `/Job/${job.jobId}`, { body: { Priority: 90, Queue: 'GLOBAL.Stopped' } }),
        409,
        `Job:${job.jobId} is Running; only a job that has not started can be changed`,
      );
      assert.deepEqual(visible(await getJob(t, job.jobId)), before);
      assert.deepEqual(await history(t, job.jobId), historyBefore);
      assert.equal((await act(t, job.jobId, 'kill')).status, 200);
      await waitForStatus(t, job.jobId, 'Killed');
      assertError(
        await t.req('PATCH', `/Job/${job.jobId}`, { body: { Description: 'late' } }),
        409,
        `Job:${job.jobId} is Killed; only a job that has not started can be changed`,
      );
    });

    test('without Control on the job: 403, nothing changed; an unknown job: 404', async () => {
      clock.set(T0);
      const job = await submitSleep(t, 0, { HoldOnSubmit: true });
      const viewer = await t.keyWithRoles('modifyviewer', ['Viewer']);
      const res = await t.req('PATCH', `/Job/${job.jobId}`, { body: { Priority: 10 }, key: viewer });
      assert.equal(res.status, 403, res.body);
      assert.equal((await getJob(t, job.jobId)).Priority, 50);
      assert.equal((await t.req('PATCH', '/Job/999999', { body: { Priority: 10 } })).status, 404);
      assert.equal((await act(t, job.jobId, 'cancel')).status, 200);
    });
  });
}
