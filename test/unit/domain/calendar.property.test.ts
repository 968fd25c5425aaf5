/**
 * Calendars, generated (fixed seeds, 1,000 cases each): FromWorkday / UntilWorkday against a day-by-day reference
 * for random working-day windows over the ten years 2020-2029, and isOpen, nextChange and openIntervals agreeing
 * with each other for random windows with holidays and shifting.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  isOpen,
  localToInstant,
  nextChange,
  openIntervals,
  type WindowElement,
  type WindowSpec,
} from '../../../src/domain/time-window.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const RUNS = 1000;
/** Fixed seeds keep runs repeatable; MILLRACE_PROPERTY_SEED tries others. */
const SEED = process.env.MILLRACE_PROPERTY_SEED ? Number(process.env.MILLRACE_PROPERTY_SEED) : undefined;
const ZONES = ['Europe/Amsterdam', 'America/New_York', 'UTC'];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const opt = <T>(arb: fc.Arbitrary<T>, nullPercent = 60): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: nullPercent }, { arbitrary: arb, weight: 100 - nullPercent });

/** Elements of calendar windows: weekday, month and day-of-month ranges, some time of day. */
const dayElementArb: fc.Arbitrary<WindowElement> = fc.record(
  {
    FromWeekday: opt(fc.constantFrom(...WEEKDAYS), 40),
    UntilWeekday: opt(fc.constantFrom(...WEEKDAYS), 40),
    FromMonth: opt(fc.integer({ min: 1, max: 12 }), 85),
    UntilMonth: opt(fc.integer({ min: 1, max: 12 }), 85),
    FromDayOfMonth: opt(fc.integer({ min: 1, max: 31 }), 75),
    UntilDayOfMonth: opt(fc.integer({ min: 1, max: 31 }), 75),
    FromTime: opt(fc.constantFrom('00:00', '01:30', '09:00', '22:00'), 70),
    UntilTime: opt(fc.constantFrom('02:00', '12:00', '17:30', '24:00'), 70),
  },
  { requiredKeys: [] },
);
const HOLIDAY_CODES = ['NL', 'US-NY', 'DE-BY', 'GB'];
/** A window that counts days: a few elements, now and then public holidays or DisabledDuring them. */
const calendarArb = (zone: string): fc.Arbitrary<WindowSpec> =>
  fc
    .tuple(
      fc.array(dayElementArb, { minLength: 0, maxLength: 3 }),
      opt(fc.constantFrom(...HOLIDAY_CODES), 70),
      opt(fc.constantFrom(...HOLIDAY_CODES), 50),
    )
    .map(([elements, holidays, disabledBy]) => ({
      zone,
      elements,
      ...(holidays ? { holidays } : {}),
      ...(disabledBy ? { disabledDuring: { zone, elements: [], holidays: disabledBy } } : {}),
    }));

const position = opt(fc.oneof(fc.integer({ min: 1, max: 23 }), fc.integer({ min: -23, max: -1 })), 25);

/** Local day number of a calendar date, and the instant of a local midnight. */
const dayOf = (y: number, m: number, d: number) => Date.UTC(y, m - 1, d) / DAY;
const midnight = (zone: string, day: number) => localToInstant(zone, day * DAY);

/** The reference: whether `cal` is open at some instant of local day `day`, by looking at its open intervals. */
const counted = (cal: WindowSpec | undefined, zone: string, day: number): boolean => {
  if (!cal) return (((day + 3) % 7) + 7) % 7 < 5; // Monday to Friday
  return openIntervals(cal, midnight(zone, day), midnight(zone, day + 1)).length > 0;
};

describe('FromWorkday / UntilWorkday against a day-by-day reference, 2020-2029', () => {
  test('the days selected in a random month are exactly the working days at the positions asked for', () => {
    fc.assert(
      fc.property(
        fc
          .constantFrom(...ZONES)
          .chain((zone) =>
            fc.tuple(
              fc.constant(zone),
              opt(calendarArb(zone), 20),
              position,
              position,
              fc.integer({ min: 2020 * 12, max: 2029 * 12 + 11 }),
            ),
          ),
        ([zone, workdays, from, until, monthIndex]) => {
          const year = Math.floor(monthIndex / 12);
          const month = (monthIndex % 12) + 1;
          const first = dayOf(year, month, 1);
          const next = month === 12 ? dayOf(year + 1, 1, 1) : dayOf(year, month + 1, 1);
          // Reference: list the working days one by one, then pick positions; 1-based, clamped into 1..n.
          const work: number[] = [];
          for (let d = first; d < next; d++) if (counted(workdays ?? undefined, zone, d)) work.push(d);
          const n = work.length;
          const pos = (v: number) => (v > 0 ? Math.min(v, n) : Math.max(n + 1 + v, 1));
          const lo = from == null ? 1 : pos(from);
          const hi = until == null ? n : pos(until);
          // Neither end set: no restriction at all, every day of the month.
          const all = Array.from({ length: next - first }, (_, i) => first + i);
          const expected = from == null && until == null ? all : work.filter((_, i) => i + 1 >= lo && i + 1 <= hi);
          // The window: open 10:00-11:00 on the selected days (away from every DST change, which happen at night).
          const w: WindowSpec = {
            zone,
            elements: [{ FromWorkday: from, UntilWorkday: until, FromTime: '10:00', UntilTime: '11:00' }],
            ...(workdays ? { workdays } : {}),
          };
          // Each opening is its day's 10:00-11:00 local: its start read with the month's first offset (within an
          // hour of that day's) gives the day.
          const got = openIntervals(w, midnight(zone, first), midnight(zone, next)).map((i) =>
            Math.floor((i.start + (first * DAY - midnight(zone, first))) / DAY),
          );
          assert.deepEqual(got, expected, `month ${year}-${month} in ${zone}: positions ${from}..${until}`);
        },
      ),
      { numRuns: RUNS, seed: SEED ?? 20270104 },
    );
  });
});

/** Windows with holidays, working days and shifting: the elements of the calendar windows, plus a shift. */
const shiftingWindowArb: fc.Arbitrary<WindowSpec> = fc.constantFrom(...ZONES).chain((zone) =>
  fc
    .tuple(
      fc.array(
        fc.tuple(dayElementArb, position, position).map(([e, f, u]) => ({ ...e, FromWorkday: f, UntilWorkday: u })),
        { maxLength: 2 },
      ),
      opt(fc.constantFrom(...HOLIDAY_CODES), 60),
      opt(calendarArb(zone), 40),
      opt(
        fc.tuple(
          calendarArb(zone),
          fc.oneof(
            fc.integer({ min: -3, max: 3 }).filter((n) => n !== 0),
            fc.constantFrom(-31, 31, -10, 10),
          ),
        ),
        30,
      ),
      opt(calendarArb(zone), 75),
    )
    .map(([elements, holidays, workdays, shift, disabledDuring]) => ({
      zone,
      elements,
      ...(holidays ? { holidays } : {}),
      ...(workdays ? { workdays } : {}),
      ...(shift ? { shiftWhen: shift[0], shiftWorkdays: shift[1] } : {}),
      ...(disabledDuring ? { disabledDuring } : {}),
    })),
);
const instantArb = fc
  .integer({ min: Date.UTC(2020, 0, 1) / HOUR, max: Date.UTC(2029, 11, 1) / HOUR })
  .chain((h) => fc.integer({ min: -30, max: 30 }).map((m) => h * HOUR + m * 60_000));

describe('isOpen, nextChange and openIntervals agree with holidays and shifting', () => {
  test('membership, boundaries and the next change over three weeks around a random instant', () => {
    let shiftedCases = 0;
    fc.assert(
      fc.property(
        shiftingWindowArb,
        instantArb,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
        (w, t, fractions) => {
          const from = t - 7 * DAY;
          const to = t + 14 * DAY;
          const iv = openIntervals(w, from, to);
          const inside = (x: number) => iv.some((i) => i.start <= x && x < i.end);
          for (const i of iv) {
            assert.ok(i.start < i.end);
            for (const x of [i.start, i.end - 1])
              assert.equal(isOpen(w, x), true, `open at ${new Date(x).toISOString()}`);
            if (i.start > from)
              assert.equal(isOpen(w, i.start - 1), false, `closed before ${new Date(i.start).toISOString()}`);
            if (i.end < to) assert.equal(isOpen(w, i.end), false, `closed at ${new Date(i.end).toISOString()}`);
          }
          for (const f of fractions) {
            const x = from + Math.floor(f * (to - from - 1));
            assert.equal(isOpen(w, x), inside(x), `at ${new Date(x).toISOString()}`);
          }
          // The next change after t is the first interval boundary after t, when one lies within the range.
          const boundaries = iv.flatMap((i) => [i.start, i.end]).filter((b) => b > t && b < to);
          const change = nextChange(w, t, to - t - 1);
          assert.equal(change, boundaries[0], `next change after ${new Date(t).toISOString()}`);
          if (w.shiftWhen && iv.length > 0) shiftedCases++;
        },
      ),
      { numRuns: RUNS, seed: SEED ?? 20261231 },
    );
    // The property says something about shifting only when shifted windows do open.
    assert.ok(shiftedCases >= RUNS / 10, `only ${shiftedCases} shifted windows opened`);
  });
});
