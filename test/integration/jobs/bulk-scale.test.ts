import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JobRecord } from '../../../src/domain/job.ts';
import { backends } from '../../helpers/backends.ts';
import { heldTemplate, insertJobs } from '../../helpers/job-rows.ts';
import { postCreated, submit, waitForStatus } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Bulk actions at size (docs/architecture.md §6): 2,000 Error jobs restarted by a filter while new jobs keep failing
 * (exactly the jobs matched when the request started are restarted, each once, each new job's history naming the
 * user and the bulk), and a 10,000-job hold that never holds the event loop (the bound here only catches a hang; the
 * figure is benchmark B14's).
 */

type HistoryEntry = { User: string | null; Cause: string; Detail: string | null; FromStatus: string | null };

/** Every job id of a list query, page by page as a client reads it. */
async function allIds(t: TestServer, query: string): Promise<number[]> {
  const ids: number[] = [];
  let after = '';
  for (;;) {
    const res = await t.req('GET', `/Job?${query}&fields=jobId&Limit=1000${after ? `&After=${after}` : ''}`);
    assert.equal(res.status, 200, res.body);
    ids.push(...res.json.items.map((j: { jobId: number }) => j.jobId));
    if (!res.json.next) return ids;
    after = res.json.next;
  }
}

for (const backend of backends()) {
  describe(`bulk actions at size (${backend.name})`, () => {
    let t: TestServer;
    let template: JobRecord;

    before(async () => {
      t = await startTestServer(backend, { localAgent: false });
      await postCreated(t, '/Queue/GLOBAL.Nowhere');
      // A System definition no runner takes: each of its jobs ends in Error as soon as it is dispatched.
      await postCreated(t, '/JobDefinition/GLOBAL.FailNow', {
        JobDefinitionType: 'System',
        DefaultQueue: 'GLOBAL.System',
      });
      template = await heldTemplate(t);
    });
    after(() => t?.close());

    test('2,000 Error jobs restarted by a filter while new jobs keep failing: exactly those matched', async () => {
      const first = await waitForStatus(t, (await submit(t, 'GLOBAL.FailNow')).jobId, 'Error');
      const failed = (await t.server.store.jobs.get(first.jobId)) as JobRecord;
      const copies = await insertJobs(
        t,
        failed,
        Array.from({ length: 2000 }, () => ({})),
      );
      const before = new Set([first.jobId, ...copies.map((j) => j.jobId)]);

      // New jobs of the same definition keep failing while the bulk runs.
      let failing = true;
      const submitted: number[] = [];
      const keepFailing = (async () => {
        while (failing) submitted.push((await submit(t, 'GLOBAL.FailNow')).jobId);
      })();
      const res = await t.req('POST', '/Job/bulk/restart', {
        body: { Filter: { JobDefinition: 'GLOBAL.FailNow', Status: 'Error' }, Comment: 'database back' },
      });
      // A few more fail after the answer.
      for (let i = 0; i < 3; i++) submitted.push((await submit(t, 'GLOBAL.FailNow')).jobId);
      failing = false;
      await keepFailing;
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.Skipped, []);
      assert.equal(res.json.Done, res.json.Matched);
      assert.ok(res.json.Matched >= 2001, `matched ${res.json.Matched}`);

      // The restarted jobs, read from each new job's history as a user would.
      const restartedFrom = new Map<number, number>();
      const created = (await allIds(t, 'JobDefinition=GLOBAL.FailNow')).filter(
        (id) => !before.has(id) && !submitted.includes(id),
      );
      for (const id of created) {
        const history: HistoryEntry[] = (await t.req('GET', `/Job/${id}/history`)).json.items;
        const origin = history[0] as HistoryEntry;
        assert.equal(origin.FromStatus, null);
        assert.equal(origin.User, 'admin', `Job:${id} names the user`);
        assert.equal(origin.Cause, 'bulk', `Job:${id} names the bulk`);
        const from = Number(/^Restart of Job:(\d+)$/.exec(origin.Detail ?? '')?.[1]);
        assert.ok(!restartedFrom.has(from), `Job:${from} restarted once`);
        restartedFrom.set(from, id);
      }
      assert.equal(restartedFrom.size, res.json.Matched, 'one new job per matched job');
      for (const id of before) assert.ok(restartedFrom.has(id), `Job:${id}, in Error before the request, restarted`);
      // Matched beyond those: only jobs that had failed before the match, never one of the restart's own new jobs
      // (which fail too) nor one submitted after the bulk began acting.
      const firstNew = Math.min(...created);
      for (const from of restartedFrom.keys()) {
        assert.ok(before.has(from) || (submitted.includes(from) && from < firstNew), `Job:${from} was matched`);
        assert.ok(!created.includes(from), `Job:${from} is a new job of the bulk`);
      }
      assert.ok(
        submitted.some((id) => id > firstNew),
        'jobs kept failing while the bulk acted (and were not restarted)',
      );
    });

    test('a bulk hold of 10,000 jobs never holds the event loop for most of its time', async (ctx) => {
      await insertJobs(
        t,
        template,
        Array.from({ length: 10_000 }, () => ({ status: 'Queued' as const, queue: 'GLOBAL.Nowhere' })),
      );
      // The server runs in this process (inject): a timer's lateness is the event loop's hold.
      let longest = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }, 5);
      const started = performance.now();
      const res = await t.req('POST', '/Job/bulk/hold', { body: { Filter: { Queue: 'GLOBAL.Nowhere' } } });
      const took = performance.now() - started;
      clearInterval(timer);
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, { Matched: 10_000, Done: 10_000, Skipped: [], DryRun: false });
      ctx.diagnostic(`held 10,000 jobs in ${Math.round(took)} ms; longest event-loop hold ${Math.round(longest)} ms`);
      // Relative, so a loaded machine (everything slower alike) does not turn it red, while a request that did its
      // jobs in one go would hold the loop for nearly all of its time; the figures themselves are B14's.
      assert.ok(
        longest < took / 2,
        `the event loop was held ${Math.round(longest)} ms of the request's ${Math.round(took)} ms`,
      );
      assert.equal((await allIds(t, 'Queue=GLOBAL.Nowhere&Status=Held')).length, 10_000);
    });
  });
}
