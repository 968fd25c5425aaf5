/**
 * Calendars in time windows (docs/architecture.md §5a): public holidays, working days and FromWorkday /
 * UntilWorkday, and calendar shifting, on known dates: the Netherlands' 2027 calendar, a holiday on a weekend,
 * shifts forward and back across month and year ends and a DST change; and the loader on stored circles.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  isOpen,
  nextChange,
  openIntervals,
  type WindowElement,
  type WindowSpec,
} from '../../../src/domain/time-window.ts';
import { holidayCodeProblem } from '../../../src/domain/holidays.ts';
import { loadWindow } from '../../../src/engine/windows.ts';
import type { StoredObject, Store } from '../../../src/store/store.ts';
import { parseDate } from '../../../src/time/date-format.ts';

const AMS = 'Europe/Amsterdam';
const ams = (iso: string): number => parseDate(iso, AMS).ms;
const win = (elements: WindowElement[], more: Partial<WindowSpec> = {}): WindowSpec => ({
  zone: AMS,
  elements,
  ...more,
});
const holidays = (code: string): WindowSpec => win([], { holidays: code });
const WEEKDAYS: WindowElement = { FromWeekday: 'Monday', UntilWeekday: 'Friday' };
/** Working days in the Netherlands: Monday to Friday, not on a public holiday. */
const NL_WORKDAYS = win([WEEKDAYS], { disabledDuring: holidays('NL') });
const local = (ms: number) => new Date(ms).toLocaleString('sv-SE', { timeZone: AMS }).slice(0, 16);
/**
 * The openings within [from, to) in Amsterdam time: `YYYY-MM-DD HH:MM-HH:MM` when one ends the day it starts or at
 * the next midnight, else `YYYY-MM-DD HH:MM/YYYY-MM-DD HH:MM`.
 */
const openings = (w: WindowSpec, from: string, to: string): string[] =>
  openIntervals(w, ams(from), ams(to)).map((i) => {
    const s = local(i.start);
    const e = local(i.end);
    const sameDay = e.slice(0, 10) === s.slice(0, 10) || (e.endsWith('00:00') && i.end - i.start <= 86_400_000);
    return sameDay ? `${s}-${e.slice(11)}` : `${s}/${e}`;
  });

describe('public holidays', () => {
  test('open all day in the window zone on public holidays only (not on bank or school days)', () => {
    assert.deepEqual(openings(holidays('NL'), '2027-04-01T00:00', '2027-05-10T00:00'), [
      '2027-04-27 00:00-00:00', // King's Day, a Tuesday
      '2027-05-06 00:00-00:00', // Ascension Day; Liberation Day (5 May) is not public in 2027
    ]);
    assert.deepEqual(openings(holidays('NL'), '2027-12-24T00:00', '2028-01-02T00:00'), [
      '2027-12-25 00:00/2027-12-27 00:00', // Christmas on a Saturday and Boxing Day on a Sunday: one opening
      '2028-01-01 00:00-00:00',
    ]);
  });

  test('a region: US-NY has its own public holidays, and a substitute day for a Saturday one', () => {
    const ny = win([], { zone: 'America/New_York', holidays: 'US-NY' });
    const t = (iso: string) => parseDate(iso, 'America/New_York').ms;
    assert.equal(isOpen(ny, t('2026-02-12T09:00')), true); // Lincoln's Birthday (New York)
    assert.equal(isOpen(holidays('US'), ams('2026-02-12T18:00')), false);
    assert.equal(isOpen(ny, t('2026-07-03T23:59')), true); // substitute for Saturday 4 July
    assert.equal(isOpen(ny, t('2026-07-04T00:00')), true);
    assert.equal(isOpen(ny, t('2026-07-05T00:00')), false);
  });

  test('holidays are a union with the elements and obey DisabledDuring like any opening', () => {
    const w = win([{ FromWeekday: 'Monday', UntilWeekday: 'Monday', FromTime: '09:00', UntilTime: '10:00' }], {
      holidays: 'NL',
      disabledDuring: win([{ FromTime: '12:00', UntilTime: '13:00' }]),
    });
    assert.deepEqual(openings(w, '2027-04-26T00:00', '2027-04-28T00:00'), [
      '2027-04-26 09:00-10:00',
      '2027-04-27 00:00-12:00',
      '2027-04-27 13:00-00:00',
    ]);
  });

  test('codes: country, country-region; unknown ones are named', () => {
    for (const ok of ['NL', 'US-NY', 'DE-BY']) assert.equal(holidayCodeProblem(ok), undefined);
    assert.match(holidayCodeProblem('XX') ?? '', /country "XX"/);
    assert.match(holidayCodeProblem('US-ZZ') ?? '', /region "ZZ"/);
    assert.match(holidayCodeProblem('nl') ?? '', /not a country code/);
  });
});

describe('working days', () => {
  const nth = (from: number, until: number) =>
    win([{ FromWorkday: from, UntilWorkday: until, FromTime: '08:00', UntilTime: '09:00' }], {
      workdays: NL_WORKDAYS,
    });

  test('NL 2027: the first working day of January is Monday 4 January (1 January is a holiday)', () => {
    assert.deepEqual(openings(nth(1, 1), '2027-01-01T00:00', '2027-02-01T00:00'), ['2027-01-04 08:00-09:00']);
  });

  test("NL 2027: the last working day of April is Friday 30 April (King's Day, Tuesday 27, does not move it)", () => {
    assert.deepEqual(openings(nth(-1, -1), '2027-04-01T00:00', '2027-05-01T00:00'), ['2027-04-30 08:00-09:00']);
    assert.deepEqual(openings(nth(-3, -2), '2027-04-01T00:00', '2027-05-01T00:00'), [
      '2027-04-28 08:00-09:00',
      '2027-04-29 08:00-09:00',
    ]);
  });

  test('a holiday on a weekend takes no working day: December 2027 has 23, the 23rd is the 31st, -23 the 1st', () => {
    assert.deepEqual(openings(nth(23, 23), '2027-12-01T00:00', '2028-01-01T00:00'), ['2027-12-31 08:00-09:00']);
    assert.deepEqual(openings(nth(-23, -23), '2027-12-01T00:00', '2028-01-01T00:00'), ['2027-12-01 08:00-09:00']);
  });

  test('a position past the working days of the month is clamped; one end alone leaves the other open', () => {
    // February 2027: 20 weekdays, no holiday. 23 means the last, 22.. the last alone.
    assert.deepEqual(openings(nth(23, 23), '2027-02-01T00:00', '2027-03-01T00:00'), ['2027-02-26 08:00-09:00']);
    const firstTwo = win([{ UntilWorkday: 2 }]); // Monday to Friday by default
    assert.deepEqual(openings(firstTwo, '2027-02-01T00:00', '2027-03-01T00:00'), ['2027-02-01 00:00/2027-02-03 00:00']);
    const fromLastTwo = win([{ FromWorkday: -2 }]);
    assert.deepEqual(openings(fromLastTwo, '2027-02-01T00:00', '2027-03-01T00:00'), [
      '2027-02-25 00:00/2027-02-27 00:00',
    ]);
    // A From after the Until selects nothing (no wrapping within a month).
    assert.deepEqual(openings(win([{ FromWorkday: 5, UntilWorkday: 2 }]), '2027-02-01T00:00', '2027-03-01T00:00'), []);
  });

  test('FromWorkday intersects with the other restrictions of the element', () => {
    // The first five working days, but only Tuesdays: one day.
    const w = win([{ FromWorkday: 1, UntilWorkday: 5, FromWeekday: 'Tuesday', UntilWeekday: 'Tuesday' }], {
      workdays: NL_WORKDAYS,
    });
    assert.deepEqual(openings(w, '2027-01-01T00:00', '2027-02-01T00:00'), ['2027-01-05 00:00-00:00']);
  });
});

describe('calendar shifting', () => {
  const WEEKEND = win([{ FromWeekday: 'Saturday', UntilWeekday: 'Sunday' }]);
  const LAST_DAY: WindowElement = { FromDayOfMonth: 31, UntilDayOfMonth: 31, FromTime: '18:00', UntilTime: '19:00' };

  test('forward across a month end and a year end, keeping the time of day', () => {
    const w = win([LAST_DAY], { shiftWhen: WEEKEND, shiftWorkdays: 1 });
    // Sunday 31 January 2027 → Monday 1 February; Sunday 31 December 2028 → Monday 1 January 2029.
    assert.deepEqual(openings(w, '2027-01-20T00:00', '2027-02-10T00:00'), ['2027-02-01 18:00-19:00']);
    assert.deepEqual(openings(w, '2028-12-20T00:00', '2029-01-10T00:00'), ['2029-01-01 18:00-19:00']);
    // Friday 30 April 2027 is no weekend day: it stays.
    assert.deepEqual(openings(w, '2027-04-20T00:00', '2027-05-10T00:00'), ['2027-04-30 18:00-19:00']);
  });

  test('back across a year end: 1 January 2027, a holiday, moves to Thursday 31 December 2026', () => {
    const first = win([{ FromDayOfMonth: 1, UntilDayOfMonth: 1, FromTime: '07:00', UntilTime: '08:00' }], {
      shiftWhen: holidays('NL'),
      shiftWorkdays: -1,
    });
    assert.deepEqual(openings(first, '2026-12-01T12:00', '2027-02-10T00:00'), [
      '2026-12-31 07:00-08:00',
      '2027-02-01 07:00-08:00',
    ]);
    const t = ams('2026-12-31T07:30');
    assert.equal(isOpen(first, t), true);
    assert.equal(isOpen(first, ams('2027-01-01T07:30')), false);
    assert.equal(nextChange(first, ams('2026-12-30T12:00')), ams('2026-12-31T07:00'));
  });

  test('counted in Workdays: 3 working days later skips the weekend and a holiday', () => {
    // Friday 23 April 2027 + 3 NL working days: Monday 26, Wednesday 28 (27 is King's Day), Thursday 29.
    const w = win([{ FromDayOfMonth: 23, UntilDayOfMonth: 23 }], {
      shiftWhen: win([{ FromWeekday: 'Friday', UntilWeekday: 'Friday' }]),
      shiftWorkdays: 3,
      workdays: NL_WORKDAYS,
    });
    assert.deepEqual(openings(w, '2027-04-01T00:00', '2027-05-01T00:00'), ['2027-04-29 00:00-00:00']);
  });

  test('across the October DST change the time of day stays 10:00 local', () => {
    const w = win([{ FromDayOfMonth: 25, UntilDayOfMonth: 25, FromTime: '10:00', UntilTime: '11:00' }], {
      shiftWhen: WEEKEND,
      shiftWorkdays: 1,
    });
    const iv = openIntervals(w, ams('2026-10-20T00:00'), ams('2026-10-30T00:00'));
    // Sunday 25 October 2026 (the change) → Monday 26, 10:00 CET = 09:00 UTC.
    assert.deepEqual(
      iv.map((i) => [new Date(i.start).toISOString(), new Date(i.end).toISOString()]),
      [['2026-10-26T09:00:00.000Z', '2026-10-26T10:00:00.000Z']],
    );
  });

  test('EnabledDuring / DisabledDuring apply after shifting', () => {
    const moved = { shiftWhen: holidays('NL'), shiftWorkdays: -1 };
    const element: WindowElement = { FromDayOfMonth: 1, UntilDayOfMonth: 1 };
    // The opening moved to Thursday 31 December is disabled by a Thursday window; a Friday one leaves it.
    const thursday = win([{ FromWeekday: 'Thursday', UntilWeekday: 'Thursday' }]);
    const friday = win([{ FromWeekday: 'Friday', UntilWeekday: 'Friday' }]);
    assert.deepEqual(
      openings(win([element], { ...moved, disabledDuring: thursday }), '2026-12-20T00:00', '2027-01-10T00:00'),
      [],
    );
    assert.deepEqual(
      openings(win([element], { ...moved, disabledDuring: friday }), '2026-12-20T00:00', '2027-01-10T00:00'),
      ['2026-12-31 00:00-00:00'],
    );
  });

  test('a shift onto a day that never comes (no working day within a year) drops the opening', () => {
    // Always a ShiftWhen day, and Workdays never open: there is no working day to move to.
    const w = win([{ FromDayOfMonth: 5, UntilDayOfMonth: 5 }], {
      shiftWhen: win([{}]),
      shiftWorkdays: 1,
      workdays: win([]),
    });
    assert.deepEqual(openings(w, '2027-01-01T00:00', '2027-12-31T00:00'), []);
  });
});

describe('loadWindow reads the calendar fields and stops on stored circles', () => {
  const stored = (key: string, data: Record<string, unknown>): StoredObject => ({
    uniqueId: 1,
    type: 'TimeWindow',
    key,
    partition: 'GLOBAL',
    data,
    protection: null,
    creationTime: 0,
    modificationTime: 0,
  });
  // Only getObject is used; the rest of the Store is not needed here.
  const fakeStore = (objects: StoredObject[]): Store =>
    ({ getObject: async (_type: string, key: string) => objects.find((o) => o.key === key) }) as unknown as Store;

  test('Holidays, Workdays, ShiftWhen / ShiftWorkdays and the element fields', async () => {
    const tx = fakeStore([
      stored('GLOBAL.MonthEnd', {
        TimeZone: AMS,
        Elements: [{ FromWorkday: -1, UntilWorkday: -1 }],
        Workdays: 'GLOBAL.NLWork',
        ShiftWhen: 'GLOBAL.NLHolidays',
        ShiftWorkdays: -1,
      }),
      stored('GLOBAL.NLWork', { Elements: [WEEKDAYS], DisabledDuring: 'GLOBAL.NLHolidays' }),
      stored('GLOBAL.NLHolidays', { Holidays: 'NL', Elements: [] }),
    ]);
    const w = await loadWindow(tx, 'GLOBAL.MonthEnd', 'UTC');
    assert.equal(w?.shiftWorkdays, -1);
    assert.equal(w?.shiftWhen?.holidays, 'NL');
    assert.equal(w?.workdays?.zone, AMS);
    assert.equal(w?.workdays?.disabledDuring?.holidays, 'NL');
    assert.equal(w?.elements[0]?.FromWorkday, -1);
  });

  test('a circle stored through Workdays and ShiftWhen is cut, and the window still evaluates', async () => {
    const tx = fakeStore([
      stored('GLOBAL.A', {
        Elements: [{ FromWorkday: 1, UntilWorkday: 1 }],
        Workdays: 'GLOBAL.B',
        ShiftWhen: 'GLOBAL.B',
        ShiftWorkdays: 1,
      }),
      stored('GLOBAL.B', {
        Elements: [WEEKDAYS],
        Workdays: 'GLOBAL.A',
        ShiftWhen: 'GLOBAL.A',
        ShiftWorkdays: 2,
        EnabledDuring: 'GLOBAL.A',
      }),
    ]);
    const w = (await loadWindow(tx, 'GLOBAL.A', AMS)) as WindowSpec;
    assert.equal(w.workdays?.workdays, undefined); // B's reference back to A is dropped
    assert.equal(w.shiftWhen?.shiftWhen, undefined);
    // Its first working day, Monday 1 March, is a ShiftWhen day (B, weekdays): it moves to Tuesday 2 March.
    assert.deepEqual(openings(w, '2027-03-01T00:00', '2027-03-10T00:00'), ['2027-03-02 00:00-00:00']);
  });
});
