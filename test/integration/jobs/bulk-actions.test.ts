import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JobRecord } from '../../../src/domain/job.ts';
import { backends } from '../../helpers/backends.ts';
import { heldTemplate, insertJobs } from '../../helpers/job-rows.ts';
import { assertError, getJob, postCreated, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { changedTables, type StateSnapshots, stateSnapshots } from '../../helpers/state-snapshot.ts';
import { waitFor } from '../../helpers/wait.ts';

/**
 * Bulk actions (docs/architecture.md §6): `POST /Job/bulk/<action>` acts on each job as if alone. Here: what a bad
 * request gets (400, nothing changed), a Viewer's bulk kill (every job skipped with the single action's reason), a
 * dry run (nothing changes, the answer says what would), jobs named by id, and an asynchronous request followed to
 * its answer. The large runs are in bulk-scale.test.ts.
 */

for (const backend of backends()) {
  describe(`bulk actions (${backend.name})`, () => {
    let t: TestServer;
    let template: JobRecord;
    let snapshots: StateSnapshots;
    const bulk = (action: string, body: unknown, key?: string) =>
      t.req('POST', `/Job/bulk/${action}`, { body, ...(key ? { key } : {}) });

    before(async () => {
      t = await startTestServer(backend, { localAgent: false });
      // A queue no process server serves: jobs copied into it stay Queued until acted on.
      await postCreated(t, '/Queue/GLOBAL.Nowhere');
      template = await heldTemplate(t);
      snapshots = await stateSnapshots(t);
    });
    after(async () => {
      await snapshots?.close();
      await t?.close();
    });

    test('a bad request is 400 naming what is wrong, and changes nothing', async () => {
      await insertJobs(t, template, [{ status: 'Queued', queue: 'GLOBAL.Nowhere' }]);
      const before = await snapshots.take();
      const cases: Array<[string, string, unknown, RegExp]> = [
        ['both Filter and JobIds', 'hold', { Filter: { Status: 'Queued' }, JobIds: [1] }, /exactly one of/],
        ['neither', 'hold', { Comment: 'x' }, /exactly one of/],
        ['no body', 'hold', undefined, /exactly one of/],
        ['more than 10,000 ids', 'hold', { JobIds: Array.from({ length: 10_001 }, (_, i) => i + 1) }, /10000/],
        ['an unknown action', 'explode', { JobIds: [1] }, /Unknown action "explode"/],
        ['a filter field GET /Job does not take', 'hold', { Filter: { Colour: 'red' } }, /Filter.*Colour/],
        ['a paging parameter as filter', 'hold', { Filter: { Limit: '5' } }, /Filter.*Limit/],
        ['a bad status in the filter', 'hold', { Filter: { Status: 'Sleeping' } }, /Filter.*Sleeping/],
        ['a number for a filter value', 'hold', { Filter: { ParentJob: 5 } }, /Filter/],
        ['a job id that is not one', 'hold', { JobIds: [0] }, /JobIds/],
        ['an unknown field', 'hold', { JobIds: [1], Force: true }, /Force/],
        ['DryRun that is not a boolean', 'hold', { JobIds: [1], DryRun: 'yes' }, /DryRun/],
      ];
      for (const [what, action, body, message] of cases) {
        const res = await bulk(action, body);
        assert.equal(res.status, 400, `${what}: ${res.body}`);
        assertError(res, 400, message);
      }
      for (const payload of [
        '{"Filter": {"__proto__": {"Status": "Queued"}}}',
        '{"__proto__": {"DryRun": true}, "JobIds": [1]}',
        '{"Filter": {"constructor": "x"}}',
      ]) {
        const res = await t.req('POST', '/Job/bulk/hold', { payload, headers: { 'content-type': 'application/json' } });
        assert.equal(res.status, 400, `${payload}: ${res.body}`);
        assert.equal(res.json?.code, '400', res.body);
      }
      assert.deepEqual(changedTables(before, await snapshots.take()), [], 'nothing stored changed');
    });

    test('a filter matching more than 10,000 jobs is 400 naming the limit, and nothing is held', async () => {
      await postCreated(t, '/Queue/GLOBAL.Crowded');
      await insertJobs(
        t,
        template,
        Array.from({ length: 10_001 }, () => ({ status: 'Queued' as const, queue: 'GLOBAL.Crowded' })),
      );
      const res = await bulk('hold', { Filter: { Queue: 'GLOBAL.Crowded' } });
      assertError(res, 400, /more than 10,000 jobs; at most 10,000 jobs per request/);
      const held = await t.req('GET', '/Job?Queue=GLOBAL.Crowded&Status=Held&Limit=1');
      assert.deepEqual(held.json.items, [], 'no job held');
    });

    test("a Viewer's bulk kill does nothing: every job skipped with the single action's reason", async () => {
      const running = [];
      for (let i = 0; i < 3; i++) running.push((await submitSleep(t, 600_000, { Description: 'viewer-kill' })).jobId);
      for (const id of running) await waitForStatus(t, id, 'Running');
      const viewer = await t.keyWithRoles('viewer', ['Viewer']);
      const res = await bulk('kill', { Filter: { Status: 'Running', Search: 'viewer-kill' } }, viewer);
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.Matched, 3);
      assert.equal(res.json.Done, 0);
      assert.equal(res.json.DryRun, false);
      assert.deepEqual(
        [...res.json.Skipped].sort((a, b) => a.Job - b.Job),
        running.map((id) => ({ Job: id, Reason: `You need the Control privilege to kill Job:${id}` })),
      );
      for (const id of running) {
        assert.equal((await getJob(t, id)).Status, 'Running');
        const history = (await t.req('GET', `/Job/${id}/history`)).json.items;
        assert.ok(!history.some((e: { Cause: string }) => e.Cause === 'bulk'), 'no history entry of the bulk');
      }
      // The same request by the admin kills them, each with its own history entry.
      const admin = await bulk('kill', { JobIds: running, Comment: 'night shift' });
      assert.deepEqual(admin.json, { Matched: 3, Done: 3, Skipped: [], DryRun: false });
      for (const id of running) {
        await waitForStatus(t, id, 'Killed');
        const history = (await t.req('GET', `/Job/${id}/history`)).json.items;
        const entry = history.find((e: { ToStatus: string }) => e.ToStatus === 'Killed');
        assert.equal(entry.User, 'admin');
        assert.equal(entry.Cause, 'bulk');
        assert.match(entry.Detail, /^kill \(bulk request [0-9a-f-]+\): night shift$/);
      }
    });

    test('a dry run changes nothing and says what would be done and what skipped', async () => {
      const jobs = await insertJobs(t, template, [
        { status: 'Queued', queue: 'GLOBAL.Nowhere', description: 'dry' },
        { status: 'Queued', queue: 'GLOBAL.Nowhere', description: 'dry' },
        { status: 'Held', queue: 'GLOBAL.Nowhere', description: 'dry' },
        { status: 'Completed', queue: 'GLOBAL.Nowhere', description: 'dry' },
      ]);
      const ids = jobs.map((j) => j.jobId);
      const before = await snapshots.take();
      const res = await bulk('hold', { JobIds: [...ids, 999_999], DryRun: true });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, {
        Matched: 5,
        Done: 2,
        Skipped: [
          { Job: ids[2], Reason: `Action hold does not apply to Job:${ids[2]} in status Held` },
          { Job: ids[3], Reason: `Action hold does not apply to Job:${ids[3]} in status Completed` },
          { Job: 999_999, Reason: 'Unable to find object Job:999999' },
        ],
        DryRun: true,
      });
      const byFilter = await bulk('hold', { Filter: { Search: 'dry', Status: 'Queued,Held' }, DryRun: true });
      assert.equal(byFilter.json.Matched, 3);
      assert.equal(byFilter.json.Done, 2);
      assert.deepEqual(changedTables(before, await snapshots.take()), [], 'nothing stored changed');
      // Done for real, the answer is the same.
      const real = await bulk('hold', { JobIds: [...ids, 999_999] });
      assert.deepEqual({ ...real.json, DryRun: true }, res.json);
      for (const id of ids.slice(0, 3)) assert.equal((await getJob(t, id)).Status, 'Held');
    });

    test('an asynchronous request answers 202 with an id; its progress ends in the answer', async () => {
      const jobs = await insertJobs(
        t,
        template,
        Array.from({ length: 300 }, () => ({ status: 'Held' as const, queue: 'GLOBAL.Nowhere', description: 'async' })),
      );
      const res = await bulk('release', { Filter: { Search: 'async' }, Async: true, Comment: 'back to work' });
      assert.equal(res.status, 202, res.body);
      assert.equal(res.json.Matched, 300);
      assert.equal(res.json.Action, 'release');
      const id = res.json.RequestId as string;
      const final = await waitFor('the bulk request done', async () => {
        const p = await t.req('GET', `/Job/bulk/requests/${id}`);
        assert.equal(p.status, 200, p.body);
        return p.json.Status === 'Running' ? undefined : p.json;
      });
      assert.deepEqual(
        { Status: final.Status, Processed: final.Processed, Done: final.Done, Skipped: final.Skipped },
        { Status: 'Done', Processed: 300, Done: 300, Skipped: [] },
      );
      for (const j of [jobs[0], jobs[299]]) assert.equal((await getJob(t, (j as JobRecord).jobId)).Status, 'Queued');
      // Another user does not see it; an unknown id is 404 too.
      const other = await t.keyWithRoles('operator', ['Operator']);
      assertError(await t.req('GET', `/Job/bulk/requests/${id}`, { key: other }), 404, /Unable to find object/);
      assertError(await t.req('GET', '/Job/bulk/requests/no-such-request'), 404, /Unable to find object/);
    });

    test("an action failing for one job of a slice is that job's alone: the others of its slice are done", async () => {
      // updateJob refuses a job without the External completion strategy after the slice has written the others.
      const external = { ...template.data, spec: { ...template.data.spec, completionStrategy: 'External' as const } };
      const [first, plain, last] = await insertJobs(t, template, [
        { status: 'Running', queue: 'GLOBAL.Nowhere', data: external, modificationTime: 1 },
        { status: 'Running', queue: 'GLOBAL.Nowhere', modificationTime: 1 },
        { status: 'Running', queue: 'GLOBAL.Nowhere', data: external, modificationTime: 1 },
      ]);
      const ids = [first, plain, last].map((j) => (j as JobRecord).jobId);
      const res = await bulk('updateJob', { JobIds: ids });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, {
        Matched: 3,
        Done: 2,
        Skipped: [
          {
            Job: ids[1],
            Reason: `Job:${ids[1]} does not have an External completion strategy; updateJob does not apply`,
          },
        ],
        DryRun: false,
      });
      const changed = async (id: number) => ((await t.server.store.jobs.get(id)) as JobRecord).modificationTime !== 1;
      assert.deepEqual(await Promise.all(ids.map(changed)), [true, false, true], 'the first and last were updated');
    });

    test('POST /Job/bulk/submit is still the submit of a definition named bulk', async () => {
      await postCreated(t, '/JobDefinition/GLOBAL.bulk', {
        JobDefinitionType: 'System',
        DefaultQueue: 'GLOBAL.Nowhere',
      });
      const res = await t.req('POST', '/Job/bulk/submit', { body: { Description: 'a job of bulk' } });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.JobDefinition, 'GLOBAL.bulk');
    });
  });
}
