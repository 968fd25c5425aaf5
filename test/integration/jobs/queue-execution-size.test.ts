import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { getJob, type JobJson, pause, submitSleep, systemQueue, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { HANG_MS } from '../../helpers/wait.ts';

/** The most jobs whose [RunStart, RunEnd) intervals overlap at one instant. */
function maxOverlap(jobs: readonly JobJson[]): number {
  const edges = jobs.flatMap((j) => [
    { at: utcMillis(j.RunStart), d: 1 },
    { at: utcMillis(j.RunEnd), d: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.d - b.d); // an end at the same instant as a start frees its slot first
  let now = 0;
  let max = 0;
  for (const e of edges) {
    now += e.d;
    max = Math.max(max, now);
  }
  return max;
}

for (const backend of backends()) {
  describe(`queue ExecutionSize limits running jobs (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await systemQueue(t, 'GLOBAL.Q1', { ExecutionSize: 2 });
    });
    after(() => t.close());

    test('six sleeps waiting in a queue of 2: at most 2 run at a time, all complete', async () => {
      // Submitted while the queue is held, so all six wait however slowly the submits arrive; released at once.
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { Held: true } })).status, 200);
      const jobs = await Promise.all([1, 2, 3, 4, 5, 6].map(() => submitSleep(t, 1000, { Queue: 'GLOBAL.Q1' })));
      assert.ok(jobs.every((j) => j.Queue === 'GLOBAL.Q1' && j.Status === 'QueueHeld'));
      const ids: number[] = jobs.map((j) => j.jobId);
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { Held: false } })).status, 200);
      // Statuses only move forward, so two rounds of GETs that read the same statuses show the state of the
      // instant between them: in every such snapshot at most 2 jobs run. (How many snapshots a poll catches
      // depends on the machine's speed: the exact proof is the run times below.)
      let previous = '';
      const end = Date.now() + HANG_MS;
      for (;;) {
        const statuses = (await Promise.all(ids.map((id) => getJob(t, id)))).map((j) => j.Status as string);
        if (statuses.join() === previous) {
          const running = statuses.filter((s) => s === 'Running').length;
          assert.ok(running <= 2, `${running} Running at once: ${previous}`);
        }
        previous = statuses.join();
        if (statuses.every((s) => s === 'Completed')) break;
        assert.ok(Date.now() < end, `not all Completed: ${previous}`);
        await pause(20);
      }
      const done = await Promise.all(ids.map((id) => getJob(t, id)));
      assert.ok(done.every((j) => j.ReturnCode === 0 && j.ProcessServer === 'GLOBAL.System'));
      // The run times are the server's own: never more than 2 overlap, and the queue was kept full (2 at once).
      assert.equal(maxOverlap(done), 2);
      const span =
        Math.max(...done.map((j) => utcMillis(j.RunEnd))) - Math.min(...done.map((j) => utcMillis(j.RunStart)));
      assert.ok(span >= 3000, `three waves of 1 s took ${span} ms`);
    });

    test('raising ExecutionSize lets waiting jobs start', async () => {
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { ExecutionSize: 1 } })).status, 200);
      const first = await submitSleep(t, 60_000, { Queue: 'GLOBAL.Q1' });
      await waitForStatus(t, first.jobId, 'Running');
      const second = await submitSleep(t, 60_000, { Queue: 'GLOBAL.Q1' });
      await pause(150);
      assert.equal((await getJob(t, second.jobId)).Status, 'Queued');
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { ExecutionSize: 2 } })).status, 200);
      await waitForStatus(t, second.jobId, 'Running');
      for (const j of [first, second]) assert.equal((await t.req('PUT', `/Job/${j.jobId}/kill`)).status, 200);
    });

    test('a finished job frees its slot for the next', async () => {
      assert.equal((await t.req('PUT', '/Queue/GLOBAL.Q1', { body: { ExecutionSize: 1 } })).status, 200);
      const first = await submitSleep(t, 60_000, { Queue: 'GLOBAL.Q1' });
      await waitForStatus(t, first.jobId, 'Running');
      const second = await submitSleep(t, 0, { Queue: 'GLOBAL.Q1' });
      await pause(150);
      assert.equal((await getJob(t, second.jobId)).Status, 'Queued');
      assert.equal((await t.req('PUT', `/Job/${first.jobId}/kill`)).status, 200);
      await waitForStatus(t, second.jobId, 'Completed');
    });
  });
}
