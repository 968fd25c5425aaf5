import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { DateParseError, formatInstant, parseDate, toZonedInstant } from '../../../src/time/date-format.ts';

const at = (iso: string): number => Date.parse(iso);

test('formats the Millrace form', () => {
  assert.equal(
    formatInstant(at('2026-11-21T08:30:00Z'), 'Europe/Amsterdam'),
    '2026/11/21 09:30:00,000 Europe/Amsterdam',
  );
  assert.equal(formatInstant(at('2026-11-21T09:30:00.007Z'), 'UTC'), '2026/11/21 09:30:00,007 UTC');
  assert.equal(
    formatInstant(at('2026-07-01T03:04:05.123Z'), 'America/New_York'),
    '2026/06/30 23:04:05,123 America/New_York',
  );
  assert.equal(formatInstant(at('2026-11-21T08:30:00Z'), '+01:00'), '2026/11/21 09:30:00,000 +01:00');
  assert.equal(formatInstant(0, 'UTC'), '1970/01/01 00:00:00,000 UTC');
  assert.equal(formatInstant(-1, 'UTC'), '1969/12/31 23:59:59,999 UTC');
  assert.equal(formatInstant(at('2024-02-29T23:59:59.999Z'), 'UTC'), '2024/02/29 23:59:59,999 UTC');
  assert.equal(formatInstant(at('0099-03-01T00:00:00Z'), 'UTC'), '0099/03/01 00:00:00,000 UTC');
});

test('formatting refuses what it cannot write', () => {
  assert.throws(() => formatInstant(Number.NaN, 'UTC'), RangeError);
  assert.throws(() => formatInstant(0, 'Foo/Bar'), RangeError);
  assert.throws(() => formatInstant(at('+010000-01-01T00:00:00Z'), 'UTC'), RangeError);
});

test('round trip format → parse', () => {
  for (const zone of ['UTC', 'Europe/Amsterdam', 'America/New_York']) {
    for (const ms of [
      0,
      at('2026-11-21T08:30:00.123Z'),
      at('2026-06-15T23:59:59.999Z'),
      at('2099-12-31T23:59:59.999Z'),
    ]) {
      assert.deepEqual(parseDate(formatInstant(ms, zone), 'UTC'), { ms, zone });
    }
  }
});

test('Millrace form variants', () => {
  const ms = at('2026-11-21T08:30:00Z');
  assert.deepEqual(parseDate('2026/11/21 09:30:00,000 Europe/Amsterdam', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30:00 Europe/Amsterdam', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30 Europe/Amsterdam', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30:00,000', 'Europe/Amsterdam'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30:00', 'Europe/Amsterdam'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30', 'Europe/Amsterdam'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30 europe/amsterdam', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026/11/21 09:30:00,000 +01:00', 'UTC'), { ms, zone: '+01:00' });
});

test('ISO-8601 variants', () => {
  const ms = at('2026-11-21T09:30:00Z');
  assert.deepEqual(parseDate('2026-11-21T09:30:00Z', 'Europe/Amsterdam'), { ms, zone: 'UTC' });
  assert.deepEqual(parseDate('2026-11-21T10:30:00.123+01:00', 'UTC'), { ms: ms + 123, zone: '+01:00' });
  assert.deepEqual(parseDate('2026-11-21T10:30:00+0100', 'UTC'), { ms, zone: '+01:00' });
  assert.deepEqual(parseDate('2026-11-21T04:30:00-05:00', 'UTC'), { ms, zone: '-05:00' });
  assert.deepEqual(parseDate('2026-11-21T10:30:00[Europe/Amsterdam]', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026-11-21T10:30:00+01:00[Europe/Amsterdam]', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026-11-21T09:30:00Z[Europe/Amsterdam]', 'UTC'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026-11-21T10:30', 'Europe/Amsterdam'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026-11-21 10:30:00', 'Europe/Amsterdam'), { ms, zone: 'Europe/Amsterdam' });
  assert.deepEqual(parseDate('2026-11-21T09:30:00.123456789Z', 'UTC'), { ms: ms + 123, zone: 'UTC' });
  assert.deepEqual(parseDate('2026-11-21T09:30:00.5Z', 'UTC'), { ms: ms + 500, zone: 'UTC' });
  // date only: midnight in the default zone
  assert.deepEqual(parseDate('2026-11-21', 'Europe/Amsterdam'), {
    ms: at('2026-11-20T23:00:00Z'),
    zone: 'Europe/Amsterdam',
  });
  assert.deepEqual(parseDate('2026-11-21[America/New_York]', 'UTC'), {
    ms: at('2026-11-21T05:00:00Z'),
    zone: 'America/New_York',
  });
  // sub-millisecond digits are truncated, also before 1970
  assert.equal(parseDate('1969-12-31T23:59:59.9999Z', 'UTC').ms, -1);
});

test('leap days', () => {
  assert.deepEqual(parseDate('2024/02/29 12:00:00,000 UTC', 'UTC'), { ms: at('2024-02-29T12:00:00Z'), zone: 'UTC' });
  assert.throws(() => parseDate('2023/02/29 12:00:00,000 UTC', 'UTC'), DateParseError);
  assert.throws(() => parseDate('2023-02-29T12:00:00Z', 'UTC'), DateParseError);
  assert.deepEqual(parseDate('2000-02-29', 'UTC').ms, at('2000-02-29T00:00:00Z'));
  assert.throws(() => parseDate('1900-02-29', 'UTC'), DateParseError);
});

test('rejections', () => {
  const bad = [
    '',
    'garbage',
    'now',
    '1795253400000',
    '2026/02/30 10:00:00,000 UTC',
    '2026/13/01 10:00:00,000 UTC',
    '2026/00/01 10:00:00,000 UTC',
    '2026/11/21 25:00:00,000 UTC',
    '2026/11/21 24:00:00,000 UTC',
    '2026/11/21 10:60:00,000 UTC',
    '2026/11/21 10:00:60,000 UTC',
    '2026-11-21T23:59:60Z',
    '2026/11/21 10:00:00,000 Foo/Bar',
    '2026/11/21 10:00:00,000 UTC trailing',
    '2026/11/21 10:00:00,000 UTC ',
    ' 2026/11/21 10:00:00,000 UTC',
    '2026/11/21 10:00:00.000 UTC',
    '2026/11/21 10:00:00,00 UTC',
    '2026/11/21',
    '2026/11/21 9:30',
    '26/11/21 09:30',
    '2026-11-21T09:30:00Zjunk',
    '2026-11-21T09:30:00+01:00:00',
    '2026-11-21T09:30:00+25:00',
    '2026-11-21T09:30:00[Foo/Bar]',
    '2026-11-21T09:30:00[!Europe/Amsterdam]',
    '2026-11-21T09:30:00[u-ca=gregory]',
    '2026-11-21T09:30:00+05:00[Europe/Amsterdam]',
    '2026-11-21Z',
    '20261121T093000Z',
    '+002026-11-21T09:30:00Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00Z[America/New_York]',
    'Sat, 21 Nov 2026 09:30:00 GMT',
    `2026/11/21 10:00:00,000 ${'A'.repeat(200)}`,
  ];
  for (const text of bad) {
    assert.throws(() => parseDate(text, 'UTC'), DateParseError, JSON.stringify(text));
  }
});

test('error messages are for humans', () => {
  assert.throws(() => parseDate('garbage', 'UTC'), {
    name: 'DateParseError',
    message: 'not a valid date: expected "YYYY/MM/DD HH:MM:SS,mmm <time zone>" or ISO-8601',
  });
  assert.throws(() => parseDate('2026/11/21 10:00 Foo/Bar', 'UTC'), { message: /unknown time zone "Foo\/Bar"/ });
  assert.throws(() => parseDate('2026/02/30 10:00 UTC', 'UTC'), { message: /no such date or time/ });
});

test('a bad default zone is a programming error, not a parse error', () => {
  assert.throws(() => parseDate('2026/11/21 10:00', 'Foo/Bar'), RangeError);
  // ...and is not consulted when the input names its own zone
  assert.deepEqual(parseDate('2026-11-21T10:00:00Z', 'Foo/Bar'), { ms: at('2026-11-21T10:00:00Z'), zone: 'UTC' });
});

test('toZonedInstant', () => {
  assert.deepEqual(toZonedInstant(1.9, 'europe/amsterdam'), { ms: 1, zone: 'Europe/Amsterdam' });
  assert.throws(() => toZonedInstant(0, 'Foo/Bar'), RangeError);
  assert.throws(() => toZonedInstant(Number.NaN, 'UTC'), RangeError);
});

const ZONES = [
  'UTC',
  'Europe/Amsterdam',
  'America/New_York',
  'America/St_Johns',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'America/Sao_Paulo',
  'Etc/GMT+5',
  '+05:30',
  '-03:00',
];
const MS_1970 = Date.UTC(1970, 0, 1);
const MS_2100 = Date.UTC(2100, 0, 1);

test('property: format → parse returns the instant, or the earlier one of an overlap', () => {
  fc.assert(
    fc.property(fc.integer({ min: MS_1970, max: MS_2100 - 1 }), fc.constantFrom(...ZONES), (ms, zone) => {
      const text = formatInstant(ms, zone);
      const back = parseDate(text, 'UTC');
      assert.equal(back.zone, zone);
      assert.equal(formatInstant(back.ms, zone), text);
      if (back.ms !== ms) {
        // Only an ambiguous wall time may come back different: then ms is its later reading.
        assert.ok(back.ms < ms);
        const later = Temporal.Instant.fromEpochMilliseconds(ms)
          .toZonedDateTimeISO(zone)
          .toPlainDateTime()
          .toZonedDateTime(zone, { disambiguation: 'later' });
        assert.equal(later.epochMilliseconds, ms);
      }
    }),
    { numRuns: 2000 },
  );
});

test('property: near DST transitions too (the Amsterdam overlap hour)', () => {
  const start = Date.UTC(2024, 9, 27, 0);
  fc.assert(
    fc.property(fc.integer({ min: start - 3_600_000, max: start + 3 * 3_600_000 }), (ms) => {
      const text = formatInstant(ms, 'Europe/Amsterdam');
      const back = parseDate(text, 'UTC');
      assert.equal(formatInstant(back.ms, 'Europe/Amsterdam'), text);
      const inLaterHalf = ms >= Date.UTC(2024, 9, 27, 1) && ms < Date.UTC(2024, 9, 27, 2);
      assert.equal(back.ms, inLaterHalf ? ms - 3_600_000 : ms);
    }),
  );
});

test('property: formatting agrees with Temporal, 1850-2200', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: Date.UTC(1850, 0, 1), max: Date.UTC(2200, 0, 1) }),
      fc.constantFrom(...ZONES),
      (ms, zone) => {
        const z = Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone);
        const p = (n: number, w = 2): string => String(n).padStart(w, '0');
        const expected = `${p(z.year, 4)}/${p(z.month)}/${p(z.day)} ${p(z.hour)}:${p(z.minute)}:${p(z.second)},${p(z.millisecond, 3)} ${zone}`;
        assert.equal(formatInstant(ms, zone), expected);
      },
    ),
    { numRuns: 2000 },
  );
});
