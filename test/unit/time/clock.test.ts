import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock, systemClock } from '../../../src/time/clock.ts';

test('systemClock reads the real time', () => {
  const before = Date.now();
  const now = systemClock.now();
  assert.ok(now >= before && now <= Date.now());
});

test('FakeClock starts where told and moves only when told', () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 21, 8, 30));
  assert.equal(clock.now(), Date.UTC(2026, 10, 21, 8, 30));
  assert.equal(clock.now(), Date.UTC(2026, 10, 21, 8, 30));
  clock.advance(1500);
  assert.equal(clock.now(), Date.UTC(2026, 10, 21, 8, 30, 1, 500));
  clock.advance(-500);
  assert.equal(clock.now(), Date.UTC(2026, 10, 21, 8, 30, 1));
  clock.set(0);
  assert.equal(clock.now(), 0);
});

test('FakeClock defaults to the epoch', () => {
  assert.equal(new FakeClock().now(), 0);
});

test('FakeClock refuses non-finite times', () => {
  const clock = new FakeClock(10);
  assert.throws(() => clock.set(Number.NaN), RangeError);
  assert.throws(() => clock.advance(Number.POSITIVE_INFINITY), RangeError);
  assert.throws(() => new FakeClock(Number.NaN), RangeError);
  assert.equal(clock.now(), 10);
});
