import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatInstant, parseDate } from '../../../src/time/date-format.ts';

/**
 * The dashboard's dates (src/ui/static/app/dates.js, a plain browser module; Node has the same Intl): it places a
 * date the server wrote where the server means it, and a window's open periods on the days of its zone.
 */

// A path the type checker does not follow: the module is plain JavaScript without declarations.
const DATES = new URL('../../../src/ui/static/app/dates.js', import.meta.url).href;
// biome-ignore lint/suspicious/noExplicitAny: the module is untyped JavaScript
const dates: any = await import(DATES);

const ZONES = ['UTC', 'Europe/Amsterdam', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'];

test('a date the server writes is read as the server reads it, in any zone, DST changes included', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2099, 11, 31) }),
      fc.constantFrom(...ZONES),
      (ms, zone) => {
        const text = formatInstant(ms, zone);
        assert.equal(dates.parseWireDate(text), parseDate(text, 'UTC').ms, text);
      },
    ),
    // A fixed seed: the suite never depends on the draw (a new seed is tried by changing it, not by chance).
    { numRuns: 2000, seed: 20261126 },
  );
  // A fall-back night of the Chatham Islands (03:45 → 02:45): 02:45 is the earlier of the two, as the server reads it.
  const overlap = formatInstant(3037525200000, 'Pacific/Chatham');
  assert.equal(overlap, '2066/04/04 02:45:00,000 Pacific/Chatham');
  assert.equal(dates.parseWireDate(overlap), 3037525200000);
  // The hour that does not exist (spring forward) moves on, as the server has it.
  const gap = '2026/03/29 02:30:00,000 Europe/Amsterdam';
  assert.equal(dates.parseWireDate(gap), parseDate(gap, 'UTC').ms);
  assert.equal(dates.parseWireDate('2026-12-25T05:00:00.000Z'), Date.UTC(2026, 11, 25, 5));
  assert.equal(dates.parseWireDate('not a date'), null);
});

test("open days are the days of the window's zone on which it is open at some moment", () => {
  const ams = (d: number, h = 0) =>
    parseDate(`2026/12/${String(d).padStart(2, '0')} ${String(h).padStart(2, '0')}:00 Europe/Amsterdam`, 'UTC').ms;
  // Christmas and Boxing Day as one period ending at midnight (exclusive): two days, not three.
  assert.deepEqual(
    [...dates.openDays([{ from: ams(25), until: ams(27) }], 'Europe/Amsterdam')],
    ['2026-12-25', '2026-12-26'],
  );
  // 23:00–01:00 Amsterdam touches two days there, one day in UTC.
  const late = [{ from: ams(24, 23), until: ams(25, 1) }];
  assert.deepEqual([...dates.openDays(late, 'Europe/Amsterdam')], ['2026-12-24', '2026-12-25']);
  assert.deepEqual([...dates.openDays(late, 'UTC')], ['2026-12-24']);
  // Across the autumn DST change (a 25-hour day) each day once.
  const autumn = parseDate('2026/10/24 12:00 Europe/Amsterdam', 'UTC').ms;
  assert.deepEqual(
    [...dates.openDays([{ from: autumn, until: autumn + 3 * 86_400_000 }], 'Europe/Amsterdam')],
    ['2026-10-24', '2026-10-25', '2026-10-26', '2026-10-27'],
  );
});
