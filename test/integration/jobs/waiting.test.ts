import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  assertError,
  type JobJson,
  postCreated as post,
  submit,
  submitSleep,
  systemQueue,
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Why a job waits (GET …/Job/<id>/waiting, GET …/waiting?Jobs=…): every code from a situation made for real, on the
 * virtual clock (time windows, start times). No agent runs here: agent jobs stay Queued with AgentDisconnected;
 * System_Sleep runs inside the server on real timers, so a long one holds its slot for the test.
 */

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 28, 12, 0, 0); // Saturday 28 March 2026, 13:00 in Amsterdam
const LONG = 600_000;

interface Reason {
  Code: string;
  Message: string;
  Object: string | null;
  Until: string | null;
}

for (const backend of backends()) {
  describe(`why a job waits (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const running: number[] = [];

    const waiting = async (jobId: number): Promise<{ Status: string; Reasons: Reason[] }> => {
      const res = await t.req('GET', `/Job/${jobId}/waiting`);
      assert.equal(res.status, 200, res.body);
      return res.json;
    };
    /** The job's reasons once its status is `status` (a dispatch pass may still be on its way). */
    const reasonsIn = async (job: JobJson, status: string): Promise<Reason[]> => {
      await waitForStatus(t, job.jobId, status);
      const answer = await waiting(job.jobId);
      assert.equal(answer.Status, status);
      return answer.Reasons;
    };
    const only = (reasons: Reason[], code: string): Reason => {
      assert.deepEqual(
        reasons.map((r) => r.Code),
        [code],
        JSON.stringify(reasons),
      );
      return reasons[0] as Reason;
    };
    const longSleep = async (extra: Record<string, unknown> = {}) => {
      const job = await submitSleep(t, LONG, extra);
      running.push(job.jobId);
      await waitForStatus(t, job.jobId, 'Running');
      return job;
    };
    /** A BASH definition (run by agents) with the given fields. */
    const bash = (name: string, fields: Record<string, unknown> = {}) =>
      post(t, `/JobDefinition/GLOBAL.${name}`, { JobDefinitionType: 'BASH', Script: 'true', ...fields });

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
    });
    after(async () => {
      for (const id of running) await act(t, id, 'kill');
      await t.close();
    });

    test('ProcessServerFull: GLOBAL.System running as many jobs as its ExecutionSize (n of n)', async () => {
      await systemQueue(t, 'GLOBAL.WhyServerFull');
      await longSleep({ Queue: 'GLOBAL.WhyServerFull' });
      const res = await t.req('PUT', '/ProcessServer/GLOBAL.System', { body: { ExecutionSize: 1 } });
      assert.equal(res.status, 200, res.body);
      try {
        const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyServerFull' });
        const r = only(await reasonsIn(job, 'Queued'), 'ProcessServerFull');
        assert.equal(r.Object, 'ProcessServer:GLOBAL.System');
        assert.match(r.Message, /ProcessServer:GLOBAL\.System is full: 1 of 1 running/);
        assert.equal(r.Until, null);
      } finally {
        await t.req('PUT', '/ProcessServer/GLOBAL.System', { body: { ExecutionSize: 1000 } });
      }
    });

    test('QueueHeld: a job submitted into a held queue', async () => {
      await systemQueue(t, 'GLOBAL.WhyHeldQ', { Held: true });
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyHeldQ' });
      const r = only(await reasonsIn(job, 'QueueHeld'), 'QueueHeld');
      assert.equal(r.Object, 'Queue:GLOBAL.WhyHeldQ');
      assert.equal(r.Until, null);
    });

    test('QueueHeld through a held queue provider, for a job already Queued', async () => {
      await systemQueue(t, 'GLOBAL.WhyHeldQP');
      assert.equal(
        (await t.req('PUT', '/QueueProvider/GLOBAL.System.GLOBAL.WhyHeldQP', { body: { Held: true } })).status,
        200,
      );
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyHeldQP' });
      const r = only(await reasonsIn(job, 'Queued'), 'QueueHeld');
      assert.equal(r.Object, 'QueueProvider:GLOBAL.System.GLOBAL.WhyHeldQP');
    });

    test('QueueFull: a queue of ExecutionSize 1 running one job (1 of 1); the running job waits for nothing', async () => {
      await systemQueue(t, 'GLOBAL.WhyFull', { ExecutionSize: 1 });
      const first = await longSleep({ Queue: 'GLOBAL.WhyFull' });
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyFull' });
      const r = only(await reasonsIn(job, 'Queued'), 'QueueFull');
      assert.equal(r.Object, 'Queue:GLOBAL.WhyFull');
      assert.match(r.Message, /1 of 1 running/);
      assert.deepEqual(await waiting(first.jobId), { Status: 'Running', Reasons: [] });
    });

    test('HoldLevel: a priority below the queue’s HoldLevel', async () => {
      await systemQueue(t, 'GLOBAL.WhyLevel', { HoldLevel: 50 });
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyLevel', Priority: 40 });
      const r = only(await reasonsIn(job, 'Queued'), 'HoldLevel');
      assert.equal(r.Object, 'Queue:GLOBAL.WhyLevel');
      assert.match(r.Message, /priority 40 is below the HoldLevel 50/);
    });

    test("TimeWindowClosed (the queue's window): Until is when it opens, on the virtual clock", async () => {
      clock.set(T0);
      await post(t, '/TimeWindow/GLOBAL.WhyNightly', {
        TimeZone: 'Europe/Amsterdam',
        Elements: [{ FromTime: '22:00', UntilTime: '06:00' }],
      });
      await systemQueue(t, 'GLOBAL.WhyNightly', { TimeWindow: 'GLOBAL.WhyNightly' });
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyNightly' });
      const r = only(await reasonsIn(job, 'Queued'), 'TimeWindowClosed');
      assert.equal(r.Object, 'TimeWindow:GLOBAL.WhyNightly');
      assert.equal(utcMillis(r.Until as string), Date.UTC(2026, 2, 28, 21, 0, 0)); // 22:00 in Amsterdam (CET)
      clock.set(T0 + 10 * HOUR); // 23:00 in Amsterdam: open
      await t.server.engine.tick();
      await waitForStatus(t, job.jobId, 'Completed');
      clock.set(T0);
    });

    test("TimeWindowClosed (the job's own window) beside AgentDisconnected of GLOBAL.Local", async () => {
      clock.set(T0);
      await post(t, '/TimeWindow/GLOBAL.WhyMornings', {
        TimeZone: 'UTC',
        Elements: [{ FromTime: '06:00', UntilTime: '07:00' }],
      });
      await bash('WhyWindowed', { TimeWindow: 'GLOBAL.WhyMornings' });
      const job = await submit(t, 'GLOBAL.WhyWindowed', {});
      const reasons = await reasonsIn(job, 'Queued');
      assert.deepEqual(
        reasons.map((r) => [r.Code, r.Object]),
        [
          ['TimeWindowClosed', 'TimeWindow:GLOBAL.WhyMornings'],
          ['AgentDisconnected', 'ProcessServer:GLOBAL.Local'],
        ],
      );
      assert.equal(utcMillis(reasons[0]?.Until as string), Date.UTC(2026, 2, 29, 6, 0, 0));
      clock.set(Date.UTC(2026, 2, 29, 6, 30, 0)); // open now: only the agent keeps it
      const later = await waiting(job.jobId);
      assert.deepEqual(
        later.Reasons.map((r) => r.Code),
        ['AgentDisconnected'],
      );
      clock.set(T0);
    });

    test('NoProcessServer: an approval (UserMessage) submitted without a DefaultQueue waits in GLOBAL.Default', async () => {
      await post(t, '/JobDefinition/GLOBAL.WhyApprove', {
        JobDefinitionType: 'UserMessage',
        UserMessage: {
          Text: 'Release?',
          Participants: ['admin'],
          Responses: [{ Response: 'Approve', Status: 'Completed' }],
        },
      });
      const job = await submit(t, 'GLOBAL.WhyApprove', {});
      const r = only(await reasonsIn(job, 'Queued'), 'NoProcessServer');
      assert.equal(r.Object, 'Queue:GLOBAL.Default');
      assert.match(r.Message, /No process server serving Queue:GLOBAL\.Default runs UserMessage jobs/);
    });

    test('NoProcessServer: a queue no QueueProvider links to a process server', async () => {
      await post(t, '/Queue/GLOBAL.WhyUnserved');
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyUnserved' });
      const r = only(await reasonsIn(job, 'Queued'), 'NoProcessServer');
      assert.equal(r.Object, 'Queue:GLOBAL.WhyUnserved');
      assert.match(r.Message, /QueueProvider/);
    });

    test('ProcessServerStopped: the only process server of the queue was stopped', async () => {
      await post(t, '/ProcessServer/GLOBAL.WhyStopped');
      await post(t, '/Queue/GLOBAL.WhyStopped');
      await post(t, '/QueueProvider/GLOBAL.WhyStopped.GLOBAL.WhyStopped');
      assert.equal((await t.req('PUT', '/ProcessServer/GLOBAL.WhyStopped/stop')).status, 200);
      await bash('WhyOnStopped', { DefaultQueue: 'GLOBAL.WhyStopped' });
      const job = await submit(t, 'GLOBAL.WhyOnStopped', {});
      const r = only(await reasonsIn(job, 'Queued'), 'ProcessServerStopped');
      assert.equal(r.Object, 'ProcessServer:GLOBAL.WhyStopped');
    });

    test("AgentDisconnected: an agent's process server whose agent never connected", async () => {
      await post(t, '/ProcessServer/GLOBAL.WhyFar');
      await post(t, '/Queue/GLOBAL.WhyFar');
      await post(t, '/QueueProvider/GLOBAL.WhyFar.GLOBAL.WhyFar');
      await bash('WhyOnFar', { DefaultQueue: 'GLOBAL.WhyFar' });
      const job = await submit(t, 'GLOBAL.WhyOnFar', {});
      const r = only(await reasonsIn(job, 'Queued'), 'AgentDisconnected');
      assert.equal(r.Object, 'ProcessServer:GLOBAL.WhyFar');
      assert.equal(r.Until, null);
    });

    test('EventWait: an event not raised yet', async () => {
      await post(t, '/EventDefinition/GLOBAL.WhyFileArrived');
      await bash('WhyWaitsForFile', { WaitEvents: [{ EventDefinition: 'GLOBAL.WhyFileArrived' }] });
      const job = await submit(t, 'GLOBAL.WhyWaitsForFile', {});
      const r = only(await reasonsIn(job, 'EventWait'), 'EventWait');
      assert.equal(r.Object, 'EventDefinition:GLOBAL.WhyFileArrived');
    });

    test('LockWait and ChainPredecessor: a chain holding a lock while its first step runs', async () => {
      await post(t, '/Lock/GLOBAL.WhyLedger');
      await bash('WhyPost');
      await post(t, '/JobChain/GLOBAL.WhyClose', {
        Steps: [
          { Name: 'Post', Calls: [{ JobDefinition: 'GLOBAL.WhyPost' }] },
          { Name: 'Report', Calls: [{ JobDefinition: 'GLOBAL.WhyPost' }] },
        ],
      });
      assert.equal(
        (await t.req('PUT', '/JobDefinition/GLOBAL.WhyClose', { body: { Locks: ['GLOBAL.WhyLedger'] } })).status,
        200,
      );
      const holder = await submit(t, 'GLOBAL.WhyClose', {});
      await waitForStatus(t, holder.jobId, 'Waiting');
      const other = await submit(t, 'GLOBAL.WhyClose', {});
      const lock = only(await reasonsIn(other, 'LockWait'), 'LockWait');
      assert.equal(lock.Object, 'Lock:GLOBAL.WhyLedger');
      assert.match(lock.Message, new RegExp(`held by Job:${holder.jobId}\\b`));

      const steps = await children(holder.jobId);
      const [post1, report] = [
        steps.find((s) => s.Description === 'Post'),
        steps.find((s) => s.Description === 'Report'),
      ];
      assert.ok(post1 && report, JSON.stringify(steps));
      const r = only(await reasonsIn(report, 'Chained'), 'ChainPredecessor');
      assert.equal(r.Object, `Job:${post1.jobId}`);
      const [call] = await children(report.jobId);
      const c = only(await reasonsIn(call, 'Chained'), 'ChainPredecessor');
      assert.equal(c.Object, `Job:${post1.jobId}`);
      assert.match(c.Message, new RegExp(`step "Report" \\(Job:${report.jobId}\\)`));
    });

    const children = async (parent: number): Promise<JobJson[]> => {
      const res = await t.req('GET', `/Job?ParentJob=${parent}`);
      assert.equal(res.status, 200, res.body);
      return res.json.items;
    };

    test('Hold: held by whom (from its history): on submit, and by an operator’s hold', async () => {
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyHeldQ', HoldOnSubmit: true });
      const r = only(await reasonsIn(job, 'Held'), 'Hold');
      assert.equal(r.Object, 'User:admin');
      assert.match(r.Message, /Held by User:admin \(submit\)/);
      const operator = await t.keyWithGrants('why-operator', [
        'Job:GLOBAL:View,Control',
        'JobDefinition:GLOBAL:View',
        'Queue:GLOBAL:View',
      ]);
      const later = await submitSleep(t, 0, { RequestedStartTime: '2026/03/30 08:00:00,000 UTC' });
      const held = await act(t, later.jobId, 'hold', undefined, operator);
      assert.equal(held.status, 200, held.body);
      const h = only(await reasonsIn(later, 'Held'), 'Hold');
      assert.equal(h.Object, 'User:why-operator');
      assert.match(h.Message, /Held by User:why-operator \(hold\)/);
    });

    test('ScheduledStart: a start in the future, Until that start', async () => {
      const job = await submitSleep(t, 0, { RequestedStartTime: '2026/03/29 08:15:00,000 UTC' });
      const r = only(await reasonsIn(job, 'Scheduled'), 'ScheduledStart');
      assert.equal(r.Object, null);
      assert.equal(r.Until, '2026/03/29 08:15:00,000 UTC');
    });

    test('a finished job waits for nothing; an unknown job is 404, as is one the caller may not view; 403 as GET /Job/<id>', async () => {
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      assert.deepEqual(await waiting(done.jobId), { Status: 'Completed', Reasons: [] });
      assertError(await t.req('GET', '/Job/987654321/waiting'), 404, /Job/);
      assertError(await t.req('GET', '/Job/abc/waiting'), 404, /Job/);
      const key = await t.keyWithGrants('why-viewer', ['Queue:GLOBAL:View']);
      assertError(await t.req('GET', `/Job/${done.jobId}/waiting`, { key }), 404, /Job/);
      const batch = await t.req('GET', `/waiting?Jobs=${done.jobId}`, { key });
      assert.equal(batch.status, 200, batch.body);
      assert.deepEqual(batch.json, { items: [] });
      // View on the job but not on its definition and queue: refused as GET /Job/<id> is, left out of a batch.
      const jobOnly = await t.keyWithGrants('why-job-only', ['Job:GLOBAL:View']);
      assertError(await t.req('GET', `/Job/${done.jobId}`, { key: jobOnly }), 403, /View privilege/);
      assertError(await t.req('GET', `/Job/${done.jobId}/waiting`, { key: jobOnly }), 403, /View privilege/);
      assert.deepEqual((await t.req('GET', `/waiting?Jobs=${done.jobId}`, { key: jobOnly })).json, { items: [] });
      const viewer = await t.keyWithGrants('why-viewer-all', [
        'Job:GLOBAL:View',
        'JobDefinition:GLOBAL:View',
        'Queue:GLOBAL:View',
        'ProcessServer:GLOBAL:View',
      ]);
      assert.deepEqual((await t.req('GET', `/Job/${done.jobId}/waiting`, { key: viewer })).json, {
        Status: 'Completed',
        Reasons: [],
      });
    });

    test('the batch form: the jobs asked about in order, the ones not found left out; bad lists are 400', async () => {
      const held = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyHeldQ' });
      const level = await submitSleep(t, 0, { Queue: 'GLOBAL.WhyLevel', Priority: 10 });
      const done = await submitSleep(t, 0);
      await waitForStatus(t, held.jobId, 'QueueHeld');
      await waitForStatus(t, done.jobId, 'Completed');
      const res = await t.req('GET', `/waiting?Jobs=${level.jobId},${held.jobId},987654321,${done.jobId}`);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(
        res.json.items.map((i: { Job: number; Status: string; Reasons: Reason[] }) => [
          i.Job,
          i.Status,
          i.Reasons.map((r) => r.Code),
        ]),
        [
          [level.jobId, 'Queued', ['HoldLevel']],
          [held.jobId, 'QueueHeld', ['QueueHeld']],
          [done.jobId, 'Completed', []],
        ],
      );
      const many = Array.from({ length: 201 }, (_, i) => i + 1).join(',');
      assertError(await t.req('GET', `/waiting?Jobs=${many}`), 400, /Jobs.*200/);
      assertError(await t.req('GET', '/waiting?Jobs=1,x'), 400, /Jobs/);
      assertError(await t.req('GET', '/waiting'), 400, /Jobs/);
    });
  });
}
