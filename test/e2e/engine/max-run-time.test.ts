import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { utcMillis as epochOf } from '../../helpers/jobs.ts';
import { maxRunPids, overrunScript } from '../../helpers/max-run.ts';
import { processRuns, until } from '../../helpers/processes.ts';
import { startE2eServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

interface HistoryItem {
  ToStatus: string;
  Cause: string;
  Detail: string | null;
}

/**
 * MaxRunTime with real agent processes (docs/architecture.md §6b): a job still running at its limit is killed as an
 * operator's kill would (its process tree gone, its slot freed) and ends Killed with the history cause maxruntime;
 * a chain's limit kills what runs in it; a submit's MaxRunTime replaces the definition's; an alert source may
 * match the cause. Each job sleeps 600 s, so only the limit ends it.
 */
for (const backend of backends()) {
  describe(`MaxRunTime with real processes (${backend.name})`, () => {
    let t: TestServer;
    const get = (path: string) => t.req('GET', path);
    const post = async (path: string, body: unknown) => {
      const r = await t.req('POST', path, { body });
      assert.equal(r.status, 201, `${path}: ${r.body}`);
      return r.json;
    };
    const history = async (id: number): Promise<HistoryItem[]> => (await get(`/Job/${id}/history`)).json.items;
    /** The job ended Killed at its limit: the kill and the end both name the cause and the limit. */
    const assertKilledAtLimit = async (id: number, seconds: number) => {
      const job = await waitForJob(get, id);
      assert.equal(job.Status, 'Killed', JSON.stringify(job));
      const items = await history(id);
      const killing = items.find((h) => h.Cause === 'maxruntime' && h.ToStatus === 'Killing');
      const killed = items.at(-1);
      assert.ok(killing, JSON.stringify(items));
      assert.equal(killed?.ToStatus, 'Killed');
      assert.equal(killed?.Cause, 'maxruntime', JSON.stringify(items));
      assert.equal(killed?.Detail, `Job:${id} ran past its MaxRunTime of ${seconds} s`);
      const ran = epochOf(job.RunEnd) - epochOf(job.RunStart);
      assert.ok(ran >= seconds * 1000, `killed after ${ran} ms, before its limit`);
      return job;
    };
    const assertGone = (pids: number[]) =>
      until(() => pids.every((p) => !processRuns(p)), `the job's processes ${pids.join(', ')} to be gone`);

    before(async () => {
      t = await startE2eServer(backend, { killGraceMs: 1000 });
    });
    after(() => t.close());

    test('a job running past its MaxRunTime is killed with its process tree, and its slot is freed', async () => {
      const dir = t.config.dataDir;
      await post('/Queue/GLOBAL.OneAtATime', { ExecutionSize: 1 });
      await post('/QueueProvider/GLOBAL.Local.GLOBAL.OneAtATime', {});
      await post('/JobDefinition/GLOBAL.Overrun', {
        JobDefinitionType: 'BASH',
        DefaultQueue: 'GLOBAL.OneAtATime',
        MaxRunTime: 2,
        Script: overrunScript(dir),
      });
      await post('/JobDefinition/GLOBAL.Next', {
        JobDefinitionType: 'BASH',
        DefaultQueue: 'GLOBAL.OneAtATime',
        Script: 'echo next',
      });
      assert.equal((await get('/JobDefinition/GLOBAL.Overrun')).json.MaxRunTime, 2);
      const id = (await post('/Job/GLOBAL.Overrun', {})).jobId as number;
      const pids = await maxRunPids(dir, id);
      const next = (await post('/Job/GLOBAL.Next', {})).jobId as number;
      const killed = await assertKilledAtLimit(id, 2);
      await assertGone(pids);
      // The queue runs one job at a time: the next one started only once the killed one had ended.
      const done = await waitForJob(get, next);
      assert.equal(done.Status, 'Completed', JSON.stringify(done));
      assert.ok(epochOf(done.RunStart) >= epochOf(killed.RunEnd), `${done.RunStart} before ${killed.RunEnd}`);
    });

    test("a submit's MaxRunTime limits a job whose definition has none; an alert source matches the cause", async () => {
      const dir = t.config.dataDir;
      await post('/JobDefinition/GLOBAL.Unlimited', { JobDefinitionType: 'BASH', Script: overrunScript(dir) });
      await post('/AlertEscalation/GLOBAL.Watch', {});
      await post('/JobDefinitionAlertSource/GLOBAL.TooLong', {
        NamePattern: 'Unlimited',
        Statuses: [{ Status: 'Killed', Cause: 'maxruntime', Message: 'Job:${jobid} ran too long (${cause})' }],
        DefaultAlertEscalation: 'GLOBAL.Watch',
      });
      // An operator's kill of the same definition: Killed, with another cause; the alert source stays quiet.
      const byHand = (await post('/Job/GLOBAL.Unlimited', {})).jobId as number;
      const handPids = await maxRunPids(dir, byHand);
      assert.equal((await t.req('PUT', `/Job/${byHand}/kill`)).status, 200);
      assert.equal((await waitForJob(get, byHand)).Status, 'Killed');
      await assertGone(handPids);
      assert.ok((await history(byHand)).every((h) => h.Cause !== 'maxruntime'));

      const id = (await post('/Job/GLOBAL.Unlimited', { MaxRunTime: 3 })).jobId as number;
      const pids = await maxRunPids(dir, id);
      await assertKilledAtLimit(id, 3);
      await assertGone(pids);
      const alerts = await waitFor('the alert', async () => {
        const items = (await get('/Alert')).json.items as Array<{ SourceObject: string; Message: string }>;
        return items.some((a) => a.SourceObject === `Job:${id}`) ? items : undefined;
      });
      const mine = alerts.filter((a) => a.SourceObject === `Job:${id}` || a.SourceObject === `Job:${byHand}`);
      assert.deepEqual(
        mine.map((a) => [a.SourceObject, a.Message]),
        [[`Job:${id}`, `Job:${id} ran too long (maxruntime)`]],
      );
    });

    test('a chain running past its MaxRunTime kills what runs in it and ends Killed', async () => {
      const dir = t.config.dataDir;
      await post('/JobDefinition/GLOBAL.Sleeper', { JobDefinitionType: 'BASH', Script: overrunScript(dir) });
      await post('/JobChain/GLOBAL.LongChain', {
        MaxRunTime: 2,
        Steps: [{ Name: 'Sleep', Calls: [{ JobDefinition: 'GLOBAL.Sleeper' }] }],
      });
      assert.equal((await get('/JobChain/GLOBAL.LongChain')).json.MaxRunTime, 2);
      const chain = (await post('/Job/GLOBAL.LongChain', {})).jobId as number;
      const call = await waitFor('the chain call', async () => {
        const items = (await get('/Job?JobDefinition=GLOBAL.Sleeper')).json.items as Array<{ jobId: number }>;
        return items[0]?.jobId;
      });
      const pids = await maxRunPids(dir, call);
      assert.equal((await get(`/Job/${chain}`)).json.MaxRunTime, 2, "the chain job shows its JobChain's limit");
      assert.equal((await get(`/Job/${call}`)).json.MaxRunTime, null, 'its call has none of its own');
      await assertKilledAtLimit(chain, 2);
      assert.equal((await waitForJob(get, call)).Status, 'Killed');
      await assertGone(pids);
      const steps = (await get(`/Job?ParentJob=${chain}`)).json.items as Array<{ Status: string }>;
      assert.deepEqual(
        steps.map((s) => s.Status),
        ['Killed'],
      );
    });
  });
}
