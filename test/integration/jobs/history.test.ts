import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { act, submit } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor, waitForJob } from '../../helpers/wait.ts';

const DATE = /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2},\d{3} UTC$/;

// biome-ignore lint/suspicious/noExplicitAny: tests read history entries as a client does
type Entry = any;

/** GET /Job/<id>/history: every status change with its time and cause, kept and purged with the job. */
for (const backend of backends()) {
  describe(`job history (${backend.name})`, () => {
    let t: TestServer;
    let alice: string;
    const get = (path: string) => t.req('GET', path);
    const history = async (jobId: number, key?: string): Promise<Entry[]> => {
      const r = await t.req('GET', `/Job/${jobId}/history`, key ? { key } : {});
      assert.equal(r.status, 200, r.body);
      return r.json.items;
    };
    const moves = (items: Entry[]) => items.map((e) => `${e.FromStatus ?? '-'}>${e.ToStatus}`);

    before(async () => {
      t = await startTestServer(backend, {}, { listen: true });
      alice = await t.keyWithRoles('alice', ['Operator']);
      for (const [path, body] of [
        [
          '/JobDefinition/GLOBAL.Echo',
          { JobDefinitionType: 'BASH', Script: 'echo hi; exit 3', ReturncodeMapToCompleted: '3' },
        ],
        ['/JobDefinition/GLOBAL.Kept', { JobDefinitionType: 'SH', Script: 'true', KeepJobs: 1 }],
        ['/Partition/Other', {}],
        ['/JobDefinition/Other.Hidden', { JobDefinitionType: 'SH', Script: 'true' }],
      ] as const)
        assert.equal((await t.req('POST', path, { body })).status, 201);
    });
    after(() => t.close());

    test('submit → dispatch → run → complete on an agent, each with its time and cause', async () => {
      const job = await submit(t, 'GLOBAL.Echo', undefined, alice);
      await waitForJob(get, job.jobId, ['Completed']);
      const items = await history(job.jobId);
      assert.deepEqual(moves(items), ['->Queued', 'Queued>Dispatched', 'Dispatched>Running', 'Running>Completed']);
      for (const e of items) assert.match(e.Time, DATE);
      assert.deepEqual(items[0], { ...items[0], User: 'alice', Cause: 'submit' });
      assert.deepEqual(items[1], {
        ...items[1],
        User: null,
        Cause: 'dispatch',
        Detail: 'Dispatched to process server GLOBAL.Local',
      });
      assert.equal(items[2].Cause, 'agent');
      assert.equal(items[3].Cause, 'agent');
      assert.equal(items[3].Detail, 'Process server GLOBAL.Local reported return code 3');
    });

    test('hold, release and cancel name the user who did them', async () => {
      const bob = await t.keyWithRoles('bob', ['Operator']);
      // A start time far ahead keeps it pending whatever the machine's speed.
      const job = await submit(t, 'GLOBAL.Echo', { RequestedStartTime: '2099/01/01 00:00:00,000 UTC' }, alice);
      for (const [action, key] of [
        ['hold', alice],
        ['release', bob],
        ['hold', alice],
        ['cancel', bob],
      ] as const)
        assert.equal((await act(t, job.jobId, action, undefined, key)).status, 200);
      const items = await history(job.jobId);
      assert.deepEqual(
        items.map((e: Entry) => [e.FromStatus, e.ToStatus, e.User, e.Cause]),
        [
          [null, 'Scheduled', 'alice', 'submit'],
          ['Scheduled', 'Held', 'alice', 'hold'],
          ['Held', 'Scheduled', 'bob', 'release'],
          ['Scheduled', 'Held', 'alice', 'hold'],
          ['Held', 'Canceled', 'bob', 'cancel'],
        ],
      );
    });

    test('a restart: the new job starts with where it came from, naming the user', async () => {
      const job = await submit(t, 'GLOBAL.Echo');
      await waitForJob(get, job.jobId);
      const r = await act(t, job.jobId, 'restart', undefined, alice);
      assert.equal(r.status, 201, r.body);
      const first = (await history(r.json.jobId))[0];
      assert.deepEqual(first, {
        ...first,
        FromStatus: null,
        ToStatus: 'Queued',
        User: 'alice',
        Cause: 'restart',
        Detail: `Restart of Job:${job.jobId}`,
      });
    });

    test('same privileges as GET /Job/<id>: a job the caller cannot view is 404', async () => {
      const hidden = await submit(t, 'Other.Hidden');
      const viewer = await t.keyWithGrants('globalviewer', ['*:GLOBAL:View']);
      const r = await t.req('GET', `/Job/${hidden.jobId}/history`, { key: viewer });
      assert.equal(r.status, 404);
      assert.deepEqual(r.json, { code: '404', message: `Unable to find object Job:${hidden.jobId}` });
      assert.equal((await t.req('GET', '/Job/99999999/history')).status, 404);
      assert.equal((await t.req('GET', `/Job/${hidden.jobId}/history`, { key: null })).status, 401);
    });

    test('deleted and purged jobs take their history with them', async () => {
      const first = await submit(t, 'GLOBAL.Kept');
      await waitForJob(get, first.jobId);
      assert.ok((await history(first.jobId)).length >= 3);
      const second = await submit(t, 'GLOBAL.Kept');
      await waitForJob(get, second.jobId);
      // KeepJobs 1: the first goes with its history.
      await waitFor('the purge', async () => ((await get(`/Job/${first.jobId}`)).status === 404 ? true : undefined));
      assert.equal((await get(`/Job/${first.jobId}/history`)).status, 404);
      assert.deepEqual(await t.server.store.jobs.history(first.jobId, 100), []);
      assert.equal((await t.req('DELETE', `/Job/${second.jobId}`)).status, 204);
      assert.deepEqual(await t.server.store.jobs.history(second.jobId, 100), []);
    });
  });
}
