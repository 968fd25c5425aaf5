/**
 * Runtime statistics of a definition as figures (docs/architecture.md §8b), pure. The store keeps, per definition,
 * a count of finished runs in each of a fixed set of logarithmic buckets of duration, with the shortest and
 * longest run that fell in it; P50 and P95 are read from those buckets, so their cost depends on how spread the
 * durations are (a few hundred buckets at most), never on how many runs there were.
 */

/** Buckets per doubling of the duration: a bucket spans a factor of 2^(1/32), about 2.2 %. */
export const BUCKETS_PER_OCTAVE = 32;

/** How far a P50 or P95 may lie from the exact nearest-rank value, relative to it (one bucket's width). */
export const QUANTILE_PRECISION = 2 ** (1 / BUCKETS_PER_OCTAVE) - 1;

/** The final statuses that count as a run (a job that started and ended). */
export const RUN_STATUSES = ['Completed', 'Error', 'Killed', 'Unknown'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const RUN_STATUS_SET: ReadonlySet<string> = new Set(RUN_STATUSES);
export const isRunStatus = (s: string): s is RunStatus => RUN_STATUS_SET.has(s);

/** Totals of a definition's (or a step's) finished runs. */
export interface RuntimeAggregate {
  runs: number;
  completed: number;
  error: number;
  killed: number;
  unknown: number;
  totalMs: number;
  maxMs: number;
}

/** One bucket of the duration histogram: how many runs fell in it and the shortest and longest of them. */
export interface RuntimeBucket {
  bucket: number;
  runs: number;
  minMs: number;
  maxMs: number;
}

/** The bucket of a duration: 0 for 0 ms, then 32 per doubling from 1 ms on. */
export function bucketOf(ms: number): number {
  if (ms < 1) return 0;
  return 1 + Math.floor(Math.log2(ms) * BUCKETS_PER_OCTAVE);
}

/** The rank (from 1) of the nearest-rank `percent`-th percentile among `total` runs: ⌈percent·total/100⌉. */
export const rankOf = (total: number, percent: number): number =>
  Math.min(total, Math.max(1, Math.ceil((total * percent) / 100)));

/**
 * The duration of the run of rank `k` (from 1) within a bucket: placed between the bucket's shortest and longest
 * run by its rank there, so it is exact when the bucket holds one run (or runs of one duration) and within
 * QUANTILE_PRECISION otherwise.
 */
export function placeInBucket(b: Pick<RuntimeBucket, 'runs' | 'minMs' | 'maxMs'>, k: number): number {
  if (b.runs <= 1) return b.minMs;
  return b.minMs + ((b.maxMs - b.minMs) * (k - 1)) / (b.runs - 1);
}

/**
 * The nearest-rank `percent`-th percentile of the runs the buckets hold: the bucket holding rank ⌈percent·N/100⌉
 * in duration order, and the run's place in it. The store finds that bucket in SQL (a running sum over the
 * buckets, kysely-runtime-stats.ts) and places it with `placeInBucket`; this is the same walk over buckets in
 * hand. Undefined without runs.
 */
export function quantileMs(buckets: readonly RuntimeBucket[], percent: number): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.bucket - b.bucket);
  const total = sorted.reduce((n, b) => n + b.runs, 0);
  if (total === 0) return undefined;
  const rank = rankOf(total, percent);
  let before = 0;
  for (const b of sorted) {
    if (rank <= before + b.runs) return placeInBucket(b, rank - before);
    before += b.runs;
  }
  return undefined;
}

/** Finished runs of one definition or step grouped into the rows the store adds them to. */
export interface RunContribution {
  definition: string;
  /** The step's name for a chain's step job; empty for the definition's own jobs. */
  step: string;
  status: RunStatus;
  ms: number;
}

/** What a batch of runs adds to each aggregate row and bucket row, keyed and sorted (a fixed lock order). */
export function contributions(runs: readonly RunContribution[]): {
  aggregates: Array<{ definition: string; step: string } & RuntimeAggregate>;
  buckets: Array<{ definition: string; step: string } & RuntimeBucket>;
} {
  const aggregates = new Map<string, { definition: string; step: string } & RuntimeAggregate>();
  const buckets = new Map<string, { definition: string; step: string } & RuntimeBucket>();
  for (const r of runs) {
    const ms = Math.max(0, Math.round(r.ms));
    const key = JSON.stringify([r.definition, r.step]);
    const a = aggregates.get(key) ?? {
      definition: r.definition,
      step: r.step,
      runs: 0,
      completed: 0,
      error: 0,
      killed: 0,
      unknown: 0,
      totalMs: 0,
      maxMs: 0,
    };
    a.runs += 1;
    a[statusField(r.status)] += 1;
    a.totalMs += ms;
    a.maxMs = Math.max(a.maxMs, ms);
    aggregates.set(key, a);
    const bucket = bucketOf(ms);
    const bKey = JSON.stringify([r.definition, r.step, bucket]);
    const b = buckets.get(bKey) ?? { definition: r.definition, step: r.step, bucket, runs: 0, minMs: ms, maxMs: ms };
    b.runs += 1;
    b.minMs = Math.min(b.minMs, ms);
    b.maxMs = Math.max(b.maxMs, ms);
    buckets.set(bKey, b);
  }
  const order = (x: { definition: string; step: string; bucket?: number }, y: typeof x) =>
    x.definition < y.definition
      ? -1
      : x.definition > y.definition
        ? 1
        : x.step < y.step
          ? -1
          : x.step > y.step
            ? 1
            : (x.bucket ?? 0) - (y.bucket ?? 0);
  return { aggregates: [...aggregates.values()].sort(order), buckets: [...buckets.values()].sort(order) };
}

const statusField = (s: RunStatus): 'completed' | 'error' | 'killed' | 'unknown' =>
  s === 'Completed' ? 'completed' : s === 'Error' ? 'error' : s === 'Killed' ? 'killed' : 'unknown';
