/**
 * The DST policy from the design document (see src/time/date-format.ts):
 * a local time in a spring-forward gap moves forward by the length of the gap;
 * a local time in a fall-back overlap means the earlier instant.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatInstant, parseDate } from '../../../src/time/date-format.ts';

const at = (iso: string): number => Date.parse(iso);

test('Amsterdam gap: 02:30 on 2024-03-31 is 03:30 CEST', () => {
  const r = parseDate('2024/03/31 02:30:00,000 Europe/Amsterdam', 'UTC');
  assert.deepEqual(r, { ms: at('2024-03-31T01:30:00Z'), zone: 'Europe/Amsterdam' });
  assert.equal(formatInstant(r.ms, r.zone), '2024/03/31 03:30:00,000 Europe/Amsterdam');
  // same rule for local ISO input and for the default zone
  assert.equal(parseDate('2024-03-31T02:30', 'Europe/Amsterdam').ms, at('2024-03-31T01:30:00Z'));
  assert.equal(parseDate('2024-03-31T02:30:00[Europe/Amsterdam]', 'UTC').ms, at('2024-03-31T01:30:00Z'));
  // edges of the gap: 01:59:59.999 CET is the last instant before it, 02:00 becomes 03:00 CEST
  assert.equal(parseDate('2024/03/31 01:59:59,999', 'Europe/Amsterdam').ms, at('2024-03-31T00:59:59.999Z'));
  assert.equal(parseDate('2024/03/31 02:00', 'Europe/Amsterdam').ms, at('2024-03-31T01:00:00Z'));
  assert.equal(parseDate('2024/03/31 03:00', 'Europe/Amsterdam').ms, at('2024-03-31T01:00:00Z'));
});

test('Amsterdam overlap: 02:30 on 2024-10-27 is the earlier instant (CEST)', () => {
  const r = parseDate('2024/10/27 02:30:00,000 Europe/Amsterdam', 'UTC');
  assert.deepEqual(r, { ms: at('2024-10-27T00:30:00Z'), zone: 'Europe/Amsterdam' });
  assert.equal(parseDate('2024-10-27T02:30', 'Europe/Amsterdam').ms, at('2024-10-27T00:30:00Z'));
  // an explicit offset still selects either one
  assert.equal(parseDate('2024-10-27T02:30:00+02:00[Europe/Amsterdam]', 'UTC').ms, at('2024-10-27T00:30:00Z'));
  assert.equal(parseDate('2024-10-27T02:30:00+01:00[Europe/Amsterdam]', 'UTC').ms, at('2024-10-27T01:30:00Z'));
});

test('New York gap: 02:30 on 2024-03-10 is 03:30 EDT', () => {
  const r = parseDate('2024/03/10 02:30:00,000 America/New_York', 'UTC');
  assert.deepEqual(r, { ms: at('2024-03-10T07:30:00Z'), zone: 'America/New_York' });
  assert.equal(formatInstant(r.ms, r.zone), '2024/03/10 03:30:00,000 America/New_York');
});

test('New York overlap: 01:30 on 2024-11-03 is the earlier instant (EDT)', () => {
  const r = parseDate('2024/11/03 01:30:00,000 America/New_York', 'UTC');
  assert.deepEqual(r, { ms: at('2024-11-03T05:30:00Z'), zone: 'America/New_York' });
  assert.equal(parseDate('2024-11-03T01:30:00-05:00[America/New_York]', 'UTC').ms, at('2024-11-03T06:30:00Z'));
});

test('formatting across DST shows local wall time', () => {
  // both halves of the Amsterdam overlap read 02:30
  assert.equal(
    formatInstant(at('2024-10-27T00:30:00Z'), 'Europe/Amsterdam'),
    '2024/10/27 02:30:00,000 Europe/Amsterdam',
  );
  assert.equal(
    formatInstant(at('2024-10-27T01:30:00Z'), 'Europe/Amsterdam'),
    '2024/10/27 02:30:00,000 Europe/Amsterdam',
  );
  // the gap: one millisecond apart, an hour apart on the wall
  assert.equal(
    formatInstant(at('2024-03-31T00:59:59.999Z'), 'Europe/Amsterdam'),
    '2024/03/31 01:59:59,999 Europe/Amsterdam',
  );
  assert.equal(
    formatInstant(at('2024-03-31T01:00:00Z'), 'Europe/Amsterdam'),
    '2024/03/31 03:00:00,000 Europe/Amsterdam',
  );
  // New York
  assert.equal(
    formatInstant(at('2024-11-03T05:30:00Z'), 'America/New_York'),
    '2024/11/03 01:30:00,000 America/New_York',
  );
  assert.equal(
    formatInstant(at('2024-11-03T06:30:00Z'), 'America/New_York'),
    '2024/11/03 01:30:00,000 America/New_York',
  );
  assert.equal(
    formatInstant(at('2024-03-10T06:59:59.999Z'), 'America/New_York'),
    '2024/03/10 01:59:59,999 America/New_York',
  );
  assert.equal(
    formatInstant(at('2024-03-10T07:00:00Z'), 'America/New_York'),
    '2024/03/10 03:00:00,000 America/New_York',
  );
});

test('the later half of an overlap does not survive the Millrace form (no offset in it)', () => {
  const text = formatInstant(at('2024-10-27T01:30:00Z'), 'Europe/Amsterdam');
  assert.equal(parseDate(text, 'UTC').ms, at('2024-10-27T00:30:00Z'));
});

test('a gap at midnight: date-only input moves to the first valid time', () => {
  // Sao Paulo sprang forward at 00:00 on 2018-11-04 (→ 01:00 -02:00)
  const r = parseDate('2018-11-04', 'America/Sao_Paulo');
  assert.equal(r.ms, at('2018-11-04T03:00:00Z'));
  assert.equal(formatInstant(r.ms, r.zone), '2018/11/04 01:00:00,000 America/Sao_Paulo');
});
