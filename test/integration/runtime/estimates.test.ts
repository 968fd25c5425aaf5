import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { assertError, postCreated as post, submit, utcMillis, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { FakeClock } from '../../../src/time/clock.ts';
import { formatInstant } from '../../../src/time/date-format.ts';

/**
 * Estimated start and end of a job (docs/architecture.md §8b) on the virtual clock. The jobs are UserMessage jobs:
 * each runs (Console) from its start until it is answered, so the test sets every duration to the millisecond.
 */

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 5, 1, 5, 0, 0);
const at = (ms: number) => formatInstant(ms, 'UTC');

const ask = {
  JobDefinitionType: 'UserMessage',
  DefaultQueue: 'GLOBAL.System',
  UserMessage: {
    Text: 'Done?',
    Responses: [{ Response: 'Yes', Status: 'Completed', ReturnCode: 0 }],
    Participants: ['admin'],
  },
};

for (const backend of backends()) {
  describe(`estimates (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const estimate = async (jobId: number, query = '') => {
      const res = await t.req('GET', `/Job/${jobId}/estimate${query}`);
      assert.equal(res.status, 200, res.body);
      return res.json;
    };
    const answer = async (jobId: number) => {
      const job = await waitForStatus(t, jobId, 'Console');
      const res = await t.req('PUT', `/UserMessage/${job.UserMessage}/reply`, { body: { Response: 'Yes' } });
      assert.equal(res.status, 200, res.body);
      return waitForStatus(t, jobId, 'Completed');
    };

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      // History: one run each of 1, 5, 2 and 3 minutes, all started at T0.
      const jobs: Record<string, number> = {};
      for (const name of ['U1', 'U5', 'U2', 'U3']) {
        await post(t, `/JobDefinition/GLOBAL.${name}`, ask);
        jobs[name] = (await submit(t, `GLOBAL.${name}`)).jobId;
        await waitForStatus(t, jobs[name] as number, 'Console');
      }
      for (const [name, minutes] of [
        ['U1', 1],
        ['U2', 2],
        ['U3', 3],
        ['U5', 5],
      ] as const) {
        clock.set(T0 + minutes * MINUTE);
        await answer(jobs[name] as number);
      }
    });
    after(() => t.close());

    test('a running job: its start plus P50 (or P95), and how far it is; a final job: its real times', async () => {
      // Two more runs of U3: 1 and 4 minutes; its runs are then 1, 3 and 4 minutes (P50 3, P95 4).
      for (const minutes of [1, 4]) {
        const start = clock.now();
        const job = await submit(t, 'GLOBAL.U3');
        await waitForStatus(t, job.jobId, 'Console');
        clock.set(start + minutes * MINUTE);
        await answer(job.jobId);
      }
      const start = clock.now();
      const job = await submit(t, 'GLOBAL.U3');
      await waitForStatus(t, job.jobId, 'Console');
      assert.deepEqual(await estimate(job.jobId), {
        EstimatedStart: at(start),
        EstimatedEnd: at(start + 3 * MINUTE),
        Basis: 'P50',
        Progress: 0,
      });
      clock.set(start + 90_000);
      assert.equal((await estimate(job.jobId)).Progress, 0.5);
      assert.deepEqual(await estimate(job.jobId, '?Basis=P95'), {
        EstimatedStart: at(start),
        EstimatedEnd: at(start + 4 * MINUTE),
        Basis: 'P95',
        Progress: 0.375,
      });
      // Past its estimate it may end any moment: the end moves with the clock, progress stays 1.
      clock.set(start + 10 * MINUTE);
      assert.deepEqual(await estimate(job.jobId), {
        EstimatedStart: at(start),
        EstimatedEnd: at(start + 10 * MINUTE),
        Basis: 'P50',
        Progress: 1,
      });
      const done = await answer(job.jobId);
      assert.deepEqual(await estimate(job.jobId), {
        EstimatedStart: done.RunStart,
        EstimatedEnd: done.RunEnd,
        Basis: 'None',
        Progress: 1,
      });
    });

    test('a waiting job: from its requested start; without statistics: Basis None and no end', async () => {
      const later = clock.now() + 60 * MINUTE;
      const job = await submit(t, 'GLOBAL.U1', { RequestedStartTime: at(later) });
      await waitForStatus(t, job.jobId, 'Scheduled');
      assert.deepEqual(await estimate(job.jobId), {
        EstimatedStart: at(later),
        EstimatedEnd: at(later + MINUTE),
        Basis: 'P50',
        Progress: null,
      });
      await post(t, '/JobDefinition/GLOBAL.NeverRan', ask);
      const fresh = await submit(t, 'GLOBAL.NeverRan', { RequestedStartTime: at(later) });
      assert.deepEqual(await estimate(fresh.jobId), {
        EstimatedStart: at(later),
        EstimatedEnd: null,
        Basis: 'None',
        Progress: null,
      });
    });

    test('Basis other than P50 or P95 is 400; a job one may not view is 404, its definition hidden 403', async () => {
      const job = await submit(t, 'GLOBAL.U1', { HoldOnSubmit: true });
      assertError(await t.req('GET', `/Job/${job.jobId}/estimate?Basis=P99`), 400, /Parameter "Basis"/);
      assertError(await t.req('GET', '/Job/99999999/estimate'), 404, 'Unable to find object Job:99999999');
      assertError(await t.req('GET', '/Job/abc/estimate'), 404, 'Unable to find object Job:abc');
      const noJobs = await t.keyWithGrants('nojobs', ['JobDefinition:GLOBAL:View']);
      assertError(
        await t.req('GET', `/Job/${job.jobId}/estimate`, { key: noJobs }),
        404,
        `Unable to find object Job:${job.jobId}`,
      );
      const noDefs = await t.keyWithGrants('nodefs2', ['Job:GLOBAL:View', 'Queue:GLOBAL:View']);
      assertError(await t.req('GET', `/Job/${job.jobId}/estimate`, { key: noDefs }), 403, /JobDefinition:GLOBAL.U1/);
    });

    test('a chain: the critical path of what is left; a call ending early moves the estimate', async () => {
      await post(t, '/JobDefinition/GLOBAL.Nightly', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Nightly', {
        Steps: [
          {
            Name: 'Extract',
            Calls: [{ JobDefinition: 'GLOBAL.U1' }, { JobDefinition: 'GLOBAL.U5' }, { JobDefinition: 'GLOBAL.U2' }],
          },
          { Name: 'Report', Calls: [{ JobDefinition: 'GLOBAL.U3' }] },
        ],
      });
      const start = clock.now();
      const chain = await submit(t, 'GLOBAL.Nightly');
      // chain, step Extract, its three calls, step Report, its call
      const [u1, u5, u2] = [chain.jobId + 2, chain.jobId + 3, chain.jobId + 4];
      for (const id of [u1, u5, u2]) await waitForStatus(t, id, 'Console');
      const first = await estimate(chain.jobId);
      assert.equal(first.EstimatedStart, at(start));
      assert.equal(first.EstimatedEnd, at(start + 8 * MINUTE), 'the longest call of Extract (5), then Report (3)');
      assert.deepEqual(
        first.CriticalPath.map((s: { Step: string; JobDefinition: string; EstimatedEnd: string }) => [
          s.Step,
          s.JobDefinition,
          s.EstimatedEnd,
        ]),
        [
          ['Extract', 'GLOBAL.U5', at(start + 5 * MINUTE)],
          ['Report', 'GLOBAL.U3', at(start + 8 * MINUTE)],
        ],
      );
      clock.set(start + MINUTE);
      await answer(u1);
      assert.equal((await estimate(chain.jobId)).EstimatedEnd, at(start + 8 * MINUTE), 'U5 still runs');
      clock.set(start + 2 * MINUTE);
      await answer(u5);
      await answer(u2);
      await waitForStatus(t, chain.jobId + 5, 'Waiting');
      const moved = await estimate(chain.jobId);
      assert.equal(moved.EstimatedEnd, at(start + 5 * MINUTE), 'Extract ended at 2 minutes, Report takes 3');
      assert.deepEqual(
        moved.CriticalPath.map((s: { Step: string }) => s.Step),
        ['Report'],
      );
      assert.equal(moved.Progress, 0.4);
      assert.equal(utcMillis((await waitForStatus(t, chain.jobId, 'Waiting')).RunStart), start);
    });
  });
}
