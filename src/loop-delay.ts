import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the monitor's timer is due: the finest delay it can see. */
const RESOLUTION_MS = 10;
const NS_PER_MS = 1e6;

/** The event loop's delay since the last reset, in milliseconds. */
export interface LoopDelay {
  percentileMs(p: number): number;
  maxMs(): number;
  minMs(): number;
  reset(): void;
  stop(): void;
}

/**
 * Measures how late the event loop runs a timer: 0 on an idle loop, the length of a long synchronous task when one
 * holds it. Node's `monitorEventLoopDelay` records the whole interval between two firings of its timer, the
 * resolution included (an idle loop reads 10.1 ms at a 10 ms resolution); the resolution is taken off here so that
 * the figures are the delay itself (a test in test/unit/loop-delay.test.ts holds both ends).
 */
export function loopDelayMonitor(): LoopDelay {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  const delay = (ns: number): number => Math.max(0, ns / NS_PER_MS - RESOLUTION_MS);
  return {
    percentileMs: (p) => delay(histogram.percentile(p)),
    maxMs: () => delay(histogram.max),
    minMs: () => delay(histogram.min),
    reset: () => histogram.reset(),
    stop: () => histogram.disable(),
  };
}
