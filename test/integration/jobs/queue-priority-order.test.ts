import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, type JobJson, submitSleep, systemQueue, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`dispatch order in a queue of one slot (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await systemQueue(t, 'GLOBAL.One', { ExecutionSize: 1 });
    });
    after(() => t.close());

    /** Fills the single slot, submits `bodies` while it is full, frees it, and returns the jobs in run order. */
    async function runOrder(bodies: Array<Record<string, unknown>>): Promise<JobJson[]> {
      const blocker = await submitSleep(t, 60_000, { Queue: 'GLOBAL.One' });
      await waitForStatus(t, blocker.jobId, 'Running');
      const jobs: JobJson[] = [];
      for (const b of bodies) jobs.push(await submitSleep(t, 20, { Queue: 'GLOBAL.One', ...b }));
      for (const j of jobs) assert.equal(j.Status, 'Queued');
      assert.equal((await act(t, blocker.jobId, 'kill')).status, 200);
      const done = await Promise.all(jobs.map((j) => waitForStatus(t, j.jobId, 'Completed')));
      return [...done].sort((a, b) => utcMillis(a.RunStart) - utcMillis(b.RunStart));
    }

    test('a higher priority starts first', async () => {
      const order = await runOrder([
        { Priority: 10, Description: 'low' },
        { Priority: 90, Description: 'high' },
        { Priority: 50, Description: 'middle' },
      ]);
      assert.deepEqual(
        order.map((j) => j.Description),
        ['high', 'middle', 'low'],
      );
      for (let i = 1; i < order.length; i++)
        assert.ok(utcMillis(order[i].RunStart) >= utcMillis(order[i - 1].RunEnd), 'one at a time');
    });

    test('at equal priority, the earlier submitted job starts first', async () => {
      const order = await runOrder([{ Description: 'a' }, { Description: 'b' }, { Description: 'c' }]);
      assert.deepEqual(
        order.map((j) => j.Description),
        ['a', 'b', 'c'],
      );
    });

    test('at equal priority, the earlier requested start goes first', async () => {
      const order = await runOrder([
        { Description: 'later', RequestedStartTime: '2020/01/02 00:00:00,000 UTC' },
        { Description: 'earlier', RequestedStartTime: '2020/01/01 00:00:00,000 UTC' },
      ]);
      assert.deepEqual(
        order.map((j) => j.Description),
        ['earlier', 'later'],
      );
    });
  });
}
