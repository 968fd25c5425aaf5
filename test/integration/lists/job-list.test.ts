import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JobRecord } from '../../../src/domain/job.ts';
import type { JobStatus } from '../../../src/model/fields.ts';
import { backends } from '../../helpers/backends.ts';
import { heldTemplate, insertJobs } from '../../helpers/job-rows.ts';
import { assertError, postCreated as post } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * GET /Job: every filter alone and combined gives exactly the jobs a client would pick out
 * by hand, newest first, page after page; items are what GET /Job/<id> answers (or only the fields asked for);
 * a caller sees only the partitions they may view, with full pages and nothing told of the others; bad
 * parameters are 400s naming them.
 */

const HOUR = 3600_000;
const T0 = Date.UTC(2026, 0, 10, 12); // creation times of the generated jobs: one an hour from here
const STATUSES: JobStatus[] = ['Completed', 'Error', 'Killed', 'Held'];

/** Pages through `query` with `limit` items a page; returns the jobIds in the order given. */
async function allIds(t: TestServer, query: string, limit: number, key?: string): Promise<number[]> {
  const ids: number[] = [];
  let after: string | null = null;
  do {
    const q: string = `${query}${query ? '&' : ''}Limit=${limit}${after ? `&After=${after}` : ''}&fields=jobId`;
    const res = await t.req('GET', `/Job?${q}`, key ? { key } : {});
    assert.equal(res.status, 200, `GET /Job?${q}: ${res.body}`);
    assert.ok(res.json.items.length <= limit);
    if (res.json.next !== null) assert.equal(res.json.items.length, limit, 'a page before the last is full');
    ids.push(...res.json.items.map((i: { jobId: number }) => i.jobId));
    after = res.json.next;
  } while (after !== null);
  return ids;
}

const newestFirst = (jobs: JobRecord[]) => jobs.map((j) => j.jobId).sort((a, b) => b - a);

for (const backend of backends()) {
  describe(`GET /Job (${backend.name})`, () => {
    let t: TestServer;
    let all: JobRecord[]; // every job in the database
    let made: JobRecord[];
    before(async () => {
      t = await startTestServer(backend);
      await post(t, '/Partition/B');
      await post(t, '/Queue/GLOBAL.Second');
      const template = await heldTemplate(t);
      const parent = template.jobId;
      made = await insertJobs(
        t,
        template,
        Array.from({ length: 48 }, (_, i) => {
          const inB = i % 3 === 0;
          return {
            status: STATUSES[i % 4] as JobStatus,
            definition: inB ? 'B.Load' : i % 2 ? 'GLOBAL.Load_Sales' : 'GLOBAL.Report',
            partition: inB ? 'B' : 'GLOBAL',
            queue: i % 5 === 0 ? 'GLOBAL.Second' : 'GLOBAL.System',
            processServer: i % 4 === 3 ? null : 'GLOBAL.System',
            parentJob: i % 6 === 1 ? parent : null,
            jobGroup: i % 7 === 2 ? 5000 : null,
            description: i % 8 === 0 ? `Monthly CLOSE ${i}` : null,
            creationTime: T0 + i * HOUR,
          };
        }),
      );
      all = [template, ...made];
    });
    after(() => t.close());

    test('each filter alone and combined picks exactly the matching jobs, newest first, across pages', async () => {
      const cases: Array<[string, (j: JobRecord) => boolean]> = [
        ['', () => true],
        ['Status=Error', (j) => j.status === 'Error'],
        ['Status=error,KILLED', (j) => j.status === 'Error' || j.status === 'Killed'],
        ['JobDefinition=Report', (j) => j.definition === 'GLOBAL.Report'],
        ['JobDefinition=B.Load', (j) => j.definition === 'B.Load'],
        ['Queue=GLOBAL.Second', (j) => j.queue === 'GLOBAL.Second'],
        ['ProcessServer=System', (j) => j.processServer === 'GLOBAL.System'],
        ['Partition=B', (j) => j.partition === 'B'],
        [`ParentJob=${all[0]?.jobId}`, (j) => j.parentJob === all[0]?.jobId],
        ['JobGroup=5000', (j) => j.jobGroup === 5000],
        ['Since=2026-01-11T00:00:00Z', (j) => j.creationTime >= Date.UTC(2026, 0, 11)],
        ['Since=2026-01-11T01:00:00+01:00', (j) => j.creationTime >= Date.UTC(2026, 0, 11)], // `+` read as a blank
        [
          `Until=${encodeURIComponent('2026/01/11 13:00:00,000 Europe/Amsterdam')}`,
          (j) => j.creationTime <= Date.UTC(2026, 0, 11, 12),
        ],
        ['Search=close', (j) => (j.description ?? '').toLowerCase().includes('close')],
        ['Search=load_s', (j) => j.definition.toLowerCase().includes('load_s')],
        ['Search=p_r', () => false], // `_` and `%` are text, not wildcards ("Report" has "por")
        ['Search=%25', () => false],
        [
          'Status=Completed,Error,Held&Partition=GLOBAL&Queue=GLOBAL.System&Since=2026-01-10T20:00:00Z',
          (j) =>
            ['Completed', 'Error', 'Held'].includes(j.status) &&
            j.partition === 'GLOBAL' &&
            j.queue === 'GLOBAL.System' &&
            j.creationTime >= Date.UTC(2026, 0, 10, 20),
        ],
        [
          'Status=Killed,Held&JobDefinition=GLOBAL.Load_Sales&Search=sales',
          (j) => ['Killed', 'Held'].includes(j.status) && j.definition === 'GLOBAL.Load_Sales',
        ],
        ['Status=Running', () => false],
      ];
      for (const [query, pick] of cases) {
        const expected = newestFirst(all.filter(pick));
        assert.deepEqual(await allIds(t, query, 7), expected, `GET /Job?${query}`);
      }
    });

    test('items are what GET /Job/<id> answers; fields picks fields without regard to case', async () => {
      const page = await t.req('GET', '/Job?Limit=5');
      assert.equal(page.status, 200, page.body);
      assert.equal(page.json.items.length, 5);
      for (const item of page.json.items) assert.deepEqual(item, (await t.req('GET', `/Job/${item.jobId}`)).json);
      const some = await t.req('GET', '/Job?Limit=3&fields=JOBID,status,businesskey,Nope');
      assert.deepEqual(
        some.json.items,
        newestFirst(all)
          .slice(0, 3)
          .map((id) => ({
            jobId: id,
            businessKey: `Job:${id}`,
            Status: all.find((j) => j.jobId === id)?.status,
          })),
      );
      assert.equal(typeof some.json.next, 'string');
    });

    test('a viewer of one partition sees only its jobs, in full pages, and nothing of the others', async () => {
      const key = await t.keyWithGrants('globalviewer', ['*:GLOBAL:View']);
      const visible = newestFirst(all.filter((j) => j.partition === 'GLOBAL'));
      assert.deepEqual(await allIds(t, '', 4, key), visible);
      assert.deepEqual(
        await allIds(t, 'Status=Error,Killed', 3, key),
        newestFirst(all.filter((j) => j.partition === 'GLOBAL' && ['Error', 'Killed'].includes(j.status))),
      );
      for (const query of ['Partition=B', 'JobDefinition=B.Load', 'Search=B.Load']) {
        const res = await t.req('GET', `/Job?${query}`, { key });
        assert.deepEqual(res.json, { items: [], next: null }, query);
      }
      const bJob = made.find((j) => j.partition === 'B');
      assert.equal((await t.req('GET', `/Job/${bJob?.jobId}`, { key })).status, 404);
      const nothing = await t.keyWithGrants('queueviewer', ['Queue:*:View']);
      assert.deepEqual((await t.req('GET', '/Job', { key: nothing })).json, { items: [], next: null });
    });

    test('bad parameters are 400s naming the parameter', async () => {
      const bad: Array<[string, RegExp]> = [
        ['Nope=1', /Unknown query parameter "Nope"/],
        ['Status=Error,Done', /"Status": "Done" is not one of/],
        ['Status=', /"Status" is empty/],
        ['Since=yesterday', /"Since": not a valid date/],
        ['Until=2026-13-01', /"Until"/],
        ['Limit=0', /"Limit" must be a whole number from 1 to 1000/],
        ['Limit=1001', /"Limit"/],
        ['Limit=ten', /"Limit"/],
        ['After=bm90IGEgY3Vyc29y', /"After" is not a cursor/],
        ['After=%24%24', /"After" is not a cursor/],
        [`After=${Buffer.from('k:GLOBAL.X').toString('base64url')}`, /"After" is not a cursor/],
        ['ParentJob=abc', /"ParentJob" must be a job id/],
        ['JobGroup=-1', /"JobGroup" must be a job id/],
        ['JobDefinition=a.b.c', /"JobDefinition": "a.b.c" is not a business key/],
        ['Partition=no-such!', /"Partition"/],
        ['Status=Error&status=Killed', /"Status" is given more than once/],
        [`Search=${'x'.repeat(201)}`, /"Search" must be at most 200 characters/],
      ];
      for (const [query, message] of bad) assertError(await t.req('GET', `/Job?${query}`), 400, message);
    });

    test('GET is the only method of /Job', async () => {
      const res = await t.req('DELETE', '/Job');
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'GET');
    });
  });
}
