import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { getJob, postCreated as post, submitSleep, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * The engine waits for calendar windows (docs/architecture.md §5a) with the functions the openings are computed by:
 * in virtual time, a job behind a queue open on the first working day of the month, a holiday moving it on, starts
 * on Monday 4 January 2027, not on New Year's Day. System jobs run inside the server, so no agent is needed.
 */

const T0 = Date.UTC(2026, 11, 31, 19, 30); // Thursday 31 December 2026, 20:30 in Amsterdam

for (const backend of backends()) {
  describe(`a queue behind a calendar window in virtual time (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const advanceTo = async (ms: number) => {
      clock.set(ms);
      await t.server.engine.tick();
    };
    before(async () => {
      t = await startTestServer(backend, {}, { clock });
    });
    after(() => t.close());

    test('the first working day of January 2027 opens on Monday 4 January, 1 January being a holiday', async () => {
      await post(t, '/TimeWindow/NLHolidays', { Holidays: 'NL' });
      await post(t, '/TimeWindow/FirstWorkday', {
        TimeZone: 'Europe/Amsterdam',
        Elements: [{ FromWorkday: 1, UntilWorkday: 1, FromTime: '18:00', UntilTime: '20:00' }],
        ShiftWhen: 'NLHolidays',
        ShiftWorkdays: 1,
      });
      await post(t, '/Queue/FirstWorkday', { TimeWindow: 'FirstWorkday' });
      await post(t, '/QueueProvider/GLOBAL.System.GLOBAL.FirstWorkday');
      const job = await submitSleep(t, 0, { Queue: 'GLOBAL.FirstWorkday' });
      await advanceTo(Date.UTC(2027, 0, 1, 17, 30)); // Friday 1 January, 18:30 Amsterdam: the holiday, moved on
      assert.equal((await getJob(t, job.jobId)).Status, 'Queued');
      await advanceTo(Date.UTC(2027, 0, 4, 16, 59)); // Monday 4 January, 17:59: not yet
      assert.equal((await getJob(t, job.jobId)).Status, 'Queued');
      const opens = Date.UTC(2027, 0, 4, 17, 0) + 60_000; // 18:01 Amsterdam
      await advanceTo(opens);
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(utcMillis(done.RunStart), opens);
    });
  });
}
