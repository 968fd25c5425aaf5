import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { QUANTILE_PRECISION } from '../../../src/domain/runtime-figures.ts';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  assertError,
  getJob,
  type JobJson,
  postCreated as post,
  submit,
  submitSleep,
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';
import { FakeClock } from '../../../src/time/clock.ts';

/**
 * Runtime statistics per definition (docs/architecture.md §8b), kept as jobs finish: after runs of known durations
 * the figures are the exact ones, P50 and P95 the nearest-rank values of a reference computation over the runs'
 * own RunStart and RunEnd (within the documented bucket precision); purged runs keep their figures.
 */

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 5, 1, 8, 0, 0);

/** The nearest-rank quantile of durations (ms): the value of rank ⌈q·N⌉ in order. */
const nearestRank = (ms: readonly number[], q: number) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
};

const assertNear = (got: number, exactMs: number, what: string) =>
  assert.ok(
    Math.abs(got * 1000 - exactMs) <= exactMs * QUANTILE_PRECISION + 1,
    `${what}: ${got} s against the reference ${exactMs / 1000} s`,
  );

/** A UserMessage definition: its job runs (Console) from its start until a participant replies. */
const ask = (extra: Record<string, unknown> = {}) => ({
  JobDefinitionType: 'UserMessage',
  DefaultQueue: 'GLOBAL.System',
  UserMessage: {
    Text: 'Go on?',
    Responses: [
      { Response: 'Yes', Status: 'Completed', ReturnCode: 0 },
      { Response: 'No', Status: 'Error', ReturnCode: 1 },
    ],
    Participants: ['admin'],
  },
  ...extra,
});

for (const backend of backends()) {
  describe(`runtime statistics (${backend.name})`, () => {
    describe('on the real clock', () => {
      let t: TestServer;
      before(async () => {
        t = await startTestServer(backend);
      });
      after(() => t.close());

      test('after sleeps of known lengths, a kill and an Unknown, the figures are those of the runs', async () => {
        const lengths = Array.from({ length: 21 }, (_, i) => i * 20);
        const jobs = await Promise.all(lengths.map((ms) => submitSleep(t, ms)));
        const done = await Promise.all(jobs.map((j) => waitForStatus(t, j.jobId, 'Completed')));
        const killed = await submitSleep(t, 3_600_000);
        await waitForStatus(t, killed.jobId, 'Running');
        assert.equal((await act(t, killed.jobId, 'kill')).status, 200);
        const lost = await submitSleep(t, 3_600_000);
        await waitForStatus(t, lost.jobId, 'Running');
        assert.equal((await act(t, lost.jobId, 'unknown')).status, 200);
        // Never ran: no run.
        const canceled = await submitSleep(t, 0, { HoldOnSubmit: true });
        assert.equal((await act(t, canceled.jobId, 'cancel')).status, 200);
        const ended = [
          ...done,
          await waitForStatus(t, killed.jobId, 'Killed'),
          await waitForStatus(t, lost.jobId, 'Unknown'),
        ];
        const ms = ended.map((j) => utcMillis(j.RunEnd) - utcMillis(j.RunStart));

        const res = await t.req('GET', '/JobDefinition/GLOBAL.System_Sleep/statistics');
        assert.equal(res.status, 200, res.body);
        const s = res.json;
        assert.equal(s.Runs, 23);
        assert.deepEqual([s.Completed, s.Error, s.Killed, s.Unknown], [21, 0, 1, 1]);
        assert.equal(s.MaxSeconds, Math.max(...ms) / 1000);
        assert.equal(s.MeanSeconds, Math.round(ms.reduce((a, b) => a + b, 0) / ms.length) / 1000);
        assertNear(s.P50Seconds, nearestRank(ms, 0.5), 'P50');
        assertNear(s.P95Seconds, nearestRank(ms, 0.95), 'P95');
        const newestFirst = [...ended].sort((a, b) => b.jobId - a.jobId);
        assert.deepEqual(
          s.LastRuns,
          newestFirst.map((j) => ({
            Job: j.jobId,
            Status: j.Status,
            RunStart: j.RunStart,
            Seconds: (utcMillis(j.RunEnd) - utcMillis(j.RunStart)) / 1000,
          })),
        );
        assert.equal(s.Steps, undefined, 'a definition that is no chain has no steps');
      });

      test('a definition that never ran: zero runs, null figures; unknown and hidden definitions: 404', async () => {
        await post(t, '/JobDefinition/GLOBAL.Fresh', { Script: 'true' });
        const res = await t.req('GET', '/JobDefinition/GLOBAL.Fresh/statistics');
        assert.equal(res.status, 200, res.body);
        assert.deepEqual(res.json, {
          Runs: 0,
          Completed: 0,
          Error: 0,
          Killed: 0,
          Unknown: 0,
          MeanSeconds: null,
          P50Seconds: null,
          P95Seconds: null,
          MaxSeconds: null,
          LastRuns: [],
        });
        assertError(
          await t.req('GET', '/JobDefinition/GLOBAL.Nothing/statistics'),
          404,
          'Unable to find object JobDefinition:GLOBAL.Nothing',
        );
        const viewer = await t.keyWithGrants('nodefs', ['Job:GLOBAL:View']);
        assertError(
          await t.req('GET', '/JobDefinition/GLOBAL.Fresh/statistics', { key: viewer }),
          404,
          'Unable to find object JobDefinition:GLOBAL.Fresh',
        );
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Fresh/statistics', { key: null })).status, 401);
      });
      test('deleting a definition deletes its statistics: one made again under its key starts afresh', async () => {
        await post(t, '/JobDefinition/GLOBAL.Gone', ask());
        const job = await submit(t, 'GLOBAL.Gone');
        const waiting = await waitForStatus(t, job.jobId, 'Console');
        await t.req('PUT', `/UserMessage/${waiting.UserMessage}/reply`, { body: { Response: 'Yes' } });
        await waitForStatus(t, job.jobId, 'Completed');
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Gone/statistics')).json.Runs, 1);
        assert.equal((await t.req('DELETE', `/Job/${job.jobId}`)).status, 204);
        const deleted = await t.req('DELETE', '/JobDefinition/GLOBAL.Gone');
        assert.equal(deleted.status, 204, deleted.body);
        await post(t, '/JobDefinition/GLOBAL.Gone', ask());
        const again = (await t.req('GET', '/JobDefinition/GLOBAL.Gone/statistics')).json;
        assert.deepEqual([again.Runs, again.MaxSeconds, again.LastRuns], [0, null, []]);
      });
    });

    describe('on the virtual clock', () => {
      let t: TestServer;
      const clock = new FakeClock(T0);
      before(async () => {
        t = await startTestServer(backend, {}, { clock });
      });
      after(() => t.close());

      /** Runs a job of `definition` for exactly `minutes` of virtual time, ending it with `response`. */
      const runFor = async (definition: string, minutes: number, response = 'Yes') => {
        const start = clock.now();
        const job = await submit(t, definition);
        const waiting = await waitForStatus(t, job.jobId, 'Console');
        assert.equal(utcMillis(waiting.RunStart), start);
        clock.set(start + minutes * MINUTE);
        const res = await t.req('PUT', `/UserMessage/${waiting.UserMessage}/reply`, { body: { Response: response } });
        assert.equal(res.status, 200, res.body);
        return waitForStatus(t, job.jobId, response === 'Yes' ? 'Completed' : 'Error');
      };

      test('purged runs keep what they contributed; LastRuns shows the runs still in history', async () => {
        await post(t, '/JobDefinition/GLOBAL.Kept', ask({ KeepJobs: 2 }));
        const runs: JobJson[] = [];
        for (const [minutes, response] of [
          [4, 'Yes'],
          [1, 'No'],
          [5, 'Yes'],
          [2, 'Yes'],
          [3, 'Yes'],
        ] as const)
          runs.push(await runFor('GLOBAL.Kept', minutes, response));
        // KeepJobs 2: the three oldest go.
        await waitFor('the purge of the oldest runs', async () =>
          (await t.req('GET', `/Job/${runs[2].jobId}`)).status === 404 ? true : undefined,
        );
        const s = (await t.req('GET', '/JobDefinition/GLOBAL.Kept/statistics')).json;
        assert.equal(s.Runs, 5);
        assert.deepEqual([s.Completed, s.Error, s.Killed, s.Unknown], [4, 1, 0, 0]);
        assert.equal(s.MeanSeconds, 180);
        assert.equal(s.P50Seconds, 180);
        assert.equal(s.P95Seconds, 300);
        assert.equal(s.MaxSeconds, 300);
        assert.deepEqual(
          s.LastRuns.map((r: { Job: number; Seconds: number }) => [r.Job, r.Seconds]),
          [
            [runs[4].jobId, 180],
            [runs[3].jobId, 120],
          ],
        );
      });

      test("a chain's statistics: its own runtime, and each step's", async () => {
        await post(t, '/JobDefinition/GLOBAL.Q1', ask());
        await post(t, '/JobDefinition/GLOBAL.Twice', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
        await post(t, '/JobChain/GLOBAL.Twice', {
          Steps: [
            { Name: 'First', Calls: [{ JobDefinition: 'GLOBAL.Q1' }] },
            { Name: 'Second', Calls: [{ JobDefinition: 'GLOBAL.Q1' }] },
          ],
        });
        const start = clock.now();
        const chain = await submit(t, 'GLOBAL.Twice');
        const first = await waitForStatus(t, chain.jobId + 2, 'Console');
        clock.set(start + 2 * MINUTE);
        await t.req('PUT', `/UserMessage/${first.UserMessage}/reply`, { body: { Response: 'Yes' } });
        const second = await waitForStatus(t, chain.jobId + 4, 'Console');
        clock.set(start + 7 * MINUTE);
        await t.req('PUT', `/UserMessage/${second.UserMessage}/reply`, { body: { Response: 'Yes' } });
        await waitForStatus(t, chain.jobId, 'Completed');
        const s = (await t.req('GET', '/JobDefinition/GLOBAL.Twice/statistics')).json;
        assert.equal(s.Runs, 1);
        assert.equal(s.MaxSeconds, 420);
        assert.deepEqual(
          s.LastRuns.map((r: { Job: number }) => r.Job),
          [chain.jobId],
        );
        assert.deepEqual(
          s.Steps.map((x: { Step: string; Runs: number; P50Seconds: number; LastRuns: { Job: number }[] }) => [
            x.Step,
            x.Runs,
            x.P50Seconds,
            x.LastRuns.map((r) => r.Job),
          ]),
          [
            ['First', 1, 120, [chain.jobId + 1]],
            ['Second', 1, 300, [chain.jobId + 3]],
          ],
        );
        // The calls count for their own definition.
        assert.equal((await t.req('GET', '/JobDefinition/GLOBAL.Q1/statistics')).json.Runs, 2);
        assert.equal((await getJob(t, chain.jobId)).Status, 'Completed');
      });
    });
  });
}
