import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  bucketOf,
  contributions,
  QUANTILE_PRECISION,
  quantileMs,
  type RunContribution,
} from '../../../src/domain/runtime-figures.ts';

/**
 * P50 and P95 from the duration buckets against the nearest-rank reference over the durations themselves: within
 * one bucket's width, and exact when the runs are few enough to sit one to a bucket. Batches added in any split
 * give the same rows as one batch (the store adds each transaction's runs to the rows already there).
 */

const nearestRank = (ms: readonly number[], q: number) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1] as number;
};

const rows = (ms: readonly number[]) =>
  contributions(ms.map((m): RunContribution => ({ definition: 'GLOBAL.D', step: '', status: 'Completed', ms: m })))
    .buckets;

const durations = fc.array(fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 31_536_000_000 })), {
  minLength: 1,
  maxLength: 300,
});

test('P50 and P95 lie within one bucket of the nearest-rank value of the runs', () => {
  fc.assert(
    fc.property(durations, fc.constantFrom(50, 95), (ms, p) => {
      const exact = nearestRank(ms, p / 100);
      const got = quantileMs(rows(ms), p) as number;
      assert.ok(Math.abs(got - exact) <= exact * QUANTILE_PRECISION + 1e-9, `${got} against ${exact}`);
    }),
  );
});

test('runs of distinct buckets give the exact nearest-rank values', () => {
  const ms = [1000, 60_000, 120_000, 180_000, 240_000, 300_000, 7_200_000];
  for (const p of [50, 95]) assert.equal(quantileMs(rows(ms), p), nearestRank(ms, p / 100));
  assert.equal(quantileMs([], 50), undefined);
});

test('a bucket spans a factor of at most 2^(1/32); 0 ms has its own', () => {
  assert.equal(bucketOf(0), 0);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 40 }), fc.integer({ min: 1, max: 2 ** 40 }), (a, b) => {
      if (bucketOf(a) === bucketOf(b)) assert.ok(Math.max(a, b) / Math.min(a, b) < 1 + QUANTILE_PRECISION + 1e-9);
    }),
  );
});

test('runs added in batches make the same counts as all at once', () => {
  fc.assert(
    fc.property(durations, fc.integer({ min: 0, max: 300 }), (ms, cut) => {
      const merged = new Map<number, { runs: number; minMs: number; maxMs: number }>();
      for (const part of [ms.slice(0, cut), ms.slice(cut)])
        for (const b of rows(part)) {
          const m = merged.get(b.bucket);
          merged.set(
            b.bucket,
            m
              ? { runs: m.runs + b.runs, minMs: Math.min(m.minMs, b.minMs), maxMs: Math.max(m.maxMs, b.maxMs) }
              : { runs: b.runs, minMs: b.minMs, maxMs: b.maxMs },
          );
        }
      const whole = new Map(rows(ms).map((b) => [b.bucket, { runs: b.runs, minMs: b.minMs, maxMs: b.maxMs }]));
      assert.deepEqual(merged, whole);
    }),
  );
});
