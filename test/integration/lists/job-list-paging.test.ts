import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { heldTemplate, insertJobs } from '../../helpers/job-rows.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * Keyset paging of GET /Job: through 10,000 jobs, with new jobs submitted between the pages,
 * every job that existed at the start is seen exactly once, in jobId order newest first; the new ones never
 * appear in later pages (they are newer than the cursor) but lead the next first page.
 */

const JOBS = 10_000;

for (const backend of backends()) {
  describe(`GET /Job paging through ${JOBS.toLocaleString('en-US')} jobs (${backend.name})`, () => {
    let t: TestServer;
    let existing: Set<number>;
    before(async () => {
      t = await startTestServer(backend);
      const template = await heldTemplate(t);
      const made = await insertJobs(
        t,
        template,
        Array.from({ length: JOBS - 1 }, (_, i) => ({ status: i % 2 ? 'Completed' : 'Error' })),
      );
      existing = new Set([template.jobId, ...made.map((j) => j.jobId)]);
    });
    after(() => t.close());

    test('no job missed or repeated while new ones are submitted between pages', async () => {
      const seen: number[] = [];
      const submitted: number[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const res = await t.req('GET', `/Job?Limit=1000&fields=jobId${after ? `&After=${after}` : ''}`);
        assert.equal(res.status, 200, res.body);
        seen.push(...res.json.items.map((i: { jobId: number }) => i.jobId));
        after = res.json.next;
        pages += 1;
        for (let i = 0; i < 2; i++) {
          const s = await t.req('POST', '/Job/GLOBAL.System_Sleep?fields=jobId', {
            body: { HoldOnSubmit: true, JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] },
          });
          assert.equal(s.status, 201, s.body);
          submitted.push(s.json.jobId);
        }
      } while (after !== null);
      assert.equal(pages, JOBS / 1000);
      assert.equal(new Set(seen).size, seen.length, 'no job is repeated');
      assert.deepEqual(
        seen,
        [...existing].sort((a, b) => b - a),
        'every job that existed is seen once, newest first',
      );
      const first = await t.req('GET', `/Job?Limit=${submitted.length}&fields=jobId`);
      assert.deepEqual(
        first.json.items.map((i: { jobId: number }) => i.jobId),
        [...submitted].reverse(),
        'the new jobs lead the next first page',
      );
    });

    test('a viewer filtered by status pages through the same history as the filter picks it', async () => {
      const key = await t.keyWithGrants('pager', ['*:GLOBAL:View']);
      let count = 0;
      let after: string | null = null;
      let previous = Number.POSITIVE_INFINITY;
      do {
        const res = await t.req(
          'GET',
          `/Job?Status=Error&Limit=1000&fields=jobId,Status${after ? `&After=${after}` : ''}`,
          {
            key,
          },
        );
        assert.equal(res.status, 200, res.body);
        for (const item of res.json.items) {
          assert.equal(item.Status, 'Error');
          assert.ok(item.jobId < previous, 'newest first');
          previous = item.jobId;
        }
        count += res.json.items.length;
        after = res.json.next;
      } while (after !== null);
      assert.equal(count, JOBS / 2);
    });
  });
}
