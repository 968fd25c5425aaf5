import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Counting the jobs that hold slots reads every running job; B11 (50,000 running System jobs) showed it blocking the
 * event loop on every pass of the end wave. A pass that finds nothing Queued must not count them.
 */
for (const backend of backends()) {
  describe(`a dispatch pass with nothing Queued does not count the running jobs (${backend.name})`, () => {
    let t: TestServer;
    let counted = 0;
    let restore = () => {};
    before(async () => {
      t = await startTestServer(backend);
      const proto = Object.getPrototypeOf(t.server.store.jobs) as { countActive: (...a: unknown[]) => unknown };
      const original = proto.countActive;
      proto.countActive = function (this: unknown, ...a: unknown[]) {
        // Only the dispatcher's calls: the agent watchdog also counts, once a second.
        if (new Error().stack?.includes('dispatchPass')) counted++;
        return original.apply(this, a);
      };
      restore = () => {
        proto.countActive = original;
      };
    });
    after(async () => {
      restore();
      await t.close();
    });

    test('jobs ending with none waiting: no count; a job waiting: counted and started', async () => {
      const jobs = await Promise.all([1, 2, 3].map(() => submitSleep(t, 1000)));
      for (const j of jobs) await waitForStatus(t, j.jobId, ['Running', 'Completed']);
      counted = 0;
      for (const j of jobs) await waitForStatus(t, j.jobId, 'Completed');
      assert.equal(counted, 0, 'passes after the ends found nothing Queued');
      const next = await submitSleep(t, 0);
      await waitForStatus(t, next.jobId, 'Completed');
      assert.ok(counted > 0, 'a pass with a Queued job counts the slots before it starts it');
    });
  });
}
