/**
 * The start gate of the forecast (src/domain/start-gate.ts), generated: one or two windows (a job's and a queue's),
 * in Amsterdam and New York, some with DisabledDuring, at instants around DST changes. firstOpenInstant and
 * lastOpenEnd are checked against a walk minute by minute with isOpen, and against each other: every instant from
 * lastOpenEnd(t) on starts at t or later, every open instant before it earlier.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { firstOpenInstant, lastOpenEnd } from '../../../src/domain/start-gate.ts';
import { isOpen, type WindowElement, type WindowSpec } from '../../../src/domain/time-window.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const RUNS = Number(process.env.MILLRACE_PROPERTY_RUNS ?? 60);
/** Around the end of summer time in both zones (Amsterdam 27 October, New York 3 November 2024). */
const BASE = Date.UTC(2024, 9, 24);

const time = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30))
  .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const element: fc.Arbitrary<WindowElement> = fc.record({
  FromWeekday: fc.constantFrom(null, ...WEEKDAYS),
  UntilWeekday: fc.constantFrom(null, ...WEEKDAYS),
  FromTime: time,
  UntilTime: time,
});
const window: fc.Arbitrary<WindowSpec> = fc
  .tuple(
    fc.constantFrom('Europe/Amsterdam', 'America/New_York'),
    fc.array(element, { minLength: 1, maxLength: 2 }),
    fc.option(fc.array(element, { minLength: 1, maxLength: 1 })),
  )
  .map(([zone, elements, disabled]) => ({
    zone,
    elements,
    ...(disabled ? { disabledDuring: { zone, elements: disabled } } : {}),
  }));
const instant = fc.integer({ min: 0, max: 14 * 24 * 60 }).map((m) => BASE + m * MINUTE);

/** The first minute >= t at which every window is open, within `days`; undefined when none. */
function bruteFirst(ws: readonly WindowSpec[], t: number, days: number): number | undefined {
  for (let x = t; x < t + days * DAY; x += MINUTE) if (ws.every((w) => isOpen(w, x))) return x;
  return undefined;
}

describe('start gate: the first instant all windows are open, and the last stretch before one', () => {
  test('firstOpenInstant is the first minute at which every window is open', () => {
    fc.assert(
      fc.property(fc.array(window, { minLength: 1, maxLength: 2 }), instant, (ws, t) => {
        const expected = bruteFirst(ws, t, 9);
        const got = firstOpenInstant(ws, t);
        if (expected !== undefined) assert.equal(got, expected);
        else assert.ok(got === undefined || got >= t + 9 * DAY, `${got}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('lastOpenEnd splits the instants before t into those that start before t and those that wait until t or later', () => {
    fc.assert(
      fc.property(fc.array(window, { minLength: 1, maxLength: 2 }), instant, (ws, t) => {
        const floor = t - 4 * DAY;
        const end = lastOpenEnd(ws, t, floor);
        let last: number | undefined;
        for (let x = t - MINUTE; x >= floor; x -= MINUTE)
          if (ws.every((w) => isOpen(w, x))) {
            last = x;
            break;
          }
        assert.equal(end, last === undefined ? undefined : last + MINUTE);
        if (end !== undefined) {
          const before = firstOpenInstant(ws, end - MINUTE);
          assert.ok(before !== undefined && before < t, 'open together just before the end');
          const after = firstOpenInstant(ws, end);
          assert.ok(after === undefined || after >= t, 'from the end on, nothing starts before t');
        }
      }),
      { numRuns: RUNS },
    );
  });

  test('no windows: every instant is open', () => {
    assert.equal(firstOpenInstant([], BASE), BASE);
    assert.equal(lastOpenEnd([], BASE, BASE - DAY), BASE);
  });
});
