import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isValidTimeZone, normalizeTimeZone, zoneOffsetMs } from '../../../src/time/zone.ts';

test('accepts IANA names and fixed offsets', () => {
  for (const name of [
    'Europe/Amsterdam',
    'UTC',
    'Etc/GMT+5',
    'America/New_York',
    'Asia/Kolkata',
    'Asia/Calcutta',
    '+01:00',
    '-05:30',
  ]) {
    assert.equal(isValidTimeZone(name), true, name);
  }
});

test('rejects garbage', () => {
  for (const name of [
    '',
    'Foo/Bar',
    'garbage',
    'Europe/Amsterdam ',
    ' UTC',
    'Z',
    '+0100',
    '+01',
    '+01:00:00',
    '+25:00',
    'Europe/../UTC',
    'x'.repeat(200),
    'UTC\n',
  ]) {
    assert.equal(isValidTimeZone(name), false, JSON.stringify(name));
  }
  // cached answers are the same answers
  assert.equal(isValidTimeZone('Foo/Bar'), false);
  assert.equal(isValidTimeZone('Europe/Amsterdam'), true);
});

test('normalizes capitalisation but keeps links as given', () => {
  assert.equal(normalizeTimeZone('europe/amsterdam'), 'Europe/Amsterdam');
  assert.equal(normalizeTimeZone('utc'), 'UTC');
  assert.equal(normalizeTimeZone('Asia/Calcutta'), 'Asia/Calcutta');
  assert.equal(normalizeTimeZone('-00:00'), '+00:00');
  assert.equal(normalizeTimeZone('Nowhere/Special'), undefined);
});

test('offsets', () => {
  assert.equal(zoneOffsetMs('UTC', 0), 0);
  assert.equal(zoneOffsetMs('+05:30', 0), 5.5 * 3_600_000);
  assert.equal(zoneOffsetMs('-03:00', 0), -3 * 3_600_000);
  assert.equal(zoneOffsetMs('Europe/Amsterdam', Date.UTC(2026, 0, 1)), 3_600_000);
  assert.equal(zoneOffsetMs('Europe/Amsterdam', Date.UTC(2026, 6, 1)), 7_200_000);
  // the last second before and the first second of the 2024 spring-forward transition (01:00Z)
  assert.equal(zoneOffsetMs('Europe/Amsterdam', Date.UTC(2024, 2, 31, 0, 59, 59, 999)), 3_600_000);
  assert.equal(zoneOffsetMs('Europe/Amsterdam', Date.UTC(2024, 2, 31, 1)), 7_200_000);
  // a transition on the half hour (UTC), inside an hour bucket: Lord Howe goes +10:30 → +11 at 02:00 local
  assert.equal(zoneOffsetMs('Australia/Lord_Howe', Date.UTC(2024, 9, 5, 15, 29, 59)), 10.5 * 3_600_000);
  assert.equal(zoneOffsetMs('Australia/Lord_Howe', Date.UTC(2024, 9, 5, 15, 30)), 11 * 3_600_000);
  assert.throws(() => zoneOffsetMs('Foo/Bar', 0), RangeError);
});
