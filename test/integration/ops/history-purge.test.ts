import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * Purging by age (`--history-days`, the system keep clause) on the virtual clock: a finished job older than the
 * retention goes, with the start's purge and with the 15-minute one (`engine.purgeHistory()`, what its timer
 * does); a younger finished job and a job not finished stay, whatever their age.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);

for (const backend of backends()) {
  describe(`purging finished jobs by age (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const status = async (id: number) => (await t.req('GET', `/Job/${id}`)).status;
    before(async () => {
      t = await startTestServer(backend, { historyRetentionDays: 2 }, { clock });
    });
    after(() => t.close());

    test('a job finished more than --history-days ago is purged; younger and unfinished ones stay', async () => {
      const old = (await submitSleep(t, 0)).jobId as number;
      assert.equal((await waitForStatus(t, old, 'Completed', 30_000)).RunEnd, '2026/06/01 08:00:00,000 UTC');
      const held = (await submitSleep(t, 0, { HoldOnSubmit: true })).jobId as number;
      await waitForStatus(t, held, 'Held', 30_000);

      clock.set(T0 + DAY + HOUR);
      const younger = (await submitSleep(t, 0)).jobId as number;
      await waitForStatus(t, younger, 'Completed', 30_000);

      // Two days and a half later: `old` ended 2.5 days ago, `younger` 1.5 days ago. The start purges.
      clock.set(T0 + 2 * DAY + 12 * HOUR);
      await t.restart();
      await waitFor('the purge at start', async () => ((await status(old)) === 404 ? true : undefined), 30_000);
      const gone = await t.req('GET', `/Job/${old}`);
      assert.deepEqual(gone.json, { code: '404', message: `Unable to find object Job:${old}` });
      assert.equal(await status(younger), 200, 'finished within the retention: kept');
      assert.equal(await status(held), 200, 'not finished: kept however old');

      // A day later the 15-minute purge takes the younger one too (it ended 2.5 days ago by then).
      clock.set(T0 + 3 * DAY + 14 * HOUR);
      await t.server.engine.purgeHistory();
      assert.equal(await status(younger), 404);
      assert.equal(await status(held), 200);
      const listed = await t.req('GET', '/Job?fields=jobId');
      assert.equal(listed.status, 200, listed.body);
      const ids = JSON.stringify(listed.json);
      assert.ok(!ids.includes(`"jobId":${old}`) && !ids.includes(`"jobId":${younger}`), ids);
    });
  });
}
