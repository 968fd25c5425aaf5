import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openStore } from '../../../src/store/open.ts';
import { backends } from '../../helpers/backends.ts';
import { act, getJob, submitSleep, systemQueue, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// The dispatcher keeps the queues, providers and process servers it plans with while no object was written
// (engine/dispatch-objects.ts): a change written anywhere must count at the next pass.
for (const backend of backends()) {
  describe(`a dispatch pass plans with the objects as they are (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await systemQueue(t, 'GLOBAL.Narrow', { ExecutionSize: 1 });
    });
    after(() => t.close());

    /** Jobs of 60 s: they stay Running while the test looks. */
    const longJobs = async (n: number) => {
      const jobs = [];
      for (let i = 0; i < n; i++) jobs.push(await submitSleep(t, 60_000, { Queue: 'GLOBAL.Narrow' }));
      return jobs;
    };

    const setSize = async (size: number, elsewhere: boolean) => {
      if (!elsewhere) {
        const res = await t.req('PUT', '/Queue/GLOBAL.Narrow', { body: { ExecutionSize: size } });
        assert.equal(res.status, 200, res.body);
        return;
      }
      // Another connection to the same database, as the CLI or another node would write it.
      const other = await openStore({ dataDir: t.config.dataDir, databaseUrl: t.config.databaseUrl });
      try {
        const q = await other.getObject('Queue', 'GLOBAL.Narrow');
        assert.ok(q);
        await other.updateObject({ ...q, data: { ...q.data, ExecutionSize: size } }, []);
      } finally {
        await other.close();
      }
    };

    for (const elsewhere of [false, true]) {
      test(`a queue's execution size raised ${elsewhere ? 'by another connection' : 'through the interface'} lets its waiting jobs start`, async () => {
        await setSize(1, false);
        const [first, ...waiting] = await longJobs(3);
        assert.ok(first);
        await waitForStatus(t, first.jobId, 'Running');
        for (const j of waiting) assert.equal((await getJob(t, j.jobId)).Status, 'Queued');
        await setSize(4, elsewhere);
        // Something that asks for a pass: one more job, which fits as well.
        const [last] = await longJobs(1);
        for (const j of [...waiting, last]) await waitForStatus(t, j.jobId, 'Running');
        for (const j of [first, ...waiting, last]) assert.equal((await act(t, j.jobId, 'kill')).status, 200);
        for (const j of [first, ...waiting, last]) await waitForStatus(t, j.jobId, 'Killed');
      });
    }
  });
}
