import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { assertError, postCreated as post, submit, systemQueue } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * `GET /forecast` as a client reads it: the entries of recurrences and of single waiting jobs, pages that walk to the
 * same entries as one big page, filters, privileges and bad input. Virtual time, so every instant is exact.
 */

const HOUR = 3_600_000;
const T0 = Date.UTC(2027, 2, 1, 8, 0); // Monday 1 March 2027, 08:00 UTC
const iso = (ms: number) => new Date(ms).toISOString();
const range = (from: number, until: number) => `From=${iso(from)}&Until=${iso(until)}`;
const utc = (ms: number) => `${iso(ms).replace('T', ' ').replaceAll('-', '/').replace('.', ',').replace('Z', '')} UTC`;

interface Entry {
  Start: string;
  JobDefinition: string;
  Source: string;
  Job: number;
  JobGroup: number | null;
  Queue: string;
  TimeWindow: string | null;
}

for (const backend of backends()) {
  describe(`GET /forecast (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(T0);
    const ids: Record<string, number> = {};

    /** All entries of a query, walking pages of `limit`. */
    const walk = async (query: string, limit: number, key?: string): Promise<Entry[]> => {
      const out: Entry[] = [];
      let after = '';
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 1000);
        const res = await t.req('GET', `/forecast?${query}&Limit=${limit}${after}`, key ? { key } : {});
        assert.equal(res.status, 200, res.body);
        assert.ok(res.json.items.length <= limit);
        out.push(...res.json.items);
        if (res.json.next === null) return out;
        assert.equal(res.json.items.length, limit, 'a page before the last is full');
        after = `&After=${res.json.next}`;
      }
    };

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
      await post(t, '/Partition/B');
      await post(t, '/TimeWindow/GLOBAL.Office', {
        TimeZone: 'UTC',
        Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '09:00', UntilTime: '17:00' }],
      });
      await systemQueue(t, 'GLOBAL.Second');
      await post(t, '/SubmitFrame/GLOBAL.Hourly', {
        TimeZone: 'UTC',
        Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }],
      });
      await post(t, '/SubmitFrame/GLOBAL.Every20', {
        TimeZone: 'UTC',
        Elements: [{ Kind: 'Every', Every: 20, Unit: 'Minutes' }],
      });
      const chain = async (key: string, extra: Record<string, unknown> = {}) => {
        await post(t, `/JobDefinition/${key}`, {
          JobDefinitionType: 'JobChain',
          DefaultQueue: 'GLOBAL.System',
          ...extra,
        });
        await post(t, `/JobChain/${key}`, { Steps: [] });
      };
      await chain('GLOBAL.Hourly');
      await chain('GLOBAL.Fast', { DefaultQueue: 'GLOBAL.Second' });
      await chain('GLOBAL.Office', { TimeWindow: 'GLOBAL.Office' });
      await chain('B.Hourly');
      await chain('GLOBAL.Single');
      // Recurrences from 08:30 on: their waiting jobs are Scheduled for 08:30.
      const at = { RequestedStartTime: iso(T0 + HOUR / 2) };
      ids.hourly = (await submit(t, 'GLOBAL.Hourly', { SubmitFrame: 'GLOBAL.Hourly', ...at })).jobId;
      ids.fast = (await submit(t, 'GLOBAL.Fast', { SubmitFrame: 'GLOBAL.Every20', ...at })).jobId;
      ids.b = (await submit(t, 'B.Hourly', { SubmitFrame: 'GLOBAL.Hourly', ...at })).jobId;
      // Single jobs: Scheduled for 10:15, Held with a start at 11:45, and one Queued until the office opens at 09:00.
      ids.scheduled = (await submit(t, 'GLOBAL.Single', { RequestedStartTime: iso(T0 + 2.25 * HOUR) })).jobId;
      ids.held = (
        await submit(t, 'GLOBAL.Single', { RequestedStartTime: iso(T0 + 3.75 * HOUR), HoldOnSubmit: true })
      ).jobId;
      ids.office = (await submit(t, 'GLOBAL.Office')).jobId;
    });
    after(() => t.close());

    test('recurrences and single waiting jobs, in order of Start, each recurrence start once', async () => {
      const res = await t.req('GET', `/forecast?${range(T0, T0 + 4 * HOUR)}&Limit=1000`);
      assert.equal(res.status, 200, res.body);
      const items: Entry[] = res.json.items;
      assert.equal(res.json.next, null);
      const hourly = items.filter((e) => e.JobDefinition === 'GLOBAL.Hourly');
      assert.deepEqual(
        hourly.map((e) => e.Start),
        [0.5, 1.5, 2.5, 3.5].map((h) => utc(T0 + h * HOUR)),
      );
      assert.ok(hourly.every((e) => e.Job === ids.hourly && e.JobGroup === ids.hourly && e.Source === 'Recurrence'));
      assert.equal(
        items.filter((e) => e.JobDefinition === 'GLOBAL.Fast').length,
        11,
        '08:30 to 11:50 every 20 minutes',
      );
      assert.deepEqual(
        items.filter((e) => e.Source === 'Scheduled'),
        [
          {
            Start: utc(T0 + HOUR),
            JobDefinition: 'GLOBAL.Office',
            Source: 'Scheduled',
            Job: ids.office,
            JobGroup: null,
            Queue: 'GLOBAL.System',
            TimeWindow: 'GLOBAL.Office',
          },
          { ...single(ids.scheduled as number), Start: utc(T0 + 2.25 * HOUR) },
          { ...single(ids.held as number), Start: utc(T0 + 3.75 * HOUR) },
        ],
      );
      const starts = items.map((e) => e.Start);
      assert.deepEqual(starts, [...starts].sort(), 'in order of Start');
      assert.ok(!items.some((e) => e.Start >= utc(T0 + 4 * HOUR)), 'nothing at or after Until');
    });

    test('walking pages of any size gives the entries of one big page; a cursor starts past ties', async () => {
      const query = range(T0, T0 + 30 * HOUR);
      const whole = await walk(query, 1000);
      assert.ok(whole.length > 100, `${whole.length} entries`);
      for (const limit of [1, 7, 100]) assert.deepEqual(await walk(query, limit), whole, `Limit=${limit}`);
      const first = await t.req('GET', `/forecast?${query}`);
      assert.equal(first.json.items.length, 100, 'Limit defaults to 100');
    });

    test('JobDefinition, Queue and Partition narrow the forecast', async () => {
      const query = range(T0, T0 + 10 * HOUR);
      const whole = await walk(query, 1000);
      const only = async (filter: string) => walk(`${query}&${filter}`, 1000);
      assert.deepEqual(
        await only('JobDefinition=GLOBAL.Hourly'),
        whole.filter((e) => e.JobDefinition === 'GLOBAL.Hourly'),
      );
      assert.deepEqual(
        await only('JobDefinition=Hourly'),
        whole.filter((e) => e.JobDefinition === 'GLOBAL.Hourly'),
      );
      assert.deepEqual(
        await only('Queue=GLOBAL.Second'),
        whole.filter((e) => e.Queue === 'GLOBAL.Second'),
      );
      const inB = await only('Partition=B');
      assert.ok(inB.length === 10 && inB.every((e) => e.JobDefinition === 'B.Hourly'));
    });

    test('a user sees only the starts of jobs they may view', async () => {
      const key = await t.keyWithGrants('bviewer', ['Job:B:View']);
      const query = range(T0, T0 + 10 * HOUR);
      const whole = await walk(query, 1000);
      assert.deepEqual(
        await walk(query, 3, key),
        whole.filter((e) => e.JobDefinition.startsWith('B.')),
      );
      assert.deepEqual((await t.req('GET', `/forecast?${query}&Partition=GLOBAL`, { key })).json, {
        items: [],
        next: null,
      });
      const nothing = await t.keyWithGrants('queueonly', ['Queue:*:View']);
      assert.deepEqual((await t.req('GET', `/forecast?${query}`, { key: nothing })).json, { items: [], next: null });
    });

    test("the forecast follows what happens: a started job leaves it, the recurrence's next waiting job is named", async () => {
      clock.set(T0 + HOUR); // the office opens; the recurrences' 08:30 jobs have started
      await t.server.engine.tick();
      const items = await walk(range(T0, T0 + 4 * HOUR), 1000);
      assert.ok(!items.some((e) => e.Job === ids.office), 'the office job started');
      assert.ok(!items.some((e) => e.Start < utc(T0 + HOUR)), 'nothing before now');
      const hourly = items.filter((e) => e.JobDefinition === 'GLOBAL.Hourly');
      assert.deepEqual(
        hourly.map((e) => e.Start),
        [1.5, 2.5, 3.5].map((h) => utc(T0 + h * HOUR)),
      );
      assert.ok(
        hourly.every((e) => e.Job !== ids.hourly),
        "the recurrence's new waiting job is named",
      );
    });

    test('bad parameters are 400s naming the parameter, and change nothing', async () => {
      const ok = range(T0, T0 + HOUR);
      const bad: Array<[string, RegExp]> = [
        [`Until=${iso(T0)}`, /"From" is required/],
        [`From=${iso(T0)}`, /"Until" is required/],
        [range(T0, T0 - HOUR), /"Until" must come after "From"/],
        [range(T0, T0 + 367 * 24 * HOUR), /at most 366 days/],
        ['From=tomorrow&Until=later', /"From"/],
        [`${ok}&Limit=0`, /"Limit" must be a whole number from 1 to 1000/],
        [`${ok}&Limit=1001`, /"Limit"/],
        [`${ok}&After=bm9wZQ`, /"After" is not a cursor/],
        [`${ok}&After=${Buffer.from('j:12').toString('base64url')}`, /"After" is not a cursor/],
        [`${ok}&After=%%%`, /"After"|not/],
        [`${ok}&JobDefinition=a.b.c`, /"JobDefinition"/],
        [`${ok}&Partition=a-b`, /"Partition"/],
        [`${ok}&Status=Error`, /Unknown query parameter "Status"/],
      ];
      const before = await walk(range(T0, T0 + 10 * HOUR), 1000);
      for (const [query, message] of bad) assertError(await t.req('GET', `/forecast?${query}`), 400, message);
      assert.deepEqual(await walk(range(T0, T0 + 10 * HOUR), 1000), before);
      assert.equal((await t.req('GET', `/forecast?${ok}`, { key: null })).status, 401);
    });
  });
}

function single(job: number): Omit<Entry, 'Start'> {
  return {
    JobDefinition: 'GLOBAL.Single',
    Source: 'Scheduled',
    Job: job,
    JobGroup: null,
    Queue: 'GLOBAL.System',
    TimeWindow: null,
  };
}
