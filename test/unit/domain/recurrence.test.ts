import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  cronProblem,
  type FrameElement,
  type FrameSpec,
  firstOccurrence,
  nextOccurrence,
  occurrencesBetween,
} from '../../../src/domain/recurrence.ts';
import type { WindowElement, WindowSpec } from '../../../src/domain/time-window.ts';
import { formatInstant } from '../../../src/time/date-format.ts';

const AMS = 'Europe/Amsterdam';
const NY = 'America/New_York';
const at = (iso: string): number => Date.parse(iso);

const frame = (o: Partial<FrameSpec>): FrameSpec => ({
  zone: AMS,
  endDate: null,
  skipWhenClosed: false,
  elements: [],
  cron: null,
  ...o,
});
const every = (
  n: number,
  unit: Extract<FrameElement, { kind: 'Every' }>['unit'],
  o: Partial<Extract<FrameElement, { kind: 'Every' }>> = {},
): FrameElement => ({ kind: 'Every', every: n, unit, preserveTimes: true, startTime: null, ...o });
const window = (zone: string, ...elements: WindowElement[]): WindowSpec => ({ zone, elements });
const workdays = (zone: string): WindowSpec =>
  window(zone, { FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '08:00', UntilTime: '17:00' });

/** The first `n` occurrences of `f` submitted at `submit`, written in the frame's zone. */
function series(f: FrameSpec, submit: number, n: number, jobWindow?: WindowSpec): string[] {
  const out: string[] = [];
  const anchor = firstOccurrence(f, submit, jobWindow);
  if (anchor === undefined) return out;
  let t: number | undefined = anchor;
  while (t !== undefined && out.length < n) {
    out.push(formatInstant(t, f.zone).slice(0, 19));
    t = nextOccurrence(f, anchor, t, jobWindow);
  }
  return out;
}

describe('Every n minutes and hours', () => {
  test('every 15 minutes: the first occurrence is the submit time, then 15-minute steps', () => {
    const f = frame({ elements: [every(15, 'Minutes')] });
    const s = at('2024-05-01T10:03:20Z');
    assert.deepEqual(series(f, s, 4), [
      '2024/05/01 12:03:20',
      '2024/05/01 12:18:20',
      '2024/05/01 12:33:20',
      '2024/05/01 12:48:20',
    ]);
    // strictly after `after`, from any point of the series
    assert.equal(nextOccurrence(f, s, s), s + 15 * 60_000);
    assert.equal(nextOccurrence(f, s, s + 15 * 60_000 - 1), s + 15 * 60_000);
    assert.equal(nextOccurrence(f, s, s + 15 * 60_000), s + 30 * 60_000);
    assert.equal(nextOccurrence(f, s, s - 86_400_000), s, 'before the anchor: the anchor');
  });

  test('StartTime: the series starts at that time on the submit date, stepped forward past the submit', () => {
    const f = frame({ elements: [every(15, 'Minutes', { startTime: '06:00' })] });
    assert.deepEqual(series(f, at('2024-05-01T03:00:00Z'), 2), ['2024/05/01 06:00:00', '2024/05/01 06:15:00']);
    assert.deepEqual(series(f, at('2024-05-01T04:07:00Z'), 2), ['2024/05/01 06:15:00', '2024/05/01 06:30:00']);
    assert.deepEqual(series(f, at('2024-05-01T04:15:00Z'), 1), ['2024/05/01 06:15:00'], 'on the grid: that instant');
  });

  test('every 5 hours from 22:00 submitted at 23:30: the series crosses midnight and keeps its rhythm', () => {
    const f = frame({ elements: [every(5, 'Hours', { startTime: '22:00' })] });
    assert.deepEqual(series(f, at('2024-05-01T21:30:00Z'), 3), [
      '2024/05/02 03:00:00',
      '2024/05/02 08:00:00',
      '2024/05/02 13:00:00',
    ]);
  });

  test('hours are elapsed time: every hour through the fall-back night fires on both passes of 02:00-03:00', () => {
    const f = frame({ elements: [every(1, 'Hours')] });
    const got = series(f, at('2024-10-26T23:00:00Z'), 4);
    assert.deepEqual(got, ['2024/10/27 01:00:00', '2024/10/27 02:00:00', '2024/10/27 02:00:00', '2024/10/27 03:00:00']);
  });
});

describe('Every n days, weeks and months', () => {
  const daily6 = (preserveTimes: boolean) =>
    frame({ elements: [every(1, 'Days', { startTime: '06:00', preserveTimes })] });

  test('every day at 06:00 across the Amsterdam spring-forward keeps 06:00 with PreserveTimes', () => {
    assert.deepEqual(series(daily6(true), at('2024-03-29T12:00:00Z'), 4), [
      '2024/03/30 06:00:00',
      '2024/03/31 06:00:00',
      '2024/04/01 06:00:00',
      '2024/04/02 06:00:00',
    ]);
  });

  test('without PreserveTimes the steps are 24 hours, so the wall clock moves an hour', () => {
    assert.deepEqual(series(daily6(false), at('2024-03-29T12:00:00Z'), 3), [
      '2024/03/30 06:00:00',
      '2024/03/31 07:00:00',
      '2024/04/01 07:00:00',
    ]);
    assert.deepEqual(series(daily6(false), at('2024-10-25T12:00:00Z'), 3), [
      '2024/10/26 06:00:00',
      '2024/10/27 05:00:00',
      '2024/10/28 05:00:00',
    ]);
  });

  test('every day at 06:00 across the fall-back keeps 06:00 with PreserveTimes', () => {
    const f = daily6(true);
    const anchor = firstOccurrence(f, at('2024-10-25T12:00:00Z')) as number;
    assert.equal(anchor, at('2024-10-26T04:00:00Z'));
    assert.equal(nextOccurrence(f, anchor, anchor), at('2024-10-27T05:00:00Z')); // a 25-hour step
    assert.equal(nextOccurrence(f, anchor, at('2024-10-27T05:00:00Z')), at('2024-10-28T05:00:00Z'));
  });

  test('02:30 daily: moved to 03:00 in the spring gap, once (the earlier instant) in the fall-back overlap', () => {
    const f = frame({ elements: [every(1, 'Days', { startTime: '02:30' })] });
    const spring = firstOccurrence(f, at('2024-03-30T12:00:00Z')) as number;
    assert.equal(spring, at('2024-03-31T01:00:00Z'), 'first valid instant: 03:00 CEST');
    assert.equal(nextOccurrence(f, spring, spring), at('2024-04-01T00:30:00Z'), 'back at 02:30 the next day');
    const fall = firstOccurrence(f, at('2024-10-26T12:00:00Z')) as number;
    assert.equal(fall, at('2024-10-27T00:30:00Z'), 'the CEST 02:30');
    assert.equal(nextOccurrence(f, fall, fall), at('2024-10-28T01:30:00Z'), 'not the CET 02:30 of the same night');
    // a series with a gap day in its middle: no drift to 03:00 afterwards
    const anchor = firstOccurrence(f, at('2024-03-29T12:00:00Z')) as number;
    assert.equal(nextOccurrence(f, anchor, at('2024-03-31T12:00:00Z')), at('2024-04-01T00:30:00Z'));
  });

  test('New York: daily 01:30 fires once on the fall-back night, 02:30 at 03:00 on the spring-forward day', () => {
    const f = frame({ zone: NY, elements: [every(1, 'Days', { startTime: '01:30' })] });
    const anchor = firstOccurrence(f, at('2024-11-02T12:00:00Z')) as number;
    assert.equal(anchor, at('2024-11-03T05:30:00Z'), 'the EDT 01:30');
    assert.equal(nextOccurrence(f, anchor, anchor), at('2024-11-04T06:30:00Z'), 'not the EST 01:30 an hour later');
    assert.equal(nextOccurrence(f, at('2024-11-02T05:30:00Z'), at('2024-11-03T05:30:00Z')), at('2024-11-04T06:30:00Z'));
    const g = frame({ zone: NY, elements: [every(1, 'Days', { startTime: '02:30' })] });
    assert.equal(firstOccurrence(g, at('2024-03-09T12:00:00Z')), at('2024-03-10T07:00:00Z'));
  });

  test('every month from Jan 31: Feb 29, then Mar 31 again (each k from the anchor, not step by step)', () => {
    const f = frame({ elements: [every(1, 'Months')] });
    const anchor = at('2024-01-31T09:00:00Z');
    assert.deepEqual(series(f, anchor, 5), [
      '2024/01/31 10:00:00',
      '2024/02/29 10:00:00',
      '2024/03/31 10:00:00',
      '2024/04/30 10:00:00',
      '2024/05/31 10:00:00',
    ]);
    // far ahead, straight to the right month
    assert.equal(
      formatInstant(nextOccurrence(f, anchor, at('2031-02-10T00:00:00Z')) as number, AMS).slice(0, 19),
      '2031/02/28 10:00:00',
    );
    assert.equal(
      formatInstant(nextOccurrence(f, anchor, at('2031-03-01T00:00:00Z')) as number, AMS).slice(0, 19),
      '2031/03/31 10:00:00',
    );
  });

  test('every 3 months with StartTime, and Months without PreserveTimes (UTC calendar months)', () => {
    const f = frame({ elements: [every(3, 'Months', { startTime: '08:00' })] });
    assert.deepEqual(series(f, at('2024-01-15T05:00:00Z'), 3), [
      '2024/01/15 08:00:00',
      '2024/04/15 08:00:00',
      '2024/07/15 08:00:00',
    ]);
    const g = frame({ elements: [every(1, 'Months', { preserveTimes: false })] });
    assert.deepEqual(series(g, at('2024-02-15T07:00:00Z'), 3), [
      '2024/02/15 08:00:00',
      '2024/03/15 08:00:00',
      '2024/04/15 09:00:00', // 07:00 UTC each month; CEST by April
    ]);
  });

  test('every 2 weeks: same weekday and wall-clock time across DST', () => {
    const f = frame({ elements: [every(2, 'Weeks', { startTime: '09:15' })] });
    // Monday 2024-03-18 at 08:00 local: 09:15 the same day, then every other Monday
    assert.deepEqual(series(f, at('2024-03-18T07:00:00Z'), 4), [
      '2024/03/18 09:15:00',
      '2024/04/01 09:15:00',
      '2024/04/15 09:15:00',
      '2024/04/29 09:15:00',
    ]);
  });
});

describe('windows', () => {
  test('during: occurrences where the window is closed are left out', () => {
    const f = frame({ elements: [every(4, 'Hours', { startTime: '00:00', during: workdays(AMS) })] });
    // Friday 2024-05-03 from 10:00 local: 12:00, 16:00, then Monday 08:00
    assert.deepEqual(series(f, at('2024-05-03T08:00:00Z'), 4), [
      '2024/05/03 12:00:00',
      '2024/05/03 16:00:00',
      '2024/05/06 08:00:00',
      '2024/05/06 12:00:00',
    ]);
  });

  test('during a window that opens once in the far future: answers undefined past two years of nothing', () => {
    // open on one local day only (dates are whole days), from `from` until `until` local time
    const once = (day: string, from: string, until: string): WindowSpec => {
      const d = { ms: at(`${day}T12:00:00Z`), zone: AMS };
      return window(AMS, { FromDate: d, UntilDate: d, FromTime: from, UntilTime: until });
    };
    const misses = frame({ elements: [every(1, 'Minutes', { during: once('2025-06-01', '12:00:30', '12:00:40') })] });
    assert.equal(
      firstOccurrence(misses, at('2024-01-01T00:00:00Z')),
      undefined,
      'the open stretch misses every minute',
    );
    const far = frame({ elements: [every(1, 'Minutes', { during: once('2027-06-01', '12:00', '13:00') })] });
    assert.equal(firstOccurrence(far, at('2024-01-01T00:00:00Z')), undefined, 'more than two years away');
    const near = frame({ elements: [every(1, 'Minutes', { during: once('2025-06-01', '12:00', '13:00') })] });
    const first = firstOccurrence(near, at('2024-01-01T00:00:00Z'));
    assert.equal(first, at('2025-06-01T10:00:00Z'));
    assert.equal(
      nextOccurrence(near, at('2024-01-01T00:00:00Z'), at('2025-06-01T10:59:00Z')),
      undefined,
      'and then never',
    );
  });

  test('hostile: a daily window that every occurrence misses answers undefined', () => {
    const daily = window(AMS, { FromTime: '12:00:10', UntilTime: '12:00:20' });
    const f = frame({ elements: [every(1, 'Minutes', { during: daily })] });
    assert.equal(firstOccurrence(f, at('2024-01-01T00:00:00Z')), undefined);
    const c = frame({ cron: '*/30 * * * * *', skipWhenClosed: true });
    assert.equal(firstOccurrence(c, at('2024-01-01T00:00:00Z'), daily), undefined);
    const o = frame({ skipWhenClosed: true, elements: [{ kind: 'WindowOpenings', window: workdays(AMS) }] });
    assert.equal(firstOccurrence(o, at('2024-01-01T00:00:00Z'), daily), undefined);
  });

  test('WindowOpenings: the instants the window opens, whatever the anchor', () => {
    const f = frame({ elements: [{ kind: 'WindowOpenings', window: workdays(AMS) }] });
    // submitted Friday 2024-05-03 07:00 local (closed): 08:00 that day, then Monday 08:00
    assert.deepEqual(series(f, at('2024-05-03T05:00:00Z'), 3), [
      '2024/05/03 08:00:00',
      '2024/05/06 08:00:00',
      '2024/05/07 08:00:00',
    ]);
    // submitted while open: the opening already passed, so the next one; an opening at the submit instant counts
    assert.equal(firstOccurrence(f, at('2024-05-03T08:00:00Z')), at('2024-05-06T06:00:00Z'));
    assert.equal(firstOccurrence(f, at('2024-05-03T06:00:00Z')), at('2024-05-03T06:00:00Z'));
    assert.equal(nextOccurrence(f, 0, at('2024-05-03T06:00:00Z')), at('2024-05-06T06:00:00Z'));
  });

  test('WindowOpenings of a window that never opens: undefined', () => {
    const f = frame({ elements: [{ kind: 'WindowOpenings', window: window(AMS) }] });
    assert.equal(firstOccurrence(f, at('2024-05-03T05:00:00Z')), undefined);
  });

  test('skipWhenClosed: occurrences at which the job window is closed are left out; without it they stay', () => {
    const elements = [every(6, 'Hours', { startTime: '00:00' })];
    const job = workdays(AMS);
    const submit = at('2024-05-03T08:00:00Z'); // Friday 10:00 local
    assert.deepEqual(series(frame({ elements, skipWhenClosed: true }), submit, 3, job), [
      '2024/05/03 12:00:00',
      '2024/05/06 12:00:00',
      '2024/05/07 12:00:00',
    ]);
    assert.deepEqual(series(frame({ elements }), submit, 3, job), [
      '2024/05/03 12:00:00',
      '2024/05/03 18:00:00',
      '2024/05/04 00:00:00',
    ]);
  });
});

describe('frames', () => {
  test('several elements: the union, equal instants once', () => {
    const f = frame({
      elements: [every(1, 'Days', { startTime: '06:00' }), every(12, 'Hours', { startTime: '06:00' })],
    });
    assert.deepEqual(series(f, at('2024-05-01T00:00:00Z'), 4), [
      '2024/05/01 06:00:00',
      '2024/05/01 18:00:00',
      '2024/05/02 06:00:00',
      '2024/05/02 18:00:00',
    ]);
  });

  test('EndDate: nothing after it; an end date in the past answers undefined at once', () => {
    const f = frame({ endDate: at('2024-05-01T12:00:00Z'), elements: [every(1, 'Hours')] });
    const anchor = at('2024-05-01T10:00:00Z');
    assert.equal(nextOccurrence(f, anchor, anchor), at('2024-05-01T11:00:00Z'));
    assert.equal(nextOccurrence(f, anchor, at('2024-05-01T11:00:00Z')), at('2024-05-01T12:00:00Z'), 'at it: yes');
    assert.equal(nextOccurrence(f, anchor, at('2024-05-01T12:00:00Z')), undefined);
    const past = frame({ endDate: at('2020-01-01T00:00:00Z'), elements: [every(1, 'Minutes')] });
    assert.equal(firstOccurrence(past, anchor), undefined);
    assert.equal(firstOccurrence(frame({ endDate: at('2020-01-01T00:00:00Z'), cron: '* * * * *' }), anchor), undefined);
  });

  test('occurrencesBetween: from < t <= to, at most cap', () => {
    const f = frame({ elements: [every(10, 'Minutes')] });
    const anchor = at('2024-05-01T10:00:00Z');
    assert.deepEqual(occurrencesBetween(f, anchor, anchor, at('2024-05-01T10:30:00Z'), 100), [
      at('2024-05-01T10:10:00Z'),
      at('2024-05-01T10:20:00Z'),
      at('2024-05-01T10:30:00Z'),
    ]);
    assert.equal(occurrencesBetween(f, anchor, anchor, at('2024-05-02T10:00:00Z'), 5).length, 5);
    assert.deepEqual(occurrencesBetween(f, anchor, at('2024-05-01T10:31:00Z'), at('2024-05-01T10:39:00Z'), 5), []);
  });

  test('no elements and no cron: never', () => {
    assert.equal(firstOccurrence(frame({}), at('2024-05-01T10:00:00Z')), undefined);
  });
});

describe('cron', () => {
  test('weekdays at 06:00 in Amsterdam', () => {
    const f = frame({ cron: '0 6 * * 1-5' });
    assert.deepEqual(series(f, at('2024-05-03T05:00:00Z'), 3), [
      '2024/05/06 06:00:00',
      '2024/05/07 06:00:00',
      '2024/05/08 06:00:00',
    ]);
    assert.equal(firstOccurrence(f, at('2024-05-03T04:00:00Z')), at('2024-05-03T04:00:00Z'), 'at the submit: yes');
  });

  test('six fields: seconds first', () => {
    const f = frame({ zone: 'UTC', cron: '*/20 * * * * *' });
    const s = at('2024-05-01T10:00:05Z');
    assert.deepEqual(occurrencesBetween(f, s, s, s + 60_000, 10), [
      at('2024-05-01T10:00:20Z'),
      at('2024-05-01T10:00:40Z'),
      at('2024-05-01T10:01:00Z'),
    ]);
  });

  test('30 2 * * *: once on the fall-back night, at 03:00 on the spring-forward day', () => {
    const f = frame({ cron: '30 2 * * *' });
    assert.deepEqual(occurrencesBetween(f, 0, at('2024-10-26T12:00:00Z'), at('2024-10-28T12:00:00Z'), 10), [
      at('2024-10-27T00:30:00Z'),
      at('2024-10-28T01:30:00Z'),
    ]);
    // between the two passes: the second 02:30 is not another occurrence
    assert.equal(nextOccurrence(f, 0, at('2024-10-27T01:00:00Z')), at('2024-10-28T01:30:00Z'));
    assert.deepEqual(occurrencesBetween(f, 0, at('2024-03-30T12:00:00Z'), at('2024-04-01T12:00:00Z'), 10), [
      at('2024-03-31T01:00:00Z'),
      at('2024-04-01T00:30:00Z'),
    ]);
  });

  test('lists and steps never fire twice for one local time in the fall-back night', () => {
    const list = frame({ cron: '30 1,2 * * *' });
    assert.deepEqual(occurrencesBetween(list, 0, at('2024-10-26T12:00:00Z'), at('2024-10-27T12:00:00Z'), 10), [
      at('2024-10-26T23:30:00Z'),
      at('2024-10-27T00:30:00Z'),
    ]);
    assert.deepEqual(occurrencesBetween(list, 0, at('2024-03-30T12:00:00Z'), at('2024-03-31T12:00:00Z'), 10), [
      at('2024-03-31T00:30:00Z'),
      at('2024-03-31T01:00:00Z'), // 02:30 moved to 03:00
    ]);
    const steps = frame({ cron: '*/20 * * * *' });
    const night = occurrencesBetween(steps, 0, at('2024-10-27T00:00:00Z'), at('2024-10-27T02:30:00Z'), 100);
    const local = night.map((t) => formatInstant(t, AMS).slice(11, 16));
    assert.deepEqual(local, ['02:20', '02:40', '03:00', '03:20']);
    assert.equal(new Set(local).size, local.length);
  });

  test('New York: 30 1 * * * once on the fall-back night', () => {
    const f = frame({ zone: NY, cron: '30 1 * * *' });
    assert.deepEqual(occurrencesBetween(f, 0, at('2024-11-02T12:00:00Z'), at('2024-11-04T12:00:00Z'), 10), [
      at('2024-11-03T05:30:00Z'),
      at('2024-11-04T06:30:00Z'),
    ]);
  });

  test('skipWhenClosed applies to cron too', () => {
    const f = frame({ cron: '0 12 * * *', skipWhenClosed: true });
    assert.deepEqual(series(f, at('2024-05-03T08:00:00Z'), 2, workdays(AMS)), [
      '2024/05/03 12:00:00',
      '2024/05/06 12:00:00',
    ]);
  });

  test('cronProblem', () => {
    assert.equal(cronProblem('0 6 * * 1-5', AMS), undefined);
    assert.equal(cronProblem('0 0 29 2 *', 'UTC'), undefined, 'leap days only: fine');
    assert.equal(cronProblem('0 0 0 * * *', 'UTC'), undefined);
    assert.equal(cronProblem('0 0 30 2 *', 'UTC'), 'never fires');
    assert.equal(cronProblem('0 0 31 4 *', AMS), 'never fires');
    assert.match(cronProblem('60 * * * *', 'UTC') ?? '', /minute/);
    assert.match(cronProblem('0 0 * * 8', 'UTC') ?? '', /day ?of ?week/i);
    assert.equal(cronProblem('* * * *', 'UTC'), 'must have five or six fields');
    assert.equal(cronProblem('0 0 0 1 1 * 2030', 'UTC'), 'must have five or six fields');
    for (const bad of ['60 * * * *', 'x * * * *', '*/0 * * * *'])
      assert.ok((cronProblem(bad, 'UTC') ?? '').length <= 120, bad);
  });
});
