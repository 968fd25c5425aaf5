import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeClock } from '../../../src/time/clock.ts';
import { backends } from '../../helpers/backends.ts';
import { postCreated as post, submit } from '../../helpers/jobs.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

/**
 * The forecast equals reality: a workload of 33 recurring definitions is forecast for 5 days, then the virtual clock
 * runs through those days, stepping to each moment the engine itself wakes at; the (definition, start) pairs that
 * started are the forecast's, entry for entry. Halfway a window is changed: the forecast taken then equals the rest.
 *
 * The jobs are chains without steps: they run inside the server on GLOBAL.System (no agent), so every start is real
 * and ends at once. Late October 2027 holds the end of summer time in Amsterdam (Sunday the 31st, 03:00 → 02:00) and
 * a month end.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2027, 9, 27, 0, 0); // Wednesday 27 October 2027, 02:00 in Amsterdam
const SUBMIT = T0 - 10 * 60_000; // submitted ten minutes before the forecast's range
const MIDDLE = T0 + 2.5 * DAY; // Friday 29 October, 14:00 in Amsterdam
const UNTIL = T0 + 5 * DAY;
const AMS = 'Europe/Amsterdam';

const WINDOWS: Record<string, Record<string, unknown>> = {
  Office: {
    TimeZone: AMS,
    Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '09:00', UntilTime: '17:00' }],
  },
  Lunch: { TimeZone: AMS, Elements: [{ FromTime: '12:00', UntilTime: '13:00' }] },
  OfficeNoLunch: {
    TimeZone: AMS,
    Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '08:00', UntilTime: '18:00' }],
    DisabledDuring: 'GLOBAL.Lunch',
  },
  Weekdays: { TimeZone: AMS, Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }] },
  Night: { TimeZone: AMS, Elements: [{ FromTime: '22:00', UntilTime: '06:00' }] },
  // Day 31 means the last day of every month.
  LastDay: { TimeZone: AMS, Elements: [{ FromDayOfMonth: 31, UntilDayOfMonth: 31 }] },
  MonthEndEvening: {
    TimeZone: AMS,
    Elements: [{ FromDayOfMonth: 31, UntilDayOfMonth: 31, FromTime: '19:00', UntilTime: '20:00' }],
  },
  // Calendars: Dutch working days, and the month's last day moved to the working day before when it is not one
  // (Sunday 31 October 2027 → Friday the 29th).
  HolidaysNL: { TimeZone: AMS, Holidays: 'NL' },
  WorkdaysNL: {
    TimeZone: AMS,
    Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }],
    DisabledDuring: 'GLOBAL.HolidaysNL',
  },
  DaysOffNL: { TimeZone: AMS, Elements: [{ FromWeekday: 'Saturday', UntilWeekday: 'Sunday' }], Holidays: 'NL' },
  LastDayShifted: {
    TimeZone: AMS,
    Elements: [{ FromDayOfMonth: 31, UntilDayOfMonth: 31, FromTime: '17:00', UntilTime: '17:30' }],
    Workdays: 'GLOBAL.WorkdaysNL',
    ShiftWhen: 'GLOBAL.DaysOffNL',
    ShiftWorkdays: -1,
  },
  LastWorkdayNL: { TimeZone: AMS, Elements: [{ FromWorkday: -1, UntilWorkday: -1 }], Workdays: 'GLOBAL.WorkdaysNL' },
};

const FRAMES: Record<string, Record<string, unknown>> = {
  Hourly: { TimeZone: 'UTC', Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }] },
  HourlySkip: { TimeZone: 'UTC', Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }], SkipWhenClosed: true },
  Every90Min: { TimeZone: 'UTC', Elements: [{ Kind: 'Every', Every: 90, Unit: 'Minutes' }] },
  Daily06: { TimeZone: AMS, Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '06:00' }] },
  Weekdays07: {
    TimeZone: AMS,
    Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '07:00', DuringTimeWindow: 'GLOBAL.Weekdays' }],
  },
  Cron4h: { TimeZone: AMS, CronExpression: '30 */4 * * *' },
  CronNight: { TimeZone: AMS, CronExpression: '15 2 * * *' }, // 02:15 happens twice on the 31st; it runs once
  CronMonthEnd: { TimeZone: AMS, CronExpression: '45 21 28-31 * *' },
  MonthEnd: { TimeZone: AMS, Elements: [{ Kind: 'WindowOpenings', TimeWindow: 'GLOBAL.MonthEndEvening' }] },
  MonthEndDaily: {
    TimeZone: AMS,
    Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '18:30', DuringTimeWindow: 'GLOBAL.LastDay' }],
  },
  MonthEndShifted: { TimeZone: AMS, Elements: [{ Kind: 'WindowOpenings', TimeWindow: 'GLOBAL.LastDayShifted' }] },
  LastWorkday: {
    TimeZone: AMS,
    Elements: [{ Kind: 'Every', Every: 1, Unit: 'Days', StartTime: '20:00', DuringTimeWindow: 'GLOBAL.LastWorkdayNL' }],
  },
};

/** One definition per row: its frame, and optionally its own time window and its queue. */
interface Row {
  name: string;
  frame: keyof typeof FRAMES;
  window?: string;
  queue?: string;
}

const WORKLOAD: Row[] = [
  { name: 'Hourly1', frame: 'Hourly' },
  { name: 'Hourly2', frame: 'Hourly' },
  { name: 'Hourly3', frame: 'Hourly' },
  { name: 'HourlyOffice1', frame: 'Hourly', window: 'Office' },
  { name: 'HourlyOffice2', frame: 'Hourly', window: 'OfficeNoLunch' },
  { name: 'HourlySkipOffice1', frame: 'HourlySkip', window: 'Office' },
  { name: 'HourlySkipOffice2', frame: 'HourlySkip', window: 'OfficeNoLunch' },
  { name: 'HourlyNightQueue1', frame: 'Hourly', queue: 'Night' },
  { name: 'HourlyNightQueue2', frame: 'Hourly', queue: 'Night', window: 'Weekdays' },
  { name: 'Every90Min1', frame: 'Every90Min' },
  { name: 'Every90Min2', frame: 'Every90Min', window: 'OfficeNoLunch' },
  { name: 'Daily06a', frame: 'Daily06' },
  { name: 'Daily06b', frame: 'Daily06' },
  { name: 'Daily06Office', frame: 'Daily06', window: 'Office' },
  { name: 'Daily06NightQueue', frame: 'Daily06', queue: 'Night' },
  { name: 'Weekdays07a', frame: 'Weekdays07' },
  { name: 'Weekdays07b', frame: 'Weekdays07' },
  { name: 'Weekdays07Office', frame: 'Weekdays07', window: 'Office' },
  { name: 'Cron4h1', frame: 'Cron4h' },
  { name: 'Cron4h2', frame: 'Cron4h' },
  { name: 'Cron4hOffice', frame: 'Cron4h', window: 'OfficeNoLunch' },
  { name: 'CronNight1', frame: 'CronNight' },
  { name: 'CronNight2', frame: 'CronNight' },
  { name: 'CronMonthEnd', frame: 'CronMonthEnd' },
  { name: 'CronMonthEndQueue', frame: 'CronMonthEnd', queue: 'Night' },
  { name: 'MonthEnd1', frame: 'MonthEnd' },
  { name: 'MonthEnd2', frame: 'MonthEnd', queue: 'Night' },
  { name: 'MonthEndDaily1', frame: 'MonthEndDaily' },
  { name: 'MonthEndDaily2', frame: 'MonthEndDaily', window: 'Night' },
  { name: 'MonthEndDailyNight', frame: 'MonthEndDaily', queue: 'Night' },
  { name: 'MonthEndShifted', frame: 'MonthEndShifted' },
  { name: 'LastWorkday', frame: 'LastWorkday' },
  { name: 'LastWorkdayQueued', frame: 'Daily06', window: 'LastWorkdayNL' },
];

/** Single jobs beside the recurrences: submitted for `at` hours after T0, waiting for that time and their windows. */
const SINGLES: Array<Omit<Row, 'frame'> & { at: number }> = [
  { name: 'SingleLater', at: 30 },
  { name: 'SingleOffice', at: 44, window: 'Office' }, // Thursday 22:00 in Amsterdam: starts Friday at 09:00
  { name: 'SingleNightQueue', at: 61, queue: 'Night' }, // Friday 15:00 in Amsterdam: starts at 22:00
  { name: 'SingleOfficeOpen', at: 61, window: 'Office' }, // the office is open then, before and after the change
];

/** `definition start` of every entry of the forecast of [from, until), walking its pages. */
async function forecast(t: TestServer, from: number, until: number): Promise<string[]> {
  const out: string[] = [];
  let after = '';
  for (;;) {
    const q = `From=${new Date(from).toISOString()}&Until=${new Date(until).toISOString()}&Limit=1000${after}`;
    const res = await t.req('GET', `/forecast?${q}`);
    assert.equal(res.status, 200, res.body);
    for (const e of res.json.items) out.push(`${e.JobDefinition} ${e.Start}`);
    if (res.json.next === null) return out;
    after = `&After=${res.json.next}`;
  }
}

/** `definition start` of every job of the workload that started in [from, until), as the job API shows them. */
async function started(t: TestServer, from: number, until: number): Promise<string[]> {
  const out: string[] = [];
  const names = new Set([...WORKLOAD, ...SINGLES].map((r) => `GLOBAL.${r.name}`));
  let after = '';
  for (;;) {
    const res = await t.req('GET', `/Job?Limit=1000&fields=JobDefinition,RunStart${after}`);
    assert.equal(res.status, 200, res.body);
    for (const j of res.json.items) {
      if (!names.has(j.JobDefinition) || j.RunStart === null) continue;
      const at = Date.parse(
        `${j.RunStart.slice(0, 10).replaceAll('/', '-')}T${j.RunStart.slice(11, 23).replace(',', '.')}Z`,
      );
      assert.ok(j.RunStart.endsWith(' UTC'), j.RunStart);
      if (at >= from && at < until) out.push(`${j.JobDefinition} ${j.RunStart}`);
    }
    if (res.json.next === null) return out;
    after = `&After=${res.json.next}`;
  }
}

for (const backend of backends()) {
  describe(`the forecast equals reality (${backend.name})`, () => {
    let t: TestServer;
    const clock = new FakeClock(SUBMIT);

    /** Runs the clock to `until`, from one moment the engine wakes at to the next. Returns the number of steps. */
    const runUntil = async (until: number): Promise<number> => {
      let steps = 0;
      for (;;) {
        const next = t.server.engine.nextWakeAt;
        if (next === undefined || next >= until) break;
        assert.ok(next > clock.now(), `the engine wakes later than now (${new Date(next).toISOString()})`);
        assert.ok(++steps < 2000, 'the run takes a bounded number of steps');
        clock.set(next);
        await t.server.engine.tick();
      }
      clock.set(until);
      await t.server.engine.tick();
      return steps;
    };

    before(async () => {
      t = await startTestServer(backend, {}, { clock });
    });
    after(() => t.close());

    test('33 recurrences (calendar shifting among them) and 4 single jobs over 5 days start exactly when the forecast said, also after a window changed', async () => {
      for (const [name, body] of Object.entries(WINDOWS)) await post(t, `/TimeWindow/GLOBAL.${name}`, body);
      await post(t, '/Queue/GLOBAL.Night', { TimeWindow: 'GLOBAL.Night', QueueTimeZone: AMS });
      await post(t, '/QueueProvider/GLOBAL.System.GLOBAL.Night');
      for (const [name, body] of Object.entries(FRAMES)) await post(t, `/SubmitFrame/GLOBAL.${name}`, body);
      const define = async (row: Omit<Row, 'frame'>) => {
        await post(t, `/JobDefinition/GLOBAL.${row.name}`, {
          JobDefinitionType: 'JobChain',
          DefaultQueue: `GLOBAL.${row.queue ?? 'System'}`,
          ...(row.window ? { TimeWindow: `GLOBAL.${row.window}` } : {}),
        });
        await post(t, `/JobChain/GLOBAL.${row.name}`, { Steps: [] });
      };
      for (const row of WORKLOAD) {
        await define(row);
        await submit(t, `GLOBAL.${row.name}`, { SubmitFrame: `GLOBAL.${row.frame}` });
      }
      for (const row of SINGLES) {
        await define(row);
        await submit(t, `GLOBAL.${row.name}`, { RequestedStartTime: new Date(T0 + row.at * HOUR).toISOString() });
      }

      const planned = await forecast(t, T0, UNTIL);
      const plannedNames = new Set(planned.map((e) => e.split(' ')[0]));
      assert.deepEqual(
        [...WORKLOAD, ...SINGLES].map((r) => `GLOBAL.${r.name}`).filter((n) => !plannedNames.has(n)),
        [],
        'every definition of the workload is in the forecast',
      );
      assert.ok(planned.includes('GLOBAL.CronNight1 2027/10/31 00:15:00,000 UTC'), '02:15 CEST on the 31st');
      assert.ok(!planned.includes('GLOBAL.CronNight1 2027/10/31 01:15:00,000 UTC'), 'not 02:15 CET again');
      assert.ok(planned.includes('GLOBAL.Daily06a 2027/10/30 04:00:00,000 UTC'), '06:00 CEST');
      assert.ok(planned.includes('GLOBAL.Daily06a 2027/10/31 05:00:00,000 UTC'), '06:00 CET after the change');
      assert.ok(planned.includes('GLOBAL.SingleOffice 2027/10/29 07:00:00,000 UTC'), 'when the office opens');
      const shifted = planned.filter((e) => e.startsWith('GLOBAL.MonthEndShifted '));
      assert.deepEqual(shifted, ['GLOBAL.MonthEndShifted 2027/10/29 15:00:00,000 UTC'], 'Sunday the 31st → Friday');
      const lastWorkday = planned.filter((e) => e.startsWith('GLOBAL.LastWorkday '));
      assert.deepEqual(lastWorkday, ['GLOBAL.LastWorkday 2027/10/29 18:00:00,000 UTC'], 'the last working day');

      const steps = await runUntil(MIDDLE);
      assert.deepEqual((await started(t, T0, MIDDLE)).sort(), planned.filter((e) => at(e) < MIDDLE).sort());

      // The office opens at 10:00 from now on and closes at 16:00: what waits for it and what comes is planned anew.
      const put = await t.req('PUT', '/TimeWindow/GLOBAL.Office', {
        body: {
          ...WINDOWS.Office,
          Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '10:00', UntilTime: '16:00' }],
        },
      });
      assert.equal(put.status, 200, put.body);
      const replanned = await forecast(t, MIDDLE, UNTIL);
      assert.notDeepEqual(
        replanned,
        planned.filter((e) => at(e) >= MIDDLE),
        'the change moves planned starts',
      );
      const more = await runUntil(UNTIL);
      assert.deepEqual((await started(t, MIDDLE, UNTIL)).sort(), [...replanned].sort());
      assert.ok(steps + more < 600, `${steps + more} steps`);
    });
  });
}

/** The instant of an entry `definition YYYY/MM/DD HH:MM:SS,mmm UTC`. */
function at(entry: string): number {
  const [, date, time] = entry.split(' ') as [string, string, string];
  return Date.parse(`${date.replaceAll('/', '-')}T${time.replace(',', '.')}Z`);
}
