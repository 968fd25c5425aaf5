import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import {
  getJob,
  type JobJson,
  postCreated as post,
  submit,
  submitSleep,
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { signal } from '../../helpers/wait.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * Time windows, overdue jobs and recurrences in virtual time: the server reads time from a clock the test moves,
 * and `engine.tick()` is what a timer would do at that moment. No agent runs here, so BASH jobs stay Queued once
 * they may start; System jobs run inside the server.
 */

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 28, 12, 0, 0); // Saturday 28 March 2026, 13:00 in Amsterdam; DST starts the next night

/** The jobs of the recurrence whose first job is `group`, by jobId (other recurrences interleave). */
async function groupJobs(t: TestServer, group: number): Promise<JobJson[]> {
  const found: JobJson[] = [];
  for (let id = group; ; id++) {
    const res = await t.req('GET', `/Job/${id}`);
    if (res.status === 404) return found;
    if (res.json.JobGroup === group) found.push(res.json);
  }
}

for (const backend of backends()) {
  describe(`time windows and recurrences in virtual time (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const advanceTo = async (ms: number) => {
      clock.set(ms);
      await t.server.engine.tick();
    };

    /**
     * Holds what a dispatch pass waits for (SQLite's writer, PostgreSQL's dispatch lock) in a transaction of its own,
     * as a long import does; resolves once it is held, with the function that ends it.
     */
    const holdDispatch = async (): Promise<() => Promise<void>> => {
      const held = signal();
      const end = signal();
      const transaction = t.server.store.transaction(async (tx) => {
        await tx.jobs.lockDispatch();
        held.fire();
        await end.done;
      });
      await held.done;
      return () => {
        end.fire();
        return transaction;
      };
    };

    /** A queue GLOBAL.<name> served by GLOBAL.System, behind a time window of that name, open `from`–`until`. */
    const systemQueueInWindow = async (name: string, zone: string, from: string, until: string) => {
      await post(t, `/TimeWindow/GLOBAL.${name}`, { TimeZone: zone, Elements: [{ FromTime: from, UntilTime: until }] });
      await post(t, `/Queue/GLOBAL.${name}`, { TimeWindow: `GLOBAL.${name}` });
      await post(t, `/QueueProvider/GLOBAL.System.GLOBAL.${name}`);
      return `GLOBAL.${name}`;
    };

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
    });
    after(() => t.close());

    test("a queue's time window (22:00–06:00 Amsterdam, crossing midnight) releases its jobs only while open", async () => {
      clock.set(T0);
      const queue = await systemQueueInWindow('Nightly', 'Europe/Amsterdam', '22:00', '06:00');
      const job = await submitSleep(t, 0, { Queue: queue });
      await advanceTo(T0 + 8 * HOUR); // 21:00 Amsterdam
      assert.equal((await getJob(t, job.jobId)).Status, 'Queued');
      await advanceTo(T0 + 9 * HOUR + 60_000); // 22:01 Amsterdam
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(utcMillis(done.RunStart), T0 + 9 * HOUR + 60_000);
    });

    test('a job that waits through a whole opening of its window is overdue: ActWhenOverdue decides', async () => {
      clock.set(T0);
      await post(t, '/TimeWindow/GLOBAL.Office', {
        TimeZone: 'UTC',
        Elements: [{ FromTime: '09:00', UntilTime: '17:00' }],
      });
      const ids: Record<string, number> = {};
      for (const action of ['Scheduled', 'Overdue', 'Canceled', 'Held']) {
        await post(t, `/JobDefinition/GLOBAL.Office_${action}`, {
          Script: 'true',
          TimeWindow: 'GLOBAL.Office',
          ActWhenOverdue: action,
        });
        ids[action] = (await submit(t, `GLOBAL.Office_${action}`)).jobId;
      }
      await advanceTo(T0 + HOUR); // 13:00 UTC: open, but no agent runs them
      for (const id of Object.values(ids)) assert.equal((await getJob(t, id)).Status, 'Queued');
      await advanceTo(T0 + 5.5 * HOUR); // 17:30 UTC: the opening is over
      assert.equal((await getJob(t, ids.Scheduled as number)).Status, 'Queued', 'waits for the next opening');
      const overdue = await getJob(t, ids.Overdue as number);
      assert.equal(overdue.Status, 'Overdue');
      assert.equal(overdue.StatusCode, 'O');
      assert.equal((await getJob(t, ids.Canceled as number)).Status, 'Canceled');
      assert.equal((await getJob(t, ids.Held as number)).Status, 'Held');
      assert.equal(
        (await t.req('PUT', `/Job/${ids.Overdue}/cancel`)).status,
        200,
        'an operator can cancel an overdue job',
      );
    });

    test('an hourly recurrence: one job waits for the next occurrence, all share the JobGroup', async () => {
      clock.set(T0);
      await post(t, '/SubmitFrame/GLOBAL.Hourly', {
        TimeZone: 'UTC',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }],
      });
      await post(t, '/JobDefinition/GLOBAL.Hourly_Job', { Script: 'true' });
      const first = await submit(t, 'GLOBAL.Hourly_Job', { SubmitFrame: 'GLOBAL.Hourly' });
      assert.equal(first.JobGroup, first.jobId);
      const second = await getJob(t, first.jobId + 1);
      assert.deepEqual(
        [second.Status, second.JobGroup, utcMillis(second.RequestedStartTime)],
        ['Scheduled', first.jobId, T0 + HOUR],
      );
      await advanceTo(T0 + HOUR);
      assert.equal((await getJob(t, second.jobId)).Status, 'Queued');
      const third = await getJob(t, first.jobId + 2);
      assert.deepEqual(
        [third.Status, third.JobGroup, utcMillis(third.RequestedStartTime)],
        ['Scheduled', first.jobId, T0 + 2 * HOUR],
      );
      await advanceTo(T0 + HOUR + 1000);
      assert.equal((await t.req('GET', `/Job/${first.jobId + 3}`)).status, 404, 'one job per occurrence');
      assert.equal((await t.req('PUT', `/Job/${third.jobId}/cancel?cancelRecurrence=true`)).status, 200);
      await advanceTo(T0 + 3 * HOUR);
      assert.equal((await t.req('GET', `/Job/${first.jobId + 3}`)).status, 404, 'the recurrence ended');
    });

    test('after downtime the misfire policy decides: Skip, RunOnce, RunAll; an occurrence never makes two jobs', async () => {
      clock.set(T0);
      await post(t, '/SubmitFrame/GLOBAL.Hourly2', {
        TimeZone: 'UTC',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }],
      });
      const groups: Record<string, number> = {};
      for (const policy of ['Skip', 'RunOnce', 'RunAll']) {
        await post(t, `/JobDefinition/GLOBAL.Misfire_${policy}`, { Script: 'true', MisfirePolicy: policy });
        groups[policy] = (await submit(t, `GLOBAL.Misfire_${policy}`, { SubmitFrame: 'GLOBAL.Hourly2' })).jobId;
      }
      const lastBefore = (groups.RunAll as number) + 1;
      // The server "was down" from 12:00 to 16:30: the 13:00 occurrences are 3.5 hours late.
      await advanceTo(T0 + 4.5 * HOUR);
      await t.server.engine.tick();
      const made: JobJson[] = [];
      for (let id = groups.Skip as number; ; id++) {
        const res = await t.req('GET', `/Job/${id}`);
        if (res.status === 404) break;
        made.push(res.json);
      }
      const of = (policy: string) =>
        made
          .filter((j) => j.JobGroup === groups[policy])
          .map((j) => [utcMillis(j.RequestedStartTime) - T0, j.Status])
          .sort((a, b) => (a[0] as number) - (b[0] as number));
      assert.deepEqual(of('Skip'), [
        [0, 'Queued'],
        [HOUR, 'Skipped'],
        [5 * HOUR, 'Scheduled'],
      ]);
      assert.deepEqual(of('RunOnce'), [
        [0, 'Queued'],
        [HOUR, 'Queued'],
        [5 * HOUR, 'Scheduled'],
      ]);
      assert.deepEqual(of('RunAll'), [
        [0, 'Queued'],
        [HOUR, 'Queued'],
        [2 * HOUR, 'Queued'],
        [3 * HOUR, 'Queued'],
        [4 * HOUR, 'Queued'],
        [5 * HOUR, 'Scheduled'],
      ]);
      assert.ok(made.length > lastBefore - (groups.Skip as number));
    });

    test('every day at 06:00 Amsterdam keeps the wall-clock time across the spring DST change', async () => {
      clock.set(T0);
      await post(t, '/SubmitFrame/GLOBAL.Morning', {
        TimeZone: 'Europe/Amsterdam',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '06:00' }],
      });
      await post(t, '/JobDefinition/GLOBAL.Morning_Job', { Script: 'true' });
      const first = await submit(t, 'GLOBAL.Morning_Job', { SubmitFrame: 'GLOBAL.Morning' });
      assert.equal(first.Status, 'Scheduled');
      assert.equal(utcMillis(first.RequestedStartTime), Date.UTC(2026, 2, 29, 4, 0), '06:00 CEST is 04:00 UTC');
      await advanceTo(Date.UTC(2026, 2, 29, 4, 0));
      const second = (await groupJobs(t, first.jobId))[1] as JobJson;
      assert.equal(
        utcMillis(second.RequestedStartTime),
        Date.UTC(2026, 2, 30, 4, 0),
        '23 hours later: still 06:00 local',
      );
    });

    test('a job started by a pass that waited for the database starts when the pass could decide, not before', async () => {
      clock.set(T0); // 12:00 UTC
      const queue = await systemQueueInWindow('FromOne', 'UTC', '12:01', '13:00');
      const job = await submitSleep(t, 0, { Queue: queue });
      // A long transaction (an import's) holds the writer, or on PostgreSQL the dispatch lock, while a pass is asked
      // for at 12:01; the transaction ends five seconds later.
      const release = await holdDispatch();
      clock.set(T0 + 60_000);
      t.server.engine.requestDispatch();
      // A few turns of the event loop, in which a pass that read the clock when asked (the bug) would have read it.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      clock.set(T0 + 65_000);
      await release();
      const done = await waitForStatus(t, job.jobId, 'Completed');
      assert.equal(utcMillis(done.ScheduledStartTime), T0 + 65_000);
      assert.equal(utcMillis(done.RunStart), T0 + 65_000);
      assert.ok(utcMillis(done.RunStart) >= utcMillis(done.RequestedStartTime));
    });

    test('a job never starts before its requested start, also when the clock steps back while a pass waits', async () => {
      clock.set(T0 + 2 * HOUR);
      const release = await holdDispatch();
      const submitted = submitSleep(t, 0);
      // On PostgreSQL the submit commits beside the held lock, and its pass waits; on SQLite the submit waits too.
      if (backend.name === 'postgres') await submitted;
      clock.set(T0 + 2 * HOUR - 5_000); // the wall clock is set back five seconds (NTP)
      await release();
      const done = await waitForStatus(t, (await submitted).jobId, 'Completed');
      assert.ok(
        utcMillis(done.RunStart) >= utcMillis(done.RequestedStartTime),
        `${done.RunStart} ≥ ${done.RequestedStartTime}`,
      );
      assert.ok(utcMillis(done.ScheduledStartTime) >= utcMillis(done.RequestedStartTime));
    });

    test('a SubmitFrame that never fires after the requested start is refused at submit', async () => {
      clock.set(T0);
      await post(t, '/SubmitFrame/GLOBAL.Ended', {
        TimeZone: 'UTC',
        EndDate: '2020/01/01 00:00:00,000 UTC',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days' }],
      });
      const res = await t.req('POST', '/Job/GLOBAL.System_Sleep', { body: { SubmitFrame: 'GLOBAL.Ended' } });
      assert.equal(res.status, 400, res.body);
      assert.match(res.json.message, /SubmitFrame/);
    });
  });
}
