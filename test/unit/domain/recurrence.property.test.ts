/**
 * Recurrences, generated: frames in Europe/Amsterdam and America/New_York submitted near DST changes, month ends and
 * leap days. Checks the promises the engine relies on: occurrences strictly increase, a wall-clock series or a cron
 * never fires twice for one local time, filters hold, EndDate holds, nextOccurrence from any instant agrees with
 * walking the series, and occurrencesBetween agrees with nextOccurrence.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type FrameElement,
  type FrameSpec,
  firstOccurrence,
  nextOccurrence,
  occurrencesBetween,
} from '../../../src/domain/recurrence.ts';
import { isOpen, type WindowSpec } from '../../../src/domain/time-window.ts';
import { formatInstant } from '../../../src/time/date-format.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ZONES = ['Europe/Amsterdam', 'America/New_York'] as const;
/** Cases per property: fast-check draws a new seed each run, so CI runs add up; MILLRACE_PROPERTY_RUNS digs deeper. */
const RUNS = Number(process.env.MILLRACE_PROPERTY_RUNS ?? 60);
/** Occurrences walked per frame. */
const WALK = 25;

type Every = Extract<FrameElement, { kind: 'Every' }>;

// ---------------------------------------------------------------------------------------------
// Generators.

/** Instants near which things happen: DST changes in both zones, leap days, month ends. */
const ANCHORS = [
  '2024-03-10T07:00:00Z', // New York spring forward
  '2024-11-03T06:00:00Z', // New York fall back
  '2024-03-31T01:00:00Z', // Amsterdam spring forward
  '2024-10-27T01:00:00Z', // Amsterdam fall back
  '2025-03-09T07:00:00Z',
  '2025-10-26T01:00:00Z',
  '2024-02-29T12:00:00Z',
  '2024-01-31T12:00:00Z',
  '2025-12-31T23:00:00Z',
].map((s) => Date.parse(s));

const instantArb = fc
  .tuple(
    fc.constantFrom(...ANCHORS),
    fc.oneof(
      fc.integer({ min: -48, max: 48 }).map((q) => q * 15 * 60_000), // on the quarter hour: the DST night itself
      fc.integer({ min: -3 * DAY, max: 3 * DAY }),
    ),
  )
  .map(([a, d]) => a + d);

const hhmm = fc
  .tuple(fc.constantFrom(0, 1, 2, 3, 6, 12, 23), fc.constantFrom(0, 15, 30, 59))
  .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);

/** Windows the frames use, built in the frame's zone. */
const WINDOWS: Record<string, (zone: string) => WindowSpec> = {
  workdays: (zone) => ({
    zone,
    elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday', FromTime: '08:00', UntilTime: '17:00' }],
  }),
  night: (zone) => ({ zone, elements: [{ FromTime: '01:00', UntilTime: '04:00' }] }),
  weekend: (zone) => ({ zone, elements: [{ FromWeekday: 'Saturday', UntilWeekday: 'Sunday' }] }),
  monthEnd: (zone) => ({
    zone,
    elements: [{ FromDayOfMonth: 28, UntilDayOfMonth: 31, FromTime: '02:00', UntilTime: '03:00' }],
  }),
};
const windowArb = fc.constantFrom(...Object.keys(WINDOWS));

/** Job windows for SkipWhenClosed: wide ones, so that most frames still fire. */
const JOB_WINDOWS: Record<string, (zone: string) => WindowSpec> = {
  weekdays: (zone) => ({ zone, elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }] }),
  daytime: (zone) => ({ zone, elements: [{ FromTime: '02:30', UntilTime: '22:00' }] }),
  notFirstOfMonth: (zone) => ({ zone, elements: [{ FromDayOfMonth: 2, UntilDayOfMonth: 31 }] }),
};

const everyArb = (zone: string, units: readonly Every['unit'][]): fc.Arbitrary<Every> =>
  fc
    .record({
      unit: fc.constantFrom(...units),
      every: fc.integer({ min: 1, max: 3 }),
      preserveTimes: fc.boolean(),
      startTime: fc.option(hhmm, { nil: null }),
      during: fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: windowArb, weight: 1 }),
    })
    .map(({ unit, every, preserveTimes, startTime, during }) => ({
      kind: 'Every',
      // minutes in useful steps; the others as drawn
      every: unit === 'Minutes' ? every * 20 : every,
      unit,
      preserveTimes,
      startTime,
      ...(during ? { during: (WINDOWS[during] as (z: string) => WindowSpec)(zone) } : {}),
    }));

const CRONS = [
  '30 2 * * *',
  '*/20 * * * *',
  '0 1-3 * * *',
  '15,45 1,2 * * 0',
  '0 0 * * 1-5',
  '*/7 2 * * *',
  '0 */10 1-3 * * *',
  '0 0 L * *',
] as const;

interface Case {
  frame: FrameSpec;
  submit: number;
  jobWindow?: WindowSpec;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    submit: instantArb,
    kind: fc.constantFrom('every', 'every', 'openings', 'cron'),
  })
  .chain(({ zone, submit, kind }) => {
    // mostly without an end date or a job window, so most frames do fire
    const end = fc.oneof(
      { arbitrary: fc.constant(null), weight: 3 },
      { arbitrary: fc.integer({ min: -DAY, max: 40 * DAY }).map((d) => submit + d), weight: 1 },
    );
    const skip = fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      { arbitrary: fc.constantFrom(...Object.keys(JOB_WINDOWS)), weight: 1 },
    );
    const elements: fc.Arbitrary<FrameElement[]> =
      kind === 'openings'
        ? fc
            .tuple(windowArb, fc.option(everyArb(zone, ['Hours', 'Days']), { nil: undefined }))
            .map(([w, e]) => [
              { kind: 'WindowOpenings', window: (WINDOWS[w] as (z: string) => WindowSpec)(zone) },
              ...(e ? [e] : []),
            ])
        : fc.array(everyArb(zone, ['Minutes', 'Hours', 'Days', 'Weeks', 'Months']), { minLength: 1, maxLength: 2 });
    return fc.record({ elements, cron: fc.constantFrom(...CRONS), end, skip }).map(({ elements, cron, end, skip }) => {
      const frame: FrameSpec = {
        zone,
        endDate: end,
        skipWhenClosed: skip !== undefined,
        elements: kind === 'cron' ? [] : elements,
        cron: kind === 'cron' ? cron : null,
      };
      return skip
        ? { frame, submit, jobWindow: (JOB_WINDOWS[skip] as (z: string) => WindowSpec)(zone) }
        : { frame, submit };
    });
  });

/** The anchor and the first WALK occurrences of a case. */
function walk(c: Case): { anchor: number | undefined; occ: number[] } {
  const anchor = firstOccurrence(c.frame, c.submit, c.jobWindow);
  const occ: number[] = [];
  let t = anchor;
  while (t !== undefined && occ.length < WALK) {
    occ.push(t);
    t = nextOccurrence(c.frame, anchor as number, t, c.jobWindow);
  }
  return { anchor, occ };
}

/** Whether every element steps in local wall-clock time (so each local time may occur once). */
const wallClock = (f: FrameSpec): boolean =>
  f.cron !== null ||
  f.elements.every((e) => e.kind === 'Every' && e.unit !== 'Minutes' && e.unit !== 'Hours' && e.preserveTimes);

// ---------------------------------------------------------------------------------------------
// Properties.

describe('recurrence properties', () => {
  test('the first occurrence is >= the submit time and the occurrences strictly increase', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { occ } = walk(c);
        if (occ.length > 0) assert.ok((occ[0] as number) >= c.submit);
        for (let i = 1; i < occ.length; i++) assert.ok((occ[i] as number) > (occ[i - 1] as number), `at ${i}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('a wall-clock series or a cron never fires twice for one local time', () => {
    fc.assert(
      fc.property(
        caseArb.filter((c) => wallClock(c.frame)),
        (c) => {
          const local = walk(c).occ.map((t) => formatInstant(t, c.frame.zone));
          assert.equal(new Set(local).size, local.length, local.join('\n'));
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('PreserveTimes daily series keep their local time except on a spring-forward day', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        instantArb,
        hhmm,
        fc.integer({ min: 1, max: 3 }),
        (zone, submit, start, n) => {
          const frame: FrameSpec = {
            zone,
            endDate: null,
            skipWhenClosed: false,
            elements: [{ kind: 'Every', every: n, unit: 'Days', preserveTimes: true, startTime: start }],
            cron: null,
          };
          const { occ } = walk({ frame, submit });
          assert.equal(occ.length, WALK);
          const times = occ.map((t) => formatInstant(t, zone).slice(11, 16));
          // 02:xx exists every day but the spring-forward one, where it moves to 03:00
          for (const t of times) assert.ok(t === start || t === '03:00', `${t} for ${start}`);
          assert.ok(times.filter((t) => t !== start).length <= 1);
          const days = occ.map((t) => formatInstant(t, zone).slice(0, 10));
          assert.equal(new Set(days).size, days.length);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('every occurrence is inside `during`, inside the job window when skipping, and not after EndDate', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        for (const t of walk(c).occ) {
          // with several elements an occurrence comes from one of them: at least one must account for it
          const fits = (e: FrameElement): boolean =>
            e.kind === 'Every' ? !e.during || isOpen(e.during, t) : isOpen(e.window, t) && !isOpen(e.window, t - 1);
          if (c.frame.elements.length > 0) assert.ok(c.frame.elements.some(fits), `${t} fits no element`);
          if (c.frame.skipWhenClosed && c.jobWindow) assert.ok(isOpen(c.jobWindow, t));
          if (c.frame.endDate !== null) assert.ok(t <= c.frame.endDate);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('nextOccurrence from any instant is the first occurrence of the walk after it', () => {
    fc.assert(
      fc.property(caseArb, fc.nat(), fc.double({ min: 0, max: 1, noNaN: true }), (c, i, frac) => {
        const { anchor, occ } = walk(c);
        if (anchor === undefined || occ.length < 2) return;
        const k = i % (occ.length - 1);
        const lo = occ[k] as number;
        const hi = occ[k + 1] as number;
        const after = lo + Math.floor((hi - lo - 1) * frac); // in [lo, hi)
        assert.equal(nextOccurrence(c.frame, anchor, after, c.jobWindow), hi);
      }),
      { numRuns: RUNS },
    );
  });

  test('occurrencesBetween agrees with iterating nextOccurrence', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 0, max: 10 * DAY }), fc.integer({ min: 1, max: 30 }), (c, span, cap) => {
        const anchor = firstOccurrence(c.frame, c.submit, c.jobWindow);
        if (anchor === undefined) return;
        const from = c.submit;
        const to = from + span;
        const expected: number[] = [];
        for (let t = nextOccurrence(c.frame, anchor, from, c.jobWindow); t !== undefined && t <= to; ) {
          if (expected.length === cap) break;
          expected.push(t);
          t = nextOccurrence(c.frame, anchor, t, c.jobWindow);
        }
        assert.deepEqual(occurrencesBetween(c.frame, anchor, from, to, cap, c.jobWindow), expected);
      }),
      { numRuns: RUNS },
    );
  });
});
