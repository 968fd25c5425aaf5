/**
 * Calendars in time windows through the interfaces (docs/architecture.md §5a): Holidays, Workdays, ShiftWhen /
 * ShiftWorkdays and FromWorkday / UntilWorkday saved and read back in JSON, XML and a CAR; the 400s that leave
 * stored state unchanged; and `GET /TimeWindow/<key>/openings` with its range, errors and privileges.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { readCar } from '../../../src/car/archive.ts';
import { backends } from '../../helpers/backends.ts';
import { assertError, postCreated } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const AMS = 'Europe/Amsterdam';
const at = (date: string, time: string) => `${date} ${time}:00,000 ${AMS}`;
/** The calendar fields of a window as GET answers them. */
const calendarFields = (w: Record<string, unknown>) => ({
  Holidays: w.Holidays,
  Workdays: w.Workdays,
  ShiftWhen: w.ShiftWhen,
  ShiftWorkdays: w.ShiftWorkdays,
  Elements: w.Elements,
});

for (const backend of backends()) {
  describe(`calendars in time windows (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend);
      await postCreated(t, '/TimeWindow/NLHolidays', { Holidays: 'NL', TimeZone: AMS });
      await postCreated(t, '/TimeWindow/NLWorkdays', {
        TimeZone: AMS,
        Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }],
        DisabledDuring: 'NLHolidays',
      });
      // The first and the last working day of the month, 18:00-20:00; one on a public holiday moves to the next
      // working day.
      await postCreated(t, '/TimeWindow/Closing', {
        TimeZone: AMS,
        Workdays: 'NLWorkdays',
        ShiftWhen: 'NLHolidays',
        ShiftWorkdays: 1,
        Elements: [
          { FromWorkday: 1, UntilWorkday: 1, FromTime: '18:00', UntilTime: '20:00' },
          { FromWorkday: -1, UntilWorkday: -1, FromTime: '18:00', UntilTime: '20:00' },
        ],
      });
      // Month-end by Monday to Friday alone (Workdays empty), shifted onto the working day before a holiday.
      await postCreated(t, '/TimeWindow/MonthEnd', {
        TimeZone: AMS,
        ShiftWhen: 'NLHolidays',
        ShiftWorkdays: -1,
        Elements: [{ FromWorkday: -1, UntilWorkday: -1, FromTime: '18:00', UntilTime: '20:00' }],
      });
    });
    after(() => t.close());

    test('the fields read back in JSON and XML', async () => {
      const w = (await t.req('GET', '/TimeWindow/Closing')).json;
      assert.deepEqual(calendarFields(w), {
        Holidays: null,
        Workdays: 'GLOBAL.NLWorkdays',
        ShiftWhen: 'GLOBAL.NLHolidays',
        ShiftWorkdays: 1,
        Elements: w.Elements,
      });
      assert.deepEqual(
        w.Elements.map((e: Record<string, unknown>) => [e.FromWorkday, e.UntilWorkday]),
        [
          [1, 1],
          [-1, -1],
        ],
      );
      assert.equal((await t.req('GET', '/TimeWindow/NLHolidays')).json.Holidays, 'NL');
      const xml = (await t.xml('GET', '/object/TimeWindow/GLOBAL.Closing')).body;
      assert.match(xml, /<Workdays type="TimeWindow" path="GLOBAL\.NLWorkdays"\/>/);
      assert.match(xml, /<ShiftWhen type="TimeWindow" path="GLOBAL\.NLHolidays"\/>/);
      assert.match(xml, /<ShiftWorkdays>1<\/ShiftWorkdays>/);
      assert.match(xml, /<FromWorkday>-1<\/FromWorkday>/);
      assert.match((await t.xml('GET', '/object/TimeWindow/GLOBAL.NLHolidays')).body, /<Holidays>NL<\/Holidays>/);
    });

    test('a CAR carries them: exported, deleted and imported again, the window reads back the same', async () => {
      const before = (await t.req('GET', '/TimeWindow/MonthEnd')).json;
      const car = await t.xml('GET', '/car/TimeWindow/GLOBAL.MonthEnd?references=true');
      assert.equal(car.status, 200, car.body);
      const text = Buffer.concat((await readCar(car.raw as Buffer)).map((e) => e.data)).toString();
      assert.match(text, /<ShiftWorkdays>-1<\/ShiftWorkdays>/);
      assert.match(text, /<Holidays>NL<\/Holidays>/);
      assert.equal((await t.req('DELETE', '/TimeWindow/MonthEnd')).status, 204);
      const put = await t.xml('PUT', '/car', {
        payload: car.raw as Buffer,
        headers: { 'content-type': 'application/zip' },
      });
      assert.equal(put.status, 200, put.body);
      // The import runs as a job: wait until the window is there again (bounded only to catch a hang).
      const deadline = Date.now() + 60_000;
      let again = await t.req('GET', '/TimeWindow/MonthEnd');
      while (again.status === 404 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        again = await t.req('GET', '/TimeWindow/MonthEnd');
      }
      assert.equal(again.status, 200, again.body);
      assert.deepEqual(calendarFields(again.json), calendarFields(before));
    });

    test('a window can be created through the XML interface with the calendar fields', async () => {
      const body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<TimeWindow><Name>XmlMade</Name><Partition type="Partition" path="GLOBAL"/>' +
        '<Holidays>DE-BY</Holidays><Workdays type="TimeWindow" path="GLOBAL.NLWorkdays"/>' +
        '<ShiftWhen type="TimeWindow" path="GLOBAL.NLHolidays"/><ShiftWorkdays>-2</ShiftWorkdays></TimeWindow>';
      const res = await t.xml('PUT', '/xml', { payload: body, headers: { 'content-type': 'text/xml' } });
      assert.ok(res.status === 200 || res.status === 201, res.body);
      const w = (await t.req('GET', '/TimeWindow/XmlMade')).json;
      assert.deepEqual(
        [w.Holidays, w.Workdays, w.ShiftWhen, w.ShiftWorkdays],
        ['DE-BY', 'GLOBAL.NLWorkdays', 'GLOBAL.NLHolidays', -2],
      );
    });

    test('bad calendars are 400s naming the field, and nothing is stored or changed', async () => {
      const stored = async (key: string) => (await t.req('GET', `/TimeWindow/${key}`)).body;
      const closing = await stored('Closing');
      const cases: Array<[string, string, unknown, RegExp]> = [
        ['POST', 'Bad1', { Holidays: 'XX' }, /^Field "Holidays": there are no public holidays for country "XX"/],
        ['POST', 'Bad2', { Holidays: 'NL-ZZ' }, /^Field "Holidays": .*region "ZZ"/],
        ['POST', 'Bad3', { ShiftWhen: 'NLHolidays' }, /^Field "ShiftWorkdays" is required when ShiftWhen is set/],
        ['POST', 'Bad4', { ShiftWorkdays: 2 }, /^Field "ShiftWhen" is required when ShiftWorkdays is set/],
        ['POST', 'Bad5', { ShiftWhen: 'NLHolidays', ShiftWorkdays: 0 }, /^Field "ShiftWorkdays" must not be 0/],
        ['POST', 'Bad6', { ShiftWhen: 'NLHolidays', ShiftWorkdays: 32 }, /^Field "ShiftWorkdays"/],
        ['POST', 'Bad7', { Elements: [{ FromWorkday: 0 }] }, /^Field "Elements\[0\]\.FromWorkday" must not be 0/],
        ['POST', 'Bad8', { Elements: [{}, { UntilWorkday: -24 }] }, /^Field "Elements\[1\]\.UntilWorkday"/],
        ['PUT', 'Closing', { ShiftWhen: 'GLOBAL.Closing' }, /^Field "ShiftWhen" cannot name the time window itself/],
        ['PUT', 'Closing', { Workdays: 'Closing' }, /^Field "Workdays" cannot name the time window itself/],
        ['PUT', 'Closing', { ShiftWorkdays: null }, /^Field "ShiftWorkdays" is required when ShiftWhen is set/],
      ];
      for (const [method, key, body, message] of cases) {
        assertError(await t.req(method, `/TimeWindow/${key}`, { body }), 400, message);
        if (method === 'POST') assert.equal((await t.req('GET', `/TimeWindow/${key}`)).status, 404);
      }
      assert.equal(await stored('Closing'), closing);
    });

    test('a circle through ShiftWhen or Workdays is refused, through two windows too; one of EnabledDuring alone is not', async () => {
      await postCreated(t, '/TimeWindow/CircleA', { Elements: [{}] });
      await postCreated(t, '/TimeWindow/CircleB', { ShiftWhen: 'CircleA', ShiftWorkdays: 1, Elements: [{}] });
      const a = (await t.req('GET', '/TimeWindow/CircleA')).body;
      // A → Workdays B → ShiftWhen A.
      assertError(
        await t.req('PUT', '/TimeWindow/CircleA', { body: { Workdays: 'CircleB' } }),
        400,
        /^Field "Workdays": GLOBAL\.CircleA \(Workdays\) → GLOBAL\.CircleB \(ShiftWhen\) → GLOBAL\.CircleA is a circle/,
      );
      // A → EnabledDuring B → ShiftWhen A: the circle passes through a ShiftWhen link.
      assertError(
        await t.req('PUT', '/TimeWindow/CircleA', { body: { EnabledDuring: 'CircleB' } }),
        400,
        /^Field "EnabledDuring": .*circle of time windows/,
      );
      assert.equal((await t.req('GET', '/TimeWindow/CircleA')).body, a);
      // EnabledDuring / DisabledDuring circles stay as they were: accepted (the loader cuts them).
      await postCreated(t, '/TimeWindow/LoopC', { Elements: [{}] });
      await postCreated(t, '/TimeWindow/LoopD', { EnabledDuring: 'LoopC', Elements: [{}] });
      const loop = await t.req('PUT', '/TimeWindow/LoopC', { body: { DisabledDuring: 'LoopD' } });
      assert.equal(loop.status, 200, loop.body);
    });

    test('openings: the month-end window with holiday shifting over December 2026 and January 2027', async () => {
      const res = await t.req(
        'GET',
        '/TimeWindow/Closing/openings?From=2026-12-01T00:00:00%2B01:00&Until=2027/02/01%2000:00:00,000%20Europe/Amsterdam',
      );
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json, {
        items: [
          { From: at('2026/12/01', '18:00'), Until: at('2026/12/01', '20:00') }, // first working day: Tuesday
          { From: at('2026/12/31', '18:00'), Until: at('2026/12/31', '20:00') }, // last: Thursday 31
          { From: at('2027/01/04', '18:00'), Until: at('2027/01/04', '20:00') }, // 1 January, a holiday: Monday 4
          { From: at('2027/01/29', '18:00'), Until: at('2027/01/29', '20:00') }, // last: Friday 29
        ],
      });
      // Clipped to the range, in the window's zone whatever zone the range was given in.
      const clipped = await t.req(
        'GET',
        '/TimeWindow/Closing/openings?From=2026-12-31T18:30:00Z&Until=2027-01-04T17:30:00Z',
      );
      assert.deepEqual(clipped.json.items, [
        { From: at('2026/12/31', '19:30'), Until: at('2026/12/31', '20:00') },
        { From: at('2027/01/04', '18:00'), Until: at('2027/01/04', '18:30') },
      ]);
      // Monday to Friday month-end, a holiday moving it back: none in these months, so 31 December and 29 January.
      const monthEnd = await t.req(
        'GET',
        '/TimeWindow/MonthEnd/openings?From=2026-12-01T00:00:00Z&Until=2027-02-01T00:00:00Z',
      );
      assert.deepEqual(
        monthEnd.json.items.map((i: { From: string }) => i.From),
        [at('2026/12/31', '18:00'), at('2027/01/29', '18:00')],
      );
      // A window without TimeZone answers in UTC.
      await postCreated(t, '/TimeWindow/Utc', { Elements: [{ FromDayOfMonth: 2, UntilDayOfMonth: 2 }] });
      const utc = await t.req('GET', '/TimeWindow/Utc/openings?From=2027-01-01T00:00:00Z&Until=2027-01-05T00:00:00Z');
      assert.deepEqual(utc.json.items, [{ From: '2027/01/02 00:00:00,000 UTC', Until: '2027/01/03 00:00:00,000 UTC' }]);
    });

    test('openings: at most 366 days, good dates, both ends, a known window, and the right to view it', async () => {
      const path = (q: string, key = 'Closing') => `/TimeWindow/${key}/openings?${q}`;
      const ok = await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2028-01-02T00:00:00Z'));
      assert.equal(ok.status, 200, ok.body); // 366 days
      assert.equal(ok.json.items.length, 24);
      assertError(
        await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2028-01-02T00:00:01Z')),
        400,
        /at most 366 days/,
      );
      assertError(
        await t.req('GET', path('From=yesterday&Until=2028-01-01T00:00:00Z')),
        400,
        /^Query parameter "From"/,
      );
      assertError(await t.req('GET', path('From=2027-01-01T00:00:00Z')), 400, /"Until" is required/);
      assertError(
        await t.req('GET', path('From=2027-02-01T00:00:00Z&Until=2027-01-01T00:00:00Z')),
        400,
        /must come after/,
      );
      assertError(
        await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2027-02-01T00:00:00Z&Limit=3')),
        400,
        /Unknown query parameter "Limit"/,
      );
      assertError(
        await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2027-02-01T00:00:00Z', 'Nope')),
        404,
        /TimeWindow/,
      );
      const blind = await t.keyWithGrants('calblind', ['JobDefinition:GLOBAL:View']);
      const missing = await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2027-02-01T00:00:00Z', 'Nope'), {
        key: blind,
      });
      const hidden = await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2027-02-01T00:00:00Z'), { key: blind });
      assertError(hidden, 404, /TimeWindow/);
      assert.equal(hidden.json.message.replace('Closing', 'Nope'), missing.json.message); // as if it did not exist
      const viewer = await t.keyWithGrants('calviewer', ['TimeWindow:GLOBAL:View']);
      const seen = await t.req('GET', path('From=2027-01-01T00:00:00Z&Until=2027-02-01T00:00:00Z'), { key: viewer });
      assert.equal(seen.status, 200, seen.body);
      assert.equal(seen.json.items.length, 2);
    });
  });
}
