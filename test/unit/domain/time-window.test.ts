/**
 * Time windows by example. Expected instants are written in UTC (`...Z`) wherever DST matters, so
 * the test does not lean on the code under test to turn local times into instants.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  HORIZON_MS,
  isOpen,
  localToInstant,
  nextChange,
  nextOpening,
  openIntervals,
  type WindowElement,
  type WindowSpec,
} from '../../../src/domain/time-window.ts';
import { loadWindow } from '../../../src/engine/windows.ts';
import type { StoredObject, Store } from '../../../src/store/store.ts';
import { parseDate } from '../../../src/time/date-format.ts';

const AMS = 'Europe/Amsterdam';
const NY = 'America/New_York';
const DAY = 86_400_000;

const utc = (iso: string): number => Date.parse(iso);
/** Local time in Amsterdam (only used away from DST changes, where it is unambiguous). */
const ams = (iso: string): number => parseDate(iso, AMS).ms;
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const win = (elements: WindowElement[], zone = AMS, more: Partial<WindowSpec> = {}): WindowSpec => ({
  zone,
  elements,
  ...more,
});
/** The open intervals within [from, to) as [startISO, endISO] pairs. */
const spans = (w: WindowSpec, from: number, to: number): Array<[string, string]> =>
  openIntervals(w, from, to).map((i) => [iso(i.start) as string, iso(i.end) as string]);
/** Whether the window is open at noon (Amsterdam) on each of the given dates: 'o' open, '-' closed. */
const openAtNoon = (w: WindowSpec, dates: string[]): string =>
  dates.map((d) => (isOpen(w, ams(`${d}T12:00`)) ? 'o' : '-')).join('');

describe('elements', () => {
  test('no elements: never open', () => {
    const w = win([]);
    const t = ams('2024-05-06T12:00');
    assert.equal(isOpen(w, t), false);
    assert.equal(nextChange(w, t), undefined);
    assert.equal(nextOpening(w, t), undefined);
    assert.deepEqual(openIntervals(w, t, t + 10 * DAY), []);
  });

  test('an unrestricted element is open all the time, as one merged interval', () => {
    const w = win([{}]);
    const t = ams('2024-05-06T12:00');
    assert.equal(isOpen(w, t), true);
    assert.equal(nextOpening(w, t), t);
    assert.equal(nextChange(w, t), undefined);
    assert.deepEqual(openIntervals(w, t, t + 400 * DAY), [{ start: t, end: t + 400 * DAY }]);
  });

  test('elements combine by union; days that touch merge', () => {
    const w = win([
      { FromWeekday: 'Tuesday', UntilWeekday: 'Tuesday' },
      { FromWeekday: 'Wednesday', UntilWeekday: 'Wednesday' },
    ]);
    assert.equal(openAtNoon(w, ['2024-05-06', '2024-05-07', '2024-05-08', '2024-05-09']), '-oo-');
    // Tuesday 00:00 to Thursday 00:00 CEST, one interval
    assert.deepEqual(spans(w, ams('2024-05-06T00:00'), ams('2024-05-13T00:00')), [
      ['2024-05-06T22:00:00.000Z', '2024-05-08T22:00:00.000Z'],
    ]);
    assert.equal(nextChange(w, ams('2024-05-07T12:00')), ams('2024-05-09T00:00'));
  });

  test('restrictions inside an element combine by intersection', () => {
    const w = win([
      {
        FromWeekday: 'Monday',
        UntilWeekday: 'Friday',
        FromTime: '09:00',
        UntilTime: '17:00',
        FromMonth: 5,
        UntilMonth: 5,
      },
    ]);
    assert.equal(isOpen(w, ams('2024-05-06T09:00')), true);
    assert.equal(isOpen(w, ams('2024-05-06T08:59:59')), false);
    assert.equal(isOpen(w, ams('2024-05-06T17:00')), false, 'UntilTime is exclusive');
    assert.equal(isOpen(w, ams('2024-05-04T12:00')), false, 'Saturday');
    assert.equal(isOpen(w, ams('2024-06-03T12:00')), false, 'June');
    // From Friday 31 May 17:00 the next opening is in May 2025: Thursday 1 May 09:00
    assert.equal(nextOpening(w, ams('2024-05-31T17:00')), ams('2025-05-01T09:00'));
  });

  test('an element whose restrictions never hold together never opens', () => {
    // the last day of April (31 is past its end) when it is a Sunday (From Sunday: to the natural end, Sunday):
    // not until 30 April 2028, beyond the two-year horizon
    const w = win([{ FromMonth: 4, UntilMonth: 4, FromDayOfMonth: 31, UntilDayOfMonth: 31, FromWeekday: 'Sunday' }]);
    assert.equal(nextOpening(w, ams('2024-05-01T00:00')), undefined);
    assert.equal(nextOpening(w, ams('2024-05-01T00:00'), 5 * 366 * DAY), ams('2028-04-30T00:00'));
  });
});

describe('day restrictions', () => {
  test('month range, inclusive, wrapping over the new year', () => {
    const w = win([{ FromMonth: 11, UntilMonth: 2 }]);
    assert.equal(
      openAtNoon(w, ['2024-10-31', '2024-11-01', '2024-12-15', '2025-01-10', '2025-02-28', '2025-03-01']),
      '-oooo-',
    );
    assert.deepEqual(spans(w, ams('2024-10-01T00:00'), ams('2025-04-01T00:00')), [
      ['2024-10-31T23:00:00.000Z', '2025-02-28T23:00:00.000Z'],
    ]);
  });

  test('month range with one end: to December, or from January', () => {
    assert.equal(
      openAtNoon(win([{ FromMonth: 10 }]), ['2024-09-30', '2024-10-01', '2024-12-31', '2025-01-01']),
      '-oo-',
    );
    assert.equal(
      openAtNoon(win([{ UntilMonth: 3 }]), ['2024-12-31', '2025-01-01', '2025-03-31', '2025-04-01']),
      '-oo-',
    );
    assert.equal(openAtNoon(win([{ FromMonth: 6, UntilMonth: 6 }]), ['2024-05-31', '2024-06-01', '2024-07-01']), '-o-');
  });

  test('day of month 31 means the last day: 28 February, 29 in a leap year, 30 April', () => {
    const w = win([{ FromDayOfMonth: 31, UntilDayOfMonth: 31 }]);
    assert.equal(
      openAtNoon(w, ['2024-02-28', '2024-02-29', '2025-02-27', '2025-02-28', '2024-04-29', '2024-04-30', '2024-05-30']),
      '-o-o-o-',
    );
    assert.equal(isOpen(w, ams('2024-05-31T12:00')), true);
    // only From = 31: from the last day to the natural end, which is the same day
    assert.equal(openAtNoon(win([{ FromDayOfMonth: 31 }]), ['2024-02-28', '2024-02-29', '2024-03-01']), '-o-');
    // 29-31 in February 2025 is just the 28th
    assert.equal(
      openAtNoon(win([{ FromDayOfMonth: 29, UntilDayOfMonth: 31 }]), ['2025-02-27', '2025-02-28', '2025-03-01']),
      '-o-',
    );
  });

  test('day-of-month range wraps when From > Until', () => {
    const w = win([{ FromDayOfMonth: 25, UntilDayOfMonth: 5 }]);
    assert.equal(
      openAtNoon(w, ['2024-05-24', '2024-05-25', '2024-05-31', '2024-06-01', '2024-06-05', '2024-06-06', '2024-06-15']),
      '-oooo--',
    );
    // only Until: from the 1st
    assert.equal(
      openAtNoon(win([{ UntilDayOfMonth: 3 }]), ['2024-05-31', '2024-06-01', '2024-06-03', '2024-06-04']),
      '-oo-',
    );
  });

  test('DayOfMonthOffset shifts the selected days, across month ends', () => {
    // the day after the last day of the month: 1 March after 29 February 2024
    const afterLast = win([{ FromDayOfMonth: 31, UntilDayOfMonth: 31, DayOfMonthOffset: 1 }]);
    assert.equal(
      openAtNoon(afterLast, ['2024-02-29', '2024-03-01', '2024-03-31', '2024-04-01', '2024-05-01']),
      '-o-oo',
    );
    // two days before the 1st: 29 April, 30 May, 27 February 2025
    const beforeFirst = win([{ FromDayOfMonth: 1, UntilDayOfMonth: 1, DayOfMonthOffset: -2 }]);
    assert.equal(
      openAtNoon(beforeFirst, ['2024-04-29', '2024-04-30', '2024-05-30', '2025-02-27', '2025-02-28']),
      'o-oo-',
    );
    // 1-5 shifted by 3: the 4th to the 8th
    const w = win([{ FromDayOfMonth: 1, UntilDayOfMonth: 5, DayOfMonthOffset: 3 }]);
    assert.deepEqual(spans(w, ams('2024-05-01T00:00'), ams('2024-05-31T00:00')), [
      ['2024-05-03T22:00:00.000Z', '2024-05-08T22:00:00.000Z'],
    ]);
  });

  test('weekday range wraps: Friday to Monday', () => {
    const w = win([{ FromWeekday: 'Friday', UntilWeekday: 'Monday' }]);
    // Thu 2 May .. Wed 8 May 2024
    const week = ['2024-05-02', '2024-05-03', '2024-05-04', '2024-05-05', '2024-05-06', '2024-05-07', '2024-05-08'];
    assert.equal(openAtNoon(w, week), '-oooo--');
    // only From: to Sunday; only Until: from Monday
    assert.equal(openAtNoon(win([{ FromWeekday: 'Saturday' }]), week), '--oo---');
    assert.equal(openAtNoon(win([{ UntilWeekday: 'Tuesday' }]), week), '----oo-');
  });

  test('WeekdayOffset shifts the selected days', () => {
    const week = ['2024-05-05', '2024-05-06', '2024-05-07', '2024-05-08'];
    assert.equal(openAtNoon(win([{ FromWeekday: 'Monday', UntilWeekday: 'Monday', WeekdayOffset: 1 }]), week), '--o-');
    assert.equal(openAtNoon(win([{ FromWeekday: 'Monday', UntilWeekday: 'Monday', WeekdayOffset: -1 }]), week), 'o---');
    // Sunday + 8 days = Monday
    assert.equal(openAtNoon(win([{ FromWeekday: 'Sunday', UntilWeekday: 'Sunday', WeekdayOffset: 8 }]), week), '-o--');
  });

  test('date range: local dates in the window zone, inclusive, open-ended on one side', () => {
    // 23:30 UTC on 1 May is 01:30 on 2 May in Amsterdam: the range starts on 2 May there
    const w = win([
      {
        FromDate: { ms: utc('2024-05-01T23:30:00Z'), zone: 'UTC' },
        UntilDate: { ms: utc('2024-05-04T08:00:00Z'), zone: 'UTC' },
      },
    ]);
    assert.deepEqual(spans(w, ams('2024-04-01T00:00'), ams('2024-06-01T00:00')), [
      ['2024-05-01T22:00:00.000Z', '2024-05-04T22:00:00.000Z'],
    ]);
    const from = win([{ FromDate: { ms: ams('2024-05-02T15:00'), zone: AMS } }]);
    assert.equal(isOpen(from, ams('2024-05-01T23:59:59')), false);
    assert.equal(isOpen(from, ams('2024-05-02T00:00')), true);
    assert.equal(nextChange(from, ams('2024-05-02T00:00')), undefined);
    const until = win([{ UntilDate: { ms: ams('2024-05-02T15:00'), zone: AMS } }]);
    assert.equal(isOpen(until, ams('2024-05-02T23:59:59')), true);
    assert.equal(nextChange(until, ams('2024-01-01T00:00')), ams('2024-05-03T00:00'));
    // From after Until: never
    const backwards = win([
      { FromDate: { ms: ams('2024-05-03T00:00'), zone: AMS }, UntilDate: { ms: ams('2024-05-02T00:00'), zone: AMS } },
    ]);
    assert.equal(nextOpening(backwards, ams('2024-01-01T00:00')), undefined);
  });

  test('leap day: a date range of 29 February 2024, and day 29 of February in later years', () => {
    const leap = win([
      { FromDate: { ms: ams('2024-02-29T00:00'), zone: AMS }, UntilDate: { ms: ams('2024-02-29T00:00'), zone: AMS } },
    ]);
    assert.deepEqual(spans(leap, ams('2024-01-01T00:00'), ams('2025-01-01T00:00')), [
      ['2024-02-28T23:00:00.000Z', '2024-02-29T23:00:00.000Z'],
    ]);
    const feb29 = win([{ FromMonth: 2, UntilMonth: 2, FromDayOfMonth: 29, UntilDayOfMonth: 29 }]);
    assert.equal(nextOpening(feb29, ams('2024-01-01T00:00')), ams('2024-02-29T00:00'));
    // 2025 has no 29 February: past the end of the month means its last day
    assert.equal(nextOpening(feb29, ams('2024-03-01T00:00')), ams('2025-02-28T00:00'));
  });
});

describe('time of day', () => {
  test('a range crossing midnight runs into the next day', () => {
    const w = win([{ FromWeekday: 'Friday', UntilWeekday: 'Friday', FromTime: '22:00', UntilTime: '06:00' }]);
    assert.equal(isOpen(w, ams('2024-05-03T21:59')), false);
    assert.equal(isOpen(w, ams('2024-05-03T22:00')), true);
    assert.equal(isOpen(w, ams('2024-05-04T05:59:59')), true, 'Saturday morning belongs to Friday');
    assert.equal(isOpen(w, ams('2024-05-04T06:00')), false);
    assert.equal(isOpen(w, ams('2024-05-04T23:00')), false, 'Saturday evening is not selected');
    assert.equal(isOpen(w, ams('2024-05-03T03:00')), false, 'Thursday night is not selected');
    assert.equal(nextChange(w, ams('2024-05-03T23:00')), ams('2024-05-04T06:00'));
  });

  test('From equal to Until: 24 hours from From', () => {
    const w = win([{ FromWeekday: 'Monday', UntilWeekday: 'Monday', FromTime: '08:00', UntilTime: '08:00' }]);
    assert.deepEqual(spans(w, ams('2024-05-01T00:00'), ams('2024-05-10T00:00')), [
      ['2024-05-06T06:00:00.000Z', '2024-05-07T06:00:00.000Z'],
    ]);
  });

  test('seconds, 24:00, and the defaults 00:00 and 24:00', () => {
    const w = win([{ FromTime: '12:30:15', UntilTime: '24:00', FromMonth: 5, UntilMonth: 5 }]);
    assert.equal(isOpen(w, ams('2024-05-06T12:30:14')), false);
    assert.equal(isOpen(w, ams('2024-05-06T12:30:15')), true);
    assert.equal(nextChange(w, ams('2024-05-06T13:00')), ams('2024-05-07T00:00'));
    const untilNoon = win([{ UntilTime: '12:00', FromMonth: 5, UntilMonth: 5 }]);
    assert.equal(isOpen(untilNoon, ams('2024-05-06T00:00')), true);
    assert.equal(nextChange(untilNoon, ams('2024-05-06T00:00')), ams('2024-05-06T12:00'));
  });

  test('consecutive full days merge, also over a DST change', () => {
    const w = win([{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }]);
    assert.deepEqual(spans(w, ams('2024-05-05T00:00'), ams('2024-05-12T00:00')), [
      ['2024-05-05T22:00:00.000Z', '2024-05-10T22:00:00.000Z'],
    ]);
    // March 2024: open Sunday 31 March (CET→CEST), closed on Monday 1 April
    const days = win([{ FromMonth: 3, UntilMonth: 3 }]);
    assert.deepEqual(spans(days, utc('2024-03-01T00:00:00Z'), utc('2024-04-15T00:00:00Z')), [
      ['2024-03-01T00:00:00.000Z', '2024-03-31T22:00:00.000Z'],
    ]);
  });

  test('TimeOffsetHours shifts the interval, taking a day across midnight', () => {
    // Monday's whole day two hours earlier: Sunday 22:00 to Monday 22:00
    const w = win([{ FromWeekday: 'Monday', UntilWeekday: 'Monday', TimeOffsetHours: -2 }]);
    assert.deepEqual(spans(w, ams('2024-05-01T00:00'), ams('2024-05-10T00:00')), [
      ['2024-05-05T20:00:00.000Z', '2024-05-06T20:00:00.000Z'],
    ]);
    // Friday 20:00-24:00 plus 6 hours: Saturday 02:00-06:00
    const late = win([
      { FromWeekday: 'Friday', UntilWeekday: 'Friday', FromTime: '20:00', UntilTime: '24:00', TimeOffsetHours: 6 },
    ]);
    assert.deepEqual(spans(late, ams('2024-05-01T00:00'), ams('2024-05-08T00:00')), [
      ['2024-05-04T00:00:00.000Z', '2024-05-04T04:00:00.000Z'],
    ]);
    // the furthest an element day reaches: Friday 23:00 to Saturday 22:00, plus 23 hours = Saturday 22:00 to Sunday 21:00
    const far = win([
      { FromWeekday: 'Friday', UntilWeekday: 'Friday', FromTime: '23:00', UntilTime: '22:00', TimeOffsetHours: 23 },
    ]);
    assert.equal(isOpen(far, ams('2024-05-05T20:59:59')), true);
    assert.equal(isOpen(far, ams('2024-05-05T21:00')), false);
    assert.equal(nextOpening(far, ams('2024-05-03T12:00')), ams('2024-05-04T22:00'));
    assert.equal(nextChange(far, ams('2024-05-05T12:00')), ams('2024-05-05T21:00'));
    // and the earliest: Monday 00:00 minus 23 hours is Sunday 01:00
    const early = win([{ FromWeekday: 'Monday', UntilWeekday: 'Monday', UntilTime: '01:00', TimeOffsetHours: -23 }]);
    assert.deepEqual(spans(early, ams('2024-05-01T00:00'), ams('2024-05-08T00:00')), [
      ['2024-05-04T23:00:00.000Z', '2024-05-05T00:00:00.000Z'],
    ]);
  });
});

describe('EnabledDuring and DisabledDuring', () => {
  const weekdays = win([{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }]);
  const lunch = win([{ FromTime: '12:00', UntilTime: '13:00' }]);

  test('open only while the enabling window is open too', () => {
    const w = win([{ FromTime: '08:00', UntilTime: '18:00' }], AMS, { enabledDuring: weekdays });
    assert.equal(isOpen(w, ams('2024-05-06T10:00')), true);
    assert.equal(isOpen(w, ams('2024-05-04T10:00')), false, 'Saturday');
    assert.equal(nextOpening(w, ams('2024-05-03T18:00')), ams('2024-05-06T08:00'));
  });

  test('closed while the disabling window is open', () => {
    const w = win([{ FromTime: '08:00', UntilTime: '18:00' }], AMS, { enabledDuring: weekdays, disabledDuring: lunch });
    assert.deepEqual(spans(w, ams('2024-05-06T00:00'), ams('2024-05-07T00:00')), [
      ['2024-05-06T06:00:00.000Z', '2024-05-06T10:00:00.000Z'],
      ['2024-05-06T11:00:00.000Z', '2024-05-06T16:00:00.000Z'],
    ]);
    assert.equal(isOpen(w, ams('2024-05-06T12:30')), false);
    assert.equal(nextChange(w, ams('2024-05-06T09:00')), ams('2024-05-06T12:00'));
    assert.equal(nextOpening(w, ams('2024-05-06T12:00')), ams('2024-05-06T13:00'));
  });

  test('a nested window is read in its own zone', () => {
    // New York business hours 09:00-17:00 EDT = 15:00-23:00 in Amsterdam (CEST)
    const nyHours = win([{ FromTime: '09:00', UntilTime: '17:00' }], NY);
    const w = win([{ FromTime: '08:00', UntilTime: '18:00' }], AMS, { enabledDuring: nyHours });
    assert.deepEqual(spans(w, ams('2024-05-06T00:00'), ams('2024-05-07T00:00')), [
      ['2024-05-06T13:00:00.000Z', '2024-05-06T16:00:00.000Z'],
    ]);
  });

  test('disabled all the time: never opens', () => {
    const w = win([{}], AMS, { disabledDuring: win([{}]) });
    assert.equal(nextOpening(w, ams('2024-05-06T00:00')), undefined);
  });
});

describe('DST', () => {
  test('Amsterdam spring forward: a start in the gap moves to the first valid instant (03:00 CEST)', () => {
    // 2024-03-31: 02:00 CET (01:00Z) jumps to 03:00 CEST
    const w = win([{ FromTime: '02:30', UntilTime: '04:00' }]);
    assert.deepEqual(spans(w, utc('2024-03-30T12:00:00Z'), utc('2024-04-01T12:00:00Z')), [
      ['2024-03-31T01:00:00.000Z', '2024-03-31T02:00:00.000Z'],
      ['2024-04-01T00:30:00.000Z', '2024-04-01T02:00:00.000Z'],
    ]);
    assert.equal(nextOpening(w, utc('2024-03-30T12:00:00Z')), utc('2024-03-31T01:00:00Z'));
    // 01:00-02:30 ends at the transition
    const early = win([{ FromTime: '01:00', UntilTime: '02:30' }]);
    assert.deepEqual(spans(early, utc('2024-03-30T12:00:00Z'), utc('2024-03-31T12:00:00Z')), [
      ['2024-03-31T00:00:00.000Z', '2024-03-31T01:00:00.000Z'],
    ]);
  });

  test('Amsterdam spring forward: a range wholly inside the gap does not open that day', () => {
    const w = win([{ FromTime: '02:00', UntilTime: '03:00' }]);
    assert.equal(isOpen(w, utc('2024-03-31T01:00:00Z')), false);
    assert.equal(nextOpening(w, utc('2024-03-30T12:00:00Z')), utc('2024-04-01T00:00:00Z'));
  });

  test('Amsterdam fall back: an ambiguous time means the earlier instant, so 02:00-02:30 opens once', () => {
    // 2024-10-27: 03:00 CEST (01:00Z) falls back to 02:00 CET; 02:00-03:00 happens twice
    const w = win([{ FromTime: '02:00', UntilTime: '02:30' }]);
    assert.deepEqual(spans(w, utc('2024-10-26T12:00:00Z'), utc('2024-10-27T12:00:00Z')), [
      ['2024-10-27T00:00:00.000Z', '2024-10-27T00:30:00.000Z'],
    ]);
    assert.equal(isOpen(w, utc('2024-10-27T01:15:00Z')), false, 'the second 02:15 is not open again');
    // a range across the repeated hour lasts its elapsed length: 01:00 CEST to 03:00 CET is 3 hours
    const across = win([{ FromTime: '01:00', UntilTime: '03:00' }]);
    assert.deepEqual(spans(across, utc('2024-10-26T12:00:00Z'), utc('2024-10-27T12:00:00Z')), [
      ['2024-10-26T23:00:00.000Z', '2024-10-27T02:00:00.000Z'],
    ]);
  });

  test('New York spring forward and fall back', () => {
    // 2024-03-10: 02:00 EST (07:00Z) jumps to 03:00 EDT
    const gap = win([{ FromTime: '02:30', UntilTime: '03:30' }], NY);
    assert.deepEqual(spans(gap, utc('2024-03-09T12:00:00Z'), utc('2024-03-10T12:00:00Z')), [
      ['2024-03-10T07:00:00.000Z', '2024-03-10T07:30:00.000Z'],
    ]);
    // 2024-11-03: 02:00 EDT (06:00Z) falls back to 01:00 EST; 01:00-01:30 opens only the first time
    const overlap = win([{ FromTime: '01:00', UntilTime: '01:30' }], NY);
    assert.deepEqual(spans(overlap, utc('2024-11-02T12:00:00Z'), utc('2024-11-03T12:00:00Z')), [
      ['2024-11-03T05:00:00.000Z', '2024-11-03T05:30:00.000Z'],
    ]);
    // the day of the change lasts 25 hours
    const sunday = win([{ FromWeekday: 'Sunday', UntilWeekday: 'Sunday' }], NY);
    const [day] = openIntervals(sunday, utc('2024-11-02T12:00:00Z'), utc('2024-11-05T12:00:00Z'));
    assert.deepEqual(day, { start: utc('2024-11-03T04:00:00Z'), end: utc('2024-11-04T05:00:00Z') });
  });

  test('localToInstant follows docs/architecture.md §5', () => {
    const local = (s: string): number => Date.parse(`${s}Z`);
    assert.equal(localToInstant(AMS, local('2024-03-31T02:30')), utc('2024-03-31T01:00:00Z'));
    assert.equal(localToInstant(AMS, local('2024-03-31T03:00')), utc('2024-03-31T01:00:00Z'));
    assert.equal(localToInstant(AMS, local('2024-03-31T01:59:59')), utc('2024-03-31T00:59:59Z'));
    assert.equal(localToInstant(AMS, local('2024-10-27T02:30')), utc('2024-10-27T00:30:00Z'));
    assert.equal(localToInstant(AMS, local('2024-10-27T03:00')), utc('2024-10-27T02:00:00Z'));
    assert.equal(localToInstant(NY, local('2024-03-10T02:59:59')), utc('2024-03-10T07:00:00Z'));
    assert.equal(localToInstant(NY, local('2024-11-03T01:30')), utc('2024-11-03T05:30:00Z'));
    assert.equal(localToInstant('+05:30', local('2024-11-03T01:30')), utc('2024-11-02T20:00:00Z'));
    assert.equal(localToInstant('UTC', local('2024-11-03T01:30')), utc('2024-11-03T01:30:00Z'));
  });
});

describe('horizon', () => {
  const w = win([{ FromDate: { ms: ams('2027-06-01T00:00'), zone: AMS } }]);
  const t = ams('2024-05-06T00:00');

  test('a window that does not open within two years has no next opening', () => {
    assert.equal(nextOpening(w, t), undefined);
    assert.equal(nextChange(w, t), undefined);
    assert.equal(nextOpening(w, t, 4 * 366 * DAY), ams('2027-06-01T00:00'));
  });

  test('the horizon is inclusive and a bad one means none', () => {
    const at = ams('2027-06-01T00:00');
    assert.equal(nextChange(w, t, at - t), at);
    assert.equal(nextChange(w, t, at - t - 1), undefined);
    assert.equal(nextChange(w, t, -5), undefined);
    assert.equal(nextChange(w, t, Number.NaN), undefined);
    assert.equal(nextChange(w, t, Number.POSITIVE_INFINITY), at, 'clamped to a bounded horizon, not refused');
    assert.throws(() => nextChange(w, Number.NaN), RangeError);
    assert.throws(() => isOpen(w, Number.POSITIVE_INFINITY), RangeError);
  });

  test('nextChange over the whole horizon stays fast', () => {
    const always = win([{}, { FromMonth: 1, UntilMonth: 6 }], NY);
    const business = win(
      [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '08:00', UntilTime: '18:00' }],
      AMS,
      { disabledDuring: win([{ FromMonth: 12, UntilMonth: 12, FromDayOfMonth: 24, UntilDayOfMonth: 26 }]) },
    );
    const start = performance.now();
    for (let i = 0; i < 20; i++) {
      assert.equal(nextChange(always, t + i * 3_600_000), undefined);
      assert.equal(nextChange(win([]), t + i), undefined);
      assert.notEqual(nextChange(business, t + i * 3_600_000), undefined);
    }
    const perCall = (performance.now() - start) / 60;
    assert.ok(perCall < 20, `${perCall.toFixed(2)} ms per call`); // generous: shared CI machines
    assert.ok(HORIZON_MS >= 2 * 365 * DAY);
  });
});

describe('loadWindow', () => {
  const stored = (key: string, data: Record<string, unknown>): StoredObject => ({
    uniqueId: 1,
    type: 'TimeWindow',
    key,
    partition: key.split('.')[0] as string,
    data,
    protection: null,
    creationTime: 0,
    modificationTime: 0,
  });
  // Only getObject is used; the rest of the Store is not needed here.
  const fakeStore = (objects: StoredObject[]): Store =>
    ({
      getObject: async (type: string, key: string) => objects.find((o) => o.type === type && o.key === key),
    }) as unknown as Store;

  test('reads the zone, elements and nested windows; a nested window without zone takes its user zone', async () => {
    const tx = fakeStore([
      stored('GLOBAL.Outer', {
        TimeZone: NY,
        EnabledDuring: 'GLOBAL.Weekdays',
        DisabledDuring: 'GLOBAL.Lunch',
        Elements: [{ FromTime: '08:00', UntilTime: '18:00', FromDate: { ms: 5, zone: 'UTC' }, FromMonth: null }],
      }),
      stored('GLOBAL.Weekdays', { Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }] }),
      stored('GLOBAL.Lunch', { TimeZone: AMS, Elements: [] }),
    ]);
    const w = await loadWindow(tx, 'GLOBAL.Outer', 'UTC');
    assert.equal(w?.zone, NY);
    assert.equal(w?.elements[0]?.FromTime, '08:00');
    assert.deepEqual(w?.elements[0]?.FromDate, { ms: 5, zone: 'UTC' });
    assert.equal(w?.elements[0]?.FromMonth, null);
    assert.equal(w?.enabledDuring?.zone, NY);
    assert.equal(w?.disabledDuring?.zone, AMS);
    assert.equal((await loadWindow(tx, 'GLOBAL.Weekdays', 'Asia/Tokyo'))?.zone, 'Asia/Tokyo');
    assert.equal(await loadWindow(tx, 'GLOBAL.Missing', 'UTC'), undefined);
  });

  test('a cycle or a chain deeper than 8 is cut: that reference does not restrict', async () => {
    const tx = fakeStore([
      stored('GLOBAL.A', { EnabledDuring: 'GLOBAL.B', Elements: [{}] }),
      stored('GLOBAL.B', { EnabledDuring: 'GLOBAL.A', DisabledDuring: 'GLOBAL.A', Elements: [{}] }),
      ...Array.from({ length: 12 }, (_, i) =>
        stored(`GLOBAL.N${i}`, { EnabledDuring: `GLOBAL.N${i + 1}`, Elements: [{}] }),
      ),
    ]);
    const a = await loadWindow(tx, 'GLOBAL.A', 'UTC');
    assert.equal(a?.enabledDuring?.elements.length, 1);
    assert.equal(a?.enabledDuring?.enabledDuring, undefined);
    assert.equal(a?.enabledDuring?.disabledDuring, undefined);
    assert.equal(isOpen(a as WindowSpec, 0), true);
    let depth = 0;
    for (let w = await loadWindow(tx, 'GLOBAL.N0', 'UTC'); w?.enabledDuring; w = w.enabledDuring) depth++;
    assert.equal(depth, 8);
  });
});
