import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, getJob, pause, postCreated as post, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Issue 4 in real time with real processes run by the local agent: time windows, recurrences, events, locks and
 * chains, each once as a user would meet them.
 */

const bash = (script: string, extra: Record<string, unknown> = {}) => ({
  JobDefinitionType: 'BASH',
  Script: script,
  ...extra,
});

/** HH:MM:SS in UTC of now + `ms`. */
function utcTime(ms: number): string {
  return new Date(Date.now() + ms).toISOString().slice(11, 19);
}

for (const backend of backends()) {
  describe(`time and flow with real processes (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend, {}, { listen: true });
    });
    after(() => t.close());

    test('a definition time window: the job waits Queued until the window opens, then runs', async () => {
      const opens = Date.now() + 3000;
      // Open from 3 s from now for 30 minutes (a range that passes midnight crosses it).
      await post(t, '/TimeWindow/GLOBAL.SoonOpen', {
        TimeZone: 'UTC',
        Elements: [{ FromTime: utcTime(3000), UntilTime: utcTime(30 * 60_000) }],
      });
      await post(t, '/JobDefinition/GLOBAL.Windowed', bash('echo in window', { TimeWindow: 'GLOBAL.SoonOpen' }));
      const job = await submit(t, 'GLOBAL.Windowed');
      assert.equal(job.Status, 'Queued');
      await pause(1000);
      assert.equal((await getJob(t, job.jobId)).Status, 'Queued', 'still closed');
      const done = await waitForStatus(t, job.jobId, 'Completed', 10_000);
      assert.ok(
        Date.parse(`${done.RunStart.slice(0, 10).replaceAll('/', '-')}T${done.RunStart.slice(11, 19)}Z`) >=
          Math.floor(opens / 1000) * 1000 - 1000,
      );
    });

    test('a window that never opens within two years makes the job Never', async () => {
      await post(t, '/TimeWindow/GLOBAL.Past', {
        TimeZone: 'UTC',
        Elements: [{ FromDate: '2001/01/01 00:00:00,000 UTC', UntilDate: '2001/01/02 00:00:00,000 UTC' }],
      });
      await post(t, '/JobDefinition/GLOBAL.Hopeless', bash('true', { TimeWindow: 'GLOBAL.Past' }));
      const job = await submit(t, 'GLOBAL.Hopeless');
      assert.equal(job.Status, 'Never');
      assert.equal(job.StatusCode, 'n');
    });

    test('a cron recurrence every 2 seconds: jobs share a JobGroup; cancelRecurrence ends it', async () => {
      await post(t, '/SubmitFrame/GLOBAL.EveryTwo', { CronExpression: '*/2 * * * * *', TimeZone: 'UTC' });
      await post(t, '/JobDefinition/GLOBAL.Ticker', bash('echo tick'));
      const first = await submit(t, 'GLOBAL.Ticker', { SubmitFrame: 'GLOBAL.EveryTwo' });
      assert.equal(first.Status, 'Scheduled');
      assert.equal(first.JobGroup, first.jobId);
      await waitForStatus(t, first.jobId, 'Completed', 6000);
      const second = await waitForStatus(
        t,
        first.jobId + 1,
        ['Scheduled', 'Queued', 'Dispatched', 'Running', 'Completed'],
        3000,
      );
      assert.equal(second.JobGroup, first.jobId);
      assert.equal(second.JobDefinition, 'GLOBAL.Ticker');
      const gap =
        Date.parse(second.RequestedStartTime.slice(0, 19).replaceAll('/', '-')) -
        Date.parse(first.RequestedStartTime.slice(0, 19).replaceAll('/', '-'));
      assert.equal(gap, 2000);
      await waitForStatus(t, second.jobId, 'Completed', 6000);
      const third = await waitForStatus(t, second.jobId + 1, 'Scheduled', 3000);
      assert.equal((await act(t, third.jobId, 'cancel?cancelRecurrence=true')).status, 200);
      assert.equal((await getJob(t, third.jobId)).Status, 'Canceled');
      await pause(2500);
      assert.equal((await t.req('GET', `/Job/${third.jobId + 1}`)).status, 404, 'nothing submitted after the end');
    });

    test('events: EventWait until raised, ClearsEvent consumes it, RaiseEvents raises with substitutions, AutoSubmit', async () => {
      for (const e of ['Ready', 'Done', 'Go']) await post(t, `/EventDefinition/GLOBAL.${e}`);
      await post(
        t,
        '/JobDefinition/GLOBAL.Waiter',
        bash('echo waited', {
          WaitEvents: [{ EventDefinition: 'GLOBAL.Ready', ClearsEvent: true }],
          RaiseEvents: [
            {
              EventDefinition: 'GLOBAL.Done',
              StatusToRaiseOn: 'Completed',
              RaiseComment: 'Job ${jobid} went ${jobstatus}',
            },
          ],
        }),
      );
      const job = await submit(t, 'GLOBAL.Waiter');
      assert.equal(job.Status, 'EventWait');
      await pause(500);
      assert.equal((await getJob(t, job.jobId)).Status, 'EventWait');
      const raised = await t.req('POST', '/Event/GLOBAL.Ready', { body: { RaiserComment: 'files are in' } });
      assert.equal(raised.status, 201, raised.body);
      assert.equal(raised.json.Status, 'Raised');
      await waitForStatus(t, job.jobId, 'Completed', 10_000);
      const ready = await t.req('GET', `/Event/${raised.json.eventId}`);
      assert.equal(ready.json.Status, 'Cleared', 'consumed by the job');
      assert.equal(ready.json.ClearerObject, `Job:${job.jobId}`);
      const done = await t.req('GET', '/Event/Done1');
      assert.equal(done.status, 200, done.body);
      assert.equal(done.json.Status, 'Raised');
      assert.equal(done.json.RaiserComment, `Job ${job.jobId} went Completed`);

      await post(
        t,
        '/JobDefinition/GLOBAL.Auto',
        bash('true', { WaitEvents: [{ EventDefinition: 'GLOBAL.Go', AutoSubmit: 'Always' }] }),
      );
      const probe = await submit(t, 'GLOBAL.System_Sleep', {
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
      });
      await post(t, '/Event/GLOBAL.Go');
      const auto = await waitForStatus(t, probe.jobId + 1, 'Completed', 10_000);
      assert.equal(auto.JobDefinition, 'GLOBAL.Auto');
    });

    test('a lock: jobs holding the same lock never run at once; the others wait in LockWait', async () => {
      const log = join(t.config.dataDir, 'lock-intervals.txt');
      await post(t, '/Lock/GLOBAL.Ledger');
      await post(
        t,
        '/JobDefinition/GLOBAL.Posting',
        bash(`echo "start $(date +%s%N)" >> ${log}; sleep 1; echo "end $(date +%s%N)" >> ${log}`, {
          Locks: ['GLOBAL.Ledger'],
        }),
      );
      const ids = (await Promise.all([1, 2, 3].map(() => submit(t, 'GLOBAL.Posting')))).map((j) => j.jobId);
      for (const id of ids) await waitForStatus(t, id, 'Completed', 15_000);
      // Read afterwards from each job's history: a poll could miss a wait of a second on a loaded machine.
      const waited = [];
      for (const id of ids) {
        const history = await t.req('GET', `/Job/${id}/history`);
        assert.equal(history.status, 200, history.body);
        if (history.json.items.some((e: { ToStatus: string }) => e.ToStatus === 'LockWait')) waited.push(id);
      }
      assert.ok(waited.length >= 1, 'a job submitted beside the holder waited in LockWait');
      const events = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .map(([kind, ns]) => ({ kind, at: BigInt(ns as string) }))
        .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      let running = 0;
      for (const e of events) {
        running += e.kind === 'start' ? 1 : -1;
        assert.ok(running <= 1, 'two holders of the lock ran at once');
      }
      assert.equal(events.length, 6);
    });

    test('a chain of real processes: an Out parameter of step 1 reaches step 2; a failing call is handled', async () => {
      const out = join(t.config.dataDir, 'chain-out.txt');
      await post(
        t,
        '/JobDefinition/GLOBAL.Produce',
        bash('RESULT=$((6 * 7))', { Parameters: [{ Name: 'RESULT', Direction: 'Out', DataType: 'Number' }] }),
      );
      await post(
        t,
        '/JobDefinition/GLOBAL.Consume',
        bash(`echo "got $VALUE" > ${out}`, { Parameters: [{ Name: 'VALUE', DataType: 'String', Optional: true }] }),
      );
      await post(t, '/JobDefinition/GLOBAL.Flaky', bash('exit 3'));
      await post(t, '/JobDefinition/GLOBAL.Pipeline', { JobDefinitionType: 'JobChain', DefaultQueue: 'GLOBAL.System' });
      await post(t, '/JobChain/GLOBAL.Pipeline', {
        Steps: [
          {
            Name: 'Make',
            Calls: [{ JobDefinition: 'GLOBAL.Produce' }, { JobDefinition: 'GLOBAL.Flaky' }],
            StatusHandlers: [{ Status: 'Error', Action: 'Continue' }],
          },
          {
            Name: 'Use',
            Calls: [
              {
                JobDefinition: 'GLOBAL.Consume',
                ParameterMappings: [
                  { Parameter: 'VALUE', Source: 'CallOutput', FromStep: 'Make', FromCall: 1, FromParameter: 'RESULT' },
                ],
              },
            ],
          },
        ],
      });
      const chain = await submit(t, 'GLOBAL.Pipeline');
      const done = await waitForStatus(t, chain.jobId, 'Completed', 20_000);
      assert.equal(done.Status, 'Completed');
      assert.equal((await getJob(t, chain.jobId + 3)).Status, 'Error', 'the failing call');
      assert.equal((await getJob(t, chain.jobId + 3)).ReturnCode, 3);
      assert.equal(readFileSync(out, 'utf8').trim(), 'got 42');
    });
  });
}
