import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { notApplicableMessage } from '../../../src/domain/job-actions.ts';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  assertError,
  getJob,
  type JobJson,
  postCreated as post,
  submit,
  submitSleep,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * markcompleted and markerror (docs/architecture.md §6): a final status set by hand, with a comment, kept in the
 * job's history; a chain stopped on a failed step goes on once the step (or its call) is marked Completed; nothing
 * of the job's restart behaviour runs again. Chains of System jobs run inside the server in real time.
 */

const sleepCall = (ms: number) => ({
  JobDefinition: 'GLOBAL.System_Sleep',
  ParameterMappings: [{ Parameter: 'MilliSeconds', Source: 'Value', Value: String(ms) }],
});

async function history(t: TestServer, jobId: number): Promise<JobJson[]> {
  const res = await t.req('GET', `/Job/${jobId}/history`);
  assert.equal(res.status, 200, res.body);
  return res.json.items;
}

/** The chain's jobs after it, by ParentJob: its step jobs and their calls, newest last. */
async function children(t: TestServer, parent: number): Promise<JobJson[]> {
  const res = await t.req('GET', `/Job?ParentJob=${parent}&limit=100`);
  assert.equal(res.status, 200, res.body);
  return (res.json.items as JobJson[]).sort((a, b) => a.jobId - b.jobId);
}

for (const backend of backends()) {
  describe(`markcompleted and markerror (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      // A System definition the server does not know ends Error at once: a dependable failing call.
      await post(t, '/JobDefinition/GLOBAL.Fails', { JobDefinitionType: 'System', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobDefinition/GLOBAL.Stops', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Stops', {
        Steps: [
          { Name: 'Load', Calls: [{ JobDefinition: 'GLOBAL.Fails' }] },
          { Name: 'Report', Calls: [sleepCall(10)] },
        ],
      });
    });
    after(() => t.close());

    /** A GLOBAL.Stops chain that ended Error on its first step: the chain, its step Load and that step's call. */
    async function stoppedChain() {
      const chain = await submit(t, 'GLOBAL.Stops');
      await waitForStatus(t, chain.jobId, 'Error');
      const [load, report] = await children(t, chain.jobId);
      const [call] = await children(t, load.jobId);
      assert.deepEqual([load.Status, call.Status, report.Status], ['Error', 'Error', 'Skipped']);
      return { chain, load, call };
    }

    test('a chain stopped on an Error step goes on once the step is marked Completed; the history keeps Error', async () => {
      const { chain, load } = await stoppedChain();
      assertError(await act(t, load.jobId, 'markcompleted'), 400, 'Field "Comment" is required');
      assertError(await act(t, load.jobId, 'markcompleted', { Comment: '  ' }), 400, /Field "Comment"/);
      assertError(
        await act(t, load.jobId, 'markcompleted', { Comment: 'x', Queue: 'GLOBAL.System' }),
        400,
        'Unknown field "Queue"',
      );
      assert.equal((await getJob(t, load.jobId)).Status, 'Error', 'a refused mark changes nothing');

      const res = await act(t, load.jobId, 'markcompleted', { Comment: 'Loaded by hand after the outage' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Completed');
      const done = await waitForStatus(t, chain.jobId, ['Completed', 'Error']);
      assert.equal(done.Status, 'Completed', JSON.stringify(done.JobNotes));
      // The step after it ran: a fresh step job, Completed, in place of the one the chain's end had skipped.
      const steps = await children(t, chain.jobId);
      const report = steps.filter((s) => s.Description === 'Report');
      assert.deepEqual(
        report.map((s) => s.Status),
        ['Skipped', 'Completed'],
      );

      const entry = (await history(t, load.jobId)).at(-1);
      assert.deepEqual(
        [entry.FromStatus, entry.ToStatus, entry.User, entry.Cause],
        ['Error', 'Completed', 'admin', 'markcompleted'],
      );
      assert.equal(entry.Detail, 'from Error: Loaded by hand after the outage');
      const chainHistory = await history(t, chain.jobId);
      assert.ok(
        chainHistory.some((e) => e.FromStatus === 'Error' && e.ToStatus === 'Waiting' && e.User === 'admin'),
        JSON.stringify(chainHistory),
      );
      // Marked again: it is Completed now, where the action does not apply.
      assertError(
        await act(t, load.jobId, 'markcompleted', { Comment: 'again' }),
        409,
        notApplicableMessage('markcompleted', load.jobId, 'Completed'),
      );
    });

    test('marking the failed call Completed marks its step and lets the chain go on', async () => {
      const { chain, load, call } = await stoppedChain();
      const res = await act(t, call.jobId, 'markcompleted', { Comment: 'Done outside' });
      assert.equal(res.status, 200, res.body);
      assert.equal((await waitForStatus(t, chain.jobId, ['Completed', 'Error'])).Status, 'Completed');
      assert.equal((await getJob(t, load.jobId)).Status, 'Completed');
      const callEntry = (await history(t, call.jobId)).at(-1);
      assert.deepEqual([callEntry.FromStatus, callEntry.ToStatus, callEntry.User], ['Error', 'Completed', 'admin']);
    });

    test('a step waiting for an operator (RequestRestart) goes on once its failed call is marked Completed', async () => {
      await post(t, '/JobDefinition/GLOBAL.Asks', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Asks', {
        Steps: [
          {
            Name: 'Load',
            Calls: [{ JobDefinition: 'GLOBAL.Fails' }],
            StatusHandlers: [{ Status: 'Error', Action: 'RequestRestart' }],
          },
          { Name: 'Report', Calls: [sleepCall(10)] },
        ],
      });
      const chain = await submit(t, 'GLOBAL.Asks');
      const [load] = await children(t, chain.jobId);
      await waitForStatus(t, load.jobId, 'Console');
      const [call] = await children(t, load.jobId);
      assert.equal((await getJob(t, call.jobId)).Status, 'Error');
      assert.equal((await getJob(t, chain.jobId)).Status, 'Waiting');
      assert.equal((await act(t, call.jobId, 'markcompleted', { Comment: 'ran it by hand' })).status, 200);
      assert.equal((await waitForStatus(t, chain.jobId, ['Completed', 'Error'])).Status, 'Completed');
      assert.equal((await getJob(t, load.jobId)).Status, 'Completed');
    });

    test('a chain called from an outer chain goes on, and the outer chain with it', async () => {
      await post(t, '/JobDefinition/GLOBAL.Outer', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Outer', {
        Steps: [
          { Name: 'Inner', Calls: [{ JobDefinition: 'GLOBAL.Stops' }] },
          { Name: 'Last', Calls: [sleepCall(10)] },
        ],
      });
      const outer = await submit(t, 'GLOBAL.Outer');
      await waitForStatus(t, outer.jobId, 'Error');
      const [innerStep] = await children(t, outer.jobId);
      const [inner] = await children(t, innerStep.jobId);
      const [load] = await children(t, inner.jobId);
      assert.deepEqual([innerStep.Status, inner.Status, load.Status], ['Error', 'Error', 'Error']);
      assert.equal((await act(t, load.jobId, 'markcompleted', { Comment: 'loaded by hand' })).status, 200);
      assert.equal((await waitForStatus(t, outer.jobId, ['Completed', 'Error'])).Status, 'Completed');
      assert.deepEqual(
        [(await getJob(t, inner.jobId)).Status, (await getJob(t, innerStep.jobId)).Status],
        ['Completed', 'Completed'],
      );
      const last = (await children(t, outer.jobId)).filter((s) => s.Description === 'Last');
      assert.deepEqual(
        last.map((s) => s.Status),
        ['Skipped', 'Completed'],
      );
    });

    test('markcompleted does not run the restart behaviour, which a Completed end would', async () => {
      await post(t, '/JobDefinition/GLOBAL.FailsOnce', {
        JobDefinitionType: 'System',
        DefaultQueue: 'GLOBAL.System',
        RestartBehaviour: { Completed: 'Restart' },
        MaxStarts: 3,
      });
      const job = await submit(t, 'GLOBAL.FailsOnce');
      await waitForStatus(t, job.jobId, 'Error');
      const res = await act(t, job.jobId, 'markcompleted', { Comment: 'fixed' });
      assert.equal(res.status, 200, res.body);
      const later = await submitSleep(t, 0); // a job after it: had a restart been made, it would be before this one
      await waitForStatus(t, later.jobId, 'Completed');
      const all = await t.req('GET', '/Job?JobDefinition=GLOBAL.FailsOnce');
      assert.deepEqual(
        (all.json.items as JobJson[]).map((j) => [j.jobId, j.Status]),
        [[job.jobId, 'Completed']],
      );
      assert.ok(!(await getJob(t, job.jobId)).JobNotes.some((n: string) => /restarted as/.test(n)));
    });

    test('markerror: a Completed job → Error with a comment; a chain that went on is not undone', async () => {
      const sleep = await submitSleep(t, 0);
      await waitForStatus(t, sleep.jobId, 'Completed');
      assertError(await act(t, sleep.jobId, 'markerror'), 400, 'Field "Comment" is required');
      const res = await act(t, sleep.jobId, 'markerror', { Comment: 'wrong input file' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Status, 'Error');
      const entry = (await history(t, sleep.jobId)).at(-1);
      assert.deepEqual(
        [entry.FromStatus, entry.ToStatus, entry.User, entry.Cause, entry.Detail],
        ['Completed', 'Error', 'admin', 'markerror', 'from Completed: wrong input file'],
      );

      const { chain, load } = await stoppedChain();
      assert.equal((await act(t, load.jobId, 'markcompleted', { Comment: 'ok' })).status, 200);
      await waitForStatus(t, chain.jobId, 'Completed');
      assert.equal((await act(t, load.jobId, 'markerror', { Comment: 'it was not' })).status, 200);
      assert.equal((await getJob(t, load.jobId)).Status, 'Error');
      assert.equal((await getJob(t, chain.jobId)).Status, 'Completed', 'the chain that went on stays as it ended');
    });

    test('refused outside its statuses (409) and without Control (403), nothing changed', async () => {
      const held = await submitSleep(t, 0, { HoldOnSubmit: true });
      assertError(
        await act(t, held.jobId, 'markcompleted', { Comment: 'x' }),
        409,
        notApplicableMessage('markcompleted', held.jobId, 'Held'),
      );
      assertError(
        await act(t, held.jobId, 'markerror', { Comment: 'x' }),
        409,
        notApplicableMessage('markerror', held.jobId, 'Held'),
      );
      const failed = await submit(t, 'GLOBAL.Fails');
      await waitForStatus(t, failed.jobId, 'Error');
      const viewer = await t.keyWithRoles('markviewer', ['Viewer']);
      const refused = await act(t, failed.jobId, 'markcompleted', { Comment: 'x' }, viewer);
      assert.equal(refused.status, 403, refused.body);
      assert.equal((await getJob(t, failed.jobId)).Status, 'Error');
      assert.equal((await act(t, held.jobId, 'cancel')).status, 200);
    });
  });
}
