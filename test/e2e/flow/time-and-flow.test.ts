import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import {
  act,
  getJob,
  type JobJson,
  pause,
  postCreated as post,
  submit,
  utcMillis,
  waitForStatus,
} from '../../helpers/jobs.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';

/**
 * Time and flow in real time with real processes run by the local agent: time windows, recurrences, events, locks and
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
      t = await startE2eServer(backend);
    });
    after(() => t.close());

    test('a definition time window: the job waits Queued until the window opens, then runs', async () => {
      // Open from 10 s from now for 30 minutes (a range that passes midnight crosses it): time for a loaded
      // machine to submit while it is still closed.
      const opens = Math.floor((Date.now() + 10_000) / 1000) * 1000;
      await post(t, '/TimeWindow/GLOBAL.SoonOpen', {
        TimeZone: 'UTC',
        Elements: [{ FromTime: new Date(opens).toISOString().slice(11, 19), UntilTime: utcTime(30 * 60_000) }],
      });
      await post(t, '/JobDefinition/GLOBAL.Windowed', bash('echo in window', { TimeWindow: 'GLOBAL.SoonOpen' }));
      const job = await submit(t, 'GLOBAL.Windowed');
      assert.equal(job.Status, 'Queued');
      assert.ok(utcMillis(job.CreationTime) < opens, 'submitted while the window was closed');
      const done = await waitForStatus(t, job.jobId, 'Completed');
      // Read afterwards from its history: Queued from the submit until the window opened, dispatched only then.
      const history = (await t.req('GET', `/Job/${job.jobId}/history`)).json.items as JobJson[];
      assert.equal(history[0]?.ToStatus, 'Queued');
      const left = history.find((e) => e.FromStatus === 'Queued');
      assert.ok(left && utcMillis(left.Time) >= opens, `left Queued at ${left?.Time}, the window opens at ${opens}`);
      assert.ok(utcMillis(done.RunStart) >= opens);
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
      await waitForStatus(t, first.jobId, 'Completed');
      const second = await waitForStatus(t, first.jobId + 1, [
        'Scheduled',
        'Queued',
        'Dispatched',
        'Running',
        'Completed',
      ]);
      assert.equal(second.JobGroup, first.jobId);
      assert.equal(second.JobDefinition, 'GLOBAL.Ticker');
      const gap =
        Date.parse(second.RequestedStartTime.slice(0, 19).replaceAll('/', '-')) -
        Date.parse(first.RequestedStartTime.slice(0, 19).replaceAll('/', '-'));
      assert.equal(gap, 2000);
      await waitForStatus(t, second.jobId, 'Completed');
      // The recurrence's waiting job is Scheduled for at most 2 s: cancel whichever one waits now, and again should a
      // slow machine let it start first (409) - the recurrence must end either way.
      const ended = await waitFor('a cancelRecurrence that ends the recurrence', async () => {
        const waiting = await t.req('GET', `/Job?JobGroup=${first.jobId}&Status=Scheduled`);
        const next = waiting.json.items[0];
        if (!next) return undefined;
        const res = await act(t, next.jobId, 'cancel?cancelRecurrence=true');
        return res.status === 200 ? (next.jobId as number) : undefined;
      });
      assert.equal((await getJob(t, ended)).Status, 'Canceled');
      await pause(4500);
      const after = await t.req('GET', `/Job?JobGroup=${first.jobId}&Status=Scheduled,Queued`);
      assert.deepEqual(after.json.items, [], 'nothing waits in the recurrence after its end');
      const newest = await t.req('GET', `/Job?JobGroup=${first.jobId}&Limit=1`);
      assert.equal(newest.json.items[0]?.jobId, ended, 'nothing submitted after the end');
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
      await waitForStatus(t, job.jobId, 'Completed');
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
      const auto = await waitForStatus(t, probe.jobId + 1, 'Completed');
      assert.equal(auto.JobDefinition, 'GLOBAL.Auto');
    });

    test('a lock: jobs holding the same lock never run at once; the others wait in LockWait', async () => {
      const log = join(t.config.dataDir, 'lock-intervals.txt');
      const go = join(t.config.dataDir, 'lock-go');
      await post(t, '/Lock/GLOBAL.Ledger');
      await post(
        t,
        '/JobDefinition/GLOBAL.Posting',
        // Each holder runs until the test lets it go (the file `go`): holding the lock is a state, not a moment.
        bash(
          `echo "start $(date +%s%N)" >> ${log}; while [ ! -e ${go} ]; do sleep 0.1; done; sleep 0.2; echo "end $(date +%s%N)" >> ${log}`,
          { Locks: ['GLOBAL.Ledger'] },
        ),
      );
      const holder = (await submit(t, 'GLOBAL.Posting')).jobId as number;
      await waitForStatus(t, holder, 'Running');
      const others = (await Promise.all([1, 2].map(() => submit(t, 'GLOBAL.Posting')))).map((j) => j.jobId as number);
      for (const id of others) await waitForStatus(t, id, 'LockWait');
      assert.equal((await getJob(t, holder)).Status, 'Running');
      writeFileSync(go, '');
      const ids = [holder, ...others];
      for (const id of ids) await waitForStatus(t, id, 'Completed');
      // Each history says so too: the two submitted beside the holder waited in LockWait.
      const waited = [];
      for (const id of ids) {
        const history = await t.req('GET', `/Job/${id}/history`);
        assert.equal(history.status, 200, history.body);
        if (history.json.items.some((e: { ToStatus: string }) => e.ToStatus === 'LockWait')) waited.push(id);
      }
      assert.deepEqual(waited, others, 'the jobs submitted beside the holder waited in LockWait');
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
      const done = await waitForStatus(t, chain.jobId, 'Completed');
      assert.equal(done.Status, 'Completed');
      assert.equal((await getJob(t, chain.jobId + 3)).Status, 'Error', 'the failing call');
      assert.equal((await getJob(t, chain.jobId + 3)).ReturnCode, 3);
      assert.equal(readFileSync(out, 'utf8').trim(), 'got 42');
    });
  });
}
