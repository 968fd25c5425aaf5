/**
 * Time windows, generated: windows in Europe/Amsterdam and America/New_York, instants around DST changes, leap days
 * and month ends. isOpen is checked against a slow, independent reference written with Temporal (calendar maths by
 * PlainDate, DST by Temporal's own disambiguation and transition search); nextChange, nextOpening and openIntervals
 * are checked against isOpen.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import {
  isOpen,
  nextChange,
  nextOpening,
  openIntervals,
  type WindowElement,
  type WindowSpec,
} from '../../../src/domain/time-window.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const ZONES = ['Europe/Amsterdam', 'America/New_York'];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
/** Cases per property: fast-check draws a new seed each run, so CI runs add up; MILLRACE_PROPERTY_RUNS digs deeper. */
const RUNS = Number(process.env.MILLRACE_PROPERTY_RUNS ?? 120);

// ---------------------------------------------------------------------------------------------
// Generators.

/** Instants near which things happen: DST changes in both zones, leap days, month and year ends. */
const ANCHORS = [
  '2024-03-10T07:00:00Z', // New York spring forward
  '2024-11-03T06:00:00Z', // New York fall back
  '2024-03-31T01:00:00Z', // Amsterdam spring forward
  '2024-10-27T01:00:00Z', // Amsterdam fall back
  '2025-03-09T07:00:00Z',
  '2025-10-26T01:00:00Z',
  '2024-02-29T12:00:00Z',
  '2024-02-28T23:30:00Z',
  '2025-02-28T12:00:00Z',
  '2024-04-30T22:00:00Z',
  '2024-12-31T23:00:00Z',
  '2025-01-31T12:00:00Z',
].map((s) => Date.parse(s));

const instantArb = fc
  .tuple(
    fc.constantFrom(...ANCHORS),
    fc.oneof(
      // within 3 hours of the anchor, on the quarter hour or just before it: the DST gap or overlap itself
      fc.tuple(fc.integer({ min: -12, max: 12 }), fc.constantFrom(0, -1)).map(([q, e]) => q * 15 * 60_000 + e),
      fc.integer({ min: -4 * 24, max: 4 * 24 }).map((h) => h * HOUR), // on the hour: where boundaries are
      fc.integer({ min: -4 * 96, max: 4 * 96 }).map((q) => q * 15 * 60_000),
      fc.integer({ min: -4 * DAY, max: 4 * DAY }),
    ),
  )
  .map(([a, d]) => a + d);

/** Null (not restricted) `nullPercent` % of the time. */
const opt = <T>(arb: fc.Arbitrary<T>, nullPercent = 60): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: fc.constant(null), weight: nullPercent }, { arbitrary: arb, weight: 100 - nullPercent });
const two = (n: number): string => String(n).padStart(2, '0');
// Times in and around the DST gaps and overlaps of both zones, plus any quarter hour.
const timeArb = fc.oneof(
  fc.constantFrom('00:00', '01:00', '01:30', '02:00', '02:30', '03:00', '03:30', '12:00', '23:00', '23:59:59'),
  fc.integer({ min: 0, max: 95 }).map((q) => `${two(Math.floor(q / 4))}:${two((q % 4) * 15)}`),
);
const untilTimeArb = fc.oneof(timeArb, fc.constant('24:00'));
const dateArb = fc
  .tuple(fc.constantFrom(...ANCHORS), fc.integer({ min: -40, max: 40 }), fc.constantFrom(...ZONES, 'UTC'))
  .map(([a, d, zone]) => ({ ms: a + d * DAY, zone }));

/** Mostly sparse elements: each restriction is present now and then, as in real windows. */
const elementArb: fc.Arbitrary<WindowElement> = fc.record(
  {
    FromDate: opt(dateArb),
    UntilDate: opt(dateArb),
    FromMonth: opt(fc.integer({ min: 1, max: 12 })),
    UntilMonth: opt(fc.integer({ min: 1, max: 12 })),
    FromDayOfMonth: opt(fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(28, 29, 30, 31))),
    UntilDayOfMonth: opt(fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(28, 29, 30, 31))),
    DayOfMonthOffset: opt(fc.integer({ min: -31, max: 31 })),
    FromWeekday: opt(fc.constantFrom(...WEEKDAYS)),
    UntilWeekday: opt(fc.constantFrom(...WEEKDAYS)),
    WeekdayOffset: opt(fc.integer({ min: -31, max: 31 })),
    FromTime: opt(timeArb, 30),
    UntilTime: opt(untilTimeArb, 30),
    TimeOffsetHours: opt(fc.oneof(fc.integer({ min: -23, max: 23 }), fc.constantFrom(-23, 23)), 75),
  },
  { requiredKeys: [] },
);

const leafArb: fc.Arbitrary<WindowSpec> = fc.record({
  zone: fc.constantFrom(...ZONES),
  elements: fc.array(elementArb, { maxLength: 3 }),
});

const windowArb: fc.Arbitrary<WindowSpec> = fc
  .tuple(leafArb, fc.option(leafArb, { nil: undefined }), fc.option(leafArb, { nil: undefined }))
  .map(([w, enabledDuring, disabledDuring]) => ({
    ...w,
    ...(enabledDuring ? { enabledDuring } : {}),
    ...(disabledDuring ? { disabledDuring } : {}),
  }));

/** The DST changes of 2024-2025 with their zone, and windows in that zone whose times cluster around the change. */
const DST_CHANGES: Array<[string, number]> = [
  ['America/New_York', Date.parse('2024-03-10T07:00:00Z')],
  ['America/New_York', Date.parse('2024-11-03T06:00:00Z')],
  ['America/New_York', Date.parse('2025-03-09T07:00:00Z')],
  ['Europe/Amsterdam', Date.parse('2024-03-31T01:00:00Z')],
  ['Europe/Amsterdam', Date.parse('2024-10-27T01:00:00Z')],
  ['Europe/Amsterdam', Date.parse('2025-10-26T01:00:00Z')],
];
const nearChangeTimeArb = fc
  .integer({ min: 0, max: 20 })
  .map((q) => `${two(Math.floor(q / 4) + 0)}:${two((q % 4) * 15)}`) // 00:00 .. 05:00
  .chain((t) => fc.constantFrom(t, t.replace(/^00/, '23'))); // and the evening before
const dstElementArb: fc.Arbitrary<WindowElement> = fc.record(
  {
    FromTime: opt(nearChangeTimeArb, 10),
    UntilTime: opt(nearChangeTimeArb, 10),
    FromWeekday: opt(fc.constantFrom('Saturday', 'Sunday'), 70),
    TimeOffsetHours: opt(fc.integer({ min: -3, max: 3 }), 70),
  },
  { requiredKeys: [] },
);
const dstCaseArb = fc.tuple(fc.constantFrom(...DST_CHANGES), fc.array(dstElementArb, { minLength: 1, maxLength: 3 }));

/** Fractions at which to sample a stretch of time, besides its ends. */
const fractionsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 4, maxLength: 12 });

/** Instants in [a, b): a, b - 1 and the given fractions of the way. */
const samples = (a: number, b: number, fractions: number[]): number[] => {
  if (!(b > a)) return [];
  return [a, b - 1, ...fractions.map((f) => Math.min(b - 1, a + Math.floor(f * (b - a))))];
};

// ---------------------------------------------------------------------------------------------
// The reference: isOpen straight from the rules, with Temporal.

const TIME = /^(\d{2}):(\d{2})(?::(\d{2}))?$/;
const timeMs = (s: string): number => {
  const m = TIME.exec(s) as RegExpExecArray;
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3] ?? 0)) * 1000;
};

/** docs/architecture.md §5 with Temporal: the earlier instant of an overlap, the transition itself for a time in a gap. */
function refInstant(local: Temporal.PlainDateTime, zone: string): number {
  const earlier = local.toZonedDateTime(zone, { disambiguation: 'earlier' });
  if (Temporal.PlainDateTime.compare(earlier.toPlainDateTime(), local) === 0) return earlier.epochMilliseconds;
  // In a gap 'earlier' lands before the transition; the first valid instant is the transition after it.
  const transition = earlier.getTimeZoneTransition('next');
  assert.ok(transition);
  return transition.epochMilliseconds;
}

const inRange = (from: number | null | undefined, until: number | null | undefined, min: number, max: number) => {
  return (v: number): boolean => {
    if (from == null && until == null) return true;
    const f = from ?? min;
    const u = until ?? max;
    return f <= u ? v >= f && v <= u : v >= f || v <= u;
  };
};

function refSelects(e: WindowElement, zone: string, d: Temporal.PlainDate): boolean {
  const date = (ms: number): Temporal.PlainDate =>
    Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone).toPlainDate();
  if (e.FromDate && Temporal.PlainDate.compare(d, date(e.FromDate.ms)) < 0) return false;
  if (e.UntilDate && Temporal.PlainDate.compare(d, date(e.UntilDate.ms)) > 0) return false;
  if (!inRange(e.FromMonth, e.UntilMonth, 1, 12)(d.month)) return false;
  if (e.FromDayOfMonth != null || e.UntilDayOfMonth != null) {
    const shifted = d.subtract({ days: e.DayOfMonthOffset ?? 0 });
    const last = shifted.daysInMonth;
    const from = Math.min(e.FromDayOfMonth ?? 1, last);
    const until = Math.min(e.UntilDayOfMonth ?? last, last);
    const wraps = e.FromDayOfMonth != null && e.UntilDayOfMonth != null && e.FromDayOfMonth > e.UntilDayOfMonth;
    const dom = shifted.day;
    if (wraps ? !(dom >= from || dom <= until) : !(dom >= from && dom <= until)) return false;
  }
  const wd = (name: string | null | undefined): number | null => (name == null ? null : WEEKDAYS.indexOf(name) + 1);
  const weekday = d.subtract({ days: e.WeekdayOffset ?? 0 }).dayOfWeek; // 1 = Monday
  return inRange(wd(e.FromWeekday), wd(e.UntilWeekday), 1, 7)(weekday);
}

function refElementOpen(e: WindowElement, zone: string, t: number): boolean {
  const today = Temporal.Instant.fromEpochMilliseconds(t).toZonedDateTimeISO(zone).toPlainDate();
  const from = e.FromTime == null ? 0 : timeMs(e.FromTime);
  const until = e.UntilTime == null ? DAY : timeMs(e.UntilTime);
  const shift = (e.TimeOffsetHours ?? 0) * HOUR;
  const start = from + shift;
  const end = (from < until ? until : until + DAY) + shift;
  // An element day's interval lies within [D - 23 h, D + 71 h): days from 3 before to 1 after cover it.
  for (let k = -4; k <= 2; k++) {
    const d = today.add({ days: k });
    if (!refSelects(e, zone, d)) continue;
    const midnight = d.toPlainDateTime();
    const s = refInstant(midnight.add({ milliseconds: start }), zone);
    const x = refInstant(midnight.add({ milliseconds: end }), zone);
    if (s <= t && t < x) return true;
  }
  return false;
}

function refOpen(w: WindowSpec, t: number): boolean {
  if (!w.elements.some((e) => refElementOpen(e, w.zone, t))) return false;
  if (w.enabledDuring && !refOpen(w.enabledDuring, t)) return false;
  if (w.disabledDuring && refOpen(w.disabledDuring, t)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Properties.

describe('time windows (generated)', () => {
  test('isOpen agrees with the Temporal reference', () => {
    fc.assert(
      fc.property(windowArb, fc.array(instantArb, { minLength: 1, maxLength: 4 }), (w, ts) => {
        for (const t of ts) assert.equal(isOpen(w, t), refOpen(w, t), `at ${new Date(t).toISOString()}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('the boundaries of openIntervals agree with the Temporal reference', () => {
    fc.assert(
      fc.property(windowArb, fc.constantFrom(...ANCHORS), (w, anchor) => {
        const from = anchor - 2 * DAY;
        const to = anchor + 2 * DAY;
        for (const { start, end } of openIntervals(w, from, to)) {
          const at = (t: number): string => `at ${new Date(t).toISOString()}`;
          assert.equal(refOpen(w, start), true, at(start));
          assert.equal(refOpen(w, end - 1), true, at(end - 1));
          if (start > from) assert.equal(refOpen(w, start - 1), false, at(start - 1));
          if (end < to) assert.equal(refOpen(w, end), false, at(end));
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('around DST changes, isOpen and the interval boundaries agree with the Temporal reference', () => {
    fc.assert(
      fc.property(dstCaseArb, fc.integer({ min: -16, max: 16 }), ([[zone, change], elements], q) => {
        const w: WindowSpec = { zone, elements };
        const at = (t: number): string => `at ${new Date(t).toISOString()}`;
        for (const t of [change + q * 15 * 60_000, change + q * 15 * 60_000 - 1])
          assert.equal(isOpen(w, t), refOpen(w, t), at(t));
        const from = change - DAY;
        const to = change + DAY;
        for (const { start, end } of openIntervals(w, from, to)) {
          assert.equal(refOpen(w, start), true, at(start));
          assert.equal(refOpen(w, end - 1), true, at(end - 1));
          if (start > from) assert.equal(refOpen(w, start - 1), false, at(start - 1));
          if (end < to) assert.equal(refOpen(w, end), false, at(end));
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('nextChange: constant on [t, c), different at c', () => {
    fc.assert(
      fc.property(
        windowArb,
        instantArb,
        fc.constantFrom(2 * DAY, 45 * DAY, 2 * 366 * DAY),
        fractionsArb,
        (w, t, horizon, fractions) => {
          const open = isOpen(w, t);
          const c = nextChange(w, t, horizon);
          if (c === undefined) {
            for (const s of samples(t, t + horizon + 1, fractions)) assert.equal(isOpen(w, s), open);
            return;
          }
          assert.ok(c > t && c <= t + horizon, 'within the horizon');
          assert.notEqual(isOpen(w, c), open, 'changes at c');
          for (const s of samples(t, c, fractions)) assert.equal(isOpen(w, s), open, `same at ${s - t} ms after t`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('nextOpening: open there, closed before it, t itself exactly when open at t', () => {
    fc.assert(
      fc.property(
        windowArb,
        instantArb,
        fc.constantFrom(3 * DAY, 2 * 366 * DAY),
        fractionsArb,
        (w, t, h, fractions) => {
          const o = nextOpening(w, t, h);
          assert.equal(o === t, isOpen(w, t));
          if (o === undefined) {
            for (const s of samples(t, t + h + 1, fractions)) assert.equal(isOpen(w, s), false);
            return;
          }
          assert.ok(o >= t && o <= t + h);
          assert.equal(isOpen(w, o), true);
          for (const s of samples(t, o, fractions)) assert.equal(isOpen(w, s), false);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('openIntervals: sorted, disjoint, not touching, and consistent with isOpen', () => {
    fc.assert(
      fc.property(windowArb, instantArb, fc.integer({ min: 1, max: 10 * DAY }), fractionsArb, (w, from, len, fr) => {
        const to = from + len;
        const iv = openIntervals(w, from, to);
        let previousEnd = Number.NEGATIVE_INFINITY;
        for (const { start, end } of iv) {
          assert.ok(start >= from && end <= to && start < end, 'inside [from, to) and not empty');
          assert.ok(start > previousEnd, 'sorted, disjoint and not touching');
          previousEnd = end;
          // the boundaries are real changes, except where the range cuts an interval
          assert.equal(isOpen(w, start), true);
          assert.equal(isOpen(w, end - 1), true);
          if (start > from) assert.equal(isOpen(w, start - 1), false);
          if (end < to) assert.equal(isOpen(w, end), false);
        }
        for (const s of samples(from, to, fr)) {
          const inside = iv.some((i) => i.start <= s && s < i.end);
          assert.equal(inside, isOpen(w, s), `at ${s - from} ms after from`);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('walking nextChange from change to change visits exactly the interval boundaries', () => {
    fc.assert(
      fc.property(windowArb, instantArb, (w, from) => {
        const to = from + 6 * DAY;
        const boundaries = openIntervals(w, from, to)
          .flatMap((i) => [i.start, i.end])
          .filter((b) => b > from && b < to);
        const walked: number[] = [];
        for (let c = nextChange(w, from, to - from - 1); c !== undefined; c = nextChange(w, c, to - c - 1)) {
          walked.push(c);
          assert.ok(walked.length <= boundaries.length, 'no extra changes');
        }
        assert.deepEqual(walked, boundaries);
      }),
      { numRuns: RUNS },
    );
  });
});
