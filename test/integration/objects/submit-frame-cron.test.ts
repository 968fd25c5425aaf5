import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadFrame } from '../../../src/engine/submit-frames.ts';
import { backends } from '../../helpers/backends.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`SubmitFrame cron expressions are checked on save (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
    });
    after(() => t.close());

    test('a cron expression that never fires → 400, nothing stored', async () => {
      const res = await t.req('POST', '/SubmitFrame/Never', { body: { CronExpression: '0 0 30 2 *' } });
      assert.equal(res.status, 400, res.body);
      assert.match(res.json?.message, /^Field "CronExpression": never fires/);
      assert.equal((await t.req('GET', '/SubmitFrame/Never')).status, 404);
    });

    test('one that does not parse → 400 naming the field; a good one is stored', async () => {
      const bad = await t.req('POST', '/SubmitFrame/Bad', { body: { CronExpression: '61 * * * *' } });
      assert.equal(bad.status, 400, bad.body);
      assert.match(bad.json?.message, /^Field "CronExpression": .*minute/);
      const good = await t.req('POST', '/SubmitFrame/Weekdays', {
        body: { CronExpression: '0 6 * * 1-5', TimeZone: 'Europe/Amsterdam' },
      });
      assert.equal(good.status, 201, good.body);
      const edit = await t.req('PUT', '/SubmitFrame/Weekdays', { body: { CronExpression: '0 0 31 4 *' } });
      assert.equal(edit.status, 400, edit.body);
      assert.equal((await t.req('GET', '/SubmitFrame/Weekdays')).json?.CronExpression, '0 6 * * 1-5');
    });

    test('loadFrame reads the stored frame with its zone and windows resolved', async () => {
      const w = await t.req('POST', '/TimeWindow/Office', {
        body: { Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '08:00', UntilTime: '17:00' }] },
      });
      assert.equal(w.status, 201, w.body);
      const f = await t.req('POST', '/SubmitFrame/Hourly', {
        body: {
          TimeZone: 'Europe/Amsterdam',
          EndDate: '2030/01/01 00:00:00,000 UTC',
          Elements: [
            { Every: 1, Unit: 'Hours', StartTime: '08:30', DuringTimeWindow: 'Office' },
            { Kind: 'WindowOpenings', TimeWindow: 'Office' },
          ],
        },
      });
      assert.equal(f.status, 201, f.body);
      const frame = await loadFrame(t.server.store, 'GLOBAL.Hourly', 'UTC');
      assert.ok(frame);
      assert.equal(frame.zone, 'Europe/Amsterdam');
      assert.equal(frame.endDate, Date.parse('2030-01-01T00:00:00Z'));
      assert.equal(frame.cron, null);
      assert.equal(frame.skipWhenClosed, false);
      const [every, openings] = frame.elements;
      assert.deepEqual(every && { ...every, during: every.kind === 'Every' ? every.during?.zone : undefined }, {
        kind: 'Every',
        every: 1,
        unit: 'Hours',
        preserveTimes: true,
        startTime: '08:30',
        during: 'Europe/Amsterdam', // the window has no zone of its own: the frame's
      });
      assert.equal(openings?.kind, 'WindowOpenings');
      const m = await t.req('POST', '/SubmitFrame/Morning', { body: { CronExpression: '0 6 * * 1-5' } });
      assert.equal(m.status, 201, m.body);
      const cron = await loadFrame(t.server.store, 'GLOBAL.Morning', 'America/New_York');
      assert.deepEqual(cron && { zone: cron.zone, cron: cron.cron, elements: cron.elements }, {
        zone: 'America/New_York', // no TimeZone: the fallback (the job's)
        cron: '0 6 * * 1-5',
        elements: [],
      });
      assert.equal(await loadFrame(t.server.store, 'GLOBAL.Missing', 'UTC'), undefined);
    });
  });
}
